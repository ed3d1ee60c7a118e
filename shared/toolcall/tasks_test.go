package toolcall_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/mcpfleet/mcpfleet/shared/approval"
	"github.com/mcpfleet/mcpfleet/shared/e2e/rawmcp"
	"github.com/mcpfleet/mcpfleet/shared/tasks"
	"github.com/mcpfleet/mcpfleet/shared/toolcall"
)

// taskEnv is the example store's pipeline behind streamable HTTP with a
// task keeper, every tool declared AsTask.
type taskEnv struct {
	url   string
	store *store
	audit string
	p     *toolcall.Pipeline
	srv   *server.MCPServer
}

func newTaskEnv(t *testing.T, cfg toolcall.Config, offer bool) *taskEnv {
	t.Helper()
	cfg.Audit.Dest = filepath.Join(t.TempDir(), "audit.log")
	k := tasks.NewKeeper(tasks.Config{})
	srv := server.NewMCPServer("example", "v0.0.1", append([]server.ServerOption{server.WithHooks(&server.Hooks{})}, k.ServerOptions()...)...)
	p, err := toolcall.New(srv, cfg, toolcall.Options{Server: "example", Version: "v0.0.1"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	s := newStore()
	register(p, s, toolcall.AsTask())
	if offer {
		p.OfferTasks(k) // after registering: the tools are registered again
	}
	ts := httptest.NewServer(k.Wrap(server.NewStreamableHTTPServer(srv)))
	t.Cleanup(ts.Close)
	return &taskEnv{url: ts.URL + "/mcp", store: s, audit: cfg.Audit.Dest, p: p, srv: srv}
}

// rawSession is one MCP session over separate HTTP requests.
type rawSession struct {
	*rawmcp.Session
	t *testing.T
}

type rpcAnswer = rawmcp.Answer

// rawClient gives each request 10 s.
func rawClient() *http.Client { return &http.Client{Timeout: 10 * time.Second} }

func (e *taskEnv) connect(t *testing.T) *rawSession {
	s := &rawSession{Session: rawmcp.New(t, e.url, rawClient()), t: t}
	s.RPC("initialize", `{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}`)
	s.Post(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	return s
}

// call runs a plain call and returns its result as JSON.
func (s *rawSession) call(tool string, args string) string {
	s.t.Helper()
	a := s.RPC("tools/call", fmt.Sprintf(`{"name":%q,"arguments":%s}`, tool, args))
	if a.Error != nil {
		s.t.Fatalf("%s: %+v", tool, a.Error)
	}
	return normalize(s.t, a.Result)
}

// task runs a task-augmented call to its end and returns its result as
// JSON.
func (s *rawSession) task(tool string, args string) string {
	s.t.Helper()
	a := s.RPC("tools/call", fmt.Sprintf(`{"name":%q,"arguments":%s,"task":{}}`, tool, args))
	var created struct {
		Task struct{ TaskID, Status string }
	}
	if a.Error != nil || json.Unmarshal(a.Result, &created) != nil || created.Task.TaskID == "" || created.Task.Status != "working" {
		s.t.Fatalf("create a %s task: %s %+v", tool, a.Result, a.Error)
	}
	r := s.RPC("tasks/result", fmt.Sprintf(`{"taskId":%q}`, created.Task.TaskID))
	if r.Error != nil {
		s.t.Fatalf("tasks/result: %+v", r.Error)
	}
	return normalize(s.t, r.Result)
}

// normalize drops what differs between two runs of the same call: the
// related-task _meta mcp-go adds and the confirmation code's signature and
// expiry.
func normalize(t *testing.T, raw json.RawMessage) string {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatalf("result %s: %v", raw, err)
	}
	delete(m, "_meta")
	if sc, ok := m["structuredContent"].(map[string]any); ok {
		delete(sc, "confirmation")
	}
	if c, ok := m["content"].([]any); ok && len(c) > 0 {
		if tc, ok := c[0].(map[string]any); ok {
			if txt, ok := tc["text"].(string); ok {
				if i := strings.Index(txt, "confirm: \""); i >= 0 {
					tc["text"] = txt[:i]
				}
			}
		}
	}
	b, _ := json.Marshal(m)
	return string(b)
}

func TestAsTaskDeclaresTaskSupport(t *testing.T) {
	for _, offer := range []bool{false, true} {
		e := newTaskEnv(t, toolcall.Config{}, offer)
		for _, name := range []string{"get_value", "set_value", "delete_value"} {
			tool := e.srv.GetTool(name)
			declared, _ := e.p.Tool(name)
			if tool == nil {
				t.Fatalf("%s not registered", name)
			}
			got := tool.Tool.Execution != nil && tool.Tool.Execution.TaskSupport == mcp.TaskSupportOptional
			seen := declared.Execution != nil && declared.Execution.TaskSupport == mcp.TaskSupportOptional
			if got != offer || seen != offer {
				t.Errorf("offer=%v: %s task support on the server %v, in the pipeline %v", offer, name, got, seen)
			}
			if name != "get_value" && !strings.Contains(tool.Tool.Description, "Risk class:") {
				t.Errorf("%s lost the pipeline's description when registered again: %q", name, tool.Tool.Description)
			}
		}
		s := e.connect(t)
		a := s.RPC("tools/call", `{"name":"get_value","arguments":{"key":"a"},"task":{}}`)
		// Without task support mcp-go answers a task-augmented call as a
		// plain one.
		isTask := a.Error == nil && strings.Contains(string(a.Result), `"taskId"`)
		if a.Error != nil || isTask != offer {
			t.Errorf("offer=%v: task-augmented call answered %s %+v", offer, a.Result, a.Error)
		}
	}
}

// TestTaskRunsThePipeline: the pipeline runs inside the task exactly as
// in a plain call: the same result, the same audit records, the same
// refusals, and nothing changed when a call is refused or needs approval.
func TestTaskRunsThePipeline(t *testing.T) {
	e := newTaskEnv(t, toolcall.Config{Approval: approval.Config{Policy: approval.Destructive, Fallback: approval.Confirm}}, true)
	s := e.connect(t)
	cases := []struct {
		name, tool, args string
		changed          bool
	}{
		{"read", "get_value", `{"key":"a"}`, false},
		{"change by policy", "set_value", `{"key":"c","value":7}`, true},
		{"dry run", "set_value", `{"key":"a","value":9,"dryRun":true}`, false},
		{"invalid arguments", "set_value", `{"key":"a","value":5000}`, false},
		{"planner refusal", "delete_value", `{"key":""}`, false},
		{"destructive needs approval", "delete_value", `{"key":"b"}`, false},
		{"forged code", "delete_value", `{"key":"b","confirm":"mcpc1.forged"}`, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			before, _ := e.store.snapshot()
			n := len(readAudit(t, e.audit))
			got := s.task(tc.tool, tc.args)
			mid, _ := e.store.snapshot()
			taskRecords := readAudit(t, e.audit)[n:]
			if !tc.changed && fmt.Sprint(mid) != fmt.Sprint(before) {
				t.Fatalf("the task changed the store: %v -> %v", before, mid)
			}
			if tc.changed {
				// Undo, so the plain call starts from the same state.
				e.store.mu.Lock()
				e.store.data = before
				e.store.mu.Unlock()
			}
			want := s.call(tc.tool, tc.args)
			if got != want {
				t.Errorf("task result\n%s\nplain call result\n%s", got, want)
			}
			plainRecords := readAudit(t, e.audit)[n+len(taskRecords):]
			if len(taskRecords) != len(plainRecords) {
				t.Fatalf("audit: task wrote %d records, the plain call %d", len(taskRecords), len(plainRecords))
			}
			for i := range taskRecords {
				for _, k := range []string{"event", "tool", "class", "approval", "outcome", "error"} {
					if fmt.Sprint(taskRecords[i][k]) != fmt.Sprint(plainRecords[i][k]) {
						t.Errorf("audit record %d %s: task %v, plain %v", i, k, taskRecords[i][k], plainRecords[i][k])
					}
				}
			}
		})
	}
	// The change ran once per call, audited with intent and outcome.
	var intents int
	for _, r := range readAudit(t, e.audit) {
		if r["event"] == "intent" && r["tool"] == "set_value" {
			intents++
		}
	}
	if intents != 2 {
		t.Errorf("%d set_value intent records, want 2 (task and plain call)", intents)
	}
}

func readAudit(t *testing.T, path string) []map[string]any {
	t.Helper()
	e := &env{t: t, audit: path}
	return e.records()
}

// TestTaskWithoutElicitationTakesTheFallback: a destructive call run as a
// task, from a client that declared no elicitation, cannot ask inside the
// task (input_required needs a client that can show the request), so it
// takes the fallback: the preview and a code saying why (confirm), or a
// refusal naming the task (refuse); nothing is changed either way. A client
// that declared elicitation is asked inside the task (sqlmcp's
// TestApprovalAskedInsideATask, shared/tasks' TestAskInsideATask).
func TestTaskWithoutElicitationTakesTheFallback(t *testing.T) {
	for _, tc := range []struct {
		fallback approval.Fallback
		want     []string
		isError  bool
	}{
		{approval.Confirm, []string{"Approval needed — nothing was changed yet.", `confirm: \"mcpc`, "This call runs as a task, and your client did not declare elicitation"}, false},
		{approval.Refuse, []string{"the task cannot ask one", "MCP_APPROVAL_FALLBACK=refuse; nothing was changed", "use a client that supports elicitation"}, true},
	} {
		t.Run(string(tc.fallback), func(t *testing.T) {
			e := newTaskEnv(t, toolcall.Config{Approval: approval.Config{Policy: approval.Destructive, Fallback: tc.fallback}}, true)
			s := &rawSession{Session: rawmcp.New(t, e.url, rawClient()), t: t}
			s.RPC("initialize", `{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}`)
			s.Post(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
			before, _ := e.store.snapshot()
			done := make(chan string, 1)
			go func() {
				a := s.RPC("tools/call", `{"name":"delete_value","arguments":{"key":"b"},"task":{}}`)
				var created struct{ Task struct{ TaskID string } }
				json.Unmarshal(a.Result, &created)
				done <- created.Task.TaskID
			}()
			var id string
			select {
			case id = <-done:
			case <-time.After(20 * time.Second):
				t.Fatal("no task created")
			}
			deadline := time.Now().Add(20 * time.Second)
			var got rpcAnswer
			for {
				got = s.RPC("tasks/get", fmt.Sprintf(`{"taskId":%q}`, id))
				if !strings.Contains(string(got.Result), `"status":"working"`) || time.Now().After(deadline) {
					break
				}
				time.Sleep(50 * time.Millisecond)
			}
			if !strings.Contains(string(got.Result), `"status":"completed"`) {
				t.Fatalf("task %s, want completed without asking anyone", got.Result)
			}
			r := s.RPC("tasks/result", fmt.Sprintf(`{"taskId":%q}`, id))
			for _, w := range tc.want {
				if !strings.Contains(string(r.Result), w) {
					t.Errorf("task result lacks %q: %s", w, r.Result)
				}
			}
			if strings.Contains(string(r.Result), `"isError":true`) != tc.isError {
				t.Errorf("task result isError, want %v: %s", tc.isError, r.Result)
			}
			if after, _ := e.store.snapshot(); fmt.Sprint(after) != fmt.Sprint(before) {
				t.Errorf("the task changed the store: %v -> %v", before, after)
			}
		})
	}
}
