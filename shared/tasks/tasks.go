// Package tasks makes task-augmented tool calls (MCP 2025-11-25 tasks)
// work with mcp-go v1.2.1, which keeps the tasks itself (tasks/get,
// tasks/result, tasks/cancel, tasks/list) but runs a task on a context that
// ends with the request that created it: every task would be cancelled the
// moment its CreateTask answer is sent. mcp-go also keeps a task forever
// when the client names no TTL, and bounds only running tasks.
//
// A Keeper fixes that for the HTTP transport:
//   - Wrap, in front of mcp-go's streamable HTTP handler, sets a task's TTL
//     to MCP_TASK_TTL (or the client's shorter one), refuses a task with a
//     clear error once its caller's identity has MCP_MAX_TASKS outstanding,
//     and marks the request so the task can be told apart;
//   - Tool, around a tool handler, runs a task's handler on a context of its
//     own that ends only on tasks/cancel or at the TTL, so the work outlives
//     the request and a cancel still reaches the handler (and through it the
//     process it runs).
//
// A task belongs to the identity that created it (httpauth.Principal:
// issuer and subject compared as values). mcp-go scopes tasks to MCP
// sessions only, and a request without a session (protocol 2026-07-28, or a
// task created there) passes its check, so any caller could get, cancel or
// list anyone's task. The keeper's hooks answer every tasks/get,
// tasks/result and tasks/cancel naming a task of another identity exactly
// as for an id that never existed, and drop such tasks from tasks/list, on
// every transport and protocol version.
package tasks

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/mcpfleet/mcpfleet/shared/envconfig"
	"github.com/mcpfleet/mcpfleet/shared/httpauth"
	"github.com/mcpfleet/mcpfleet/shared/httpbody"
	"github.com/mcpfleet/mcpfleet/shared/jsonscan"
	"github.com/mcpfleet/mcpfleet/shared/state"
)

// Defaults for the environment variables.
const (
	DefaultTTL = time.Hour
	DefaultMax = 100
)

// Vars documents the variables FromEnv reads.
var Vars = []envconfig.Var{
	{Name: "MCP_TASK_TTL", Default: DefaultTTL.String(), Description: "how long a task and its result are kept (a client may ask for less)"},
	{Name: "MCP_MAX_TASKS", Default: fmt.Sprint(DefaultMax), Description: "tasks one identity may have outstanding (running, or finished with the result not yet fetched); its further task requests are refused"},
	storeVars[0], storeVars[1],
}

// Config bounds the tasks a server keeps.
type Config struct {
	TTL time.Duration // kept this long after creation, at most
	Max int           // outstanding at once per identity
	// StateURL is MCP_STATE_URL: set, task records live in that store too,
	// so every replica answers for every task.
	StateURL string
	// Heartbeat is how often a running task is renewed in the store.
	Heartbeat time.Duration
	// MaxResultBytes bounds a task's result.
	MaxResultBytes int
	// Logf, when set, receives what the keeper could not record.
	Logf func(format string, args ...any)
}

// FromEnv reads MCP_TASK_TTL and MCP_MAX_TASKS.
func FromEnv(r *envconfig.Reader) Config {
	return Config{
		TTL:            r.Duration("MCP_TASK_TTL", DefaultTTL, time.Second),
		Max:            r.Int("MCP_MAX_TASKS", DefaultMax, 1, 1_000_000),
		StateURL:       stateURL(r),
		Heartbeat:      r.Duration("MCP_TASK_HEARTBEAT", DefaultHeartbeat, 100*time.Millisecond),
		MaxResultBytes: r.Int("MCP_TASK_MAX_RESULT_BYTES", DefaultMaxResultBytes, 1024, 512<<20),
	}
}

func stateURL(r *envconfig.Reader) string {
	v := r.Lookup(state.URLVar)
	if v != "" {
		if err := state.CheckURL(v); err != nil {
			r.Fail(state.URLVar, state.Redact(v), "redis://[user:password@]host[:port][/db] or rediss://… (TLS)")
		}
	}
	return v
}

