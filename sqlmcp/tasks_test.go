package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcpfleet/mcpfleet/shared/e2e"
	"github.com/mcpfleet/mcpfleet/sqlmcp/internal/trinotest"
)

// taskClient is mcp-go's client on a 2025-11-25 session over streamable
// HTTP whose every request gives up after timeout, like an MCP client
// that gives a tool call little time.
type taskClient struct {
	t    *testing.T
	c    *client.Client
	tr   *transport.StreamableHTTP
	conn *http.Transport // its connections
	n    atomic.Int64
}

func dialTasks(t *testing.T, url string, timeout time.Duration) *taskClient {
	t.Helper()
	return newTaskClient(t, url, "sqlmcp-task-test", timeout, nil)
}

// newTaskClient starts an mcp-go client on url (HTTP client timeout
// timeout, none if 0; trOpts and opts added to the defaults) and
// initializes it as name.
func newTaskClient(t *testing.T, url, name string, timeout time.Duration, trOpts []transport.StreamableHTTPCOption, opts ...client.ClientOption) *taskClient {
	t.Helper()
	conn := &http.Transport{}
	tr, err := transport.NewStreamableHTTP(url, append([]transport.StreamableHTTPCOption{transport.WithHTTPBasicClient(&http.Client{Timeout: timeout, Transport: conn})}, trOpts...)...)
	if err != nil {
		t.Fatal(err)
	}
	c := client.NewClient(tr, append([]client.ClientOption{client.WithProtocolVersion(mcp.LATEST_LEGACY_PROTOCOL_VERSION)}, opts...)...)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	init := mcp.InitializeRequest{}
	init.Params.ProtocolVersion = mcp.LATEST_LEGACY_PROTOCOL_VERSION
	init.Params.ClientInfo = mcp.Implementation{Name: name, Version: "1"}
	if _, err := c.Initialize(ctx, init); err != nil {
		t.Fatal(err)
	}
	tc := &taskClient{t: t, c: c, tr: tr, conn: conn}
	tc.n.Store(1000) // ids of our raw requests stay clear of the client's own
	t.Cleanup(func() { c.Close() })
	return tc
}

// rejoin is a client that comes back later: a new transport (new
// connections) on the session id of the one that left.
func rejoin(t *testing.T, url, session string) *taskClient {
	t.Helper()
	tr, err := transport.NewStreamableHTTP(url, transport.WithHTTPTimeout(2*time.Second), transport.WithSession(session))
	if err != nil {
		t.Fatal(err)
	}
	tr.SetProtocolVersion(mcp.LATEST_LEGACY_PROTOCOL_VERSION)
	if err := tr.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tr.Close() })
	tc := &taskClient{t: t, tr: tr}
	tc.n.Store(5000)
	return tc
}

// raw sends one request and returns its result, or the JSON-RPC error.
func (tc *taskClient) raw(method string, params any) (json.RawMessage, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	res, err := tc.tr.SendRequest(ctx, transport.JSONRPCRequest{JSONRPC: mcp.JSONRPC_VERSION, ID: mcp.NewRequestId(tc.n.Add(1)), Method: method, Params: params})
	if err != nil {
		return nil, err
	}
	if res.Error != nil {
		return nil, res.Error.AsError()
	}
	return res.Result, nil
}

// create asks for a task-augmented execute_query and returns the task.
func (tc *taskClient) create(args map[string]any) mcp.Task {
	tc.t.Helper()
	b, err := tc.raw("tools/call", map[string]any{"name": "execute_query", "arguments": args, "task": map[string]any{}})
	if err != nil {
		tc.t.Fatalf("create a task: %v", err)
	}
	var r mcp.CreateTaskResult
	if err := json.Unmarshal(b, &r); err != nil || r.Task.TaskId == "" {
		tc.t.Fatalf("create a task: answer %s (%v)", b, err)
	}
	return r.Task
}

func (tc *taskClient) get(id string) (mcp.Task, error) {
	b, err := tc.raw("tasks/get", map[string]any{"taskId": id})
	if err != nil {
		return mcp.Task{}, err
	}
	var r mcp.GetTaskResult
	err = json.Unmarshal(b, &r)
	return r.Task, err
}

