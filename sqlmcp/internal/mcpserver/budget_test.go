package mcpserver_test

import (
	"context"
	"strings"
	"testing"

	"github.com/mcpfleet/mcpfleet/shared/approval"
	"github.com/mcpfleet/mcpfleet/shared/audit"
	"github.com/mcpfleet/mcpfleet/shared/toolcall"

	"github.com/mcpfleet/mcpfleet/sqlmcp/internal/mcpserver"
	"github.com/mcpfleet/mcpfleet/sqlmcp/internal/trinotest"
)

// TestExplainEstimate: explain_query type estimate gives the engine's
// per-table and total figures; a table without statistics is unknown
// (null), never zero.
func TestExplainEstimate(t *testing.T) {
	h := newHarness(t, mcpserver.Options{MaxScanRows: 500_000}, nil)
	m := h.ok(t, "explain_query", map[string]any{"query": "SELECT * FROM " + trinotest.LargeTable, "type": "estimate"})
	est := m["estimate"].(map[string]any)
	if est["rows"] == nil || est["rows"].(float64) < 900_000 || est["bytes"] == nil || est["bytes"].(float64) <= est["rows"].(float64) {
		t.Fatalf("estimate of the large table: %v", est)
	}
	if b := m["budget"].(map[string]any); b["within"] != false || !strings.Contains(b["over"].(string), "SQLENGINE_MAX_SCAN_ROWS") {
		t.Errorf("budget: %v", b)
	}
	trino.SetNoStatistics("sales.mcpallowed.a")
	m = h.ok(t, "explain_query", map[string]any{"query": "SELECT * FROM sales.mcpallowed.a", "type": "estimate"})
	est = m["estimate"].(map[string]any)
	if est["rows"] != nil || est["bytes"] != nil || !strings.Contains(m["plan"].(string), "unknown") {
		t.Errorf("a table without statistics: %v %v", est, m["plan"])
	}
}

// TestBudgetRefusesAboveAndUnknown: with approval off (MCP_APPROVAL=none),
// a read estimated above a budget, or unknown under one, is
// refused with the estimate and never reaches the engine as a query; one
// below runs.
func TestBudgetRefusesAboveAndUnknown(t *testing.T) {
	trino.SetNoStatistics("sales.mcpsecret.s")
	for _, tc := range []struct {
		name  string
		opts  mcpserver.Options
		query string
		want  string // "" runs
	}{
		{"rows above", mcpserver.Options{MaxScanRows: 500_000}, "SELECT id FROM " + trinotest.LargeTable + " -- above", "exceed SQLENGINE_MAX_SCAN_ROWS"},
		{"bytes above", mcpserver.Options{MaxScanBytes: 1 << 20}, "SELECT id FROM " + trinotest.LargeTable + " -- bytes", "exceed SQLENGINE_MAX_SCAN_BYTES"},
		{"unknown", mcpserver.Options{MaxScanRows: 500_000}, "SELECT x FROM sales.mcpsecret.s", "unknown"},
		{"below", mcpserver.Options{MaxScanRows: 2_000_000, MaxScanBytes: 1 << 40}, "SELECT id FROM " + trinotest.LargeTable + " ORDER BY id", ""},
		{"no budget, unknown", mcpserver.Options{}, "SELECT x FROM sales.mcpsecret.s", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarnessWith(t, tc.opts, nil, toolcall.Config{Audit: audit.Config{Dest: "off"}, Approval: approval.Config{Policy: approval.None}})
			before := len(trino.Queries())
			text, isErr := h.call(t, context.Background(), "execute_query", map[string]any{"query": tc.query, "limit": 3})
			if tc.want == "" {
				if isErr {
					t.Fatalf("refused below the budget: %s", text)
				}
				return
			}
			if !isErr || !strings.Contains(text, tc.want) || !strings.Contains(text, "estimated input") || !strings.Contains(text, "nothing was run") {
				t.Fatalf("not refused with the estimate: %s", text)
			}
			for _, q := range trino.Queries()[before:] {
				if !strings.HasPrefix(q.SQL, "EXPLAIN") {
					t.Errorf("the engine ran %q", q.SQL)
				}
			}
			t.Log(text)
		})
	}
}