// Keeper applies Config to task-augmented calls and links mcp-go's tasks
// to the handler runs behind them.
type Keeper struct {
	cfg   Config
	store *state.Redis // nil: tasks live in this process only

	mu sync.Mutex
	// tasks holds the owner of every task mcp-go may still answer for
	// (until its TTL plus mcp-go's "expired" tombstone); outstanding counts
	// each identity's tasks that hold a slot, plus its requests about to
	// create one.
	tasks       map[string]*record
	outstanding map[httpauth.Principal]int
	running     map[string]runEntry // task id -> its handler run
	// waiting holds the tasks created whose handler has not started yet:
	// a tasks/cancel can arrive before it does (mcp-go starts the handler
	// on a goroutine of its own, and misses such a cancel itself).
	waiting map[string]*link
	// pending links a task-augmented tools/call that came without Wrap
	// (stdio, in-process) from its BeforeCallTool hook to its task's
	// creation: mcp-go runs both with the very same request context.
	pending map[context.Context]*link
	// linked carries such a link on to the handler, by the nonce the hook
	// put in the request's _meta (the handler's context is a child of the
	// request's, whose values the keeper cannot set).
	linked map[string]*link
	// modern holds the 2026-07-28 tasks (modern.go); server is the MCP
	// server they run on.
	modern map[string]*modernTask
	// inboxes hold each task's open question while its run asks the
	// client (input.go).
	inboxes map[string]*inbox
	// before holds BeforeTask's functions by tool name.
	before map[string]func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, bool)
	// changed is closed (and replaced) on every extension task status
	// change, waking subscriptions/listen streams (notify.go).
	changed chan struct{}
	server  *server.MCPServer
	stopped bool
	// crashed (tests: export_test.go) stops every store write, as a killed
	// process would.
	crashed bool
	idle    chan struct{} // closed while no run is under way
}

// record is what the keeper knows of one task.
type record struct {
	owner   httpauth.Principal
	slot    bool // counted in outstanding[owner]
	created time.Time
	ttl     time.Duration
	// end is the run's outcome once its handler returned, for a
	// 2026-07-28 tasks/get (the result inline: tasks/result is gone).
	end *taskEnd
}

// taskEnd is how a task's run ended.
type taskEnd struct {
	status string          // completed, failed, cancelled
	result json.RawMessage // completed
	err    string          // failed
	at     time.Time
}

// forgetAfter is how long after its TTL a task's owner is still known:
// mcp-go answers "task has expired" for five minutes after the TTL, and
// only the owner may learn that.
const forgetAfter = 6 * time.Minute

// runEntry is one task's handler run: how to end it and its latest
// progress.
type runEntry struct {
	cancel context.CancelFunc
	status *status
}

// NewKeeper returns a keeper for cfg (zero fields take the defaults).
func NewKeeper(cfg Config) *Keeper {
	if cfg.TTL <= 0 {
		cfg.TTL = DefaultTTL
	}
	if cfg.Max <= 0 {
		cfg.Max = DefaultMax
	}
	if cfg.Heartbeat <= 0 {
		cfg.Heartbeat = DefaultHeartbeat
	}
	if cfg.MaxResultBytes <= 0 {
		cfg.MaxResultBytes = DefaultMaxResultBytes
	}
	var store *state.Redis
	if cfg.StateURL != "" {
		var err error
		if store, err = state.OpenRedis(cfg.StateURL); err != nil {
			panic(err) // FromEnv refuses such a URL; a caller in code must check it (state.CheckURL)
		}
	}
	idle := make(chan struct{})
	close(idle)
	return &Keeper{cfg: cfg, store: store, tasks: map[string]*record{}, outstanding: map[httpauth.Principal]int{},
		running: map[string]runEntry{}, waiting: map[string]*link{},
		pending: map[context.Context]*link{}, linked: map[string]*link{}, modern: map[string]*modernTask{}, inboxes: map[string]*inbox{}, idle: idle}
}

