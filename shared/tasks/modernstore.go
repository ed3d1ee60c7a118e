package tasks

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcpfleet/mcpfleet/shared/httpauth"
	"github.com/mcpfleet/mcpfleet/shared/state"
)

// The 2026-07-28 extension's tasks in the shared store (MCP_STATE_URL):
// the replica that accepted a task runs it, heartbeats it and records its
// end with the result inline; every other replica answers tasks/get,
// tasks/cancel and tasks/update for it from the store.

// notFound is the answer for every task id the caller may not see. Within
// MCP_TASK_TTL of the shared store's new beginning (it was new, restarted
// without persistence or flushed) it says so: a task created before may
// be gone. The sentence depends on the time only, never on the id.
func (k *Keeper) notFound() string {
	msg := fmt.Sprintf("task not found: it never existed, has expired (MCP_TASK_TTL %s), or belongs to another identity", k.cfg.TTL)
	if k.store != nil {
		if e := k.store.Epoch(); !e.IsZero() && time.Since(e) < k.cfg.TTL {
			msg += fmt.Sprintf("; the shared state store (%s) began anew at %s (new, restarted without persistence, or flushed): a task created before then may be gone",
				state.URLVar, e.UTC().Format(time.RFC3339))
		}
	}
	return msg
}

// putTask records a new extension task in the store.
func (k *Keeper) putTask(ctx context.Context, t *modernTask) error {
	rec := &state.TaskRecord{ID: t.id, Issuer: t.owner.Issuer, Subject: t.owner.Subject, Status: state.TaskWorking,
		Created: t.createdAt, Updated: t.createdAt, TTL: t.ttl, PollInterval: PollInterval, Modern: true}
	return k.store.PutTask(context.WithoutCancel(ctx), rec, k.alive())
}

// finishModern records an extension task's end in the store.
func (k *Keeper) finishModern(t *modernTask) {
	t.mu.Lock()
	status, result, rpcErr := t.status, t.result, t.rpcErr
	t.mu.Unlock()
	switch status {
	case "cancelled":
		k.recordEnd(t.id, state.TaskCancelled, "Task cancelled by request", nil, "")
	case "failed":
		k.recordEnd(t.id, state.TaskFailed, errMessage(rpcErr), nil, string(rpcErr))
	default:
		k.recordEnd(t.id, state.TaskCompleted, "", result, "")
	}
}

// boundModern fails a task whose result is larger than
// MCP_TASK_MAX_RESULT_BYTES (a JSON-RPC answer out of mcp-go).
func (k *Keeper) boundModern(out []byte) []byte {
	var r struct {
		Result json.RawMessage `json:"result"`
	}
	if json.Unmarshal(out, &r) != nil || len(r.Result) <= k.cfg.MaxResultBytes {
		return out
	}
	_, err := k.bound(&mcp.CallToolResult{Content: []mcp.Content{mcp.NewTextContent(string(r.Result))}}, nil)
	if err == nil {
		return out
	}
	return rpcErrorBytes(nil, mcp.INTERNAL_ERROR, err.Error())
}

// modernFromStore answers tasks/get, tasks/cancel and tasks/update for an
// extension task this replica does not run.
func (k *Keeper) modernFromStore(ctx context.Context, c modernCall) ([]byte, bool) {
	rec, err := k.store.GetTask(ctx, c.Params.TaskID)
	if err != nil {
		return rpcErrorBytes(c.ID, mcp.INTERNAL_ERROR, err.Error()), true
	}
	p := httpauth.PrincipalFromContext(ctx)
	if rec == nil || !rec.Modern || rec.Issuer != p.Issuer || rec.Subject != p.Subject {
		return rpcErrorBytes(c.ID, mcp.INVALID_PARAMS, k.notFound()), true
	}
	switch c.Method {
	case "tasks/get":
		m := storedTask(rec)
		m["resultType"] = "complete"
		return modernResult(c.ID, m), true
	case "tasks/cancel":
		if !rec.Terminal() {
			if _, err := k.store.CancelTask(ctx, rec.ID, "Task cancelled by request"); err != nil {
				return rpcErrorBytes(c.ID, mcp.INTERNAL_ERROR, err.Error()), true
			}
		}
		return modernResult(c.ID, map[string]any{"resultType": "complete"}), true
	default: // tasks/update
		if _, err := inputResponses(c); err != nil {
			return rpcErrorBytes(c.ID, mcp.INVALID_PARAMS, err.Error()), true
		}
		if rec.Status == "input_required" {
			if err := k.store.PushInput(ctx, rec.ID, c.Params.InputResponses, rec.TTL); err != nil {
				return rpcErrorBytes(c.ID, mcp.INTERNAL_ERROR, "cannot pass the answer on to the task: "+err.Error()), true
			}
		}
		return modernResult(c.ID, map[string]any{"resultType": "complete"}), true
	}
}

// storedTask is the DetailedTask of a stored extension task.
func storedTask(rec *state.TaskRecord) map[string]any {
	upd := rec.Updated
	if upd.IsZero() {
		upd = rec.Created
	}
	m := map[string]any{
		"taskId": rec.ID, "status": rec.Status,
		"createdAt":      rec.Created.UTC().Format(time.RFC3339Nano),
		"lastUpdatedAt":  upd.UTC().Format(time.RFC3339Nano),
		"ttlMs":          rec.TTL.Milliseconds(),
		"pollIntervalMs": PollInterval.Milliseconds(),
	}
	if rec.StatusMessage != "" {
		m["statusMessage"] = rec.StatusMessage
	}
	switch rec.Status {
	case "input_required":
		if rec.Input != nil {
			m["inputRequests"] = rec.Input
			m["statusMessage"] = "waiting for the client's answer to inputRequests (tasks/update)"
		}
	case state.TaskCompleted:
		if rec.Result != nil {
			m["result"] = rec.Result
		}
	case state.TaskFailed:
		var e map[string]any
		if json.Unmarshal([]byte(rec.Error), &e) != nil || e == nil {
			e = map[string]any{"code": mcp.INTERNAL_ERROR, "message": rec.Error}
		}
		m["error"] = e
	}
	return m
}

// inputResponses reads tasks/update's inputResponses.
func inputResponses(c modernCall) (mcp.InputResponses, error) {
	if len(c.Params.InputResponses) == 0 {
		return nil, errors.New("tasks/update without inputResponses: send the answers keyed as the task's inputRequests")
	}
	var r mcp.InputResponses
	if err := json.Unmarshal(c.Params.InputResponses, &r); err != nil {
		return nil, fmt.Errorf("tasks/update: inputResponses is not an object of responses keyed as the task's inputRequests: %v", err)
	}
	return r, nil
}
