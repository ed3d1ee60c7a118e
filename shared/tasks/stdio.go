package tasks

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcpfleet/mcpfleet/shared/httpauth"
)

// linkMetaKey names the nonce beforeCall puts in a task-augmented call's
// _meta so that Tool finds the call's link; Tool removes it before the
// handler sees the request.
const linkMetaKey = "io.mcpfleet/taskLink"

// refuseFull is Wrap's refusals for requests that come without Wrap
// (stdio, in-process): a task TTL that is no positive whole number of
// milliseconds, and a task past MCP_MAX_TASKS for its caller. mcp-go
// answers the error as an invalid request (-32600) with this text.
func (k *Keeper) refuseFull(ctx context.Context, _ any, message any) error {
	if _, wrapped := ctx.Value(linkKey{}).(*link); wrapped {
		return nil
	}
	raw, ok := message.(json.RawMessage)
	if !ok {
		return nil
	}
	var c call
	if json.Unmarshal(raw, &c) != nil || c.Method != "tools/call" || c.Params == nil || c.Params.Task == nil {
		return nil
	}
	if t := c.Params.Task.TTL; t != nil && (*t < 1 || *t != math.Trunc(*t)) {
		return fmt.Errorf("task.ttl %v is not a positive whole number of milliseconds; omit it to keep the task for %s (MCP_TASK_TTL)", *t, k.cfg.TTL)
	}
	if err := k.storeDown(ctx); err != nil {
		return errors.New("cannot create a task: " + err.Error())
	}
	owner := httpauth.PrincipalFromContext(ctx)
	k.mu.Lock()
	full := k.outstanding[owner] >= k.cfg.Max
	k.mu.Unlock()
	if full {
		return k.fullError()
	}
	return nil
}

func (k *Keeper) fullError() error {
	return fmt.Errorf("cannot create a task: you already have %d tasks outstanding (MCP_MAX_TASKS, per identity), running or finished with the result not yet fetched; "+
		"fetch results (tasks/result, or tasks/get once a task has ended), cancel tasks you no longer need (tasks/cancel), wait for them to expire (MCP_TASK_TTL %s), or call the tool without a task", k.cfg.Max, k.cfg.TTL)
}

// beforeCall does Wrap's work for a task-augmented call that came without
// it: the task's TTL is MCP_TASK_TTL or the client's shorter one, a slot is
// reserved for the caller, and the call is linked to the task mcp-go is
// about to create (created) and, through a nonce in its _meta, to the
// handler run (Tool).
func (k *Keeper) beforeCall(ctx context.Context, _ any, req *mcp.CallToolRequest) {
	if req.Params.Task == nil {
		return
	}
	if _, wrapped := ctx.Value(linkKey{}).(*link); wrapped {
		return
	}
	ttl := k.cfg.TTL
	if t := req.Params.Task.TTL; t != nil && *t > 0 && *t < ttl.Milliseconds() {
		ttl = time.Duration(*t) * time.Millisecond
	}
	ms := ttl.Milliseconds()
	req.Params.Task.TTL = &ms
	owner := httpauth.PrincipalFromContext(ctx)
	l := &link{ttl: ttl, owner: owner}
	if !k.reserve(owner) {
		// Another request took the last slot since refuseFull looked: the
		// task is created and fails at once with the refusal.
		l.refused = k.fullError()
	}
	nonce := rand.Text()
	if req.Params.Meta == nil {
		req.Params.Meta = &mcp.Meta{}
	}
	if req.Params.Meta.AdditionalFields == nil {
		req.Params.Meta.AdditionalFields = map[string]any{}
	}
	req.Params.Meta.AdditionalFields[linkMetaKey] = nonce
	k.mu.Lock()
	k.pending[ctx] = l
	k.linked[nonce] = l
	l.nonce = nonce
	k.mu.Unlock()
}

// unlinked forgets a call's link once mcp-go has answered it. A call that
// created no task (refused by mcp-go: unknown tool, no task support) gives
// its slot back.
func (k *Keeper) unlinked(ctx context.Context) {
	k.mu.Lock()
	defer k.mu.Unlock()
	l, ok := k.pending[ctx]
	if !ok {
		return
	}
	delete(k.pending, ctx)
	delete(k.linked, l.nonce)
	if l.refused == nil {
		k.release(l.owner)
	}
}

// takeLinked returns the link beforeCall made for req and removes its
// nonce from the request.
func (k *Keeper) takeLinked(req *mcp.CallToolRequest) *link {
	if req.Params.Meta == nil {
		return nil
	}
	nonce, _ := req.Params.Meta.AdditionalFields[linkMetaKey].(string)
	if nonce == "" {
		return nil
	}
	fields := make(map[string]any, len(req.Params.Meta.AdditionalFields))
	for key, v := range req.Params.Meta.AdditionalFields {
		if key != linkMetaKey {
			fields[key] = v
		}
	}
	meta := *req.Params.Meta
	meta.AdditionalFields = fields
	req.Params.Meta = &meta
	k.mu.Lock()
	defer k.mu.Unlock()
	l := k.linked[nonce]
	delete(k.linked, nonce)
	return l
}