// ServerOptions declares the tasks capability (tasks/list, tasks/cancel,
// task-augmented tools/call) and hooks the keeper into mcp-go's task
// lifecycle and into tasks/get and tasks/list answers (statusMessage). The
// answers' hooks are added to the server's Hooks, so a WithHooks option
// must come before these (serve.NewServer installs one first).
func (k *Keeper) ServerOptions() []server.ServerOption {
	hooks := &server.TaskHooks{}
	hooks.AddOnTaskCreated(func(ctx context.Context, m server.TaskMetrics) { k.created(ctx, m.TaskID) })
	// A task that ends without its handler going through Tool (none do
	// today) leaves nothing waiting.
	hooks.AddOnTaskCompleted(func(ctx context.Context, m server.TaskMetrics) {
		k.mu.Lock()
		delete(k.waiting, m.TaskID)
		k.mu.Unlock()
	})
	// A failed task has nothing left to fetch: its slot is free at once
	// (a completed one keeps it until its result is fetched, or the TTL).
	hooks.AddOnTaskFailed(func(ctx context.Context, m server.TaskMetrics) {
		k.mu.Lock()
		delete(k.waiting, m.TaskID)
		k.mu.Unlock()
		k.free(m.TaskID)
	})
	hooks.AddOnTaskCancelled(func(ctx context.Context, m server.TaskMetrics) {
		if k.store != nil {
			if _, err := k.store.CancelTask(context.WithoutCancel(ctx), m.TaskID, "Task cancelled by request"); err != nil {
				k.logf("task %s: recording its cancel: %v", m.TaskID, err)
			}
		}
		k.cancel(m.TaskID)
		k.free(m.TaskID)
	})
	answers := func(s *server.MCPServer) {
		k.mu.Lock()
		k.server = s
		k.mu.Unlock()
		keepers.Store(s, k)
		h := s.GetHooks()
		if h == nil {
			h = &server.Hooks{}
			server.WithHooks(h)(s)
		}
		// A request naming a task of another identity (or one the keeper
		// does not know) goes on naming no task at all, so that mcp-go
		// answers it exactly as an id that never existed: same error, same
		// status, on every transport and protocol version. The before
		// hooks run on the request mcp-go then handles.
		// Over stdio (and in-process) no Wrap stands in front of mcp-go:
		// the hooks do its work, with the same bounds and refusals.
		h.AddOnRequestInitialization(k.refuseFull)
		h.AddAfterDiscover(k.advertise)
		h.AddBeforeCallTool(k.beforeCall)
		h.AddAfterCallTool(func(ctx context.Context, _ any, _ *mcp.CallToolRequest, _ any) { k.unlinked(ctx) })
		h.AddOnError(func(ctx context.Context, _ any, method mcp.MCPMethod, _ any, _ error) {
			if method == mcp.MethodToolsCall {
				k.unlinked(ctx)
			}
		})
		h.AddBeforeGetTask(func(ctx context.Context, _ any, req *mcp.GetTaskRequest) {
			k.screen(ctx, &req.Params.TaskId)
		})
		h.AddBeforeTaskResult(func(ctx context.Context, _ any, req *mcp.TaskResultRequest) {
			k.screen(ctx, &req.Params.TaskId)
			// A task that asks its client does so on this request's
			// stream (2025-11-25); this returns once the run has ended.
			k.askOverResult(ctx, req.Params.TaskId)
		})
		h.AddBeforeCancelTask(func(ctx context.Context, _ any, req *mcp.CancelTaskRequest) {
			k.screen(ctx, &req.Params.TaskId)
		})
		// mcp-go v1.2.1 keeps a task's status in an unexported entry and
		// offers no way to update a working task's statusMessage, so the
		// keeper fills it into the answers.
		h.AddAfterGetTask(func(ctx context.Context, id any, _ *mcp.GetTaskRequest, res *mcp.GetTaskResult) {
			if res != nil {
				k.fill(&res.Task)
				// On 2026-07-28 tasks/get is how the outcome is fetched
				// (tasks/result is gone): once it reports an end, the slot
				// is free.
				if res.Status.IsTerminal() && server.IsModernRequest(ctx) {
					k.free(res.TaskId)
				}
			}
		})
		h.AddAfterTaskResult(func(ctx context.Context, id any, req *mcp.TaskResultRequest, res *mcp.TaskResultResult) {
			if res != nil {
				k.free(req.Params.TaskId)
			}
		})
		h.AddAfterListTasks(func(ctx context.Context, id any, _ *mcp.ListTasksRequest, res *mcp.ListTasksResult) {
			if res == nil {
				return
			}
			p := httpauth.PrincipalFromContext(ctx)
			mine := res.Tasks[:0]
			for _, t := range res.Tasks {
				if k.owns(p, t.TaskId) {
					k.fill(&t)
					mine = append(mine, t)
				}
			}
			if len(mine) < len(res.Tasks) {
				// mcp-go's cursor is the last listed task's id. serve sets
				// no page limit, so there is none; with one, a page that
				// held another's task ends the list rather than name it.
				res.NextCursor = ""
			}
			res.Tasks = mine
		})
	}
	return []server.ServerOption{server.WithTaskCapabilities(true, true, true), server.WithTaskHooks(hooks), answers}
}

