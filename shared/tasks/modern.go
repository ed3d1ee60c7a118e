package tasks

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/mcpfleet/mcpfleet/shared/httpauth"
)

// ExtensionID names the MCP 2026-07-28 tasks extension.
const ExtensionID = "io.modelcontextprotocol/tasks"

// Modern-era JSON-RPC codes (2026-07-28).
const (
	codeMissingCapability = -32021 // the client declared no tasks extension
	codeHeaderMismatch    = -32020 // an HTTP header disagrees with the body
)

// PollInterval is the pollIntervalMs the keeper suggests.
const PollInterval = time.Second

// modernTask is one task of the 2026-07-28 tasks extension. mcp-go v1.2.1
// implements only the 2025-11-25 tasks, so the keeper runs these itself:
// the plain tools/call goes through mcp-go (and so through the whole
// toolcall pipeline) on a context detached from the creating request.
type modernTask struct {
	id        string
	owner     httpauth.Principal
	createdAt time.Time
	ttl       time.Duration
	cancel    context.CancelFunc

	mu      sync.Mutex
	status  string // working, input_required, completed, failed, cancelled
	updated time.Time
	input   mcp.InputRequests // input_required: the open question
	result  json.RawMessage   // completed: the tool's result
	rpcErr  json.RawMessage   // failed: the JSON-RPC error
}

func (t *modernTask) envelope() map[string]any {
	t.mu.Lock()
	defer t.mu.Unlock()
	m := map[string]any{
		"taskId": t.id, "status": t.status,
		"createdAt":      t.createdAt.UTC().Format(time.RFC3339Nano),
		"lastUpdatedAt":  t.updated.UTC().Format(time.RFC3339Nano),
		"ttlMs":          t.ttl.Milliseconds(),
		"pollIntervalMs": PollInterval.Milliseconds(),
	}
	if t.status == "input_required" && t.input != nil {
		m["inputRequests"] = t.input
		m["statusMessage"] = "waiting for the client's answer to inputRequests (tasks/update)"
	}
	return m
}

// detailed is tasks/get's answer (and a status notification's params):
// the envelope with the result or error inline once the task has ended.
func (t *modernTask) detailed() map[string]any {
	m := t.envelope()
	t.mu.Lock()
	if t.result != nil {
		m["result"] = t.result
	}
	if t.rpcErr != nil {
		m["error"] = t.rpcErr
		m["statusMessage"] = errMessage(t.rpcErr)
	}
	t.mu.Unlock()
	return m
}

// errMessage is a JSON-RPC error object's message.
func errMessage(e json.RawMessage) string {
	var m struct{ Message string }
	json.Unmarshal(e, &m)
	return m.Message
}

// keepers maps each MCP server offering tasks to its keeper, for
// transports that see raw messages before mcp-go (serve's stdio gate).
var keepers sync.Map // *server.MCPServer -> *Keeper

// ModernFor returns the Modern of the keeper s carries (ServerOptions), or
// nil when s offers no tasks.
func ModernFor(s *server.MCPServer) func(ctx context.Context, body []byte) ([]byte, bool) {
	if k, ok := keepers.Load(s); ok {
		return k.(*Keeper).Modern
	}
	return nil
}

// modernCall is the part of a 2026-07-28 request the keeper reads.
type modernCall struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params modernParams    `json:"params"`
}

type modernParams struct {
	Name           string          `json:"name"`
	TaskID         string          `json:"taskId"`
	InputResponses json.RawMessage `json:"inputResponses"`
	Meta           requestMeta     `json:"_meta"`
}

// requestMeta is the part of a 2026-07-28 request's _meta the keeper
// reads: the protocol version and the extensions the client declares.
type requestMeta struct {
	Version string `json:"io.modelcontextprotocol/protocolVersion"`
	Caps    struct {
		Extensions map[string]json.RawMessage `json:"extensions"`
	} `json:"io.modelcontextprotocol/clientCapabilities"`
}

// decodeModern reads body as a modernCall; ok is false when encoding/json
// refuses it.
func decodeModern(body []byte) (c modernCall, ok bool) {
	return c, json.Unmarshal(body, &c) == nil
}

// Modern answers the 2026-07-28 tasks extension's requests: a tools/call of
// a task-capable tool from a client that declared the extension becomes a
// task (resultType "task"); tasks/get (the result inline once done),
// tasks/update and tasks/cancel answer for the caller's own tasks only
// (another identity's task is "not found", as an id that never existed).
// handled is false for every other message, which goes on to mcp-go as
// before. It is transport-independent: Wrap calls it over HTTP, serve's
// stdio gate over stdio.
func (k *Keeper) Modern(ctx context.Context, body []byte) (answer []byte, handled bool) {
	c, decoded := decodeModern(body)
	return k.modernDecoded(ctx, c, decoded, body)
}

