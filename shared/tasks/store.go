package tasks

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcpfleet/mcpfleet/shared/envconfig"
	"github.com/mcpfleet/mcpfleet/shared/httpauth"
	"github.com/mcpfleet/mcpfleet/shared/state"
)

// Defaults of the shared-store variables.
const (
	DefaultHeartbeat      = 2 * time.Second
	DefaultMaxResultBytes = 4 << 20
	// deadAfter heartbeats missed, a task's replica is taken as stopped.
	deadAfter = 3
)

// storeVars are documented with Vars.
var storeVars = []envconfig.Var{
	{Name: "MCP_TASK_HEARTBEAT", Default: DefaultHeartbeat.String(), Description: "with MCP_STATE_URL: how often the replica running a task renews it in the store; a task not renewed for 3 intervals is reported failed (\"" + state.DeadMessage + "\") by every replica"},
	{Name: "MCP_TASK_MAX_RESULT_BYTES", Default: fmt.Sprint(DefaultMaxResultBytes), Description: "largest task result (JSON bytes) kept; a larger one fails the task with an error saying so"},
}

// storeTask records a new task in the shared store (no-op without one).
func (k *Keeper) storeTask(ctx context.Context, id string, owner httpauth.Principal, ttl time.Duration) {
	if k.store == nil {
		return
	}
	now := time.Now()
	rec := &state.TaskRecord{ID: id, Issuer: owner.Issuer, Subject: owner.Subject, Status: state.TaskWorking,
		Created: now, Updated: now, TTL: ttl}
	if err := k.store.PutTask(context.WithoutCancel(ctx), rec, k.alive()); err != nil {
		// Wrap checked the store just before: the task still runs here,
		// other replicas answer "not found" for it.
		k.logf("task %s is not in the shared store: %v", id, err)
	}
}

func (k *Keeper) alive() time.Duration { return deadAfter * k.cfg.Heartbeat }

func (k *Keeper) logf(format string, args ...any) {
	if k.cfg.Logf != nil {
		k.cfg.Logf(format, args...)
	}
}

// heartbeat renews task id in the store until done, and ends the run
// (cancel) once another replica cancelled it. When the store no longer
// holds the task before its TTL (Redis lost its records: restarted without
// persistence, flushed), it writes what this replica holds again, so the
// task stays readable and answerable from every replica.
func (k *Keeper) heartbeat(id string, st *status, cancel context.CancelFunc, done <-chan struct{}) {
	t := time.NewTicker(k.cfg.Heartbeat)
	defer t.Stop()
	for {
		select {
		case <-done:
			return
		case <-t.C:
		}
		if k.isCrashed() {
			return
		}
		ctx, c := context.WithTimeout(context.Background(), k.cfg.Heartbeat)
		stop, err := k.store.Beat(ctx, id, k.alive(), st.get())
		if errors.Is(err, state.ErrNoTask) {
			if rec := k.held(id, st.get()); rec != nil {
				err = k.rewrite(ctx, rec)
			} else {
				stop, err = true, nil // past its TTL: the run ends, as in this process
			}
		}
		c()
		if err != nil {
			k.logf("task %s: heartbeat: %v", id, err)
			continue
		}
		if stop {
			cancel()
			return
		}
	}
}

// held is the record of task id as this replica holds it (it runs it or
// ran it), with status message msg; nil when the task is unknown here or
// past its TTL.
func (k *Keeper) held(id, msg string) *state.TaskRecord {
	k.mu.Lock()
	t, r, b := k.modern[id], k.tasks[id], k.inboxes[id]
	k.mu.Unlock()
	rec := &state.TaskRecord{ID: id, Status: state.TaskWorking, StatusMessage: msg, Updated: time.Now()}
	switch {
	case t != nil:
		t.mu.Lock()
		rec.Issuer, rec.Subject, rec.Created, rec.TTL = t.owner.Issuer, t.owner.Subject, t.createdAt, t.ttl
		rec.Modern, rec.PollInterval, rec.Status, rec.Updated = true, PollInterval, t.status, t.updated
		switch t.status {
		case "input_required":
			rec.Input, _ = json.Marshal(t.input)
		case state.TaskCompleted:
			rec.Result = t.result
		case state.TaskFailed:
			rec.StatusMessage, rec.Error = errMessage(t.rpcErr), string(t.rpcErr)
		}
		t.mu.Unlock()
	case r != nil:
		rec.Issuer, rec.Subject, rec.Created, rec.TTL = r.owner.Issuer, r.owner.Subject, r.created, r.ttl
		if b != nil {
			if reqs := b.requests(); reqs != nil {
				rec.Status = "input_required"
				rec.Input, _ = json.Marshal(reqs)
			}
		}
	default:
		return nil
	}
	if time.Since(rec.Created) >= rec.TTL {
		return nil
	}
	return rec
}