// poll reads the task until it leaves working and returns what it saw:
// the statuses in order and the status messages while working.
func (tc *taskClient) poll(id string) (statuses, messages []string) {
	tc.t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		tk, err := tc.get(id)
		if err != nil {
			tc.t.Fatalf("tasks/get: %v", err)
		}
		if len(statuses) == 0 || statuses[len(statuses)-1] != string(tk.Status) {
			statuses = append(statuses, string(tk.Status))
		}
		if tk.Status != mcp.TaskStatusWorking {
			return statuses, messages
		}
		if tk.StatusMessage != "" && (len(messages) == 0 || messages[len(messages)-1] != tk.StatusMessage) {
			messages = append(messages, tk.StatusMessage)
		}
		if time.Now().After(deadline) {
			tc.t.Fatalf("task %s still working after 60s", id)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// comparable is a tool result without what differs between two runs of
// the same query: the engine's query id and elapsed time, and the _meta
// mcp-go adds to a task's result.
func comparable(t *testing.T, raw json.RawMessage) string {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatalf("result %s: %v", raw, err)
	}
	delete(m, "_meta")
	scrub := func(v map[string]any) {
		delete(v, "query_id")
		delete(v, "elapsed_ms")
	}
	if sc, ok := m["structuredContent"].(map[string]any); ok {
		scrub(sc)
	}
	if c, ok := m["content"].([]any); ok {
		for _, item := range c {
			if tc, ok := item.(map[string]any); ok {
				var inner map[string]any
				if s, ok := tc["text"].(string); ok && json.Unmarshal([]byte(s), &inner) == nil {
					scrub(inner)
					b, _ := json.Marshal(inner)
					tc["text"] = string(b)
				}
			}
		}
	}
	b, _ := json.Marshal(m)
	return string(b)
}

func engineQuery(t *testing.T, sqlText string) trinotest.QueryInfo {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		for _, q := range trino.Queries() {
			if q.SQL == sqlText {
				return q
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("the engine never saw %q", sqlText)
	return trinotest.QueryInfo{}
}

// TestExecuteQueryAsTask: execute_query declares optional task support and
// the server the tasks capability; a task-augmented call is created at
// once, polled through working (with the query's progress as
// statusMessage) to completed, and its result is the synchronous call's.
func TestExecuteQueryAsTask(t *testing.T) {
	bin := e2e.Build(t, ".")
	srv := e2e.StartHTTP(t, bin, engineEnv(t))
	tc := dialTasks(t, srv.MCPURL(), 30*time.Second)
	caps := tc.c.GetServerCapabilities()
	if caps.Tasks == nil || caps.Tasks.List == nil || caps.Tasks.Cancel == nil || caps.Tasks.Requests == nil || caps.Tasks.Requests.Tools == nil || caps.Tasks.Requests.Tools.Call == nil {
		t.Errorf("tasks capability %+v, want list, cancel and tools/call", caps.Tasks)
	}
	tools, err := tc.c.ListTools(context.Background(), mcp.ListToolsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tool := range tools.Tools {
		got := tool.Execution != nil && tool.Execution.TaskSupport == mcp.TaskSupportOptional
		if got != (tool.Name == "execute_query") {
			t.Errorf("%s: execution %+v", tool.Name, tool.Execution)
		}
	}

	// Long enough to be seen working: three rows of 1 s each.
	const q = "SELECT id, pause_ms(1000) AS slept FROM warehouse.logs.events WHERE id <= 3 ORDER BY id"
	start := time.Now()
	tk := tc.create(map[string]any{"query": q})
	if created := time.Since(start); tk.Status != mcp.TaskStatusWorking || created > 2*time.Second {
		t.Errorf("created %+v after %s, want working at once", tk, created)
	}
	if tk.TTL == nil || *tk.TTL != time.Hour.Milliseconds() {
		t.Errorf("ttl %v, want MCP_TASK_TTL's default of 1h", tk.TTL)
	}
	statuses, messages := tc.poll(tk.TaskId)
	if strings.Join(statuses, ",") != "working,completed" {
		t.Errorf("statuses %v, want working then completed", statuses)
	}
	var running bool
	for _, m := range messages {
		running = running || strings.HasPrefix(m, "query RUNNING")
	}
	if !running {
		t.Errorf("status messages while working %q, want the query's RUNNING progress", messages)
	}
	t.Logf("status messages: %q", messages)
	res, err := tc.raw("tasks/result", map[string]any{"taskId": tk.TaskId})
	if err != nil {
		t.Fatal(err)
	}
	sync, err := tc.raw("tools/call", map[string]any{"name": "execute_query", "arguments": map[string]any{"query": q}})
	if err != nil {
		t.Fatal(err)
	}
	if a, b := comparable(t, res), comparable(t, sync); a != b {
		t.Errorf("task result\n%s\nsynchronous result\n%s", a, b)
	}
	if !strings.Contains(string(res), `"rows":[[1,1000],[2,1000],[3,1000]]`) {
		t.Errorf("task result %s", res)
	}
	// A refused statement fails the task as it fails the call: an isError
	// result, nothing sent to the engine. Counted by its text: the engine
	// also sees the read-only transactions' ROLLBACKs, which are sent after
	// the answers above and may arrive at any point of this check.
	drops := func() (n int) {
		for _, q := range trino.Queries() {
			if strings.Contains(q.SQL, "customers") && strings.Contains(strings.ToUpper(q.SQL), "DROP") {
				n++
			}
		}
		return n
	}
	before := drops()
	bad := tc.create(map[string]any{"query": "DROP TABLE sales.public.customers"})
	tc.poll(bad.TaskId)
	res, err = tc.raw("tasks/result", map[string]any{"taskId": bad.TaskId})
	if err != nil || !strings.Contains(string(res), `"isError":true`) {
		t.Errorf("refused statement as a task: %s %v", res, err)
	}
	sync, _ = tc.raw("tools/call", map[string]any{"name": "execute_query", "arguments": map[string]any{"query": "DROP TABLE sales.public.customers"}})
	if comparable(t, res) != comparable(t, sync) {
		t.Errorf("refusal: task %s, call %s", res, sync)
	}
	if n := drops(); n != before {
		t.Errorf("the refused statement reached the engine (%d DROPs of customers, were %d)", n, before)
	}
}

// TestSlowQueryTaskOutlivesClientTimeout: a client whose requests give up
// after 2 s cannot run a 5 s query as a plain call, but as a task: it
// creates the task, leaves, comes back on new connections and fetches the
// result. The query ran to its end on the engine.
func TestSlowQueryTaskOutlivesClientTimeout(t *testing.T) {
	bin := e2e.Build(t, ".")
	srv := e2e.StartHTTP(t, bin, engineEnv(t))
	tc := dialTasks(t, srv.MCPURL(), 2*time.Second)
	plain := "SELECT pause_ms(5000) AS too_slow_for_the_client"
	if _, err := tc.raw("tools/call", map[string]any{"name": "execute_query", "arguments": map[string]any{"query": plain}}); err == nil {
		t.Fatal("the 5 s query returned within the client's 2 s timeout; the test needs a slower query")
	}
	const q = "SELECT pause_ms(5000) AS outlived_the_client"
	tk := tc.create(map[string]any{"query": q})
	session := tc.tr.GetSessionId()
	// The client leaves: its connections drop and it sends nothing more
	// (a client that crashed, or a laptop that went to sleep, does not end
	// its session).
	tc.conn.CloseIdleConnections()
	time.Sleep(2500 * time.Millisecond)
	back := rejoin(t, srv.MCPURL(), session)
	statuses, _ := back.poll(tk.TaskId)
	if statuses[len(statuses)-1] != "completed" {
		t.Fatalf("statuses %v", statuses)
	}
	res, err := back.raw("tasks/result", map[string]any{"taskId": tk.TaskId})
	if err != nil || !strings.Contains(string(res), `"rows":[[5000]]`) {
		t.Fatalf("tasks/result after reconnecting: %s %v", res, err)
	}
	if qi := engineQuery(t, q); qi.State != trinotest.StateFinished || qi.Cancelled {
		t.Errorf("engine query %+v, want FINISHED and never cancelled", qi)
	}
}

// TestTaskCancelEndsQuery: tasks/cancel during a query sends the engine
// its DELETE (USER_CANCELED) and the task ends cancelled.
func TestTaskCancelEndsQuery(t *testing.T) {
	bin := e2e.Build(t, ".")
	srv := e2e.StartHTTP(t, bin, engineEnv(t))
	tc := dialTasks(t, srv.MCPURL(), 10*time.Second)
	q := slowQuery("task_cancelled")
	tk := tc.create(map[string]any{"query": q})
	engineQuery(t, q) // running on the engine
	if _, err := tc.raw("tasks/cancel", map[string]any{"taskId": tk.TaskId}); err != nil {
		t.Fatalf("tasks/cancel: %v", err)
	}
	waitEngineCancel(t, q)
	deadline := time.Now().Add(10 * time.Second)
	var qi trinotest.QueryInfo
	for qi = engineQuery(t, q); qi.ErrorName != "USER_CANCELED" && time.Now().Before(deadline); qi = engineQuery(t, q) {
		time.Sleep(50 * time.Millisecond)
	}
	if qi.ErrorName != "USER_CANCELED" {
		t.Errorf("engine query %+v, want USER_CANCELED", qi)
	}
	if got, err := tc.get(tk.TaskId); err != nil || got.Status != mcp.TaskStatusCancelled {
		t.Errorf("task after cancel: %+v %v", got, err)
	}
	// Cancelling again is refused: the task has ended.
	if _, err := tc.raw("tasks/cancel", map[string]any{"taskId": tk.TaskId}); err == nil {
		t.Error("a second tasks/cancel was accepted")
	}
}

// TestTypeScriptSDKRunsATask: the official TypeScript SDK client
// (scripts/install/ts-sdk.sh) runs execute_query as a task end to end, so
// a second client implementation agrees with ours. Without node it skips,
// and fails with CI=true.
func TestTypeScriptSDKRunsATask(t *testing.T) {
	dir := tsSDK(t)
	bin := e2e.Build(t, ".")
	srv := e2e.StartHTTP(t, bin, engineEnv(t))
	script, _ := filepath.Abs("../tools/tsclient/task.mjs")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", script, srv.MCPURL(), "execute_query", `{"query":"SELECT id, pause_ms(800) AS slept FROM warehouse.logs.events WHERE id <= 2 ORDER BY id"}`)
	cmd.Env = append(os.Environ(), "MCP_TS_SDK="+dir)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("task.mjs: %v\n%s\n%s", err, out, stderr.String())
	}
	var got struct {
		ProtocolVersion string `json:"protocolVersion"`
		TaskSupport     string `json:"taskSupport"`
		Messages        []struct {
			Type   string
			Task   *mcp.Task
			Result *struct {
				StructuredContent map[string]any `json:"structuredContent"`
				IsError           bool           `json:"isError"`
			}
		}
		Polled []struct{ Status, StatusMessage string }
		Listed []struct{ TaskID, Status string }
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("task.mjs printed %s: %v", out, err)
	}
	t.Logf("TypeScript SDK: %s", out)
	if got.TaskSupport != "optional" {
		t.Errorf("the SDK saw taskSupport %q", got.TaskSupport)
	}
	var created, result bool
	for _, m := range got.Messages {
		switch m.Type {
		case "taskCreated":
			created = m.Task != nil && m.Task.Status == mcp.TaskStatusWorking
		case "result":
			result = m.Result != nil && !m.Result.IsError && fmt.Sprint(m.Result.StructuredContent["rows"]) == "[[1 800] [2 800]]"
		}
	}
	if !created || !result {
		t.Errorf("stream messages %+v: want taskCreated (working) and the rows", got.Messages)
	}
	var progress bool
	for _, p := range got.Polled {
		progress = progress || (p.Status == "working" && strings.HasPrefix(p.StatusMessage, "query "))
	}
	if !progress {
		t.Errorf("the SDK's tasks/get never saw the query's progress: %+v", got.Polled)
	}
	if len(got.Listed) != 1 || got.Listed[0].Status != "completed" {
		t.Errorf("tasks/list: %+v", got.Listed)
	}
}

// tsSDK installs (once) and returns the TypeScript SDK's directory.
func tsSDK(t *testing.T) string {
	t.Helper()
	if dir := os.Getenv("MCP_TS_SDK"); dir != "" {
		return dir
	}
	_, nodeErr := exec.LookPath("node")
	_, npmErr := exec.LookPath("npm")
	if err := errors.Join(nodeErr, npmErr); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("node and npm are needed for the TypeScript SDK client: %v", err)
		}
		t.Skipf("node or npm missing: %v", err)
	}
	out, err := exec.Command("../scripts/install/ts-sdk.sh").Output()
	if err != nil {
		t.Fatalf("scripts/install/ts-sdk.sh: %v", err)
	}
	return strings.TrimSpace(string(out))
}

// TestShutdownEndsTaskQuery: SIGTERM while a task's query runs ends the
// query on the engine: a task outlives its request, not the server.
func TestShutdownEndsTaskQuery(t *testing.T) {
	bin := e2e.Build(t, ".")
	srv := e2e.StartHTTP(t, bin, engineEnv(t, "MCP_SHUTDOWN_TIMEOUT=1s"))
	tc := dialTasks(t, srv.MCPURL(), 10*time.Second)
	q := slowQuery("task_at_shutdown")
	tc.create(map[string]any{"query": q})
	engineQuery(t, q)
	if err := srv.Stop(); err != nil {
		t.Errorf("server exit after SIGTERM: %v", err)
	}
	waitEngineCancel(t, q)
}
