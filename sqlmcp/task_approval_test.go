package main

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcpfleet/mcpfleet/shared/e2e"
)

// asker is a person behind an eliciting client: each request is handed to
// the test, which answers it.
type asker struct {
	asked  chan mcp.ElicitationRequest
	answer chan mcp.ElicitationResponseAction
}

func (a *asker) Elicit(ctx context.Context, req mcp.ElicitationRequest) (*mcp.ElicitationResult, error) {
	a.asked <- req
	select {
	case act := <-a.answer:
		return &mcp.ElicitationResult{ElicitationResponse: mcp.ElicitationResponse{Action: act}}, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// TestApprovalInsideATask: a task-augmented DROP TABLE goes through the
// same approval as a plain call. A client without elicitation gets the
// preview and a confirmation code as the task's result, nothing dropped;
// a second task with confirm drops the table, and the code cannot be
// replayed. A client that elicits is asked inside the task
// (TestApprovalAskedInsideATask).
func TestApprovalInsideATask(t *testing.T) {
	ctx := t.Context()
	for _, s := range []string{"CREATE SCHEMA sales.e2etaskappr",
		"CREATE TABLE sales.e2etaskappr.coded (id INTEGER)"} {
		if err := trino.Exec(ctx, s); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() { trino.Exec(context.Background(), "DROP SCHEMA sales.e2etaskappr CASCADE") })
	exists := func(table string) bool {
		t.Helper()
		d, err := trino.Dump(ctx, "sales", "e2etaskappr")
		if err != nil {
			t.Fatal(err)
		}
		return strings.Contains(d, table)
	}
	bin := e2e.Build(t, ".")
	srv := e2e.StartHTTP(t, bin, engineEnv(t, "SQLENGINE_ALLOW_WRITE_QUERIES=true", "SQLENGINE_SCHEMA=e2etaskappr"))
	result := func(tc *taskClient, id string) string {
		t.Helper()
		if st, _ := tc.poll(id); st[len(st)-1] != "completed" {
			t.Fatalf("task %s: statuses %v, want completed", id, st)
		}
		res, err := tc.raw("tasks/result", map[string]any{"taskId": id})
		if err != nil {
			t.Fatalf("tasks/result: %v", err)
		}
		return string(res)
	}

	t.Run("no elicitation: confirmation code", func(t *testing.T) {
		tc := dialTasks(t, srv.MCPURL(), 30*time.Second)
		drop := "DROP TABLE coded"
		res := result(tc, tc.create(map[string]any{"query": drop}).TaskId)
		var r mcp.CallToolResult
		if err := json.Unmarshal([]byte(res), &r); err != nil || r.IsError || len(r.Content) == 0 {
			t.Fatalf("first task's result %s (%v)", res, err)
		}
		text := r.Content[0].(mcp.TextContent).Text
		if !strings.Contains(text, "Approval needed — nothing was changed yet.") || !strings.Contains(text, "sales.e2etaskappr.coded") || !strings.Contains(text, `confirm: "`) {
			t.Fatalf("first task's result, want the preview and a code: %s", text)
		}
		if !exists("coded") {
			t.Fatal("the first task dropped the table before approval")
		}
		i := strings.Index(text, `confirm: "`) + len(`confirm: "`)
		code := text[i : i+strings.Index(text[i:], `"`)]
		res = result(tc, tc.create(map[string]any{"query": drop, "confirm": code}).TaskId)
		if strings.Contains(res, `"isError":true`) {
			t.Fatalf("the confirmed task failed: %s", res)
		}
		if exists("coded") {
			t.Errorf("the confirmed task did not drop the table: %s", res)
		}
		// The code was used up by the task: a replay is refused.
		res = result(tc, tc.create(map[string]any{"query": drop, "confirm": code}).TaskId)
		if !strings.Contains(res, `"isError":true`) {
			t.Errorf("a replayed code: %s, want a refusal", res)
		}
	})
}
