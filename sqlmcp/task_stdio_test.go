package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpfleet/mcpfleet/shared/e2e"
	"github.com/mcpfleet/mcpfleet/shared/e2e/rawmcp"
)

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
		p := rawmcp.StartStdio(t, bin, env)
		get := func(id, want string) map[string]any {
			t.Helper()
			return rawmcp.WaitTaskStatus(t, p.GetExtensionTask(id), want)
		}
		create := func(q string) string {
			t.Helper()
			return p.CreateExtensionTask("execute_query", map[string]any{"query": q})
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
		if res, e := p.RPC("tasks/update", map[string]any{"taskId": id, "inputResponses": map[string]any{"approve-1": map[string]any{"action": "accept"}}, "_meta": rawmcp.ExtensionMeta()}); e != nil {
			t.Fatalf("tasks/update: %s %s", res, e)
		}
		done := get(id, "completed")
		if r, _ := done["result"].(map[string]any); r == nil || r["isError"] == true || exists("modern") {
			t.Fatalf("accepted over stdio: %v, table exists %v", done, exists("modern"))
		}
	})

	t.Run("2025-11-25", func(t *testing.T) {
		p := rawmcp.StartStdio(t, bin, env)
		var (
			mu    sync.Mutex
			asked json.RawMessage
		)
		p.OnRequest(func(method string, params json.RawMessage) any {
			mu.Lock()
			asked = params
			mu.Unlock()
			return map[string]any{"action": "accept", "content": map[string]any{}}
		})
		if _, e := p.RPC("initialize", map[string]any{"protocolVersion": "2025-11-25", "capabilities": map[string]any{"elicitation": map[string]any{}}, "clientInfo": map[string]any{"name": "stdio-task-test", "version": "1"}}); e != nil {
			t.Fatalf("initialize: %s", e)
		}
		p.Write([]byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`))
		res, e := p.RPC("tools/call", map[string]any{"name": "execute_query", "arguments": map[string]any{"query": "DROP TABLE legacy"}, "task": map[string]any{}})
		var created struct{ Task struct{ TaskID string } }
		if e != nil || json.Unmarshal(res, &created) != nil || created.Task.TaskID == "" {
			t.Fatalf("create a task: %s %s", res, e)
		}
		id := created.Task.TaskID
		deadline := time.Now().Add(60 * time.Second)
		for {
			res, _ := p.RPC("tasks/get", map[string]any{"taskId": id})
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
		res, e = p.RPC("tasks/result", map[string]any{"taskId": id})
		if e != nil || strings.Contains(string(res), `"isError":true`) {
			t.Fatalf("tasks/result: %s %s", res, e)
		}
		mu.Lock()
		got := string(asked)
		mu.Unlock()
		if !strings.Contains(got, "sales.e2etaskstdio.legacy") || !strings.Contains(got, `"io.modelcontextprotocol/related-task":{"taskId":"`+id+`"}`) {
			t.Fatalf("the request over stdio: %s", got)
		}
		if exists("legacy") {
			t.Fatal("accepted, but the table exists")
		}
	})
}