// fill sets a working task's statusMessage to its latest progress, and its
// status to input_required while it waits for the client's answer.
func (k *Keeper) fill(t *mcp.Task) {
	if t.Status != mcp.TaskStatusWorking {
		return
	}
	k.mu.Lock()
	r, ok := k.running[t.TaskId]
	b := k.inboxes[t.TaskId]
	k.mu.Unlock()
	if b != nil && len(b.pending()) > 0 {
		t.Status = mcp.TaskStatusInputRequired
		t.StatusMessage = "waiting for the client's answer: call tasks/result to receive the request (elicitation/create)"
		return
	}
	if !ok {
		return
	}
	if msg := r.status.get(); msg != "" {
		t.StatusMessage = msg
	}
}

// owns reports whether task id belongs to p.
func (k *Keeper) owns(p httpauth.Principal, id string) bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	r, ok := k.tasks[id]
	return ok && r.owner == p
}

// screen replaces *id with one no task has unless the caller of ctx owns
// it.
func (k *Keeper) screen(ctx context.Context, id *string) {
	if !k.owns(httpauth.PrincipalFromContext(ctx), *id) {
		*id = ""
	}
}

// free releases task id's slot, once.
func (k *Keeper) free(id string) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if r, ok := k.tasks[id]; ok && r.slot {
		r.slot = false
		k.release(r.owner)
	}
}

// Running is how many task handler runs are under way.
func (k *Keeper) Running() int {
	k.mu.Lock()
	defer k.mu.Unlock()
	return len(k.running)
}

// link carries the id mcp-go gives a task from its creation (a hook, in the
// request's goroutine) to the handler (another goroutine, same context
// values).
type link struct {
	mu    sync.Mutex
	id    string
	ttl   time.Duration
	owner httpauth.Principal // holds a reserved slot for the task
	// cancelled is set (under the keeper's mu) by a tasks/cancel that came
	// before the handler started.
	cancelled bool
	// nonce is beforeCall's mark in the request (no Wrap).
	nonce string
	// refused, when set, holds no slot: the task fails with it at once.
	refused error
}

type linkKey struct{}

func (l *link) set(id string) {
	l.mu.Lock()
	l.id = id
	l.mu.Unlock()
}

func (l *link) get() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.id
}

