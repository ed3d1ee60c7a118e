package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpfleet/mcpfleet/shared/e2e"
)

// stdioPeer is a raw JSON-RPC client of a server process over stdio: each
// request waits for the answer with its id; requests from the server
// (elicitation/create) go to onRequest, whose result is sent back.
type stdioPeer struct {
	t         *testing.T
	in        io.WriteCloser
	mu        sync.Mutex
	next      int
	waiters   map[string]chan json.RawMessage
	onRequest func(method string, params json.RawMessage) any
}

func startStdioPeer(t *testing.T, bin string, env []string) *stdioPeer {
	t.Helper()
	cmd := exec.Command(bin)
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir()}, env...)
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = io.Discard
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &stdioPeer{t: t, in: in, waiters: map[string]chan json.RawMessage{}}
	go func() {
		sc := bufio.NewScanner(out)
		sc.Buffer(make([]byte, 1<<20), 16<<20)
		for sc.Scan() {
			line := append([]byte(nil), sc.Bytes()...)
			var m struct {
				ID     json.RawMessage `json:"id"`
				Method string          `json:"method"`
				Params json.RawMessage `json:"params"`
			}
			if json.Unmarshal(line, &m) != nil || len(m.ID) == 0 {
				continue // notifications
			}
			if m.Method != "" {
				var res any = map[string]any{}
				p.mu.Lock()
				h := p.onRequest
				p.mu.Unlock()
				if h != nil {
					res = h(m.Method, m.Params)
				}
				b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": m.ID, "result": res})
				p.write(b)
				continue
			}
			p.mu.Lock()
			w := p.waiters[string(m.ID)]
			delete(p.waiters, string(m.ID))
			p.mu.Unlock()
			if w != nil {
				w <- line
			}
		}
	}()
	t.Cleanup(func() {
		in.Close()
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			cmd.Process.Kill()
			<-done
		}
	})
	return p
}

func (p *stdioPeer) write(b []byte) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if _, err := p.in.Write(append(b, '\n')); err != nil {
		p.t.Errorf("write to the server: %v", err)
	}
}

// rpc sends one request and returns the whole answer.
func (p *stdioPeer) rpc(method string, params map[string]any) (result json.RawMessage, rpcErr json.RawMessage) {
	p.t.Helper()
	p.mu.Lock()
	p.next++
	id := fmt.Sprint(p.next)
	w := make(chan json.RawMessage, 1)
	p.waiters[id] = w
	p.mu.Unlock()
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": p.next, "method": method, "params": params})
	p.write(b)
	select {
	case line := <-w:
		var a struct {
			Result json.RawMessage `json:"result"`
			Error  json.RawMessage `json:"error"`
		}
		json.Unmarshal(line, &a)
		return a.Result, a.Error
	case <-time.After(90 * time.Second):
		p.t.Fatalf("%s: no answer in 90 s", method)
		return nil, nil
	}
}

// modernMeta is a 2026-07-28 request's _meta declaring the tasks extension
// and form elicitation.
func modernMeta() map[string]any {
	return map[string]any{"io.modelcontextprotocol/protocolVersion": "2026-07-28",
		"io.modelcontextprotocol/clientCapabilities": map[string]any{"extensions": map[string]any{"io.modelcontextprotocol/tasks": map[string]any{}}, "elicitation": map[string]any{}}}
}

