package mcpserver_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcpfleet/mcpfleet/shared/approval"
	"github.com/mcpfleet/mcpfleet/shared/audit"
	"github.com/mcpfleet/mcpfleet/shared/httpauth"
	"github.com/mcpfleet/mcpfleet/shared/serve"
	"github.com/mcpfleet/mcpfleet/shared/toolcall"

	"github.com/mcpfleet/mcpfleet/sqlmcp/internal/engine"
	"github.com/mcpfleet/mcpfleet/sqlmcp/internal/mcpserver"
	"github.com/mcpfleet/mcpfleet/sqlmcp/internal/sqlguard"
	"github.com/mcpfleet/mcpfleet/sqlmcp/internal/trinotest"
)

// trino is one test engine shared by the tests (starting one generates its
// 1,000,000-row table).
var trino *trinotest.Server

func TestMain(m *testing.M) {
	s, err := trinotest.New(trinotest.Options{PageSize: 1000})
	if err != nil {
		fmt.Fprintln(os.Stderr, "start the test engine:", err)
		os.Exit(1)
	}
	ctx := context.Background()
	for _, stmt := range []string{
		`CREATE SCHEMA sales.mcpallowed`,
		`CREATE SCHEMA sales.mcpsecret`,
		`CREATE TABLE sales.mcpsecret.s (x INTEGER, secret VARCHAR)`,
		`INSERT INTO sales.mcpsecret.s VALUES (1, 'hidden')`,
		`CREATE TABLE sales.mcpallowed.a (x INTEGER, "set" VARCHAR, amount DECIMAL(10,2))`,
		`INSERT INTO sales.mcpallowed.a VALUES (1, 'one', 1.50), (2, NULL, NULL), (3, 'three', 3.25)`,
		`CREATE VIEW sales.mcpallowed.v_bad AS SELECT * FROM sales.mcpsecret.s`,
		`CREATE TABLE sales.mcpallowed."odd.name ""q""" (id INTEGER)`,
	} {
		if err := s.Exec(ctx, stmt); err != nil {
			fmt.Fprintln(os.Stderr, stmt, err)
			s.Close()
			os.Exit(1)
		}
	}
	trino = s
	code := m.Run()
	s.Close()
	os.Exit(code)
}

type harness struct {
	c     *client.Client
	eng   *engine.Client
	tools *mcpserver.Tools
}

func newHarness(t testing.TB, opts mcpserver.Options, mod func(*engine.Config)) *harness {
	t.Helper()
	return newHarnessWith(t, opts, mod, toolcall.Config{Audit: audit.Config{Dest: "off"}})
}

// newHarnessWith is newHarness with the pipeline configured by calls.
func newHarnessWith(t testing.TB, opts mcpserver.Options, mod func(*engine.Config), calls toolcall.Config) *harness {
	t.Helper()
	return newHarnessOn(t, trino, opts, mod, calls)
}