// Tool wraps a tool handler: a plain call runs as before; a task runs on a
// context detached from the creating request, cancelled by tasks/cancel or
// when the task's TTL ends.
func (k *Keeper) Tool(h server.ToolHandlerFunc) server.ToolHandlerFunc {
	return func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		l, _ := ctx.Value(linkKey{}).(*link)
		if l == nil && req.Params.Task != nil {
			l = k.takeLinked(&req)
		}
		if req.Params.Task == nil || l == nil || l.get() == "" {
			return h(ctx, req)
		}
		if l.refused != nil {
			return nil, l.refused
		}
		id := l.get()
		run, cancel := context.WithTimeout(context.WithoutCancel(ctx), l.ttl)
		defer cancel()
		st := &status{}
		run = context.WithValue(run, statusKey{}, st)
		k.mu.Lock()
		b := k.inboxes[id]
		if b == nil {
			b = newInbox(id, false)
			b.session = sessionOf(ctx)
			k.inboxes[id] = b
		}
		run = k.attach(run, b)
		defer b.end()
		if k.stopped || l.cancelled {
			cancel() // the server is stopping, or the task was cancelled before it started: the run ends at once
		}
		delete(k.waiting, id)
		if len(k.running) == 0 {
			k.idle = make(chan struct{})
		}
		k.running[id] = runEntry{cancel: cancel, status: st}
		k.mu.Unlock()
		if k.store != nil {
			done := make(chan struct{})
			go k.heartbeat(id, st, cancel, done)
			res, err := k.bound(h(run, req))
			close(done)
			k.mu.Lock()
			delete(k.running, id)
			if len(k.running) == 0 {
				close(k.idle)
			}
			k.mu.Unlock()
			k.mu.Lock()
			stopped := k.stopped
			k.mu.Unlock()
			if stopped && err != nil {
				err = fmt.Errorf("%s: %w", state.DeadMessage, err)
			}
			k.finish(id, res, err, !stopped && run.Err() == context.Canceled)
			k.noteEnd(id, res, err, !stopped && run.Err() == context.Canceled)
			return res, err
		}
		defer func() {
			k.mu.Lock()
			delete(k.running, id)
			if len(k.running) == 0 {
				close(k.idle)
			}
			k.mu.Unlock()
		}()
		res, err := k.bound(h(run, req))
		k.noteEnd(id, res, err, run.Err() == context.Canceled)
		return res, err
	}
}

// noteEnd keeps how task id's run ended.
func (k *Keeper) noteEnd(id string, res *mcp.CallToolResult, err error, cancelled bool) {
	e := &taskEnd{status: string(mcp.TaskStatusCompleted), at: time.Now()}
	switch {
	case cancelled:
		e.status = string(mcp.TaskStatusCancelled)
	case err != nil:
		e.status, e.err = string(mcp.TaskStatusFailed), err.Error()
	default:
		e.result, _ = json.Marshal(res)
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	if r := k.tasks[id]; r != nil && r.end == nil {
		r.end = e
	}
}

// ended returns the caller's ended task id and its record, or nil.
func (k *Keeper) ended(p httpauth.Principal, id string) *record {
	k.mu.Lock()
	defer k.mu.Unlock()
	r := k.tasks[id]
	if r == nil || r.owner != p || r.end == nil {
		return nil
	}
	c := *r
	return &c
}

// StopWait bounds how long Stop waits for cancelled runs to end.
const StopWait = 10 * time.Second

// Stop cancels every task run still under way and waits (up to StopWait)
// until their handlers have returned, so the work they started (a child
// process, a query) is ended before the server exits. A task detached from
// its request would otherwise outlive the server's graceful shutdown. Call
// it once the server has stopped serving (serve's shutdown has given
// in-flight calls, tasks included, MCP_SHUTDOWN_TIMEOUT). A nil keeper
// does nothing.
func (k *Keeper) Stop() {
	if k == nil {
		return
	}
	k.mu.Lock()
	k.stopped = true
	for _, r := range k.running {
		r.cancel()
	}
	idle := k.idle
	k.mu.Unlock()
	select {
	case <-idle:
	case <-time.After(StopWait):
	}
}

// created records a new task's owner, links it to the request that
// created it, and keeps it as waiting for its handler. It runs inside
// mcp-go's task creation, before the client can learn the id.
func (k *Keeper) created(ctx context.Context, id string) {
	owner := httpauth.PrincipalFromContext(ctx)
	ttl := k.cfg.TTL
	l, linked := ctx.Value(linkKey{}).(*link)
	k.mu.Lock()
	if !linked {
		l, linked = k.pending[ctx]
		delete(k.pending, ctx)
	}
	if linked {
		// The slot Wrap reserved for the request becomes the task's.
		owner, ttl = l.owner, l.ttl
		k.waiting[id] = l
		b := newInbox(id, false)
		b.session = sessionOf(ctx)
		k.inboxes[id] = b
	} else {
		// Created without Wrap (legacy SSE): counted, not refusable.
		k.outstanding[owner]++
	}
	k.tasks[id] = &record{owner: owner, slot: !linked || l.refused == nil, created: time.Now(), ttl: ttl}
	k.mu.Unlock()
	k.storeTask(ctx, id, owner, ttl)
	if linked {
		l.set(id)
	}
	time.AfterFunc(ttl, func() { k.free(id) })
	time.AfterFunc(ttl+forgetAfter, func() {
		k.mu.Lock()
		delete(k.tasks, id)
		delete(k.inboxes, id)
		k.mu.Unlock()
	})
}

// cancel ends a task's handler run, or marks a task whose handler has not
// started yet so that it ends as soon as it starts.
func (k *Keeper) cancel(id string) {
	k.mu.Lock()
	r, ok := k.running[id]
	if l := k.waiting[id]; !ok && l != nil {
		l.cancelled = true
	}
	k.mu.Unlock()
	if ok {
		r.cancel()
	}
}

// call is the part of a JSON-RPC message the keeper looks at.
type call struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params *callParams     `json:"params"`
}