// modernDecoded is Modern for body already decoded into c (decoded false: it
// could not be).
func (k *Keeper) modernDecoded(ctx context.Context, c modernCall, decoded bool, body []byte) (answer []byte, handled bool) {
	if !decoded || c.Params.Meta.Version != mcp.LATEST_PROTOCOL_VERSION || len(c.ID) == 0 {
		return nil, false
	}
	_, declared := c.Params.Meta.Caps.Extensions[ExtensionID]
	switch c.Method {
	case "tools/call":
		return k.modernCall(ctx, c, body, declared)
	case "tasks/get", "tasks/update", "tasks/cancel":
		if !declared {
			if k.owns(httpauth.PrincipalFromContext(ctx), c.Params.TaskID) && c.Method != "tasks/update" {
				// The caller's own 2025-11-25-style task (created with
				// params.task): mcp-go answers for it, as before; once it
				// has ended, tasks/get carries the outcome inline, as
				// 2026-07-28 has no tasks/result.
				if r := k.ended(httpauth.PrincipalFromContext(ctx), c.Params.TaskID); r != nil && c.Method == "tasks/get" && r.end.status != string(mcp.TaskStatusCancelled) {
					k.free(c.Params.TaskID) // the outcome is fetched: its slot is free
					return modernResult(c.ID, inlineTask(c.Params.TaskID, r)), true
				}
				return nil, false
			}
			return rpcErrorBytes(c.ID, codeMissingCapability, c.Method+" needs the "+ExtensionID+" extension: declare it in _meta io.modelcontextprotocol/clientCapabilities.extensions"), true
		}
		t := k.modernTask(ctx, c.Params.TaskID)
		if t == nil {
			if k.store != nil {
				return k.modernFromStore(ctx, c)
			}
			return rpcErrorBytes(c.ID, mcp.INVALID_PARAMS, k.notFound()), true
		}
		switch c.Method {
		case "tasks/get":
			m := t.detailed()
			m["resultType"] = "complete"
			return modernResult(c.ID, m), true
		case "tasks/cancel":
			t.mu.Lock()
			cancelled := false
			if t.status == "working" || t.status == "input_required" {
				t.status, t.updated, t.input = "cancelled", time.Now(), nil
				cancelled = true
			}
			t.mu.Unlock()
			if cancelled && k.store != nil {
				if _, err := k.store.CancelTask(context.WithoutCancel(ctx), t.id, "Task cancelled by request"); err != nil {
					k.logf("task %s: recording its cancel: %v", t.id, err)
				}
			}
			t.cancel()
			if cancelled {
				k.notifyStatus(t.id)
			}
			return modernResult(c.ID, map[string]any{"resultType": "complete"}), true
		default: // tasks/update
			responses, err := inputResponses(c)
			if err != nil {
				return rpcErrorBytes(c.ID, mcp.INVALID_PARAMS, err.Error()), true
			}
			// Responses to a question not open (never asked, answered,
			// or the task has ended) are ignored, as the extension says.
			k.update(t, responses)
			return modernResult(c.ID, map[string]any{"resultType": "complete"}), true
		}
	}
	return nil, false
}