// TestTasksOverStdio: the real sqlmcp over stdio, one process.
// 2026-07-28 tasks extension: a query becomes a task whose tasks/get
// carries the rows inline once done; a DROP TABLE asks inside the task
// (input_required, tasks/update) and drops only after accept.
// 2025-11-25: a task-augmented DROP TABLE from a client that declared
// elicitation is input_required; the request arrives over stdio while its
// tasks/result waits, tagged with the task, and accept drops the table.
func TestTasksOverStdio(t *testing.T) {
	ctx := t.Context()
	for _, s := range []string{"CREATE SCHEMA sales.e2etaskstdio", "CREATE TABLE sales.e2etaskstdio.modern (id INTEGER)", "CREATE TABLE sales.e2etaskstdio.legacy (id INTEGER)"} {
		if err := trino.Exec(ctx, s); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() { trino.Exec(context.Background(), "DROP SCHEMA sales.e2etaskstdio CASCADE") })
	exists := func(table string) bool {
		t.Helper()
		d, err := trino.Dump(ctx, "sales", "e2etaskstdio")
		if err != nil {
			t.Fatal(err)
		}
		return strings.Contains(d, table)
	}
	bin := e2e.Build(t, ".")
	env := engineEnv(t, "SQLENGINE_ALLOW_WRITE_QUERIES=true", "SQLENGINE_SCHEMA=e2etaskstdio", "MCP_TRANSPORT=stdio")

	t.Run("2026-07-28", func(t *testing.T) {
		p := startStdioPeer(t, bin, env)
		get := func(id, want string) map[string]any {
			t.Helper()
			deadline := time.Now().Add(60 * time.Second)
			for {
				res, e := p.rpc("tasks/get", map[string]any{"taskId": id, "_meta": modernMeta()})
				var m map[string]any
				if e != nil || json.Unmarshal(res, &m) != nil {
					t.Fatalf("tasks/get: %s %s", res, e)
				}
				if m["status"] == want {
					return m
				}
				if time.Now().After(deadline) {
					t.Fatalf("task %s: %s, want %s", id, res, want)
				}
				time.Sleep(20 * time.Millisecond) // polling is the protocol's own wait
			}
		}
		create := func(q string) string {
			t.Helper()
			res, e := p.rpc("tools/call", map[string]any{"name": "execute_query", "arguments": map[string]any{"query": q}, "_meta": modernMeta()})
			var tk struct{ ResultType, TaskID string }
			if e != nil || json.Unmarshal(res, &tk) != nil || tk.ResultType != "task" || tk.TaskID == "" {
				t.Fatalf("create an extension task over stdio: %s %s", res, e)
			}
			return tk.TaskID
		}
		id := create("SELECT id, pause_ms(200) AS slept FROM warehouse.logs.events WHERE id <= 2 ORDER BY id")
		if done := get(id, "completed"); !strings.Contains(fmt.Sprint(done["result"]), "[[1 200] [2 200]]") {
			t.Fatalf("completed without the rows inline: %v", done)
		}
		id = create("DROP TABLE modern")
		asked := get(id, "input_required")
		if !strings.Contains(fmt.Sprint(asked["inputRequests"]), "sales.e2etaskstdio.modern") || !exists("modern") {
			t.Fatalf("input_required: %v (table exists %v)", asked, exists("modern"))
		}
		if res, e := p.rpc("tasks/update", map[string]any{"taskId": id, "inputResponses": map[string]any{"approve-1": map[string]any{"action": "accept"}}, "_meta": modernMeta()}); e != nil {
			t.Fatalf("tasks/update: %s %s", res, e)
		}
		done := get(id, "completed")
		if r, _ := done["result"].(map[string]any); r == nil || r["isError"] == true || exists("modern") {
			t.Fatalf("accepted over stdio: %v, table exists %v", done, exists("modern"))
		}
	})

	t.Run("2025-11-25", func(t *testing.T) {
		p := startStdioPeer(t, bin, env)
		var asked json.RawMessage
		p.onRequest = func(method string, params json.RawMessage) any {
			p.mu.Lock()
			asked = params
			p.mu.Unlock()
			return map[string]any{"action": "accept", "content": map[string]any{}}
		}
		if _, e := p.rpc("initialize", map[string]any{"protocolVersion": "2025-11-25", "capabilities": map[string]any{"elicitation": map[string]any{}}, "clientInfo": map[string]any{"name": "stdio-task-test", "version": "1"}}); e != nil {
			t.Fatalf("initialize: %s", e)
		}
		p.write([]byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`))
		res, e := p.rpc("tools/call", map[string]any{"name": "execute_query", "arguments": map[string]any{"query": "DROP TABLE legacy"}, "task": map[string]any{}})
		var created struct{ Task struct{ TaskID string } }
		if e != nil || json.Unmarshal(res, &created) != nil || created.Task.TaskID == "" {
			t.Fatalf("create a task: %s %s", res, e)
		}
		id := created.Task.TaskID
		deadline := time.Now().Add(60 * time.Second)
		for {
			res, _ := p.rpc("tasks/get", map[string]any{"taskId": id})
			if strings.Contains(string(res), `"status":"input_required"`) {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("task: %s, want input_required", res)
			}
			time.Sleep(20 * time.Millisecond)
		}
		if !exists("legacy") {
			t.Fatal("dropped before the person answered")
		}
		res, e = p.rpc("tasks/result", map[string]any{"taskId": id})
		if e != nil || strings.Contains(string(res), `"isError":true`) {
			t.Fatalf("tasks/result: %s %s", res, e)
		}
		p.mu.Lock()
		got := string(asked)
		p.mu.Unlock()
		if !strings.Contains(got, "sales.e2etaskstdio.legacy") || !strings.Contains(got, `"io.modelcontextprotocol/related-task":{"taskId":"`+id+`"}`) {
			t.Fatalf("the request over stdio: %s", got)
		}
		if exists("legacy") {
			t.Fatal("accepted, but the table exists")
		}
	})
}