type callParams struct {
	Task *struct {
		TTL *float64 `json:"ttl"`
	} `json:"task"`
}

// toolsCall is a tools/call as modernCall and call read it, decoded at
// once: the members of both (a call with a task may be a 2026-07-28 one).
type toolsCall struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params struct {
		modernParams
		callParams
	} `json:"params"`
}

// wrapped are the methods Wrap answers or changes (fromStore, listen,
// modernHTTP, a tools/call with a task); every other message goes to
// mcp-go as it came.
var wrapped = map[string]bool{
	"tools/call": true, "tasks/get": true, "tasks/result": true, "tasks/cancel": true,
	"tasks/list": true, "tasks/update": true, "subscriptions/listen": true,
}

// envelope is what the byte scanner tells of a message: the method a
// struct decoding reads (the last member named "method" in any case),
// whether it could tell (known), and the one member named "params" in any
// case (nil when none; several is true when there are more). Each reader
// keyed on the method finds none other than its own when known, so an
// unknown message is decoded as before.
type envelope struct {
	method  string
	known   bool
	params  []byte
	several bool
}

func scanEnvelope(body []byte) (e envelope) {
	var f [jsonscan.MaxFields]jsonscan.Field
	n, ok := jsonscan.TopFields(body, &f)
	if !ok {
		return e
	}
	var method []byte
	for _, m := range f[:n] {
		switch {
		case bytes.EqualFold(m.Key, []byte("method")):
			method = m.Val
		case bytes.EqualFold(m.Key, []byte("params")):
			e.several = e.params != nil
			e.params = m.Val
		}
	}
	if method == nil {
		return envelope{known: true} // no method: encoding/json reads ""
	}
	// A method not a plain string (null, escaped, another type, invalid
	// UTF-8) is left to encoding/json.
	name, plain := jsonscan.PlainString(method)
	e.method, e.known = string(name), plain && utf8.Valid(name)
	return e
}

// decodeCall reads body as modernCall and call read it. A tools/call with
// one params member (the scanner saw them all) is decoded once: when that
// succeeds each reading would have, with the same values (their members
// are a subset, and a missing or null params is call's nil Params).
// Anything else, or a failure, is decoded once per reading, as before.
func decodeCall(body []byte, e envelope) (mc modernCall, mok bool, c call, cok bool) {
	if e.known && e.method == "tools/call" && !e.several {
		var t toolsCall
		if json.Unmarshal(body, &t) == nil {
			mc = modernCall{ID: t.ID, Method: t.Method, Params: t.Params.modernParams}
			c = call{ID: t.ID, Method: t.Method}
			if e.params != nil && string(e.params) != "null" {
				c.Params = &t.Params.callParams
			}
			return mc, true, c, true
		}
	}
	mc, mok = decodeModern(body)
	if e.known && e.method != "tools/call" {
		return mc, mok, c, false // no tools/call: no task to create
	}
	return mc, mok, c, json.Unmarshal(body, &c) == nil
}