func (k *Keeper) modernCall(ctx context.Context, c modernCall, body []byte, declared bool) ([]byte, bool) {
	k.mu.Lock()
	s := k.server
	k.mu.Unlock()
	if s == nil {
		return nil, false
	}
	tool := s.GetTool(c.Params.Name)
	if tool == nil || tool.Tool.Execution == nil {
		return nil, false
	}
	support := tool.Tool.Execution.TaskSupport
	if support != mcp.TaskSupportOptional && support != mcp.TaskSupportRequired {
		return nil, false
	}
	if !declared {
		if support == mcp.TaskSupportRequired {
			return rpcErrorBytes(c.ID, codeMissingCapability, fmt.Sprintf("tool %q runs only as a task: declare the %s extension in _meta io.modelcontextprotocol/clientCapabilities.extensions", c.Params.Name, ExtensionID)), true
		}
		return nil, false // a plain call, as before
	}
	k.mu.Lock()
	before := k.before[c.Params.Name]
	k.mu.Unlock()
	if before != nil {
		var req mcp.CallToolRequest
		if err := json.Unmarshal(body, &req); err != nil {
			return rpcErrorBytes(c.ID, mcp.INVALID_PARAMS, "cannot read the tools/call: "+err.Error()), true
		}
		if res, answered := before(ctx, req); answered {
			return modernResult(c.ID, res), true
		}
	}
	if err := k.storeDown(ctx); err != nil {
		return rpcErrorBytes(c.ID, mcp.INTERNAL_ERROR, "cannot create a task: "+err.Error()), true
	}
	owner := httpauth.PrincipalFromContext(ctx)
	if !k.reserve(owner) {
		return rpcErrorBytes(c.ID, mcp.INTERNAL_ERROR, k.fullError().Error()), true
	}
	now := time.Now()
	run, cancel := context.WithTimeout(context.WithoutCancel(ctx), k.cfg.TTL)
	t := &modernTask{id: uuid.NewString(), owner: owner, createdAt: now, updated: now, ttl: k.cfg.TTL, cancel: cancel, status: "working"}
	b := newInbox(t.id, true)
	run = k.attach(run, b)
	st := &status{}
	run = context.WithValue(run, statusKey{}, st)
	if k.store != nil {
		// Durably created before the answer names it: every replica's
		// tasks/get finds it.
		if err := k.putTask(ctx, t); err != nil {
			cancel()
			k.mu.Lock()
			k.release(owner)
			k.mu.Unlock()
			return rpcErrorBytes(c.ID, mcp.INTERNAL_ERROR, "cannot create a task: "+err.Error()), true
		}
	}
	k.mu.Lock()
	k.modern[t.id] = t
	k.inboxes[t.id] = b
	if k.stopped {
		cancel()
	}
	if len(k.running) == 0 {
		k.idle = make(chan struct{})
	}
	k.running[t.id] = runEntry{cancel: cancel, status: st}
	k.mu.Unlock()
	time.AfterFunc(k.cfg.TTL, func() {
		k.mu.Lock()
		delete(k.modern, t.id)
		delete(k.inboxes, t.id)
		k.mu.Unlock()
		cancel()
	})
	var beat chan struct{}
	if k.store != nil {
		beat = make(chan struct{})
		go k.heartbeat(t.id, st, cancel, beat)
	}
	go func() {
		defer cancel()
		defer k.notifyStatus(t.id)
		defer b.end()
		var out []byte
		if support == mcp.TaskSupportRequired {
			// mcp-go refuses a plain call of a task-only tool: its handler
			// runs directly (the toolcall pipeline is inside it).
			out = callDirect(run, tool, body)
		} else {
			out, _ = json.Marshal(s.HandleMessage(run, body))
		}
		out = k.boundModern(out)
		var r struct {
			Result json.RawMessage `json:"result"`
			Error  json.RawMessage `json:"error"`
		}
		json.Unmarshal(out, &r)
		if beat != nil {
			close(beat)
		}
		k.mu.Lock()
		delete(k.running, t.id)
		if len(k.running) == 0 {
			close(k.idle)
		}
		k.release(owner)
		k.mu.Unlock()
		t.mu.Lock()
		if t.status != "working" && t.status != "input_required" {
			t.mu.Unlock()
			return // cancelled
		}
		t.updated, t.input = time.Now(), nil
		switch {
		case run.Err() != nil && r.Result == nil:
			t.status = "cancelled"
		case r.Error != nil:
			t.status, t.rpcErr = "failed", r.Error
		default:
			t.status, t.result = "completed", r.Result
		}
		t.mu.Unlock()
		if k.store != nil {
			k.finishModern(t)
		}
	}()
	m := t.envelope()
	m["resultType"] = "task"
	return modernResult(c.ID, m), true
}

// BeforeTask runs f on each 2026-07-28 tools/call of tool from a client
// declaring the tasks extension, before a task is created: when f answers
// (a multi round-trip input_required result, say), that is the call's
// answer and no task is created; otherwise the task is created as usual,
// its run seeing the same request (inputResponses included). This is how a
// tool resolves its multi round-trip exchanges synchronously before its
// task, as the extension asks.
func (k *Keeper) BeforeTask(tool string, f func(ctx context.Context, req mcp.CallToolRequest) (res *mcp.CallToolResult, answered bool)) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.before == nil {
		k.before = map[string]func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, bool){}
	}
	k.before[tool] = f
}

// modernTask returns the caller's task id, or nil.
func (k *Keeper) modernTask(ctx context.Context, id string) *modernTask {
	k.mu.Lock()
	defer k.mu.Unlock()
	t := k.modern[id]
	if t == nil || t.owner != httpauth.PrincipalFromContext(ctx) {
		return nil
	}
	return t
}

