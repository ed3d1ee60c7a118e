package mcpserver_test

import (
	"strings"
	"testing"

	"github.com/mcpfleet/mcpfleet/sqlmcp/internal/engine"
	"github.com/mcpfleet/mcpfleet/sqlmcp/internal/mcpserver"
)

// Names that are legal Trino identifiers but break any parsing of a dotted
// path: quotes, dots, spaces, SQL punctuation and comment starters.
var oddNames = []string{
	`weird "name"`,
	`"quoted"`,
	`"`,
	`a.b`,
	`a"."b`,
	`it's`,
	`x; DROP TABLE y`,
	`a--b`,
	`a/*b`,
	`Mixed Case`,
	` lead and trail `,
	`naïve`,
}

// A catalog, schema or table given as its own argument is one identifier:
// quoted for the engine as it is, never split on dots or quotes.
func TestNamesGivenAloneAreOneIdentifier(t *testing.T) {
	const schema = `odd "s.p" schema`
	ctx := t.Context()
	if err := trino.Exec(ctx, "CREATE SCHEMA IF NOT EXISTS sales."+engine.QuoteIdentifier(schema)); err != nil {
		t.Fatal(err)
	}
	for _, n := range oddNames {
		if err := trino.Exec(ctx, "CREATE OR REPLACE TABLE sales."+engine.QuoteIdentifier(schema)+"."+engine.QuoteIdentifier(n)+" (id INTEGER, "+engine.QuoteIdentifier("col "+n)+" VARCHAR)"); err != nil {
			t.Fatalf("create %q: %v", n, err)
		}
	}
	h := newHarness(t, mcpserver.Options{}, nil)
	m := h.ok(t, "list_schemas", map[string]any{"catalog": "sales"})
	if !strings.Contains(compact(t, m["schemas"]), compact(t, schema)) {
		t.Errorf("list_schemas lacks %q: %v", schema, m["schemas"])
	}
	m = h.ok(t, "list_tables", map[string]any{"catalog": "sales", "schema": schema})
	got := compact(t, m["tables"])
	for _, n := range oddNames {
		if !strings.Contains(got, compact(t, map[string]string{"name": n, "type": "TABLE"})) {
			t.Errorf("list_tables(%q) lacks %q: %s", schema, n, got)
		}
	}
	for _, n := range oddNames {
		for _, args := range []map[string]any{
			{"catalog": "sales", "schema": schema, "table": n},
			{"schema": schema, "table": n}, // the configured catalog
		} {
			m := h.ok(t, "get_table_schema", args)
			if m["table"] != n || m["schema"] != schema || m["catalog"] != "sales" || !strings.Contains(compact(t, m["columns"]), compact(t, "col "+n)) {
				t.Errorf("get_table_schema(%v) = %v", args, m)
			}
		}
		// Any pattern argument is a LIKE literal, never SQL.
		m := h.ok(t, "list_tables", map[string]any{"catalog": "sales", "schema": schema, "pattern": n})
		if !strings.Contains(compact(t, m["tables"]), compact(t, n)) {
			t.Errorf("list_tables(pattern %q) = %v", n, m["tables"])
		}
	}
	// The same names through the SQL of execute_query, quoted by hand.
	for _, n := range oddNames {
		m := h.ok(t, "execute_query", map[string]any{"query": "SELECT count(*) FROM " + engine.QuoteIdentifier(n), "catalog": "sales", "schema": schema})
		if compact(t, m["rows"]) != "[[0]]" {
			t.Errorf("count of %q = %v", n, m["rows"])
		}
	}
}

// badNames are catalog, schema or table values that are no identifier the
// engine can be sent: control characters (which would split the HTTP
// header carrying them), invisible characters, invalid UTF-8, absurd size.
var badNames = []string{
	"sales\n",
	"sales\r",
	"sales\r\nX-Trino-User: admin",
	"\nsales",
	"sa\x00les",
	"sales\t",
	"sales\x7f",
	"sales\u0085",
	"sales\u2028",
	"sa\u200bles",
	"sales\ufeff",
	"sales\u00ad", // soft hyphen: invisible
	strings.Repeat("s", 2000),
}

// A bad catalog or schema argument fails as bad input naming the argument,
// before any request reaches the engine.
func TestBadIdentifiersFailAsBadInput(t *testing.T) {
	// Only this harness's requests count (X-Trino-Source): the engine is
	// shared, and another test's late request (a cancel, a rollback) may
	// reach it meanwhile.
	const source = "sqlmcp-bad-identifiers-test"
	h := newHarness(t, mcpserver.Options{}, func(c *engine.Config) { c.Source = source })
	sent := func() int {
		n := 0
		for _, r := range trino.Requests() {
			if r.Header.Get("X-Trino-Source") == source {
				n++
			}
		}
		return n
	}
	type call struct {
		tool, arg string
		args      map[string]any
	}
	var calls []call
	for _, bad := range badNames {
		calls = append(calls,
			call{"execute_query", "catalog", map[string]any{"query": "SELECT 1", "catalog": bad}},
			call{"execute_query", "schema", map[string]any{"query": "SELECT 1", "schema": bad}},
			call{"execute_query", "schema", map[string]any{"query": "SELECT 1", "catalog": "sales", "schema": bad}},
			call{"list_schemas", "catalog", map[string]any{"catalog": bad}},
			call{"list_tables", "catalog", map[string]any{"catalog": bad, "schema": "public"}},
			call{"list_tables", "schema", map[string]any{"catalog": "sales", "schema": bad}},
			call{"get_table_schema", "catalog", map[string]any{"catalog": bad, "schema": "public", "table": "orders"}},
			call{"get_table_schema", "schema", map[string]any{"schema": bad, "table": "orders"}},
			call{"get_table_schema", "table", map[string]any{"schema": "public", "table": bad}},
		)
	}
	for _, c := range calls {
		before := sent()
		text, isErr := h.call(t, t.Context(), c.tool, c.args)
		if !isErr || !strings.Contains(text, `argument "`+c.arg+`"`) || !strings.Contains(text, "not a valid name") {
			t.Errorf("%s(%q) = %q (error %v), want bad input naming argument %q", c.tool, c.args, text, isErr, c.arg)
		}
		if strings.Contains(text, "Trino is running") {
			t.Errorf("%s(%q) blames the engine: %q", c.tool, c.args, text)
		}
		if n := sent() - before; n != 0 {
			t.Errorf("%s(%q) sent %d requests to the engine", c.tool, c.args, n)
		}
	}
	t.Logf("%d bad names x %d argument positions", len(badNames), len(calls)/len(badNames))
}