// rewrite puts a task record the store lost back: an open input request
// is asked again (an answer queued in the lost store is gone with it).
func (k *Keeper) rewrite(ctx context.Context, rec *state.TaskRecord) error {
	if err := k.store.PutTask(ctx, rec, k.alive()); err != nil {
		return err
	}
	k.logf("task %s: the shared store (%s) had lost its record (its records begin at %s): written again as %s",
		rec.ID, state.URLVar, k.store.Epoch().UTC().Format(time.RFC3339), rec.Status)
	return nil
}

// finish records a task run's outcome in the store.
func (k *Keeper) finish(id string, res *mcp.CallToolResult, err error, cancelled bool) {
	switch {
	case cancelled:
		k.recordEnd(id, state.TaskCancelled, "Task cancelled by request", nil, "")
	case err != nil:
		k.recordEnd(id, state.TaskFailed, err.Error(), nil, err.Error())
	default:
		b, _ := json.Marshal(res)
		k.recordEnd(id, state.TaskCompleted, "", b, "")
	}
}

// recordEnd writes how task id's run ended to the store; when the store
// lost the task's record, the whole record with its outcome. While the
// store is unreachable it tries again every heartbeat, as long as the
// task lives: the outcome is not lost with a Redis restart.
func (k *Keeper) recordEnd(id, status, msg string, result []byte, errText string) {
	err := k.tryEnd(id, status, msg, result, errText)
	var se *state.StoreError
	if !errors.As(err, &se) {
		if err != nil {
			k.logf("task %s: recording its end: %v", id, err)
		}
		return
	}
	k.logf("task %s: recording its end: %v; trying again every %s", id, err, k.cfg.Heartbeat)
	go func() {
		for {
			time.Sleep(k.cfg.Heartbeat)
			k.mu.Lock()
			stopped := k.stopped
			k.mu.Unlock()
			if stopped || k.held(id, msg) == nil {
				return
			}
			if err := k.tryEnd(id, status, msg, result, errText); !errors.As(err, &se) {
				if err != nil {
					k.logf("task %s: recording its end: %v", id, err)
				}
				return
			}
		}
	}()
}

func (k *Keeper) tryEnd(id, status, msg string, result []byte, errText string) error {
	if k.isCrashed() {
		return nil
	}
	ctx, c := context.WithTimeout(context.Background(), 5*time.Second)
	defer c()
	_, err := k.store.FinishTask(ctx, id, status, msg, result, errText)
	if !errors.Is(err, state.ErrNoTask) {
		return err
	}
	if rec := k.held(id, msg); rec != nil {
		rec.Status, rec.StatusMessage, rec.Result, rec.Error, rec.Input, rec.Updated = status, msg, result, errText, nil, time.Now()
		return k.rewrite(ctx, rec)
	}
	return nil // past its TTL: nothing to keep
}

// bound refuses a result larger than MCP_TASK_MAX_RESULT_BYTES.
func (k *Keeper) bound(res *mcp.CallToolResult, err error) (*mcp.CallToolResult, error) {
	if err != nil || res == nil {
		return res, err
	}
	b, merr := json.Marshal(res)
	if merr != nil {
		return nil, merr
	}
	if len(b) > k.cfg.MaxResultBytes {
		return nil, fmt.Errorf("the task's result is %d bytes, more than the %d a task may keep (MCP_TASK_MAX_RESULT_BYTES): ask for less (a narrower query, a LIMIT), call the tool without a task, or ask the operator to raise MCP_TASK_MAX_RESULT_BYTES",
			len(b), k.cfg.MaxResultBytes)
	}
	return res, nil
}

func (k *Keeper) isLocal(id string) bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	_, ok := k.tasks[id]
	return ok
}

// taskCall is a tasks/* request's parameters.
type taskCall struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params struct {
		TaskID string `json:"taskId"`
	} `json:"params"`
}

