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
//     clear error once MCP_MAX_TASKS are stored, and marks the request so
//     the task can be told apart;
//   - Tool, around a tool handler, runs a task's handler on a context of its
//     own that ends only on tasks/cancel or at the TTL, so the work outlives
//     the request and a cancel still reaches the handler (and through it the
//     process it runs).
//
// mcp-go scopes tasks to the MCP session that created them (another session
// gets "task not found"), and serve binds a session to the OAuth identity
// that opened it, so a task belongs to its creator's identity.
package tasks

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"sync"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/mcpfleet/mcpfleet/shared/envconfig"
)

// Defaults for the environment variables.
const (
	DefaultTTL = time.Hour
	DefaultMax = 100
)

// Vars documents the variables FromEnv reads.
var Vars = []envconfig.Var{
	{Name: "MCP_TASK_TTL", Default: DefaultTTL.String(), Description: "how long a task and its result are kept (a client may ask for less)"},
	{Name: "MCP_MAX_TASKS", Default: fmt.Sprint(DefaultMax), Description: "tasks stored at once per server; further task requests are refused"},
}

// Config bounds the tasks a server keeps.
type Config struct {
	TTL time.Duration // kept this long after creation, at most
	Max int           // stored at once
}

// FromEnv reads MCP_TASK_TTL and MCP_MAX_TASKS.
func FromEnv(r *envconfig.Reader) Config {
	return Config{
		TTL: r.Duration("MCP_TASK_TTL", DefaultTTL, time.Second),
		Max: r.Int("MCP_MAX_TASKS", DefaultMax, 1, 1_000_000),
	}
}

// Keeper applies Config to task-augmented calls and links mcp-go's tasks
// to the handler runs behind them.
type Keeper struct {
	cfg Config

	mu      sync.Mutex
	stored  int
	running map[string]runEntry // task id -> its handler run
	// waiting holds the tasks created whose handler has not started yet:
	// a tasks/cancel can arrive before it does (mcp-go starts the handler
	// on a goroutine of its own, and misses such a cancel itself).
	waiting map[string]*link
	stopped bool
	idle    chan struct{} // closed while no run is under way
}

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
	idle := make(chan struct{})
	close(idle)
	return &Keeper{cfg: cfg, running: map[string]runEntry{}, waiting: map[string]*link{}, idle: idle}
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
	forget := func(ctx context.Context, m server.TaskMetrics) {
		k.mu.Lock()
		delete(k.waiting, m.TaskID)
		k.mu.Unlock()
	}
	hooks.AddOnTaskCompleted(forget)
	hooks.AddOnTaskFailed(forget)
	hooks.AddOnTaskCancelled(func(ctx context.Context, m server.TaskMetrics) { k.cancel(m.TaskID) })
	answers := func(s *server.MCPServer) {
		h := s.GetHooks()
		if h == nil {
			h = &server.Hooks{}
			server.WithHooks(h)(s)
		}
		// mcp-go v1.2.1 keeps a task's status in an unexported entry and
		// offers no way to update a working task's statusMessage, so the
		// keeper fills it into the answers, after mcp-go has checked that
		// the task belongs to the caller's session.
		h.AddAfterGetTask(func(ctx context.Context, id any, _ *mcp.GetTaskRequest, res *mcp.GetTaskResult) {
			if res != nil {
				k.fill(&res.Task)
			}
		})
		h.AddAfterListTasks(func(ctx context.Context, id any, _ *mcp.ListTasksRequest, res *mcp.ListTasksResult) {
			if res != nil {
				for i := range res.Tasks {
					k.fill(&res.Tasks[i])
				}
			}
		})
	}
	return []server.ServerOption{server.WithTaskCapabilities(true, true, true), server.WithTaskHooks(hooks), answers}
}

// fill sets a working task's statusMessage to its latest progress.
func (k *Keeper) fill(t *mcp.Task) {
	if t.Status != mcp.TaskStatusWorking {
		return
	}
	k.mu.Lock()
	r, ok := k.running[t.TaskId]
	k.mu.Unlock()
	if !ok {
		return
	}
	if msg := r.status.get(); msg != "" {
		t.StatusMessage = msg
	}
}

