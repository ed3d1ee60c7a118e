package tasks

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// stdioRig is the rig's "slow" tool behind mcp-go's stdio server, driven by
// JSON-RPC lines over pipes, as a client process would.
type stdioRig struct {
	t       *testing.T
	release chan struct{}
	ended   chan string
	in      io.WriteCloser
	mu      sync.Mutex
	waiters map[string]chan json.RawMessage
	next    int
}

func newStdioRig(t *testing.T, k *Keeper) *stdioRig {
	t.Helper()
	rg := &stdioRig{t: t, release: make(chan struct{}), ended: make(chan string, 16), waiters: map[string]chan json.RawMessage{}}
	opts := []server.ServerOption{server.WithToolCapabilities(false), server.WithTaskCapabilities(true, true, true)}
	wrap := func(h server.ToolHandlerFunc) server.ToolHandlerFunc { return h }
	if k != nil {
		opts = append(opts, k.ServerOptions()...)
		wrap = k.Tool
	}
	ms := server.NewMCPServer("t", "1", opts...)
	ms.AddTool(mcp.NewTool("slow", mcp.WithTaskSupport(mcp.TaskSupportOptional), mcp.WithString("echo")), wrap(func(ctx context.Context, r mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		if r.Params.Meta != nil && r.Params.Meta.AdditionalFields[linkMetaKey] != nil {
			t.Errorf("the handler saw the keeper's link nonce in _meta")
		}
		select {
		case <-rg.release:
			rg.ended <- "finished"
			return mcp.NewToolResultText("echo: " + r.GetString("echo", "")), nil
		case <-ctx.Done():
			rg.ended <- "cancelled"
			return nil, ctx.Err()
		}
	}))
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	rg.in = inW
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		server.NewStdioServer(ms).Listen(ctx, inR, outW)
	}()
	go func() {
		sc := bufio.NewScanner(outR)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			var m struct {
				ID json.RawMessage `json:"id"`
			}
			line := append([]byte(nil), sc.Bytes()...)
			if json.Unmarshal(line, &m) != nil || len(m.ID) == 0 {
				continue // notifications
			}
			rg.mu.Lock()
			w := rg.waiters[string(m.ID)]
			delete(rg.waiters, string(m.ID))
			rg.mu.Unlock()
			if w != nil {
				w <- line
			}
		}
	}()
	t.Cleanup(func() {
		select {
		case <-rg.release:
		default:
			close(rg.release)
		}
		cancel()
		inW.Close()
		outW.Close()
		<-done
	})
	return rg
}