// advertise adds the tasks extension to server/discover's capabilities
// and drops the 2025-11-25 tasks slot there (2026-07-28 has none).
func (k *Keeper) advertise(ctx context.Context, _ any, _ *mcp.DiscoverRequest, res *mcp.DiscoverResult) {
	if res == nil {
		return
	}
	res.Capabilities.Tasks = nil
	ext := map[string]any{}
	for key, v := range res.Capabilities.Extensions {
		ext[key] = v
	}
	ext[ExtensionID] = map[string]any{}
	res.Capabilities.Extensions = ext
}

func modernResult(id json.RawMessage, result any) []byte {
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "result": result})
	return b
}

func rpcErrorBytes(id json.RawMessage, code int, msg string) []byte {
	e := map[string]any{"code": code, "message": msg}
	if code == codeMissingCapability {
		e["data"] = map[string]any{"requiredCapabilities": map[string]any{"extensions": map[string]any{ExtensionID: map[string]any{}}}}
	}
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "error": e})
	return b
}

// httpStatus is the HTTP status of a Modern answer: 400 for the errors
// 2026-07-28 answers so (-32021, -32020), else 200.
func httpStatus(answer []byte) int {
	var m struct {
		Error *struct {
			Code int `json:"code"`
		} `json:"error"`
	}
	if json.Unmarshal(answer, &m) == nil && m.Error != nil && (m.Error.Code == codeMissingCapability || m.Error.Code == codeHeaderMismatch) {
		return 400
	}
	return 200
}

// modernHTTP is Modern over HTTP: a tasks/* request whose Mcp-Name header
// names another task than its body is refused (-32020), as mcp-go refuses
// such a tools/call. c is body decoded (decoded false: it could not be).
func (k *Keeper) modernHTTP(r *http.Request, c modernCall, decoded bool, body []byte) ([]byte, bool) {
	if decoded && c.Params.Meta.Version == mcp.LATEST_PROTOCOL_VERSION && len(c.ID) > 0 {
		want := ""
		switch c.Method {
		case "tasks/get", "tasks/update", "tasks/cancel":
			want = c.Params.TaskID
		case "tools/call":
			want = c.Params.Name
		default:
			return nil, false
		}
		// The headers are checked before the keeper answers, as mcp-go
		// checks them for what it answers (-32020 before any other error).
		if m := strings.TrimSpace(r.Header.Get("Mcp-Method")); m != "" && m != c.Method {
			return rpcErrorBytes(c.ID, codeHeaderMismatch, fmt.Sprintf("the Mcp-Method header %q does not match the method %q; send the same in both", m, c.Method)), true
		}
		if name := strings.TrimSpace(r.Header.Get("Mcp-Name")); name != "" && name != strings.TrimSpace(want) {
			return rpcErrorBytes(c.ID, codeHeaderMismatch, fmt.Sprintf("the Mcp-Name header %q does not match %q in the body; send the same in both", name, want)), true
		}
		if v := strings.TrimSpace(r.Header.Get("MCP-Protocol-Version")); v != "" && v != c.Params.Meta.Version {
			return rpcErrorBytes(c.ID, codeHeaderMismatch, fmt.Sprintf("the MCP-Protocol-Version header %q does not match _meta io.modelcontextprotocol/protocolVersion %q; send the same in both", v, c.Params.Meta.Version)), true
		}
	}
	return k.modernDecoded(r.Context(), c, decoded, body)
}

// callDirect runs tool's handler for the tools/call in body and returns
// the JSON-RPC answer mcp-go would give.
func callDirect(ctx context.Context, tool *server.ServerTool, body []byte) []byte {
	var req mcp.CallToolRequest
	if err := json.Unmarshal(body, &req); err != nil {
		return rpcErrorBytes(nil, mcp.INVALID_PARAMS, "cannot read the tools/call: "+err.Error())
	}
	res, err := tool.Handler(ctx, req)
	if err != nil {
		return rpcErrorBytes(nil, mcp.INTERNAL_ERROR, err.Error())
	}
	b, _ := json.Marshal(map[string]any{"result": res})
	return b
}

// inlineTask is a 2026-07-28 tasks/get answer for a 2025-11-25-style task
// that has ended: the task with its outcome inline.
func inlineTask(id string, r *record) map[string]any {
	m := map[string]any{"resultType": "complete", "taskId": id, "status": r.end.status,
		"createdAt": r.created.UTC().Format(time.RFC3339), "lastUpdatedAt": r.end.at.UTC().Format(time.RFC3339),
		"ttl": r.ttl.Milliseconds()}
	switch {
	case r.end.result != nil:
		m["result"] = r.end.result
	case r.end.err != "":
		m["statusMessage"] = r.end.err
		m["error"] = map[string]any{"code": mcp.INTERNAL_ERROR, "message": r.end.err}
	}
	return m
}
