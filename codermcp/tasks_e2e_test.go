package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/mcpfleet/mcpfleet/codermcp/internal/codertest"
	"github.com/mcpfleet/mcpfleet/codermcp/internal/codertest/harness"
	"github.com/mcpfleet/mcpfleet/shared/e2e"
	"github.com/mcpfleet/mcpfleet/shared/e2e/rawmcp"
)

// caller is one MCP session over separate HTTP requests with a bearer
// token (each request a new connection, 10 s client timeout).
type caller struct {
	*rawmcp.Session
	t     *testing.T
	token string
}

// newCaller is a caller that has not initialized, on session id session.
func newCaller(t *testing.T, url, token, session string) *caller {
	s := rawmcp.New(t, url, &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}})
	s.Header = http.Header{"Authorization": {"Bearer " + token}}
	s.ID = session
	return &caller{Session: s, t: t, token: token}
}

func dial(t *testing.T, url, subject string) *caller {
	t.Helper()
	c := newCaller(t, url, e2e.OAuthToken(subject), "")
	if _, a := c.rpc("initialize", `{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"`+subject+`","version":"1"}}`); a.Error != nil {
		t.Fatalf("initialize as %s: %+v", subject, a.Error)
	}
	c.Post(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	return c
}

type answer = rawmcp.Answer

// rpc sends a request; an answer other than 200 OK is returned with its
// status and an empty answer.
func (c *caller) rpc(method, params string) (int, answer) {
	c.t.Helper()
	c.N++
	status, b := c.Do(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":%q,"params":%s}`, c.N, method, params))
	var a answer
	if status == http.StatusOK {
		if err := json.Unmarshal(b, &a); err != nil {
			c.t.Fatalf("%s: answer %q: %v", method, b, err)
		}
	}
	return status, a
}

func (c *caller) createTask(args string) (string, answer) {
	c.t.Helper()
	_, a := c.rpc("tools/call", `{"name":"coder","arguments":`+args+`,"task":{}}`)
	var r struct{ Task struct{ TaskID string } }
	if a.Error == nil {
		json.Unmarshal(a.Result, &r)
	}
	return r.Task.TaskID, a
}

// taskServer is the built codermcp over HTTP with OAuth and the real CLI
// against a codertest endpoint.
func taskServer(t *testing.T, extra ...string) (*harness.Harness, string) {
	t.Helper()
	h := harness.New(t)
	bin := e2e.Build(t, ".")
	env := append(append(append([]string(nil), h.Env...), e2e.OAuthEnv...),
		"CODER_CLI_PATH="+h.CLI, "CODER_HOME="+h.Home, "CODER_WORKSPACE_ROOTS="+testRoots(), "CODER_MODELS="+codertest.Model, "CODER_DEFAULT_MODEL="+codertest.Model)
	srv := e2e.StartHTTP(t, bin, append(env, extra...))
	return h, srv.MCPURL()
}

// waitCLI waits until a turn whose prompt holds marker reached the model.
func waitCLI(t *testing.T, h *harness.Harness, marker string) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for len(h.Endpoint.RequestsWith(marker)) == 0 {
		if time.Now().After(deadline) {
			t.Fatalf("the CLI never reached the endpoint with %q", marker)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// waitOnlyServer waits until the only process carrying the run's marker is
// the server itself: no CLI process is left.
func waitOnlyServer(t *testing.T, h *harness.Harness) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		left := harness.Leftovers(h.Marker)
		if len(left) <= 1 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("CLI processes left: %v (pids with the run's marker, the server included)", left)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestTaskBelongsToItsIdentity: a task created by alice (OAuth subject) is
// "not found" for bob, on his own session and on hers (which serve refuses
// him as a whole); alice still sees it and can cancel it, and no CLI
// process is left.
func TestTaskBelongsToItsIdentity(t *testing.T) {
	t.Parallel()
	h, url := taskServer(t)
	alice, bob := dial(t, url, "alice"), dial(t, url, "bob")
	id, a := alice.createTask(`{"prompt":"alice's task [[hang]]"}`)
	if a.Error != nil || id == "" {
		t.Fatalf("alice's task: %s %+v", a.Result, a.Error)
	}
	waitCLI(t, h, "alice's task")
	for _, m := range []string{"tasks/get", "tasks/result", "tasks/cancel"} {
		_, a := bob.rpc(m, fmt.Sprintf(`{"taskId":%q}`, id))
		if a.Error == nil || !strings.Contains(a.Error.Message, "not found") {
			t.Errorf("bob's %s of alice's task: %s %+v, want not found", m, a.Result, a.Error)
		}
	}
	if _, a := bob.rpc("tasks/list", `{}`); strings.Contains(string(a.Result), id) {
		t.Errorf("bob's tasks/list shows alice's task: %s", a.Result)
	}
	// Bob naming alice's session is refused before any MCP message.
	stolen := newCaller(t, url, bob.token, alice.ID)
	if status, b := stolen.Do(fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"tasks/get","params":{"taskId":%q}}`, id)); status != http.StatusNotFound || !strings.Contains(string(b), "not found") {
		t.Errorf("bob on alice's session: HTTP %d %s, want 404 not found", status, b)
	}
	_, g := alice.rpc("tasks/get", fmt.Sprintf(`{"taskId":%q}`, id))
	if g.Error != nil || !strings.Contains(string(g.Result), `"status":"working"`) {
		t.Fatalf("alice's tasks/get after bob's attempts: %s %+v", g.Result, g.Error)
	}
	if _, c := alice.rpc("tasks/cancel", fmt.Sprintf(`{"taskId":%q}`, id)); c.Error != nil {
		t.Fatalf("alice's cancel: %+v", c.Error)
	}
	waitOnlyServer(t, h)
}

// TestTaskTTLAndLimit: with MCP_MAX_TASKS=1 a second task is refused with
// an error naming the limit while a plain call still runs; with
// MCP_TASK_TTL=15s the task is cancelled (its CLI stopped) and forgotten at
// its TTL, and then a new task is accepted.
func TestTaskTTLAndLimit(t *testing.T) {
	t.Parallel()
	h, url := taskServer(t, "MCP_TASK_TTL=15s", "MCP_MAX_TASKS=1")
	alice := dial(t, url, "alice")
	start := time.Now()
	id, a := alice.createTask(`{"prompt":"ttl task [[hang]]"}`)
	if a.Error != nil || id == "" {
		t.Fatalf("task: %s %+v", a.Result, a.Error)
	}
	if !strings.Contains(string(a.Result), `"ttl":15000`) {
		t.Errorf("created %s, want MCP_TASK_TTL's 15000 ms", a.Result)
	}
	_, full := alice.createTask(`{"prompt":"one too many"}`)
	if full.Error == nil || !strings.Contains(full.Error.Message, "MCP_MAX_TASKS") || !strings.Contains(full.Error.Message, "without a task") {
		t.Errorf("second task: %s %+v, want the MCP_MAX_TASKS error", full.Result, full.Error)
	}
	if len(h.Endpoint.RequestsWith("one too many")) != 0 {
		t.Error("the refused task reached the model")
	}
	if _, p := alice.rpc("tools/call", `{"name":"ping","arguments":{"message":"still here"}}`); p.Error != nil || !strings.Contains(string(p.Result), "still here") {
		t.Errorf("plain call at the task limit: %s %+v", p.Result, p.Error)
	}
	waitCLI(t, h, "ttl task")
	if time.Since(start) > 14*time.Second {
		t.Fatalf("the CLI took %s to reach the model; the test needs it running before the 15 s TTL", time.Since(start))
	}
	time.Sleep(time.Until(start.Add(15500 * time.Millisecond)))
	_, g := alice.rpc("tasks/get", fmt.Sprintf(`{"taskId":%q}`, id))
	if g.Error == nil || !strings.Contains(g.Error.Message, "expired") {
		t.Errorf("tasks/get after the TTL: %s %+v, want expired", g.Result, g.Error)
	}
	if _, l := alice.rpc("tasks/list", `{}`); strings.Contains(string(l.Result), id) {
		t.Errorf("tasks/list after the TTL still lists it: %s", l.Result)
	}
	waitOnlyServer(t, h) // the TTL cancelled the run
	if next, a := alice.createTask(`{"prompt":"after the ttl [[hang]]"}`); a.Error != nil || next == "" {
		t.Errorf("a task after the first expired: %+v", a.Error)
	} else {
		alice.rpc("tasks/cancel", fmt.Sprintf(`{"taskId":%q}`, next))
	}
}

// TestShutdownStopsRunningTask: SIGTERM while a task's CLI waits on a model
// that never answers leaves no CLI process: a task outlives its request,
// not the server.
func TestShutdownStopsRunningTask(t *testing.T) {
	t.Parallel()
	h := harness.New(t)
	bin := e2e.Build(t, ".")
	srv := e2e.StartHTTP(t, bin, append(append([]string(nil), h.Env...), "MCP_SHUTDOWN_TIMEOUT=1s",
		"CODER_CLI_PATH="+h.CLI, "CODER_HOME="+h.Home, "CODER_WORKSPACE_ROOTS="+testRoots(), "CODER_MODELS="+codertest.Model, "CODER_DEFAULT_MODEL="+codertest.Model))
	c := newCaller(t, srv.MCPURL(), "", "")
	c.rpc("initialize", `{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}`)
	c.Post(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	if id, a := c.createTask(`{"prompt":"task at shutdown [[hang]]"}`); a.Error != nil || id == "" {
		t.Fatalf("task: %s %+v", a.Result, a.Error)
	}
	waitCLI(t, h, "task at shutdown")
	if len(harness.Leftovers(h.Marker)) < 2 {
		t.Fatal("no CLI process found while the task runs")
	}
	if err := srv.Stop(); err != nil {
		t.Errorf("server exit after SIGTERM: %v", err)
	}
	deadline := time.Now().Add(15 * time.Second)
	for left := harness.Leftovers(h.Marker); len(left) > 0; left = harness.Leftovers(h.Marker) {
		if time.Now().After(deadline) {
			t.Fatalf("processes left after shutdown: %v", left)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