// newHarnessOn is newHarnessWith on the test engine engineSrv.
func newHarnessOn(t testing.TB, engineSrv *trinotest.Server, opts mcpserver.Options, mod func(*engine.Config), calls toolcall.Config) *harness {
	t.Helper()
	cfg := engine.Config{Host: engineSrv.Host(), Port: engineSrv.Port(), User: "svc", Catalog: "sales", Schema: "mcpallowed", QueryTimeout: 30 * time.Second,
		ReadOnlyTransactions: !opts.AllowWrites}
	if mod != nil {
		mod(&cfg)
	}
	eng, err := engine.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { eng.Close() })
	s := serve.NewServer("sqlmcp", "test", mcpserver.ServerOptions()...)
	p, err := toolcall.New(s.MCPServer, calls, toolcall.Options{Server: "sqlmcp", Version: "test", Local: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	tools := mcpserver.New(eng, opts, nil)
	tools.Register(p)
	t.Cleanup(tools.Close)
	c, err := client.NewInProcessClient(s.MCPServer)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	if err := c.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	init := mcp.InitializeRequest{}
	init.Params.ProtocolVersion = mcp.LATEST_PROTOCOL_VERSION
	init.Params.ClientInfo = mcp.Implementation{Name: "test", Version: "1"}
	if _, err := c.Initialize(context.Background(), init); err != nil {
		t.Fatal(err)
	}
	return &harness{c: c, eng: eng, tools: tools}
}

// call runs a tool and returns the result's text and whether it is an error.
func (h *harness) call(t testing.TB, ctx context.Context, tool string, args map[string]any) (string, bool) {
	t.Helper()
	req := mcp.CallToolRequest{}
	req.Params.Name = tool
	req.Params.Arguments = args
	res, err := h.c.CallTool(ctx, req)
	if err != nil {
		t.Fatalf("%s: protocol error %v", tool, err)
	}
	if len(res.Content) != 1 {
		t.Fatalf("%s: %d content items", tool, len(res.Content))
	}
	text := res.Content[0].(mcp.TextContent).Text
	if !res.IsError {
		// The text is the JSON of structuredContent.
		sc, _ := json.Marshal(res.StructuredContent)
		var a, b any
		if json.Unmarshal([]byte(text), &a) != nil || json.Unmarshal(sc, &b) != nil || fmt.Sprint(a) != fmt.Sprint(b) {
			t.Errorf("%s: text %s differs from structuredContent %s", tool, text, sc)
		}
	}
	return text, res.IsError
}

func (h *harness) ok(t testing.TB, tool string, args map[string]any) map[string]any {
	t.Helper()
	text, isErr := h.call(t, context.Background(), tool, args)
	if isErr {
		t.Fatalf("%s(%v): %s", tool, args, text)
	}
	var m map[string]any
	if err := json.Unmarshal([]byte(text), &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func (h *harness) refused(t testing.TB, tool string, args map[string]any, want string) {
	t.Helper()
	text, isErr := h.call(t, context.Background(), tool, args)
	if !isErr || !strings.Contains(text, want) {
		t.Errorf("%s(%v) = %q (error %v), want an error containing %q", tool, args, text, isErr, want)
	}
}

func compact(t testing.TB, v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestToolsListAnnotations(t *testing.T) {
	for _, writes := range []bool{false, true} {
		h := newHarness(t, mcpserver.Options{AllowWrites: writes}, nil)
		res, err := h.c.ListTools(context.Background(), mcp.ListToolsRequest{})
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, tool := range res.Tools {
			names = append(names, tool.Name)
			var wire struct {
				InputSchema  map[string]any `json:"inputSchema"`
				OutputSchema map[string]any `json:"outputSchema"`
			}
			raw, _ := json.Marshal(tool)
			if err := json.Unmarshal(raw, &wire); err != nil {
				t.Fatal(err)
			}
			if tool.Title == "" || tool.Annotations.ReadOnlyHint == nil || wire.OutputSchema["type"] != "object" {
				t.Errorf("%s: title %q, annotations %+v, output schema %v", tool.Name, tool.Title, tool.Annotations, wire.OutputSchema)
			}
			if wire.InputSchema["additionalProperties"] != false || wire.InputSchema["type"] != "object" {
				t.Errorf("%s: input schema is not strict: %v", tool.Name, wire.InputSchema)
			}
			wantRO := tool.Name != "execute_query" || !writes
			if *tool.Annotations.ReadOnlyHint != wantRO {
				t.Errorf("writes=%v: %s readOnlyHint = %v", writes, tool.Name, *tool.Annotations.ReadOnlyHint)
			}
		}
		if strings.Join(names, ",") != "execute_query,explain_query,fetch_more,get_table_schema,list_catalogs,list_schemas,list_tables" {
			t.Errorf("tools = %v", names)
		}
	}
}

func TestExecuteQuery(t *testing.T) {
	h := newHarness(t, mcpserver.Options{MaxRows: 2, MaxRowsCeiling: 50}, nil)
	m := h.ok(t, "execute_query", map[string]any{"query": "SELECT x, \"set\", amount FROM a ORDER BY x;"})
	if got := compact(t, m["rows"]); got != `[[1,"one","1.50"],[2,null,null]]` {
		t.Errorf("rows = %s", got)
	}
	if got := compact(t, m["columns"]); got != `[{"name":"x","type":"integer"},{"name":"set","type":"varchar"},{"name":"amount","type":"decimal(10,2)"}]` {
		t.Errorf("columns = %s", got)
	}
	if m["truncated"] != true || m["limit"] != float64(2) || m["row_count"] != float64(2) || m["query_id"] == "" {
		t.Errorf("summary = %v", m)
	}
	m = h.ok(t, "execute_query", map[string]any{"query": "SELECT id FROM events WHERE id <= 30 ORDER BY id", "limit": 30, "catalog": "warehouse", "schema": "logs"})
	if m["row_count"] != float64(30) || m["truncated"] != false {
		t.Errorf("with catalog/schema: %v", m)
	}
	h.refused(t, "execute_query", map[string]any{"query": "SELECT 1", "limit": 51}, `argument "limit" must be at most 50, got the number 51`)
	h.refused(t, "execute_query", map[string]any{"query": "SELECT 1", "limit": 0}, "at least 1")
	h.refused(t, "execute_query", map[string]any{"query": "SELECT 1", "limit": 1.5}, "integer")
	h.refused(t, "execute_query", map[string]any{"query": "SELECT 1", "rows": 5}, `unknown argument "rows"`)
	h.refused(t, "execute_query", map[string]any{"query": " "}, "must not be empty")
	h.refused(t, "execute_query", map[string]any{}, "required")
	h.refused(t, "execute_query", map[string]any{"query": "SELECT * FROM nope"}, "TABLE_NOT_FOUND")
}

func TestReadOnlyThroughTheTool(t *testing.T) {
	h := newHarness(t, mcpserver.Options{}, nil)
	before := len(trino.Statements())
	for _, q := range []string{
		"INSERT INTO a VALUES (9, 'x', 1)",
		"/* SELECT */ DELETE FROM a",
		"SELECT 1; DELETE FROM a",
		"EXPLAIN ANALYZE -- it's a note\nDELETE FROM a",
		"SELECT * FROM TABLE(system.query(query => 'DELETE FROM a'))",
		"USE warehouse.logs",
		"SET SESSION query_max_run_time = '1h'",
		"START TRANSACTION",
		"ＤＥＬＥＴＥ FROM a",
	} {
		h.refused(t, "execute_query", map[string]any{"query": q}, "refused")
	}
	if after := len(trino.Statements()); after != before {
		t.Errorf("refused statements reached the engine: %d new", after-before)
	}
	h.refused(t, "execute_query", map[string]any{"query": "DROP TABLE a"}, "SQLENGINE_ALLOW_WRITE_QUERIES=true")
	for _, q := range []string{"VALUES 1", "(SELECT 1)", `SELECT "set" FROM a`, "WITH t AS (SELECT x FROM a) SELECT count(*) FROM t", "EXPLAIN DELETE FROM a"} {
		h.ok(t, "execute_query", map[string]any{"query": q})
	}
	m := h.ok(t, "execute_query", map[string]any{"query": "SELECT count(*) AS n FROM a"})
	if compact(t, m["rows"]) != "[[3]]" {
		t.Errorf("the table changed: %v", m["rows"])
	}
}

func TestWritesWhenAllowed(t *testing.T) {
	// MCP_APPROVAL=none: this test is about the guard letting writes
	// through; approval_test.go covers the policy.
	h := newHarnessWith(t, mcpserver.Options{AllowWrites: true}, func(c *engine.Config) { c.Schema = "mcpsecret" },
		toolcall.Config{Audit: audit.Config{Dest: "off"}, Approval: approval.Config{Policy: approval.None}})
	h.ok(t, "execute_query", map[string]any{"query": "DROP TABLE IF EXISTS w"}) // a shared engine; -count reruns
	h.ok(t, "execute_query", map[string]any{"query": "CREATE TABLE w (x INTEGER)"})
	h.ok(t, "execute_query", map[string]any{"query": "INSERT INTO w VALUES (1), (2)"})
	m := h.ok(t, "execute_query", map[string]any{"query": "SELECT count(*) FROM w"})
	if compact(t, m["rows"]) != "[[2]]" {
		t.Errorf("rows = %v", m["rows"])
	}
	h.refused(t, "execute_query", map[string]any{"query": "USE warehouse.logs"}, "catalog and schema arguments")
}

func TestDiscoveryTools(t *testing.T) {
	h := newHarness(t, mcpserver.Options{}, nil)
	m := h.ok(t, "list_catalogs", nil)
	if got := compact(t, m["catalogs"]); !strings.Contains(got, `"sales"`) || !strings.Contains(got, `"warehouse"`) {
		t.Errorf("catalogs = %s", got)
	}
	m = h.ok(t, "list_schemas", nil)
	if m["catalog"] != "sales" || !strings.Contains(compact(t, m["schemas"]), `"mcpallowed"`) {
		t.Errorf("list_schemas = %v", m)
	}
	m = h.ok(t, "list_tables", map[string]any{"pattern": "%a%"})
	if got := compact(t, m); got != `{"catalog":"sales","schema":"mcpallowed","tables":[{"name":"a","type":"TABLE"},{"name":"odd.name \"q\"","type":"TABLE"},{"name":"v_bad","type":"VIEW"}]}` {
		t.Errorf("list_tables = %s", got)
	}
	m = h.ok(t, "get_table_schema", map[string]any{"table": "a"})
	if got := compact(t, m); !strings.HasPrefix(got, `{"catalog":"sales","columns":[{"comment":"","extra":"","name":"x","nullable":true,"type":"integer"},{"comment":"","extra":"","name":"set"`) {
		t.Errorf("get_table_schema = %s", got)
	}
	for _, name := range []string{`mcpallowed."odd.name ""q"""`, `sales.mcpallowed."odd.name ""q"""`} {
		m = h.ok(t, "get_table_schema", map[string]any{"table": name})
		if m["table"] != `odd.name "q"` {
			t.Errorf("get_table_schema(%s) = %v", name, m)
		}
	}
	// With a catalog argument the table is one name, never a dotted path.
	h.refused(t, "get_table_schema", map[string]any{"table": "warehouse.logs.events", "catalog": "sales"}, "does not exist")
	h.refused(t, "get_table_schema", map[string]any{"table": "a.b.c.d"}, "4 parts")
	h.refused(t, "get_table_schema", map[string]any{"table": "nope"}, "does not exist")
	h.refused(t, "list_schemas", map[string]any{"catalog": 3}, "must be a string")
	h.refused(t, "list_catalogs", map[string]any{"x": 1}, "unknown argument")
}

func TestExplainQuery(t *testing.T) {
	h := newHarness(t, mcpserver.Options{}, nil)
	m := h.ok(t, "explain_query", map[string]any{"query": "SELECT * FROM a"})
	if m["type"] != "LOGICAL" || m["format"] != "TEXT" || m["plan"] == "" {
		t.Errorf("explain = %v", m)
	}
	// The schema's enum is the contract: other spellings are refused before
	// anything runs, naming the accepted values.
	h.refused(t, "explain_query", map[string]any{"query": "SELECT * FROM a", "type": "io"}, `argument "type" must be one of "LOGICAL", "DISTRIBUTED", "VALIDATE", "IO", "estimate", got the string "io"`)
	m = h.ok(t, "explain_query", map[string]any{"query": "SELECT * FROM a", "type": "IO", "format": "JSON"})
	if !strings.Contains(m["plan"].(string), "mcpallowed") {
		t.Errorf("IO plan = %v", m["plan"])
	}
	m = h.ok(t, "explain_query", map[string]any{"query": "SELECT 1;", "type": "VALIDATE"})
	if m["plan"] != "true" {
		t.Errorf("validate = %v", m)
	}
	// Planning a write executes nothing, so it is allowed even read-only.
	h.ok(t, "explain_query", map[string]any{"query": "DELETE FROM a"})
	h.refused(t, "explain_query", map[string]any{"query": "EXPLAIN ANALYZE DELETE FROM a"}, "refused")
	h.refused(t, "explain_query", map[string]any{"query": "SELECT 1", "type": "PHYSICAL"}, `must be one of "LOGICAL", "DISTRIBUTED", "VALIDATE", "IO", "estimate", got the string "PHYSICAL"`)
}

func TestAllowedSchemas(t *testing.T) {
	scope, err := sqlguard.ParseScope([]string{"sales.mcpallowed"})
	if err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, mcpserver.Options{Scope: scope}, nil)
	before := len(trino.Statements())
	for _, tc := range []struct{ query, catalog, schema string }{
		{query: "SELECT * FROM sales.mcpsecret.s"},
		{query: `SELECT * FROM "SALES"."MCPSECRET"."S"`},
		{query: "SELECT * FROM a JOIN sales.mcpsecret.s ON a.x = s.x"},
		{query: "SELECT * FROM a WHERE x IN (SELECT x FROM sales.mcpsecret.s)"},
		{query: "WITH t AS (SELECT * FROM sales.mcpsecret.s) SELECT * FROM t"},
		{query: "SELECT * FROM a UNION ALL SELECT x, secret, NULL FROM sales.mcpsecret.s"},
		{query: "SELECT * FROM v_bad"},
		{query: "SELECT * FROM sales.information_schema.tables"},
		{query: "SELECT * FROM information_schema.columns"},
		{query: "SELECT * FROM " + trinotest.LargeTable},
		{query: "SELECT * FROM s", schema: "mcpsecret"},
		{query: "SELECT * FROM events", catalog: "warehouse", schema: "logs"},
		{query: "SELECT * FROM TABLE(system.sequence(start => 1, stop => 3))"},
		{query: "EXPLAIN SELECT * FROM sales.mcpsecret.s"},
		{query: "SHOW TABLES FROM sales.mcpsecret"},
		{query: "DESCRIBE sales.mcpsecret.s"},
	} {
		args := map[string]any{"query": tc.query}
		if tc.catalog != "" {
			args["catalog"] = tc.catalog
		}
		if tc.schema != "" {
			args["schema"] = tc.schema
		}
		h.refused(t, "execute_query", args, "refused")
	}
	h.refused(t, "explain_query", map[string]any{"query": "SELECT * FROM sales.mcpsecret.s"}, "SQLENGINE_ALLOWED_SCHEMAS")
	// Only the EXPLAIN (TYPE IO) pre-flights reached the engine.
	for _, st := range trino.Statements()[before:] {
		if !strings.HasPrefix(st.Body, "EXPLAIN (TYPE IO, FORMAT JSON)") {
			t.Errorf("a refused statement ran: %s", st.Body)
		}
	}
	m := h.ok(t, "execute_query", map[string]any{"query": "SELECT count(*) FROM a"})
	if compact(t, m["rows"]) != "[[3]]" {
		t.Errorf("allowed read = %v", m["rows"])
	}
	h.ok(t, "execute_query", map[string]any{"query": "VALUES 1"})
	h.ok(t, "execute_query", map[string]any{"query": "SELECT * FROM sales.mcpallowed.a a1 JOIN a a2 ON a1.x = a2.x"})

	m = h.ok(t, "list_catalogs", nil)
	if compact(t, m["catalogs"]) != `["sales"]` {
		t.Errorf("catalogs = %v", m["catalogs"])
	}
	m = h.ok(t, "list_schemas", map[string]any{"catalog": "sales"})
	if compact(t, m["schemas"]) != `["mcpallowed"]` {
		t.Errorf("schemas = %v", m["schemas"])
	}
	h.refused(t, "list_schemas", map[string]any{"catalog": "warehouse"}, "SQLENGINE_ALLOWED_SCHEMAS")
	h.refused(t, "list_tables", map[string]any{"schema": "mcpsecret"}, "SQLENGINE_ALLOWED_SCHEMAS")
	h.refused(t, "get_table_schema", map[string]any{"table": "mcpsecret.s"}, "SQLENGINE_ALLOWED_SCHEMAS")
	h.refused(t, "get_table_schema", map[string]any{"table": "sales.information_schema.tables"}, "SQLENGINE_ALLOWED_SCHEMAS")
	h.ok(t, "get_table_schema", map[string]any{"table": "sales.mcpallowed.a"})
}

func TestImpersonationAndAttribution(t *testing.T) {
	alice := httpauth.ContextWithIdentity(context.Background(), &httpauth.Identity{Subject: "u-1", Username: "alice", Email: "alice@example.com"})
	noName := httpauth.ContextWithIdentity(context.Background(), &httpauth.Identity{Subject: "u-2", Email: "bob@example.com"})

	// Attribution only: the query runs as the service user, tagged with the caller.
	h := newHarness(t, mcpserver.Options{}, nil)
	if text, isErr := h.call(t, alice, "execute_query", map[string]any{"query": "SELECT 'attr-1'"}); isErr {
		t.Fatal(text)
	}
	qi := trino.LastQuery(t, "SELECT 'attr-1'")
	if qi.User != "svc" || strings.Join(qi.ClientTags, ",") != "sqlmcp,user:alice" || !strings.Contains(qi.ClientInfo, `"user":"alice"`) {
		t.Errorf("attribution: user=%q tags=%q info=%q", qi.User, qi.ClientTags, qi.ClientInfo)
	}

	for _, tc := range []struct{ field, want string }{{"username", "alice"}, {"email", "alice@example.com"}, {"subject", "u-1"}} {
		h := newHarness(t, mcpserver.Options{Impersonation: true, ImpersonationField: tc.field}, nil)
		q := "SELECT 'imp-" + tc.field + "'"
		if text, isErr := h.call(t, alice, "execute_query", map[string]any{"query": q}); isErr {
			t.Fatal(text)
		}
		if qi := trino.LastQuery(t, q); qi.User != tc.want {
			t.Errorf("field %s: X-Trino-User = %q, want %q", tc.field, qi.User, tc.want)
		}
		h.call(t, alice, "list_catalogs", nil)
		if qi := trino.LastQuery(t, "SHOW CATALOGS"); qi.User != tc.want {
			t.Errorf("field %s: list_catalogs ran as %q", tc.field, qi.User)
		}
	}

	// A caller without the claim, or no caller at all, is refused.
	h = newHarness(t, mcpserver.Options{Impersonation: true}, nil)
	before := len(trino.Statements())
	if text, isErr := h.call(t, noName, "execute_query", map[string]any{"query": "SELECT 1"}); !isErr || !strings.Contains(text, "preferred_username") {
		t.Errorf("caller without username: %q", text)
	}
	if text, isErr := h.call(t, context.Background(), "list_schemas", nil); !isErr || !strings.Contains(text, "OAuth") {
		t.Errorf("no caller: %q", text)
	}
	if n := len(trino.Statements()) - before; n != 0 {
		t.Errorf("%d refused calls reached the engine", n)
	}
}

// BenchmarkExecuteQuery runs execute_query on the 1,000,000-row table:
// time and allocated bytes must follow the limit, not the table size. The
// test engine runs in this process, so its allocations count too. Queries
// run outside a read-only transaction unless BENCH_TX is set: the test
// engine's transactions (a pinned DuckDB connection) cost far more than
// Trino's and would hide the client's share.
func BenchmarkExecuteQuery(b *testing.B) {
	h := newHarness(b, mcpserver.Options{MaxRowsCeiling: 10000}, func(c *engine.Config) {
		c.MaxResultBytes = 64 << 20
		c.ReadOnlyTransactions = os.Getenv("BENCH_TX") != ""
	})
	for _, limit := range []int{100, 1000, 10000} {
		b.Run(fmt.Sprintf("limit=%d", limit), func(b *testing.B) {
			b.ReportAllocs()
			req := mcp.CallToolRequest{}
			req.Params.Name = "execute_query"
			req.Params.Arguments = map[string]any{"query": "SELECT * FROM " + trinotest.LargeTable, "limit": limit}
			for b.Loop() {
				res, err := h.c.CallTool(context.Background(), req)
				if err != nil || res.IsError {
					b.Fatal(err, res.Content)
				}
			}
		})
	}
}

func TestAllowedSchemasWithWrites(t *testing.T) {
	scope, err := sqlguard.ParseScope([]string{"sales.mcpallowed"})
	if err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, mcpserver.Options{Scope: scope, AllowWrites: true}, nil)
	before := len(trino.Statements())
	for _, q := range []string{
		`INSERT INTO sales.mcpsecret.s SELECT x, "set" FROM a`,
		"CREATE TABLE sales.mcpsecret.copied AS SELECT * FROM a",
		"DROP TABLE sales.mcpsecret.s",
		"DELETE FROM sales.mcpsecret.s",
		"INSERT INTO a SELECT x, secret, NULL FROM sales.mcpsecret.s",
		"EXPLAIN ANALYZE INSERT INTO sales.mcpsecret.s VALUES (2, 'x')",
	} {
		h.refused(t, "execute_query", map[string]any{"query": q}, "refused")
	}
	for _, st := range trino.Statements()[before:] {
		if !strings.HasPrefix(st.Body, "EXPLAIN (TYPE IO, FORMAT JSON)") {
			t.Errorf("a refused statement ran: %s", st.Body)
		}
	}
	// Writes inside the allowed schemas run.
	// Start from no table (-count reruns); the scope rightly refuses a DROP
	// the engine cannot plan, so the engine's own database drops it.
	if err := trino.Exec(context.Background(), "DROP TABLE IF EXISTS sales.mcpallowed.written"); err != nil {
		t.Fatal(err)
	}
	h.ok(t, "execute_query", map[string]any{"query": "CREATE TABLE sales.mcpallowed.written AS SELECT x FROM a"})
	h.ok(t, "execute_query", map[string]any{"query": "INSERT INTO written VALUES (10)"})
	m := h.ok(t, "execute_query", map[string]any{"query": "SELECT count(*) FROM written"})
	if compact(t, m["rows"]) != "[[4]]" {
		t.Errorf("rows = %v", m["rows"])
	}
}