// Stored is how many tasks the keeper counts as kept.
func (k *Keeper) Stored() int {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.stored
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
	mu  sync.Mutex
	id  string
	ttl time.Duration
	// cancelled is set (under the keeper's mu) by a tasks/cancel that came
	// before the handler started.
	cancelled bool
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
		if req.Params.Task == nil || l == nil || l.get() == "" {
			return h(ctx, req)
		}
		id := l.get()
		run, cancel := context.WithTimeout(context.WithoutCancel(ctx), l.ttl)
		defer cancel()
		st := &status{}
		run = context.WithValue(run, statusKey{}, st)
		k.mu.Lock()
		if k.stopped || l.cancelled {
			cancel() // the server is stopping, or the task was cancelled before it started: the run ends at once
		}
		delete(k.waiting, id)
		if len(k.running) == 0 {
			k.idle = make(chan struct{})
		}
		k.running[id] = runEntry{cancel: cancel, status: st}
		k.mu.Unlock()
		defer func() {
			k.mu.Lock()
			delete(k.running, id)
			if len(k.running) == 0 {
				close(k.idle)
			}
			k.mu.Unlock()
		}()
		return h(run, req)
	}
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

// created links a new task to the request that created it, and keeps it
// as waiting for its handler.
func (k *Keeper) created(ctx context.Context, id string) {
	l, ok := ctx.Value(linkKey{}).(*link)
	if !ok {
		return
	}
	l.set(id)
	k.mu.Lock()
	k.waiting[id] = l
	k.mu.Unlock()
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
	Params *struct {
		Task *struct {
			TTL *float64 `json:"ttl"`
		} `json:"task"`
	} `json:"params"`
}

// Wrap returns next (mcp-go's streamable HTTP handler) with the keeper in
// front.
func (k *Keeper) Wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.Body == nil {
			next.ServeHTTP(w, r)
			return
		}
		body, err := io.ReadAll(r.Body)
		r.Body.Close()
		r.Body = io.NopCloser(bytes.NewReader(body))
		if err != nil {
			next.ServeHTTP(w, r) // the body limit upstream answers
			return
		}
		var c call
		if json.Unmarshal(body, &c) != nil || c.Method != "tools/call" || c.Params == nil || c.Params.Task == nil {
			next.ServeHTTP(w, r)
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
		body, err = setTTL(body, ttl)
		if err != nil {
			rpcError(w, c.ID, -32602, "params.task is not an object: "+err.Error())
			return
		}
		if !k.reserve() {
			rpcError(w, c.ID, -32603, fmt.Sprintf("cannot create a task: this server already keeps %d tasks (MCP_MAX_TASKS); fetch or cancel finished ones and retry after they expire (MCP_TASK_TTL %s), or call the tool without a task", k.cfg.Max, k.cfg.TTL))
			return
		}
		l := &link{ttl: ttl}
		rec := &sniffer{ResponseWriter: w}
		r.Body = io.NopCloser(bytes.NewReader(body))
		r.ContentLength = int64(len(body))
		next.ServeHTTP(rec, r.WithContext(context.WithValue(r.Context(), linkKey{}, l)))
		if l.get() == "" {
			k.release() // refused by mcp-go (unknown tool, no task support): nothing stored
			return
		}
		time.AfterFunc(ttl, k.release)
	})
}

func (k *Keeper) reserve() bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.stored >= k.cfg.Max {
		return false
	}
	k.stored++
	return true
}

func (k *Keeper) release() {
	k.mu.Lock()
	k.stored--
	k.mu.Unlock()
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

// sniffer keeps the start of the answer to see whether a task was created.
type sniffer struct {
	http.ResponseWriter
	head []byte
}

func (s *sniffer) Write(p []byte) (int, error) {
	if len(s.head) < 4096 {
		s.head = append(s.head, p[:min(len(p), 4096-len(s.head))]...)
	}
	return s.ResponseWriter.Write(p)
}

func (s *sniffer) Flush() {
	if f, ok := s.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (s *sniffer) Unwrap() http.ResponseWriter { return s.ResponseWriter }

func rpcError(w http.ResponseWriter, id json.RawMessage, code int, msg string) {
	if len(id) == 0 {
		id = json.RawMessage("null")
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(map[string]any{"jsonrpc": "2.0", "id": id, "error": map[string]any{"code": code, "message": msg}})
}
