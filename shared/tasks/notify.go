package tasks

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcpfleet/mcpfleet/shared/httpauth"
)

// Status notifications of the 2026-07-28 tasks extension: a client lists
// task ids in subscriptions/listen (params.notifications.taskIds); the
// answer is a stream that acknowledges the ids of the caller's own tasks
// (notifications/subscriptions/acknowledged), then carries a
// notifications/tasks with the full DetailedTask — what tasks/get would
// answer — each time one of them changes, and ends with the listen's
// result once all of them have ended. mcp-go's subscriptions/listen knows
// no taskIds, so the keeper serves such a listen itself (HTTP). A task of
// another replica is followed through the shared store.

// listenCall is the part of a subscriptions/listen the keeper reads.
type listenCall struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params struct {
		Notifications struct {
			TaskIDs []string `json:"taskIds"`
		} `json:"notifications"`
		Meta struct {
			Version string `json:"io.modelcontextprotocol/protocolVersion"`
			Caps    struct {
				Extensions map[string]json.RawMessage `json:"extensions"`
			} `json:"io.modelcontextprotocol/clientCapabilities"`
		} `json:"_meta"`
	} `json:"params"`
}

// notifyStatus wakes the listeners: a task's status changed.
func (k *Keeper) notifyStatus(string) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.changed != nil {
		close(k.changed)
	}
	k.changed = make(chan struct{})
}

func (k *Keeper) changes() <-chan struct{} {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.changed == nil {
		k.changed = make(chan struct{})
	}
	return k.changed
}

// listen serves a subscriptions/listen naming taskIds; false leaves the
// request to mcp-go.
func (k *Keeper) listen(w http.ResponseWriter, r *http.Request, body []byte) bool {
	var c listenCall
	if json.Unmarshal(body, &c) != nil || c.Method != "subscriptions/listen" || len(c.ID) == 0 ||
		c.Params.Meta.Version != mcp.LATEST_PROTOCOL_VERSION || c.Params.Notifications.TaskIDs == nil {
		return false
	}
	if _, declared := c.Params.Meta.Caps.Extensions[ExtensionID]; !declared {
		answer := rpcErrorBytes(c.ID, codeMissingCapability, "task status notifications need the "+ExtensionID+" extension: declare it in _meta io.modelcontextprotocol/clientCapabilities.extensions")
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(httpStatus(answer))
		w.Write(answer)
		return true
	}
	ctx := r.Context()
	agreed := []string{}
	for _, id := range c.Params.Notifications.TaskIDs {
		if _, ok := k.taskState(ctx, id); ok {
			agreed = append(agreed, id)
		}
	}
	flusher, _ := w.(http.Flusher)
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	meta := map[string]any{"io.modelcontextprotocol/subscriptionId": c.ID}
	send := func(msg map[string]any) {
		b, _ := json.Marshal(msg)
		fmt.Fprintf(w, "event: message\ndata: %s\n\n", b)
		if flusher != nil {
			flusher.Flush()
		}
	}
	send(map[string]any{"jsonrpc": "2.0", "method": "notifications/subscriptions/acknowledged",
		"params": map[string]any{"_meta": meta, "notifications": map[string]any{"taskIds": agreed}}})
	sent := map[string][]byte{}
	poll := k.cfg.Heartbeat / 2
	if k.store == nil {
		poll = PollInterval
	}
	for {
		changed := k.changes()
		open := 0
		for _, id := range agreed {
			st, ok := k.taskState(ctx, id)
			if !ok {
				continue // expired
			}
			b, _ := json.Marshal(st)
			if !bytes.Equal(b, sent[id]) {
				sent[id] = b
				params := map[string]any{}
				for key, v := range st {
					params[key] = v
				}
				params["_meta"] = meta
				send(map[string]any{"jsonrpc": "2.0", "method": "notifications/tasks", "params": params})
			}
			if s, _ := st["status"].(string); s == "working" || s == "input_required" {
				open++
			}
		}
		if open == 0 {
			send(map[string]any{"jsonrpc": "2.0", "id": c.ID, "result": map[string]any{"resultType": "complete", "_meta": meta}})
			return true
		}
		select {
		case <-ctx.Done():
			return true
		case <-changed:
		case <-time.After(poll):
		}
	}
}

// taskState is the DetailedTask of the caller's extension task id, from
// this replica or the store; false when the caller has no such task.
func (k *Keeper) taskState(ctx context.Context, id string) (map[string]any, bool) {
	if t := k.modernTask(ctx, id); t != nil {
		return t.detailed(), true
	}
	if k.store == nil {
		return nil, false
	}
	rec, err := k.store.GetTask(ctx, id)
	p := httpauth.PrincipalFromContext(ctx)
	if err != nil || rec == nil || !rec.Modern || rec.Issuer != p.Issuer || rec.Subject != p.Subject {
		return nil, false
	}
	return storedTask(rec), true
}