// Wrap returns next (mcp-go's streamable HTTP handler) with the keeper in
// front. The body is read once (already in memory behind serve's limit,
// httpbody) and decoded only for the methods the keeper handles.
func (k *Keeper) Wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, ok := httpbody.Message(r)
		if !ok {
			next.ServeHTTP(w, r)
			return
		}
		e := scanEnvelope(body)
		if e.known && !wrapped[e.method] {
			next.ServeHTTP(w, r)
			return
		}
		if k.store != nil && (!e.known || strings.HasPrefix(e.method, "tasks/")) && k.fromStore(w, r, body) {
			return
		}
		if (!e.known || e.method == "subscriptions/listen") && k.listen(w, r, body) {
			return
		}
		mc, mok, c, cok := decodeCall(body, e)
		if answer, ok := k.modernHTTP(r, mc, mok, body); ok {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(httpStatus(answer))
			w.Write(answer)
			return
		}
		if !cok || c.Method != "tools/call" || c.Params == nil || c.Params.Task == nil {
			next.ServeHTTP(w, r)
			return
		}
		if err := k.storeDown(r.Context()); err != nil {
			rpcError(w, c.ID, -32603, "cannot create a task: "+err.Error())
			return
		}
		ttl := k.cfg.TTL
		if t := c.Params.Task.TTL; t != nil {
			if *t < 1 || *t != math.Trunc(*t) {
				rpcError(w, c.ID, -32602, fmt.Sprintf("task.ttl %v is not a positive whole number of milliseconds; omit it to keep the task for %s (MCP_TASK_TTL)", *t, k.cfg.TTL))
				return
			}
			if *t < float64(ttl.Milliseconds()) {
				ttl = time.Duration(*t) * time.Millisecond
			}
		}
		body, err := setTTL(body, ttl)
		if err != nil {
			rpcError(w, c.ID, -32602, "params.task is not an object: "+err.Error())
			return
		}
		owner := httpauth.PrincipalFromContext(r.Context())
		if !k.reserve(owner) {
			rpcError(w, c.ID, -32603, fmt.Sprintf("cannot create a task: you already have %d tasks outstanding (MCP_MAX_TASKS, per identity), running or finished with the result not yet fetched; "+
				"fetch results (tasks/result, or tasks/get once a task has ended), cancel tasks you no longer need (tasks/cancel), wait for them to expire (MCP_TASK_TTL %s), or call the tool without a task", k.cfg.Max, k.cfg.TTL))
			return
		}
		l := &link{ttl: ttl, owner: owner}
		httpbody.Hold(r, body)
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), linkKey{}, l)))
		if l.get() == "" {
			// Refused by mcp-go (unknown tool, no task support): nothing
			// stored.
			k.mu.Lock()
			k.release(owner)
			k.mu.Unlock()
		}
	})
}

// reserve takes a slot for a task owner is about to create.
func (k *Keeper) reserve(owner httpauth.Principal) bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.outstanding[owner] >= k.cfg.Max {
		return false
	}
	k.outstanding[owner]++
	return true
}

// release gives owner's slot back; k.mu is held.
func (k *Keeper) release(owner httpauth.Principal) {
	if k.outstanding[owner]--; k.outstanding[owner] <= 0 {
		delete(k.outstanding, owner)
	}
}

// setTTL rewrites params.task.ttl, keeping every other byte's meaning.
func setTTL(body []byte, ttl time.Duration) ([]byte, error) {
	var msg map[string]json.RawMessage
	if err := json.Unmarshal(body, &msg); err != nil {
		return body, err
	}
	var params map[string]json.RawMessage
	if err := json.Unmarshal(msg["params"], &params); err != nil {
		return body, err
	}
	var task map[string]json.RawMessage
	if err := json.Unmarshal(params["task"], &task); err != nil {
		return body, err
	}
	if task == nil {
		task = map[string]json.RawMessage{}
	}
	task["ttl"] = json.RawMessage(fmt.Sprint(ttl.Milliseconds()))
	var err error
	if params["task"], err = json.Marshal(task); err != nil {
		return body, err
	}
	if msg["params"], err = json.Marshal(params); err != nil {
		return body, err
	}
	return json.Marshal(msg)
}

func rpcError(w http.ResponseWriter, id json.RawMessage, code int, msg string) {
	if len(id) == 0 {
		id = json.RawMessage("null")
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(map[string]any{"jsonrpc": "2.0", "id": id, "error": map[string]any{"code": code, "message": msg}})
}
