package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcpfleet/mcpfleet/shared/e2e"
	"github.com/mcpfleet/mcpfleet/shared/e2e/lb"
)

// extTask is a 2026-07-28 tasks/get answer (the tasks extension).
type extTask struct {
	ResultType    string `json:"resultType"`
	TaskID        string `json:"taskId"`
	Status        string `json:"status"`
	InputRequests map[string]struct {
		Method string `json:"method"`
		Params struct {
			Message string `json:"message"`
		} `json:"params"`
	} `json:"inputRequests"`
	Result *mcp.CallToolResult `json:"-"`
	Raw    json.RawMessage     `json:"result"`
}

// elicitingExt is a 2026-07-28 client declaring the tasks extension and
// form elicitation.
func elicitingExt(url string) *lb.Client {
	c := lb.NewModern(url)
	c.Capabilities = map[string]any{"extensions": map[string]any{"io.modelcontextprotocol/tasks": map[string]any{}}, "elicitation": map[string]any{}}
	return c
}

func extCreate(t *testing.T, c *lb.Client, query string) (string, lb.Answer) {
	t.Helper()
	a := call(t, c, "tools/call", map[string]any{"name": "execute_query", "arguments": map[string]any{"query": query}})
	var tk extTask
	if a.Error != nil || json.Unmarshal(a.Result, &tk) != nil || tk.ResultType != "task" || tk.TaskID == "" {
		t.Fatalf("create an extension task: HTTP %d %s", a.HTTP, a.Raw)
	}
	return tk.TaskID, a
}

// extWait polls tasks/get until the task's status is want.
func extWait(t *testing.T, c *lb.Client, id, want string) extTask {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		a := call(t, c, "tasks/get", map[string]any{"taskId": id})
		var tk extTask
		if a.Error != nil || json.Unmarshal(a.Result, &tk) != nil {
			t.Fatalf("tasks/get: %s", a.Raw)
		}
		if tk.Status == want {
			if tk.Raw != nil {
				tk.Result = &mcp.CallToolResult{}
				json.Unmarshal(tk.Raw, tk.Result)
			}
			return tk
		}
		if time.Now().After(deadline) {
			t.Fatalf("task %s: %s, want %s", id, a.Raw, want)
		}
		time.Sleep(20 * time.Millisecond) // polling is the protocol's own wait
	}
}