// fromStore answers tasks/get, tasks/result, tasks/cancel and tasks/list
// from the shared store when the task is not this replica's (or was
// cancelled from another replica), and reports whether it answered. A
// task of another identity, or one the store does not have, is left to
// mcp-go, which answers "not found" as for any unknown id.
func (k *Keeper) fromStore(w http.ResponseWriter, r *http.Request, body []byte) bool {
	var c taskCall
	if json.Unmarshal(body, &c) != nil {
		return false
	}
	switch c.Method {
	case "tasks/get", "tasks/result", "tasks/cancel", "tasks/list":
	default:
		return false
	}
	ctx := r.Context()
	p := httpauth.PrincipalFromContext(ctx)
	if c.Method == "tasks/list" {
		return k.listFromStore(w, ctx, c, p)
	}
	rec, err := k.store.GetTask(ctx, c.Params.TaskID)
	if err != nil {
		rpcError(w, c.ID, -32603, err.Error())
		return true
	}
	if rec == nil || rec.Issuer != p.Issuer || rec.Subject != p.Subject || rec.Modern {
		// An extension task is answered by Modern (for a client that
		// declared the extension), else as an id that never existed.
		return false
	}
	if k.isLocal(rec.ID) && rec.Status != state.TaskCancelled && rec.StatusMessage != state.DeadMessage {
		return false // mcp-go has it, with the same outcome
	}
	switch c.Method {
	case "tasks/get":
		if !modernRequest(body) || !rec.Terminal() {
			rpcResult(w, c.ID, wireTask(rec))
			return true
		}
		// 2026-07-28 has no tasks/result: the outcome comes inline.
		m := map[string]any{}
		b, _ := json.Marshal(wireTask(rec))
		json.Unmarshal(b, &m)
		m["resultType"] = "complete"
		switch {
		case rec.Status == state.TaskCompleted && rec.Result != nil:
			m["result"] = rec.Result
		case rec.Status == state.TaskFailed:
			m["error"] = map[string]any{"code": mcp.INTERNAL_ERROR, "message": rec.Error}
		}
		rpcResult(w, c.ID, m)
	case "tasks/cancel":
		if rec.Terminal() {
			rpcError(w, c.ID, -32602, "cannot cancel task in terminal status: "+rec.Status)
			return true
		}
		if _, err := k.store.CancelTask(ctx, rec.ID, "Task cancelled by request"); err != nil {
			rpcError(w, c.ID, -32603, err.Error())
			return true
		}
		if rec, err = k.store.GetTask(ctx, rec.ID); err != nil || rec == nil {
			rpcError(w, c.ID, -32603, "task state unreadable after cancel: "+errText(err))
			return true
		}
		rpcResult(w, c.ID, wireTask(rec))
	case "tasks/result":
		for !rec.Terminal() {
			select {
			case <-ctx.Done():
				rpcError(w, c.ID, -32800, ctx.Err().Error())
				return true
			case <-time.After(k.cfg.Heartbeat / 4):
			}
			if rec, err = k.store.GetTask(ctx, rec.ID); err != nil || rec == nil {
				rpcError(w, c.ID, -32603, "task state unreadable: "+errText(err))
				return true
			}
		}
		switch rec.Status {
		case state.TaskCompleted:
			var res map[string]any
			if json.Unmarshal(rec.Result, &res) != nil {
				res = map[string]any{"content": []any{}}
			}
			meta, _ := res["_meta"].(map[string]any)
			if meta == nil {
				meta = map[string]any{}
			}
			meta[mcp.RelatedTaskMetaKey] = map[string]any{"taskId": rec.ID}
			res["_meta"] = meta
			k.free(rec.ID)
			rpcResult(w, c.ID, res)
		case state.TaskCancelled:
			rpcError(w, c.ID, -32603, "task was cancelled")
		default:
			rpcError(w, c.ID, -32603, rec.Error)
		}
	}
	return true
}

func (k *Keeper) listFromStore(w http.ResponseWriter, ctx context.Context, c taskCall, p httpauth.Principal) bool {
	ids, err := k.store.ListTasks(ctx, p.Issuer, p.Subject)
	if err != nil {
		rpcError(w, c.ID, -32603, err.Error())
		return true
	}
	out := []any{}
	for _, id := range ids {
		rec, err := k.store.GetTask(ctx, id)
		if err != nil {
			rpcError(w, c.ID, -32603, err.Error())
			return true
		}
		if rec == nil || rec.Modern {
			continue // tasks/list is 2025-11-25's; extension tasks have none
		}
		t := wireTask(rec)
		k.fill(&t)
		out = append(out, t)
	}
	rpcResult(w, c.ID, map[string]any{"tasks": out})
	return true
}

func errText(err error) string {
	if err == nil {
		return "the task expired"
	}
	return err.Error()
}

func wireTask(rec *state.TaskRecord) mcp.Task {
	ttl := rec.TTL.Milliseconds()
	upd := rec.Updated
	if upd.IsZero() {
		upd = rec.Created
	}
	t := mcp.Task{TaskId: rec.ID, Status: mcp.TaskStatus(rec.Status), StatusMessage: rec.StatusMessage,
		CreatedAt: rec.Created.UTC().Format(time.RFC3339), LastUpdatedAt: upd.UTC().Format(time.RFC3339), TTL: &ttl}
	return t
}

func rpcResult(w http.ResponseWriter, id json.RawMessage, result any) {
	if len(id) == 0 {
		id = json.RawMessage("null")
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(map[string]any{"jsonrpc": "2.0", "id": id, "result": result})
}

// storeDown answers a call that needs the store while it is unreachable.
func (k *Keeper) storeDown(ctx context.Context) error {
	if k.store == nil {
		return nil
	}
	if err := k.store.Ping(ctx); err != nil {
		var se *state.StoreError
		if errors.As(err, &se) {
			return err
		}
		return err
	}
	return nil
}

func (k *Keeper) isCrashed() bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.crashed
}

// modernRequest reports whether a request is of protocol 2026-07-28.
func modernRequest(body []byte) bool {
	var c modernCall
	return json.Unmarshal(body, &c) == nil && c.Params.Meta.Version == mcp.LATEST_PROTOCOL_VERSION
}
