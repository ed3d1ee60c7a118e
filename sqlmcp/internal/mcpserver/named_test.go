package mcpserver_test

import (
	"strings"
	"testing"

	"github.com/mcpfleet/mcpfleet/sqlmcp/internal/mcpserver"
	"github.com/mcpfleet/mcpfleet/sqlmcp/internal/sqlguard"
)

// A statement naming a table outside the allowed schemas is refused even
// when its plan reads nothing (the engine prunes scans under WHERE false or
// LIMIT 0, yet answers with the table's columns and types).
func TestPrunedScansOutsideScopeAreRefused(t *testing.T) {
	scope, err := sqlguard.ParseScope([]string{"sales.mcpallowed"})
	if err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, mcpserver.Options{Scope: scope}, nil)
	queries := []string{
		"SELECT * FROM sales.mcpsecret.s WHERE false",
		"SELECT * FROM sales.mcpsecret.s LIMIT 0",
		"SELECT * FROM mcpsecret.s WHERE 1 = 0",
		`SELECT * FROM "sales"."mcpsecret"."s" WHERE false`,
		"SELECT * FROM a LEFT JOIN mcpsecret.s ON false",
		"SELECT * FROM a CROSS JOIN mcpsecret.s LIMIT 0",
		"SELECT * FROM a WHERE x IN (SELECT x FROM mcpsecret.s WHERE false)",
		"SELECT * FROM (SELECT * FROM mcpsecret.s) t WHERE false",
		"WITH q AS (SELECT * FROM mcpsecret.s) SELECT * FROM q WHERE false",
		"SELECT x, secret FROM a CROSS JOIN mcpsecret.s WHERE false UNION ALL SELECT 1, 'x'",
		"TABLE mcpsecret.s LIMIT 0",
		"SELECT * FROM warehouse.logs.events WHERE false",
	}
	for _, tool := range []string{"execute_query", "explain_query"} {
		for _, q := range queries {
			before := len(trino.Statements())
			text, isErr := h.call(t, t.Context(), tool, map[string]any{"query": q})
			if !isErr || !strings.Contains(text, "SQLENGINE_ALLOWED_SCHEMAS") {
				t.Errorf("%s(%q) = %q (error %v), want a refusal", tool, q, text, isErr)
			}
			if strings.Contains(text, "secret") && !isErr {
				t.Errorf("%s(%q) revealed the table: %q", tool, q, text)
			}
			if n := len(trino.Statements()) - before; n != 0 {
				t.Errorf("%s(%q): %d statements reached the engine; the refusal must come first", tool, q, n)
			}
		}
	}
	// The same shapes on allowed tables still run.
	for _, q := range []string{"SELECT * FROM a WHERE false", "SELECT * FROM sales.mcpallowed.a LIMIT 0", "WITH s AS (SELECT 1 x) SELECT * FROM s"} {
		h.ok(t, "execute_query", map[string]any{"query": q})
	}
}
