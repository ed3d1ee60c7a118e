package tasks

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/mcpfleet/mcpfleet/shared/httpauth"
)

// Status notifications of the 2026-07-28 tasks extension: a client lists
// task ids in subscriptions/listen (params.notifications.taskIds); the
// answer is a stream that acknowledges the ids of the caller's own tasks
// (notifications/subscriptions/acknowledged), then carries a
// notifications/tasks with the full DetailedTask — what tasks/get would
// answer — each time one of them changes, and ends with the listen's
// result once all of them have ended. mcp-go's subscriptions/listen knows
// no taskIds, so the keeper serves such a listen itself: Wrap over HTTP
// (an SSE stream), serve's stdio gate over stdio (StatusListen: lines on
// stdout, ended by notifications/cancelled or the end of input); both run
// the one status loop, follow. A task of another replica is followed
// through the shared store.

// listenCall is the part of a subscriptions/listen the keeper reads.
type listenCall struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params struct {
		Notifications struct {
			TaskIDs []string `json:"taskIds"`
		} `json:"notifications"`
		Meta requestMeta `json:"_meta"`
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

// parseListen reads a 2026-07-28 subscriptions/listen naming taskIds;
// false for every other message (left to mcp-go).
func parseListen(body []byte) (*listenCall, bool) {
	var c listenCall
	if json.Unmarshal(body, &c) != nil || c.Method != "subscriptions/listen" || len(c.ID) == 0 || string(c.ID) == "null" ||
		c.Params.Meta.Version != mcp.LATEST_PROTOCOL_VERSION || c.Params.Notifications.TaskIDs == nil {
		return nil, false
	}
	return &c, true
}

// refusal is the -32021 answer to a listen from a client that declared no
// tasks extension, or nil.
func (c *listenCall) refusal() []byte {
	if _, declared := c.Params.Meta.Caps.Extensions[ExtensionID]; declared {
		return nil
	}
	return rpcErrorBytes(c.ID, codeMissingCapability, "task status notifications need the "+ExtensionID+" extension: declare it in _meta io.modelcontextprotocol/clientCapabilities.extensions")
}

// listen serves a subscriptions/listen naming taskIds over HTTP, as an SSE
// stream; false leaves the request to mcp-go.
func (k *Keeper) listen(w http.ResponseWriter, r *http.Request, body []byte) bool {
	c, ok := parseListen(body)
	if !ok {
		return false
	}
	if answer := c.refusal(); answer != nil {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(httpStatus(answer))
		w.Write(answer)
		return true
	}
	flusher, _ := w.(http.Flusher)
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	k.follow(r.Context(), c, func(msg []byte) {
		fmt.Fprintf(w, "event: message\ndata: %s\n\n", msg)
		if flusher != nil {
			flusher.Flush()
		}
	})
	return true
}

// StatusListen returns how to serve body when it is a subscriptions/listen
// naming taskIds, or nil (the message is mcp-go's). The function sends the
// listen's messages — one JSON-RPC message each — through send until every
// task has ended (the listen's result is the last) or ctx ends (nothing
// more is sent: the client cancelled, or the transport closed). It is how
// a transport that sees raw messages (serve's stdio gate) serves the
// listen; over HTTP, Wrap does.
func (k *Keeper) StatusListen(body []byte) func(ctx context.Context, send func(msg []byte)) {
	c, ok := parseListen(body)
	if !ok {
		return nil
	}
	return func(ctx context.Context, send func(msg []byte)) {
		if answer := c.refusal(); answer != nil {
			send(answer)
			return
		}
		k.follow(ctx, c, send)
	}
}

// ListenFor returns the StatusListen of the keeper s carries
// (ServerOptions), or nil when s offers no tasks.
func ListenFor(s *server.MCPServer) func(body []byte) func(ctx context.Context, send func(msg []byte)) {
	if k, ok := keepers.Load(s); ok {
		return k.(*Keeper).StatusListen
	}
	return nil
}

// follow is the status loop of a listen, whatever the transport: it
// acknowledges the caller's own task ids, sends a notifications/tasks on
// each change of one of them, and the listen's result once all have ended.
func (k *Keeper) follow(ctx context.Context, c *listenCall, send func(msg []byte)) {
	emit := func(msg map[string]any) {
		b, _ := json.Marshal(msg)
		send(b)
	}
	agreed := []string{}
	for _, id := range c.Params.Notifications.TaskIDs {
		if _, ok := k.taskState(ctx, id); ok {
			agreed = append(agreed, id)
		}
	}
	meta := map[string]any{"io.modelcontextprotocol/subscriptionId": c.ID}
	emit(map[string]any{"jsonrpc": "2.0", "method": "notifications/subscriptions/acknowledged",
		"params": map[string]any{"_meta": meta, "notifications": map[string]any{"taskIds": agreed}}})
	sent := map[string][]byte{}
	poll := k.cfg.Heartbeat / 2
	if k.store == nil {
		poll = PollInterval
	}
	wait := time.NewTimer(poll)
	defer wait.Stop()
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
				emit(map[string]any{"jsonrpc": "2.0", "method": "notifications/tasks", "params": params})
			}
			if s, _ := st["status"].(string); s == "working" || s == "input_required" {
				open++
			}
		}
		if open == 0 {
			emit(map[string]any{"jsonrpc": "2.0", "id": c.ID, "result": map[string]any{"resultType": "complete", "_meta": meta}})
			return
		}
		wait.Reset(poll)
		select {
		case <-ctx.Done():
			return
		case <-changed:
		case <-wait.C:
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
