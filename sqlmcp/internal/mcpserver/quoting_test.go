package mcpserver_test

import (
	"context"
	"strings"
	"testing"

	"github.com/mcpfleet/mcpfleet/sqlmcp/internal/mcpserver"
	"github.com/mcpfleet/mcpfleet/sqlmcp/internal/sqlguard"
)

// TestQuotingCannotHideATable: quoting Trino does not have but DuckDB
// reads (dollar quotes, E'...' escapes, ...) cannot make the guard see a
// string where the engine reads a table outside SQLENGINE_ALLOWED_SCHEMAS;
// under an always-false filter the engine's IO plan names no table, so
// only one reading of the tokens keeps the columns of sales.mcpsecret.s
// from coming back. The engine refuses such text as Trino does.
func TestQuotingCannotHideATable(t *testing.T) {
	scope, err := sqlguard.ParseScope([]string{"sales.mcpallowed"})
	if err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, mcpserver.Options{Scope: scope}, nil)
	const tail = " AS a, s.* FROM sales.mcpsecret.s WHERE 1 = 0 --'"
	for _, q := range []string{
		"SELECT $$'$$" + tail,
		"SELECT $x$'$x$" + tail,
		"SELECT E'\\''" + tail,
		"SELECT e'\\''" + tail,
		"SELECT X'00''" + tail,
		"SELECT 1 AS b, `'`" + tail,
		"SELECT 1 AS b # '\n" + tail[5:],
		"SELECT 1 AS b, /* /* */ '*/" + tail[5:] + " AS c",
	} {
		text, isErr := h.call(t, context.Background(), "execute_query", map[string]any{"query": q})
		if strings.Contains(text, `"name":"secret"`) {
			t.Errorf("%q: the hidden table's columns came back: %s", q, text)
		}
		if !isErr && !strings.Contains(q, "/* /*") {
			t.Errorf("%q: answered %s", q, text)
		}
	}
}