type stdioAnswer struct {
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

func (rg *stdioRig) rpc(method, params string) stdioAnswer {
	rg.t.Helper()
	rg.mu.Lock()
	rg.next++
	id := fmt.Sprint(rg.next)
	w := make(chan json.RawMessage, 1)
	rg.waiters[id] = w
	rg.mu.Unlock()
	if _, err := fmt.Fprintf(rg.in, `{"jsonrpc":"2.0","id":%s,"method":%q,"params":%s}`+"\n", id, method, params); err != nil {
		rg.t.Fatalf("write %s: %v", method, err)
	}
	select {
	case line := <-w:
		var a stdioAnswer
		if err := json.Unmarshal(line, &a); err != nil {
			rg.t.Fatalf("%s: answer %s: %v", method, line, err)
		}
		return a
	case <-time.After(30 * time.Second):
		rg.t.Fatalf("%s: no answer in 30 s", method)
		return stdioAnswer{}
	}
}

func (rg *stdioRig) init(era string) {
	rg.t.Helper()
	rg.rpc("initialize", fmt.Sprintf(`{"protocolVersion":%q,"capabilities":{},"clientInfo":{"name":"t","version":"1"}}`, era))
	fmt.Fprintln(rg.in, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
}

func (rg *stdioRig) create(params string) (task, stdioAnswer) {
	rg.t.Helper()
	a := rg.rpc("tools/call", params)
	var r struct{ Task task }
	if a.Error == nil {
		json.Unmarshal(a.Result, &r)
	}
	return r.Task, a
}

func (rg *stdioRig) status(id string) string {
	rg.t.Helper()
	a := rg.rpc("tasks/get", fmt.Sprintf(`{"taskId":%q}`, id))
	if a.Error != nil {
		rg.t.Fatalf("tasks/get %s: %s", id, a.Error.Message)
	}
	var tk task
	json.Unmarshal(a.Result, &tk)
	return tk.Status
}

// TestTasksOverStdio: a task created over stdio outlives its request, is
// polled, its result fetched; another is cancelled and its handler ends;
// the TTL and MCP_MAX_TASKS bounds hold as over HTTP.
func TestTasksOverStdio(t *testing.T) {
	k := NewKeeper(Config{TTL: time.Hour, Max: 2})
	rg := newStdioRig(t, k)
	rg.init("2025-11-25")

	tk, a := rg.create(`{"name":"slow","arguments":{"echo":"hi"},"task":{"ttl":600000}}`)
	if a.Error != nil || tk.TaskID == "" {
		t.Fatalf("create: %+v %s", a.Error, a.Result)
	}
	if tk.TTL != 600000 {
		t.Errorf("ttl = %d, want the client's shorter 600000", tk.TTL)
	}
	if s := rg.status(tk.TaskID); s != "working" {
		t.Fatalf("status after the creating request answered = %q, want working (the task outlives its request)", s)
	}
	// A second task, cancelled: its handler ends.
	tk2, a := rg.create(`{"name":"slow","arguments":{"echo":"two"},"task":{}}`)
	if a.Error != nil {
		t.Fatalf("create 2: %+v", a.Error)
	}
	if tk2.TTL != time.Hour.Milliseconds() {
		t.Errorf("ttl without the client's = %d, want MCP_TASK_TTL", tk2.TTL)
	}
	// A third is past MCP_MAX_TASKS (2).
	_, a = rg.create(`{"name":"slow","arguments":{},"task":{}}`)
	if a.Error == nil || !strings.Contains(a.Error.Message, "MCP_MAX_TASKS") {
		t.Fatalf("third task: %+v %s, want a refusal naming MCP_MAX_TASKS", a.Error, a.Result)
	}
	if a := rg.rpc("tasks/cancel", fmt.Sprintf(`{"taskId":%q}`, tk2.TaskID)); a.Error != nil {
		t.Fatalf("cancel: %s", a.Error.Message)
	}
	if got := <-rg.ended; got != "cancelled" {
		t.Fatalf("cancelled task's handler ended %q", got)
	}
	close(rg.release)
	if got := <-rg.ended; got != "finished" {
		t.Fatalf("task's handler ended %q", got)
	}
	a = rg.rpc("tasks/result", fmt.Sprintf(`{"taskId":%q}`, tk.TaskID))
	if a.Error != nil || !strings.Contains(string(a.Result), "echo: hi") {
		t.Fatalf("tasks/result: %+v %s", a.Error, a.Result)
	}
	// Both slots are free again (one fetched, one cancelled).
	for i := range 2 {
		if _, a := rg.create(`{"name":"slow","arguments":{},"task":{}}`); a.Error != nil {
			t.Fatalf("task %d after freeing: %s", i, a.Error.Message)
		}
	}
	// Hostile TTLs are refused with the reason.
	for _, ttl := range []string{"0", "-5", "1.5", "-1e308"} {
		_, a := rg.create(`{"name":"slow","arguments":{},"task":{"ttl":` + ttl + `}}`)
		if a.Error == nil || !strings.Contains(a.Error.Message, "task.ttl") {
			t.Errorf("ttl %s: %+v %s, want a refusal naming task.ttl", ttl, a.Error, a.Result)
		}
	}
	// A task for a tool mcp-go refuses gives its slot back.
	k2 := NewKeeper(Config{TTL: time.Hour, Max: 1})
	rg2 := newStdioRig(t, k2)
	rg2.init("2025-11-25")
	for i := range 3 {
		if _, a := rg2.create(`{"name":"nope","arguments":{},"task":{}}`); a.Error == nil || strings.Contains(a.Error.Message, "MCP_MAX_TASKS") {
			t.Fatalf("unknown tool %d: %+v", i, a.Error)
		}
	}
	if _, a := rg2.create(`{"name":"slow","arguments":{},"task":{}}`); a.Error != nil {
		t.Fatalf("task after refused ones: %s", a.Error.Message)
	}
}

// TestWithoutKeeperStdioTaskIsCancelled shows what the keeper fixes over
// stdio: mcp-go ends the task's run with the creating request.
func TestWithoutKeeperStdioTaskIsCancelled(t *testing.T) {
	rg := newStdioRig(t, nil)
	rg.init("2025-11-25")
	tk, a := rg.create(`{"name":"slow","arguments":{},"task":{}}`)
	if a.Error != nil {
		t.Fatalf("create: %+v", a.Error)
	}
	if got := <-rg.ended; got != "cancelled" {
		t.Fatalf("without the keeper the handler ended %q, want cancelled (mcp-go v1.2.1 ties the run to its request)", got)
	}
	// mcp-go records the status after the handler has returned: wait for
	// it to leave "working" (under load it can take a moment).
	s := rg.status(tk.TaskID)
	for deadline := time.Now().Add(20 * time.Second); s == "working" && time.Now().Before(deadline); s = rg.status(tk.TaskID) {
		time.Sleep(10 * time.Millisecond)
	}
	if s != "cancelled" {
		t.Fatalf("without the keeper the task is %q, want cancelled", s)
	}
}
