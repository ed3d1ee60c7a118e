package main

import (
	"strconv"
	"strings"
	"testing"

	"github.com/mcpfleet/mcpfleet/shared/e2e"
	"github.com/mcpfleet/mcpfleet/sqlmcp/internal/trinotest"
)

// TestBudgetsPerCluster: two clusters with different read budgets
// (SQLENGINE_BIG_MAX_SCAN_ROWS of its own, small the unprefixed
// fallback): the same 20,000-row read (TestMain's large table) runs on big and, on small, needs
// approval (MCP_APPROVAL_FALLBACK=confirm: a preview and a code) or is
// refused with the estimate and small's budget (MCP_APPROVAL=none), with
// nothing but EXPLAIN reaching the engine. explain_query type estimate
// shows each cluster's own budget.
func TestBudgetsPerCluster(t *testing.T) {
	bin := e2e.Build(t, ".")
	clusters := []string{
		"SQLENGINE_CLUSTERS=big,small",
		"SQLENGINE_MAX_SCAN_ROWS=5000",
		"SQLENGINE_BIG_MAX_SCAN_ROWS=50000",
		"SQLENGINE_SMALL_SOURCE=sqlmcp-small-budget",
	}
	q := "SELECT id FROM " + trinotest.LargeTable + " ORDER BY id"
	for _, approval := range []string{"none", "destructive"} {
		t.Run("MCP_APPROVAL="+approval, func(t *testing.T) {
			cs := e2e.Stdio(t, bin, engineEnv(t, append(clusters, "MCP_APPROVAL="+approval)...))
			m := structured(t, e2e.CallTool(t, cs, "execute_query", map[string]any{"query": q, "limit": 2, "cluster": "big"}))
			if m["row_count"] != float64(2) {
				t.Errorf("big: %v", m)
			}
			n := len(trino.Statements())
			res := e2e.CallTool(t, cs, "execute_query", map[string]any{"query": q, "limit": 2, "cluster": "small"})
			text := e2e.Text(res)
			switch approval {
			case "none":
				if !res.IsError || !strings.Contains(text, "20,000 rows exceed SQLENGINE_MAX_SCAN_ROWS=5,000 (the budget of cluster small)") || !strings.Contains(text, "nothing was run") {
					t.Errorf("small, approval off: %s", text)
				}
			default:
				if res.IsError || !strings.Contains(text, "Approval needed") || !strings.Contains(text, "over the query budget") {
					t.Errorf("small, approval on: %s", text)
				}
			}
			var sent []string
			for _, r := range trino.Statements()[n:] {
				if r.Header.Get("X-Trino-Source") == "sqlmcp-small-budget" {
					sent = append(sent, r.Body)
				}
			}
			if len(sent) == 0 {
				t.Errorf("small never priced the read")
			}
			for _, s := range sent {
				if !strings.HasPrefix(s, "EXPLAIN") {
					t.Errorf("small's engine saw %q", s)
				}
			}
			for cluster, rows := range map[string]int{"big": 50_000, "small": 5_000} {
				e := structured(t, e2e.CallTool(t, cs, "explain_query", map[string]any{"query": q, "type": "estimate", "cluster": cluster}))
				b := e["budget"].(map[string]any)
				if b["max_scan_rows"] != float64(rows) || b["within"] != (cluster == "big") {
					t.Errorf("%s: budget %v, want max_scan_rows %s; %v", cluster, b, strconv.Itoa(rows), e)
				}
			}
		})
	}
}