// TestApprovalAskedInsideATask: a task-augmented DROP TABLE from a client
// that declared elicitation asks the person inside the task, on the real
// server over HTTP, the table observed on the engine before and after.
// 2026-07-28 (tasks extension): the task is input_required with the
// approval request in inputRequests; accept through tasks/update drops the
// table, decline leaves it and completes with the refusal; no answer
// within MCP_APPROVAL_TIMEOUT declines. 2025-11-25 (mcp-go's client): the
// task is input_required, the request arrives on tasks/result's stream
// tagged with the task; accept drops, decline does not.
func TestApprovalAskedInsideATask(t *testing.T) {
	ctx := t.Context()
	tables := []string{"ext_accept", "ext_decline", "ext_silent", "old_accept", "old_decline"}
	stmts := []string{"CREATE SCHEMA sales.e2etaskask"}
	for _, tb := range tables {
		stmts = append(stmts, "CREATE TABLE sales.e2etaskask."+tb+" (id INTEGER)")
	}
	for _, s := range stmts {
		if err := trino.Exec(ctx, s); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() { trino.Exec(context.Background(), "DROP SCHEMA sales.e2etaskask CASCADE") })
	exists := func(table string) bool {
		t.Helper()
		d, err := trino.Dump(ctx, "sales", "e2etaskask")
		if err != nil {
			t.Fatal(err)
		}
		return strings.Contains(d, table)
	}
	bin := e2e.Build(t, ".")
	srv := e2e.StartHTTP(t, bin, engineEnv(t, "SQLENGINE_ALLOW_WRITE_QUERIES=true", "SQLENGINE_SCHEMA=e2etaskask"))

	for _, tc := range []struct {
		table, action string
		dropped       bool
		text          string
	}{
		{"ext_accept", "accept", true, ""},
		{"ext_decline", "decline", false, "the person declined the execute_query call; nothing was changed"},
	} {
		t.Run("2026-07-28/"+tc.action, func(t *testing.T) {
			c := elicitingExt(srv.MCPURL())
			id, _ := extCreate(t, c, "DROP TABLE "+tc.table)
			tk := extWait(t, c, id, "input_required")
			q, ok := tk.InputRequests["approve-1"]
			if !ok || q.Method != "elicitation/create" || !strings.Contains(q.Params.Message, "sales.e2etaskask."+tc.table) {
				t.Fatalf("input_required without the approval request naming the table: %+v", tk)
			}
			if !exists(tc.table) {
				t.Fatal("the table was dropped before the person answered")
			}
			if a := call(t, c, "tasks/update", map[string]any{"taskId": id, "inputResponses": map[string]any{"approve-1": map[string]any{"action": tc.action}}}); a.Error != nil {
				t.Fatalf("tasks/update: %s", a.Raw)
			}
			tk = extWait(t, c, id, "completed")
			if tk.Result == nil || tk.Result.IsError == tc.dropped || !strings.Contains(string(tk.Raw), tc.text) {
				t.Fatalf("completed with %s, want isError %v and %q", tk.Raw, !tc.dropped, tc.text)
			}
			if exists(tc.table) == tc.dropped {
				t.Fatalf("after %s the table exists: %v", tc.action, !tc.dropped)
			}
		})
	}

	t.Run("2026-07-28/no answer", func(t *testing.T) {
		short := e2e.StartHTTP(t, bin, engineEnv(t, "SQLENGINE_ALLOW_WRITE_QUERIES=true", "SQLENGINE_SCHEMA=e2etaskask", "MCP_APPROVAL_TIMEOUT=2s"))
		c := elicitingExt(short.MCPURL())
		id, _ := extCreate(t, c, "DROP TABLE ext_silent")
		extWait(t, c, id, "input_required")
		tk := extWait(t, c, id, "completed")
		if tk.Result == nil || !tk.Result.IsError || !strings.Contains(string(tk.Raw), "did not answer the approval request for execute_query within 2s (MCP_APPROVAL_TIMEOUT); nothing was changed") {
			t.Fatalf("unanswered: %s", tk.Raw)
		}
		if !exists("ext_silent") {
			t.Fatal("an unanswered approval dropped the table")
		}
	})

	for _, tc := range []struct {
		table  string
		action mcp.ElicitationResponseAction
	}{{"old_accept", mcp.ElicitationResponseActionAccept}, {"old_decline", mcp.ElicitationResponseActionDecline}} {
		t.Run(fmt.Sprintf("2025-11-25/%s", tc.action), func(t *testing.T) {
			a := &asker{asked: make(chan mcp.ElicitationRequest, 1), answer: make(chan mcp.ElicitationResponseAction, 1)}
			cl := newTaskClient(t, srv.MCPURL(), "sqlmcp-task-ask-test", 0, nil, client.WithElicitationHandler(a))
			id := cl.create(map[string]any{"query": "DROP TABLE " + tc.table}).TaskId
			if st, _ := cl.poll(id); st[len(st)-1] != "input_required" {
				t.Fatalf("task statuses %v, want input_required", st)
			}
			if !exists(tc.table) {
				t.Fatal("the table was dropped before the person answered")
			}
			a.answer <- tc.action
			res, err := cl.raw("tasks/result", map[string]any{"taskId": id})
			if err != nil {
				t.Fatalf("tasks/result: %v", err)
			}
			select {
			case req := <-a.asked:
				related, _ := req.Params.Meta.AdditionalFields[mcp.RelatedTaskMetaKey].(map[string]any)
				if !strings.Contains(req.Params.Message, "sales.e2etaskask."+tc.table) || related["taskId"] != id {
					t.Errorf("elicitation %q with _meta %v, want the table and the task named", req.Params.Message, req.Params.Meta)
				}
			default:
				t.Fatal("the person was not asked")
			}
			accepted := tc.action == mcp.ElicitationResponseActionAccept
			if strings.Contains(string(res), `"isError":true`) == accepted {
				t.Fatalf("tasks/result after %s: %s", tc.action, res)
			}
			if exists(tc.table) == accepted {
				t.Fatalf("after %s the table exists: %v", tc.action, !accepted)
			}
		})
	}
}
