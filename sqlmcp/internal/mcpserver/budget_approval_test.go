package mcpserver_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcpfleet/mcpfleet/shared/approval"
	"github.com/mcpfleet/mcpfleet/shared/toolcall"

	"github.com/mcpfleet/mcpfleet/sqlmcp/internal/trinotest"
)

// TestBudgetNeedsApproval: a read the engine estimates above
// SQLENGINE_MAX_SCAN_ROWS, or whose estimate is unknown under it, runs
// only after a person approves it through the pipeline (the elicitation
// shows the estimate per table and the budget); declined, or with
// approval off (MCP_APPROVAL=none), the engine sees nothing but the
// EXPLAIN that priced it. A read below the budget asks nobody. Counted on
// the engine: every statement of the env's source.
func TestBudgetNeedsApproval(t *testing.T) {
	trino.SetNoStatistics("sales.mcpsecret.s")
	const budget = 500_000
	above := "SELECT id FROM " + trinotest.LargeTable + " ORDER BY id"
	for _, tc := range []struct {
		name     string
		readOnly bool
		policy   approval.Policy
		who      person // the elicitation's answer ("": no person asked)
		query    string
		ran      bool   // the statement reached the engine
		text     string // in the result
		asked    string // in the elicitation message
		audit    string // the outcome record's approval ("": no record)
	}{
		{"above, accepted", true, "", accept, above, true, `"row_count":2`, "1,000,000 rows exceed SQLENGINE_MAX_SCAN_ROWS=500,000", "person"},
		{"above, accepted, writes on", false, "", accept, above, true, `"row_count":2`, "1,000,000 rows exceed SQLENGINE_MAX_SCAN_ROWS=500,000", "person"},
		{"above, policy change, accepted", true, approval.Change, accept, above, true, `"row_count":2`, trinotest.LargeTable, "person"},
		{"above, declined", true, "", decline, above, false, "the person declined the execute_query call", "estimated input", "declined"},
		{"above, declined, writes on", false, "", decline, above, false, "the person declined the execute_query call", "estimated input", "declined"},
		{"above, cancelled", true, "", cancel, above, false, "the person cancelled the execute_query call", "estimated input", "declined"},
		{"above, approval off", true, approval.None, "", above, false, "1,000,000 rows exceed SQLENGINE_MAX_SCAN_ROWS=500,000", "", "refused"},
		{"above, approval off, writes on", false, approval.None, "", above, false, "MCP_APPROVAL=none asks nobody", "", "refused"},
		{"unknown, declined", true, "", decline, "SELECT x FROM sales.mcpsecret.s", false, "declined", "the estimated rows are unknown", "declined"},
		{"unknown, accepted", true, "", accept, "SELECT x FROM sales.mcpsecret.s", true, `"columns"`, "total unknown rows", "person"},
		{"unknown, approval off", true, approval.None, "", "SELECT x FROM sales.mcpsecret.s", false, "the estimated rows are unknown and SQLENGINE_MAX_SCAN_ROWS is 500,000", "", "refused"},
		{"below", true, "", "", "SELECT id FROM orders", true, `"row_count":2`, "", ""},
		{"below, writes on", false, "", "", "SELECT id FROM orders", true, `"row_count":2`, "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var seen []string
			h := elicitFunc(func(ctx context.Context, req mcp.ElicitationRequest) (*mcp.ElicitationResult, error) {
				seen = append(seen, req.Params.Message)
				action := tc.who
				if action == "" {
					action = decline
				}
				return &mcp.ElicitationResult{ElicitationResponse: mcp.ElicitationResponse{Action: mcp.ElicitationResponseAction(action)}}, nil
			})
			e := newApEnv(t, apOptions{readOnly: tc.readOnly, maxScanRows: budget,
				calls:  toolcall.Config{Approval: approval.Config{Policy: tc.policy, Timeout: time.Minute}},
				client: []client.ClientOption{client.WithElicitationHandler(h), client.WithClientCapabilities(mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapability{}})}})
			n := len(e.statements())
			res := e.exec(tc.query, "limit", 2)
			text := resText(res)
			if res.IsError == tc.ran || !strings.Contains(text, tc.text) {
				t.Fatalf("isError=%v, want %q in %s", res.IsError, tc.text, text)
			}
			if !tc.ran && !strings.Contains(text, "nothing was") {
				t.Errorf("the refusal does not say nothing ran: %s", text)
			}
			var ran, explains int
			for _, s := range e.statements()[n:] {
				switch {
				case strings.HasPrefix(s, "EXPLAIN"):
					explains++
				case strings.Contains(s, tc.query):
					ran++
				}
			}
			if want := map[bool]int{true: 1, false: 0}[tc.ran]; ran != want {
				t.Errorf("the engine saw the statement %d times, want %d: %q", ran, want, e.statements()[n:])
			}
			if !tc.ran && len(e.statements()[n:]) != explains {
				t.Errorf("a refused read sent more than EXPLAIN: %q", e.statements()[n:])
			}
			if tc.asked == "" {
				if len(seen) != 0 {
					t.Errorf("a person was asked: %q", seen)
				}
			} else if len(seen) != 1 || !strings.Contains(seen[0], tc.asked) || !strings.Contains(seen[0], "query budget") {
				t.Errorf("the person saw %q, want %q", seen, tc.asked)
			}
			recs := e.records()
			switch {
			case tc.audit == "" && len(recs) != 0:
				t.Errorf("a read within the budget was audited: %s", approvals(recs))
			case tc.audit != "" && (len(recs) == 0 || recs[len(recs)-1]["approval"] != tc.audit || recs[len(recs)-1]["class"] != "read"):
				t.Errorf("audit %s", approvals(recs))
			}
			t.Log(text)
		})
	}
}

// TestBudgetConfirmationCode: a client that cannot ask a person gets the
// preview (estimate per table and the budget) and a code; nothing runs
// until the code comes back, and then the read runs once.
func TestBudgetConfirmationCode(t *testing.T) {
	e := newApEnv(t, apOptions{readOnly: true, maxScanRows: 500_000})
	q := "SELECT id FROM " + trinotest.LargeTable + " ORDER BY id"
	n := len(e.statements())
	res := e.exec(q, "limit", 2)
	code := confirmCode(t, res)
	pv := preview(t, res)
	if pv.Class != "read" || !strings.Contains(pv.Summary, "over the query budget") || !strings.Contains(pv.Summary, trinotest.LargeTable+" 1,000,000 rows") {
		t.Errorf("preview %+v", pv)
	}
	for _, s := range e.statements()[n:] {
		if !strings.HasPrefix(s, "EXPLAIN") {
			t.Fatalf("the engine ran %q before the code came back", s)
		}
	}
	res = e.exec(q, "limit", 2, "confirm", code)
	if res.IsError || !strings.Contains(resText(res), `"row_count":2`) {
		t.Fatalf("confirmed: %s", resText(res))
	}
	if res := e.exec(q, "limit", 2, "confirm", code); !res.IsError {
		t.Errorf("a used code ran again: %s", resText(res))
	}
	if got := approvals(e.records()); !strings.Contains(got, "outcome:pending intent:confirmation_code outcome:confirmation_code outcome:refused") {
		t.Errorf("audit %s", got)
	}
}
