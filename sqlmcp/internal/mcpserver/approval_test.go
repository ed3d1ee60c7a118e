package mcpserver_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

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

// schemaSeq names each approval test's own schema, so tests sharing the
// engine never see each other's tables.
var schemaSeq atomic.Int64

// apEnv is sqlmcp with writes allowed behind a configured pipeline, on
// the Trino-protocol engine, with a schema of its own holding
//
//	orders (id, status): (1,'open') (2,'void') (3,'void')
//	old    (id, note):   (2,'x') (7,'y')
type apEnv struct {
	t      *testing.T
	srv    *trinotest.Server
	mcp    *server.MCPServer
	c      *client.Client // mcp-go in-process client (nil for go-sdk envs)
	audit  string
	schema string
	source string // X-Trino-Source of this env's queries
	url    string
}

type apOptions struct {
	calls    toolcall.Config
	client   []client.ClientOption
	srv      *trinotest.Server // default: the package's engine
	user     string
	password string
	noClient bool
	// impersonate runs queries as the OAuth caller (username field).
	impersonate bool
	// readOnly leaves SQLENGINE_ALLOW_WRITE_QUERIES unset: reads only, in
	// read-only transactions.
	readOnly bool
	// maxScanRows is SQLENGINE_MAX_SCAN_ROWS (0: no budget).
	maxScanRows int64
}

func newApEnv(t *testing.T, o apOptions) *apEnv {
	t.Helper()
	srv := o.srv
	if srv == nil {
		srv = trino
	}
	e := &apEnv{t: t, srv: srv, schema: fmt.Sprintf("appr%d", schemaSeq.Add(1))}
	e.source = "sqlmcp-" + e.schema
	ctx := context.Background()
	for _, stmt := range []string{
		"CREATE SCHEMA sales." + e.schema,
		"CREATE TABLE sales." + e.schema + ".orders (id INTEGER, status VARCHAR)",
		"INSERT INTO sales." + e.schema + ".orders VALUES (1, 'open'), (2, 'void'), (3, 'void')",
		"CREATE TABLE sales." + e.schema + ".old (id INTEGER, note VARCHAR)",
		"INSERT INTO sales." + e.schema + ".old VALUES (2, 'x'), (7, 'y')",
	} {
		if err := srv.Exec(ctx, stmt); err != nil {
			t.Fatalf("%s: %v", stmt, err)
		}
	}
	user := o.user
	if user == "" {
		user = "svc"
	}
	cfg := engine.Config{Host: srv.Host(), Port: srv.Port(), User: user, Password: o.password, Catalog: "sales", Schema: e.schema,
		Source: e.source, SSL: srv.TLS(), RootCAs: srv.CertPool(), QueryTimeout: 30 * time.Second, ReadOnlyTransactions: o.readOnly}
	eng, err := engine.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { eng.Close() })
	e.url = eng.Config().URL()
	if o.calls.Audit.Dest == "" {
		o.calls.Audit.Dest = filepath.Join(t.TempDir(), "audit.log")
	}
	e.audit = o.calls.Audit.Dest
	s := serve.NewServer("sqlmcp", "v9.9.9", mcpserver.ServerOptions()...)
	p, err := toolcall.New(s.MCPServer, o.calls, toolcall.Options{Server: "sqlmcp", Version: "v9.9.9", Local: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	mcpserver.New(eng, mcpserver.Options{AllowWrites: !o.readOnly, Impersonation: o.impersonate, MaxScanRows: o.maxScanRows}, nil).Register(p)
	e.mcp = s.MCPServer
	if o.noClient {
		return e
	}
	c, err := client.NewInProcessClientWithOptions(s.MCPServer, o.client...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	if err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	init := mcp.InitializeRequest{}
	init.Params.ProtocolVersion = mcp.LATEST_PROTOCOL_VERSION
	init.Params.ClientInfo = mcp.Implementation{Name: "test", Version: "1"}
	if _, err := c.Initialize(ctx, init); err != nil {
		t.Fatal(err)
	}
	e.c = c
	return e
}

func (e *apEnv) call(tool string, args map[string]any) *mcp.CallToolResult {
	e.t.Helper()
	return e.callCtx(context.Background(), tool, args)
}

func (e *apEnv) callCtx(ctx context.Context, tool string, args map[string]any) *mcp.CallToolResult {
	e.t.Helper()
	req := mcp.CallToolRequest{}
	req.Params.Name = tool
	req.Params.Arguments = args
	res, err := e.c.CallTool(ctx, req)
	if err != nil {
		e.t.Fatalf("%s: protocol error %v", tool, err)
	}
	return res
}

func (e *apEnv) exec(query string, extra ...any) *mcp.CallToolResult {
	e.t.Helper()
	args := map[string]any{"query": query}
	for i := 0; i+1 < len(extra); i += 2 {
		args[extra[i].(string)] = extra[i+1]
	}
	return e.call("execute_query", args)
}

func resText(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if t, ok := c.(mcp.TextContent); ok {
			b.WriteString(t.Text)
		}
	}
	return b.String()
}

// dump is the schema's tables and rows, read from DuckDB directly.
func (e *apEnv) dump() string {
	e.t.Helper()
	d, err := e.srv.Dump(context.Background(), "sales", e.schema)
	if err != nil {
		e.t.Fatal(err)
	}
	return d
}

// statements are the SQL texts of this env's queries the engine received.
func (e *apEnv) statements() []string {
	var out []string
	for _, r := range e.srv.Statements() {
		if r.Header.Get("X-Trino-Source") == e.source {
			out = append(out, r.Body)
		}
	}
	return out
}

// onlyReads fails unless every statement received since the first n is a
// read or a plain EXPLAIN, as the SQL guard judges it with writes off.
func (e *apEnv) onlyReads(n int) {
	e.t.Helper()
	for _, s := range e.statements()[n:] {
		st, err := sqlguard.Check(s, sqlguard.Options{})
		if err != nil || !st.ReadOnly || st.Analyze {
			e.t.Errorf("a statement that is not a read reached the engine: %q (%v)", s, err)
		}
	}
}

func (e *apEnv) records() []map[string]any {
	e.t.Helper()
	b, err := os.ReadFile(e.audit)
	if err != nil && !os.IsNotExist(err) {
		e.t.Fatal(err)
	}
	var out []map[string]any
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			e.t.Fatalf("audit line %q: %v", sc.Text(), err)
		}
		out = append(out, m)
	}
	return out
}

// approvals lists the records as event:approval.
func approvals(recs []map[string]any) string {
	var out []string
	for _, r := range recs {
		a, _ := r["approval"].(string)
		out = append(out, fmt.Sprint(r["event"])+":"+a)
	}
	return strings.Join(out, " ")
}

// preview decodes a dry run or confirmation request.
func preview(t *testing.T, res *mcp.CallToolResult) toolcall.PreviewResult {
	t.Helper()
	b, _ := json.Marshal(res.StructuredContent)
	var pr toolcall.PreviewResult
	if err := json.Unmarshal(b, &pr); err != nil {
		t.Fatalf("not a preview: %s", resText(res))
	}
	return pr
}

// confirmCode returns the confirmation code of a preview.
func confirmCode(t *testing.T, res *mcp.CallToolResult) string {
	t.Helper()
	if res.IsError || !strings.Contains(resText(res), "Approval needed — nothing was changed yet.") {
		t.Fatalf("expected a preview with a code: %s", resText(res))
	}
	b, _ := json.Marshal(res.StructuredContent)
	var pr struct {
		Confirmation struct{ Code string } `json:"confirmation"`
	}
	json.Unmarshal(b, &pr)
	if !strings.HasPrefix(pr.Confirmation.Code, "mcpc1.") {
		t.Fatalf("no confirmation code in %s", b)
	}
	return pr.Confirmation.Code
}

// written decodes the preview state's first written object.
func written(t *testing.T, pr toolcall.PreviewResult) (from string, obj map[string]any) {
	t.Helper()
	st, _ := pr.State.(map[string]any)
	objs, _ := st["written"].([]any)
	if len(objs) == 0 {
		t.Fatalf("no written object in state %v", pr.State)
	}
	from, _ = st["written_from"].(string)
	obj, _ = objs[0].(map[string]any)
	return from, obj
}

// TestDryRunEveryWriteClass: a dry run of each write statement returns
// its class, the exact SQL, the written table's existence and row count
// and the effect in words; the schema is byte-identical afterwards, and
// only reads and EXPLAIN reached the engine.
func TestDryRunEveryWriteClass(t *testing.T) {
	e := newApEnv(t, apOptions{})
	on := " on Trino at " + e.url + " as user svc."
	orders, old := "sales."+e.schema+".orders", "sales."+e.schema+".old"
	for _, tc := range []struct {
		sql     string
		class   string
		summary string
		table   string
		exists  bool
		rows    float64 // -1: none reported
		from    string
	}{
		{"INSERT INTO orders VALUES (9, 'new')", "change", "Insert rows into " + orders + " (3 rows now)" + on, orders, true, 3, "EXPLAIN (TYPE IO)"},
		{"CREATE TABLE fresh (id INTEGER)", "change", "Create table sales." + e.schema + ".fresh (it does not exist now)" + on, "sales." + e.schema + ".fresh", false, -1, "EXPLAIN (TYPE IO)"},
		{"CREATE TABLE copy AS SELECT * FROM orders WHERE status = 'void'", "change", "Create table sales." + e.schema + ".copy from the query's rows (it does not exist now)" + on, "sales." + e.schema + ".copy", false, -1, "EXPLAIN (TYPE IO)"},
		{"DELETE FROM orders WHERE status = 'void'", "destructive", "Delete rows from " + orders + " (3 rows now) where status = 'void'" + on, orders, true, 3, "EXPLAIN (TYPE IO)"},
		{"UPDATE orders SET status = 'closed' WHERE id = 1", "destructive", "Update rows of " + orders + " (3 rows now) where id = 1, setting status = 'closed'" + on, orders, true, 3, "EXPLAIN (TYPE IO)"},
		{"MERGE INTO orders o USING old s ON o.id = s.id WHEN MATCHED THEN DELETE", "destructive", "Merge rows into " + orders + " (3 rows now): matching rows are updated or deleted", orders, true, 3, ""},
		{"DROP TABLE old", "destructive", "Drop table " + old + " (2 rows now)" + on + " Its rows cannot be recovered.", old, true, 2, "the statement"},
		{"TRUNCATE TABLE old", "destructive", "Remove every row of " + old + " (2 rows now)" + on, old, true, 2, "the statement"},
		{"ALTER TABLE orders DROP COLUMN status", "destructive", "Alter table " + orders + " (3 rows now): DROP COLUMN status" + on, orders, true, 3, "the statement"},
		{"DELETE FROM nothing_here", "destructive", "Run the DELETE statement for sales." + e.schema + ".nothing_here" + on + " The table does not exist, so the engine will refuse the statement and nothing changes.", "sales." + e.schema + ".nothing_here", false, -1, "the statement"},
		{"DROP TABLE IF EXISTS nothing_here", "destructive", "Drop table sales." + e.schema + ".nothing_here if it exists" + on + " It does not exist now, so nothing changes.", "sales." + e.schema + ".nothing_here", false, -1, "the statement"},
	} {
		t.Run(tc.sql, func(t *testing.T) {
			before, n, nrec := e.dump(), len(e.statements()), len(e.records())
			res := e.exec(tc.sql, "dryRun", true)
			if res.IsError || !strings.HasPrefix(resText(res), "Dry run — nothing was changed.") {
				t.Fatalf("dry run: %s", resText(res))
			}
			pr := preview(t, res)
			if pr.Class != tc.class || pr.Target != e.url || len(pr.Commands) != 1 || pr.Commands[0] != tc.sql || !pr.DryRun {
				t.Errorf("preview class=%s target=%s commands=%q dryRun=%v", pr.Class, pr.Target, pr.Commands, pr.DryRun)
			}
			if !strings.Contains(pr.Summary, tc.summary) {
				t.Errorf("summary\n got %s\nwant %s", pr.Summary, tc.summary)
			}
			from, obj := written(t, pr)
			if obj["name"] != tc.table || obj["exists"] != tc.exists {
				t.Errorf("written %v", obj)
			}
			if rows, ok := obj["rows"].(float64); tc.rows >= 0 && rows != tc.rows || tc.rows < 0 && ok {
				t.Errorf("written rows %v, want %v", obj["rows"], tc.rows)
			}
			if tc.from != "" && from != tc.from {
				t.Errorf("written_from %q, want %q", from, tc.from)
			}
			if after := e.dump(); after != before {
				t.Errorf("the dry run changed the schema:\n%s\n→\n%s", before, after)
			}
			e.onlyReads(n)
			if len(e.statements()) == n {
				t.Error("the preview read nothing from the engine")
			}
			recs := e.records()[nrec:]
			if len(recs) != 1 || recs[0]["dry_run"] != true || recs[0]["event"] != "outcome" || recs[0]["class"] != tc.class || recs[0]["outcome"] != "ok" {
				t.Errorf("audit %v", recs)
			}
		})
	}
}

// TestReadsNeverAskNorAudit: a SELECT runs at once under every policy and
// leaves no audit record; a dry run of it says it changes nothing.
func TestReadsNeverAskNorAudit(t *testing.T) {
	for _, policy := range []approval.Policy{approval.Destructive, approval.Change} {
		e := newApEnv(t, apOptions{calls: toolcall.Config{Approval: approval.Config{Policy: policy, Fallback: approval.Refuse}}})
		for _, q := range []string{"SELECT count(*) FROM orders", "WITH v AS (SELECT * FROM orders) SELECT * FROM v", "VALUES 1", "SHOW TABLES", "DESCRIBE orders", "EXPLAIN DELETE FROM orders"} {
			res := e.exec(q)
			if res.IsError || strings.Contains(resText(res), "Approval") {
				t.Errorf("%s: %s", q, resText(res))
			}
		}
		if recs := e.records(); len(recs) != 0 {
			t.Errorf("reads were audited: %v", recs)
		}
	}
}

// TestConfirmationCode: DELETE and DROP with writes allowed, on a client
// without elicitation: preview and code; the code runs exactly the
// previewed call once; other SQL (whitespace, comment or case variants are
// other arguments: the code binds the canonical arguments, and a different
// string is different arguments), other arguments, another tool, a forged
// or replayed code are refused and change nothing.
func TestConfirmationCode(t *testing.T) {
	e := newApEnv(t, apOptions{})
	del := "DELETE FROM orders WHERE status = 'void'"
	before, n := e.dump(), len(e.statements())
	first := e.exec(del)
	code := confirmCode(t, first)
	if !strings.Contains(resText(first), "Delete rows from sales."+e.schema+".orders (3 rows now) where status = 'void' on Trino at "+e.url+" as user svc.") {
		t.Errorf("preview: %s", resText(first))
	}
	for _, tc := range []struct {
		name string
		tool string
		args map[string]any
		want string
	}{
		{"whitespace variant", "execute_query", map[string]any{"query": "DELETE  FROM orders WHERE status = 'void'"}, "other arguments"},
		{"comment variant", "execute_query", map[string]any{"query": "DELETE FROM orders /* same */ WHERE status = 'void'"}, "other arguments"},
		{"case variant", "execute_query", map[string]any{"query": "delete from orders where status = 'void'"}, "other arguments"},
		{"trailing semicolon", "execute_query", map[string]any{"query": del + ";"}, "other arguments"},
		{"other literal", "execute_query", map[string]any{"query": "DELETE FROM orders WHERE status = 'open'"}, "other arguments"},
		{"other limit", "execute_query", map[string]any{"query": del, "limit": 5}, "other arguments"},
		{"other schema", "execute_query", map[string]any{"query": del, "schema": "public"}, "other arguments"},
		{"other tool", "explain_query", map[string]any{"query": del}, "confirm"},
		{"forged", "execute_query", map[string]any{"query": del}, "signature does not match"},
		{"truncated", "execute_query", map[string]any{"query": del}, "malformed or truncated"},
		{"confirm true", "execute_query", map[string]any{"query": del, "confirm": true}, `argument "confirm" must be a string`},
	} {
		args := tc.args
		if _, set := args["confirm"]; !set {
			switch tc.name {
			case "forged":
				args["confirm"] = code[:len(code)-4] + "AAAA"
			case "truncated":
				args["confirm"] = code[:20]
			default:
				args["confirm"] = code
			}
		}
		res := e.call(tc.tool, args)
		if !res.IsError || !strings.Contains(resText(res), tc.want) {
			t.Errorf("%s: isError=%v %s", tc.name, res.IsError, resText(res))
		}
	}
	if after := e.dump(); after != before {
		t.Fatalf("a refused code changed the schema:\n%s", after)
	}
	e.onlyReads(n)

	ok := e.exec(del, "confirm", code)
	if ok.IsError || !strings.Contains(resText(ok), `"rows":[[2]]`) {
		t.Fatalf("confirmed call: %s", resText(ok))
	}
	if d := e.dump(); strings.Contains(d, "void") || !strings.Contains(d, "open") {
		t.Errorf("after the approved DELETE:\n%s", d)
	}
	replay := e.exec(del, "confirm", code)
	if !replay.IsError || !strings.Contains(resText(replay), "already been used") {
		t.Errorf("replay: %s", resText(replay))
	}

	drop := e.exec("DROP TABLE old")
	dropCode := confirmCode(t, drop)
	if !strings.Contains(resText(drop), "Drop table sales."+e.schema+".old (2 rows now)") {
		t.Errorf("preview: %s", resText(drop))
	}
	if res := e.exec("DROP TABLE old", "confirm", dropCode); res.IsError {
		t.Fatalf("confirmed DROP: %s", resText(res))
	}
	if d := e.dump(); strings.Contains(d, "table old") {
		t.Errorf("old still exists:\n%s", d)
	}

	recs := e.records()
	// Ten refusals: the read tool is not audited; confirm: true is refused
	// by the tool's bound schema with its audit record, as in production
	// (this harness's pipeline used to lack serve's OwnCheck, so a
	// server-wide check refused it unaudited here only).
	want := "outcome:pending" + strings.Repeat(" outcome:refused", 10) +
		" intent:confirmation_code outcome:confirmation_code outcome:refused outcome:pending intent:confirmation_code outcome:confirmation_code"
	if got := approvals(recs); got != want {
		t.Errorf("audit\n got %s\nwant %s", got, want)
	}
}

// TestExpiredCode: a code used after MCP_APPROVAL_TIMEOUT is refused.
func TestExpiredCode(t *testing.T) {
	e := newApEnv(t, apOptions{calls: toolcall.Config{Approval: approval.Config{Timeout: time.Second}}})
	code := confirmCode(t, e.exec("DROP TABLE old"))
	before := e.dump()
	time.Sleep(1100 * time.Millisecond)
	res := e.exec("DROP TABLE old", "confirm", code)
	if !res.IsError || !strings.Contains(resText(res), "expired") {
		t.Fatalf("expired code: %s", resText(res))
	}
	if e.dump() != before {
		t.Error("an expired code changed the schema")
	}
}

// TestPolicies: MCP_APPROVAL_FALLBACK=refuse refuses; MCP_APPROVAL=none
// runs and audits; MCP_APPROVAL=change asks for INSERT and CREATE too; the
// default runs INSERT by policy, with its record.
func TestPolicies(t *testing.T) {
	t.Run("fallback refuse", func(t *testing.T) {
		e := newApEnv(t, apOptions{calls: toolcall.Config{Approval: approval.Config{Fallback: approval.Refuse}}})
		before, n := e.dump(), len(e.statements())
		for _, q := range []string{"DROP TABLE old", "DELETE FROM orders"} {
			res := e.exec(q)
			if !res.IsError || !strings.Contains(resText(res), "MCP_APPROVAL_FALLBACK=refuse") || !strings.Contains(resText(res), "nothing was changed") {
				t.Errorf("%s: %s", q, resText(res))
			}
		}
		if e.dump() != before {
			t.Error("a refused call changed the schema")
		}
		e.onlyReads(n)
		if got := approvals(e.records()); got != "outcome:refused outcome:refused" {
			t.Errorf("audit %s", got)
		}
	})
	t.Run("none runs and audits", func(t *testing.T) {
		e := newApEnv(t, apOptions{calls: toolcall.Config{Approval: approval.Config{Policy: approval.None}}})
		if res := e.exec("DROP TABLE old"); res.IsError {
			t.Fatal(resText(res))
		}
		if strings.Contains(e.dump(), "table old") {
			t.Error("old still exists")
		}
		recs := e.records()
		if approvals(recs) != "intent:policy outcome:policy" || recs[1]["class"] != "destructive" || recs[1]["outcome"] != "ok" {
			t.Errorf("audit %v", recs)
		}
	})
	t.Run("change asks for INSERT and CREATE", func(t *testing.T) {
		e := newApEnv(t, apOptions{calls: toolcall.Config{Approval: approval.Config{Policy: approval.Change}}})
		before := e.dump()
		for _, q := range []string{"INSERT INTO orders VALUES (4, 'new')", "CREATE TABLE t2 (x INTEGER)", "CREATE TABLE t3 AS SELECT * FROM orders", "CREATE VIEW v AS SELECT 1 AS x", "CREATE SCHEMA sales." + e.schema + "_more"} {
			confirmCode(t, e.exec(q))
		}
		if e.dump() != before {
			t.Error("an unapproved change ran")
		}
		if d, _ := e.srv.Dump(context.Background(), "sales", e.schema+"_more"); d != "schema absent" {
			t.Error("CREATE SCHEMA ran unapproved")
		}
	})
	t.Run("default runs changes by policy", func(t *testing.T) {
		e := newApEnv(t, apOptions{})
		if res := e.exec("INSERT INTO orders VALUES (4, 'new')"); res.IsError {
			t.Fatal(resText(res))
		}
		if !strings.Contains(e.dump(), "[4 new]") {
			t.Error("the INSERT did not run")
		}
		recs := e.records()
		if approvals(recs) != "intent:policy outcome:policy" || recs[0]["class"] != "change" {
			t.Errorf("audit %v", recs)
		}
	})
}

// TestStateChangedSincePreview: the table is dropped and recreated behind
// sqlmcp's back between the preview and the confirmation; the approved
// call is refused and nothing runs.
func TestStateChangedSincePreview(t *testing.T) {
	e := newApEnv(t, apOptions{})
	ctx := context.Background()
	for _, tc := range []struct {
		name   string
		sql    string
		behind []string
	}{
		{"recreated with other columns", "DROP TABLE old", []string{"DROP TABLE sales." + e.schema + ".old", "CREATE TABLE sales." + e.schema + ".old (id BIGINT, payload VARCHAR)", "INSERT INTO sales." + e.schema + ".old VALUES (1, 'keep me')"}},
		{"dropped", "DELETE FROM orders WHERE status = 'void'", []string{"DROP TABLE sales." + e.schema + ".orders"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code := confirmCode(t, e.exec(tc.sql))
			for _, s := range tc.behind {
				if err := e.srv.Exec(ctx, s); err != nil {
					t.Fatal(err)
				}
			}
			before, n := e.dump(), len(e.statements())
			res := e.exec(tc.sql, "confirm", code)
			if !res.IsError || !strings.Contains(resText(res), "state changed since the preview") || !strings.Contains(resText(res), "Nothing was changed") {
				t.Fatalf("stale approval: %s", resText(res))
			}
			if e.dump() != before {
				t.Error("acted on a stale approval")
			}
			e.onlyReads(n)
		})
	}
}

// TestAuditRecords: intent and outcome with the fields; the target
// is the engine URL without the password; SQL literals stay; the password
// appears nowhere in the records or results.
func TestAuditRecords(t *testing.T) {
	const password = "pw-Secret-4711"
	srv := trinotest.Start(t, trinotest.WithPassword("svc", password), trinotest.WithLargeTableRows(-1))
	e := newApEnv(t, apOptions{srv: srv, password: password, calls: toolcall.Config{Approval: approval.Config{Policy: approval.None}}})
	if !strings.HasPrefix(e.url, "https://127.0.0.1:") {
		t.Fatalf("engine URL %s", e.url)
	}
	dry := e.exec("DELETE FROM orders WHERE status = 'void'", "dryRun", true)
	res := e.exec("DELETE FROM orders WHERE status = 'void'")
	if res.IsError || dry.IsError {
		t.Fatalf("%s / %s", resText(dry), resText(res))
	}
	raw, err := os.ReadFile(e.audit)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(raw, []byte(password)) || strings.Contains(resText(res)+resText(dry), password) {
		t.Fatal("the engine password is in the audit log or a result")
	}
	recs := e.records()
	if approvals(recs) != "outcome: intent:policy outcome:policy" {
		t.Fatalf("audit %v", recs)
	}
	if recs[0]["dry_run"] != true {
		t.Errorf("dry-run record %v", recs[0])
	}
	for i, r := range recs[1:] {
		args, _ := r["arguments"].(map[string]any)
		ts, _ := r["time"].(string)
		if _, err := time.Parse(time.RFC3339, ts); err != nil || !strings.HasSuffix(ts, "Z") ||
			r["server"] != "sqlmcp" || r["server_version"] != "v9.9.9" || r["tool"] != "execute_query" || r["class"] != "destructive" ||
			args["query"] != "DELETE FROM orders WHERE status = 'void'" || len(args) != 1 ||
			r["target"] != e.url || !strings.HasPrefix(fmt.Sprint(r["identity"]), "local:") || r["client"] != "test/1" ||
			r["session"] == nil || r["request_id"] == nil || r["dry_run"] != false {
			t.Errorf("record %d: %v", i+1, r)
		}
		if cmds, _ := r["commands"].([]any); len(cmds) != 1 || cmds[0] != "DELETE FROM orders WHERE status = 'void'" {
			t.Errorf("record %d commands %v", i+1, r["commands"])
		}
	}
	if out := recs[2]; out["outcome"] != "ok" || out["duration_ms"] == nil {
		t.Errorf("outcome record %v", out)
	}
	fmt.Fprintf(testLog, "audit record: %s\n", bytes.Split(raw, []byte("\n"))[2])
}

// testLog receives real excerpts for the README when SQLMCP_EXCERPTS is
// set; otherwise they are dropped.
var testLog io.Writer = excerptWriter()

func excerptWriter() io.Writer {
	if p := os.Getenv("SQLMCP_EXCERPTS"); p != "" {
		if f, err := os.OpenFile(p, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600); err == nil {
			return f
		}
	}
	return io.Discard
}

// TestAuditUnwritableRefuses: an audit record that cannot be written (a
// full disk) refuses the change; the table is unchanged and no write
// reached the engine.
func TestAuditUnwritableRefuses(t *testing.T) {
	if _, err := os.Stat("/dev/full"); err != nil {
		t.Skip("no /dev/full on this system")
	}
	e := newApEnv(t, apOptions{calls: toolcall.Config{Audit: audit.Config{Dest: "/dev/full"}, Approval: approval.Config{Policy: approval.None}}})
	before, n := e.dump(), len(e.statements())
	for _, q := range []string{"DELETE FROM orders WHERE status = 'void'", "DROP TABLE old", "INSERT INTO orders VALUES (5, 'x')"} {
		res := e.exec(q)
		if !res.IsError || !strings.Contains(resText(res), "audit record could not be written") || !strings.Contains(resText(res), "nothing was changed") {
			t.Errorf("%s: %s", q, resText(res))
		}
	}
	if e.dump() != before {
		t.Error("a change ran without its audit record")
	}
	e.onlyReads(n)
	// Reads are not audited, so they still run.
	if res := e.exec("SELECT count(*) FROM orders"); res.IsError {
		t.Errorf("read: %s", resText(res))
	}
}

// person is what the test's person does with an approval request.
type person string

const (
	accept  person = "accept"
	decline person = "decline"
	cancel  person = "cancel"
	silent  person = "silent" // never answers
)

// TestElicitationGoSDK: the official go-sdk client on 2025-11-25 is asked
// with elicitation/create carrying the preview; the table changes only on
// accept, and the audit says who decided.
func TestElicitationGoSDK(t *testing.T) {
	for _, tc := range []struct {
		who      person
		approval string
		text     string
	}{
		{accept, "person", `"rows":[[2]]`},
		{decline, "declined", "the person declined the execute_query call; nothing was changed"},
		{cancel, "declined", "the person cancelled the execute_query call; nothing was changed"},
		{silent, "timeout", "did not answer the approval request for execute_query within 1s (MCP_APPROVAL_TIMEOUT); nothing was changed"},
	} {
		t.Run(string(tc.who), func(t *testing.T) {
			e := newApEnv(t, apOptions{noClient: true, calls: toolcall.Config{Approval: approval.Config{Timeout: time.Second}}})
			var mu sync.Mutex
			var seen []string
			cs := sdkClient(t, e.mcp, func(ctx context.Context, req *sdk.ElicitRequest) (*sdk.ElicitResult, error) {
				mu.Lock()
				seen = append(seen, req.Params.Message)
				mu.Unlock()
				if tc.who == silent {
					<-ctx.Done()
					return nil, ctx.Err()
				}
				return &sdk.ElicitResult{Action: string(tc.who)}, nil
			})
			before := e.dump()
			res, err := cs.CallTool(t.Context(), &sdk.CallToolParams{Name: "execute_query", Arguments: map[string]any{"query": "DELETE FROM orders WHERE status = 'void'"}})
			if err != nil {
				t.Fatal(err)
			}
			text := sdkText(res)
			if res.IsError == (tc.who == accept) || !strings.Contains(text, tc.text) {
				t.Fatalf("isError=%v %s", res.IsError, text)
			}
			if changed := e.dump() != before; changed != (tc.who == accept) {
				t.Errorf("schema changed=%v", changed)
			}
			mu.Lock()
			defer mu.Unlock()
			want := "Delete rows from sales." + e.schema + ".orders (3 rows now) where status = 'void' on Trino at " + e.url + " as user svc."
			if len(seen) != 1 || !strings.HasPrefix(seen[0], want) || !strings.Contains(seen[0], "Would send:\n  DELETE FROM orders WHERE status = 'void'") {
				t.Errorf("the person saw %q", seen)
			}
			if tc.who == accept {
				fmt.Fprintf(testLog, "elicitation message:\n%s\n", seen[0])
			}
			recs := e.records()
			if last := recs[len(recs)-1]; last["approval"] != tc.approval || last["client"] != "go-sdk-client/1.8.0" {
				t.Errorf("outcome record %v", last)
			}
		})
	}
}

// TestElicitationStateChanged: the table is recreated while the person
// looks at the preview; their accept is refused as stale.
func TestElicitationStateChanged(t *testing.T) {
	e := newApEnv(t, apOptions{noClient: true})
	cs := sdkClient(t, e.mcp, func(ctx context.Context, req *sdk.ElicitRequest) (*sdk.ElicitResult, error) {
		for _, s := range []string{"DROP TABLE sales." + e.schema + ".old", "CREATE TABLE sales." + e.schema + ".old (other INTEGER)"} {
			if err := e.srv.Exec(ctx, s); err != nil {
				return nil, err
			}
		}
		return &sdk.ElicitResult{Action: "accept"}, nil
	})
	res, err := cs.CallTool(t.Context(), &sdk.CallToolParams{Name: "execute_query", Arguments: map[string]any{"query": "DROP TABLE old"}})
	if err != nil {
		t.Fatal(err)
	}
	if !res.IsError || !strings.Contains(sdkText(res), "state changed since the preview") {
		t.Fatalf("%s", sdkText(res))
	}
	if !strings.Contains(e.dump(), "table old other:INTEGER") {
		t.Errorf("the recreated table was dropped:\n%s", e.dump())
	}
}

// sdkClient connects the go-sdk client (2025-11-25, with elicitation) to
// srv over stdio pipes.
func sdkClient(t *testing.T, srv *server.MCPServer, elicit func(context.Context, *sdk.ElicitRequest) (*sdk.ElicitResult, error)) *sdk.ClientSession {
	t.Helper()
	cr, sw := io.Pipe()
	sr, cw := io.Pipe()
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		server.NewStdioServer(srv).Listen(ctx, sr, sw)
	}()
	c := sdk.NewClient(&sdk.Implementation{Name: "go-sdk-client", Version: "1.8.0"}, &sdk.ClientOptions{ElicitationHandler: elicit})
	cs, err := c.Connect(t.Context(), &sdk.IOTransport{Reader: cr, Writer: cw}, &sdk.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		stop()
		sw.Close()
		sr.Close()
		cs.Close()
		<-done
	})
	return cs
}

func sdkText(res *sdk.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*sdk.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

// TestInputRequiredMCPGo: mcp-go's client on 2026-07-28 gets an
// input-required result with the preview, asks its person and retries
// with the answer; the table changes only on accept. A person answering
// after MCP_APPROVAL_TIMEOUT is treated as no answer.
func TestInputRequiredMCPGo(t *testing.T) {
	for _, tc := range []struct {
		who      person
		approval string
		text     string
	}{
		{accept, "person", `"rows":[[2]]`},
		{decline, "declined", "the person declined the execute_query call; nothing was changed"},
		{cancel, "declined", "the person cancelled the execute_query call; nothing was changed"},
		{silent, "timeout", "did not answer the approval request for execute_query within 1s"},
	} {
		t.Run(string(tc.who), func(t *testing.T) {
			var seen []string
			h := elicitFunc(func(ctx context.Context, req mcp.ElicitationRequest) (*mcp.ElicitationResult, error) {
				seen = append(seen, req.Params.Message)
				action := tc.who
				if tc.who == silent {
					time.Sleep(1200 * time.Millisecond) // answers after the timeout
					action = accept
				}
				return &mcp.ElicitationResult{ElicitationResponse: mcp.ElicitationResponse{Action: mcp.ElicitationResponseAction(action)}}, nil
			})
			e := newApEnv(t, apOptions{calls: toolcall.Config{Approval: approval.Config{Timeout: time.Second}},
				client: []client.ClientOption{client.WithElicitationHandler(h), client.WithClientCapabilities(mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapability{}})}})
			before := e.dump()
			res := e.exec("DELETE FROM orders WHERE status = 'void'")
			if res.IsError == (tc.who == accept) || !strings.Contains(resText(res), tc.text) {
				t.Fatalf("isError=%v %s", res.IsError, resText(res))
			}
			if changed := e.dump() != before; changed != (tc.who == accept) {
				t.Errorf("schema changed=%v", changed)
			}
			if len(seen) != 1 || !strings.HasPrefix(seen[0], "Delete rows from sales."+e.schema+".orders (3 rows now) where status = 'void'") {
				t.Errorf("the person saw %q", seen)
			}
			recs := e.records()
			if last := recs[len(recs)-1]; last["approval"] != tc.approval {
				t.Errorf("audit %s", approvals(recs))
			}
		})
	}
}

type elicitFunc func(context.Context, mcp.ElicitationRequest) (*mcp.ElicitationResult, error)

func (f elicitFunc) Elicit(ctx context.Context, r mcp.ElicitationRequest) (*mcp.ElicitationResult, error) {
	return f(ctx, r)
}

// TestPreviewAsTheCaller: with impersonation the preview names the OAuth
// caller as the engine user, its reads run as that user, the audit record
// names the caller, and a call without an identity is refused before
// anything reaches the engine.
func TestPreviewAsTheCaller(t *testing.T) {
	e := newApEnv(t, apOptions{impersonate: true, calls: toolcall.Config{Approval: approval.Config{Policy: approval.None}}})
	alice := httpauth.ContextWithIdentity(context.Background(), &httpauth.Identity{Subject: "u-1", Username: "alice"})
	n := len(e.statements())
	res := e.callCtx(alice, "execute_query", map[string]any{"query": "DELETE FROM orders WHERE status = 'void'", "dryRun": true})
	if res.IsError || !strings.Contains(resText(res), "(3 rows now) where status = 'void' on Trino at "+e.url+" as user alice.") {
		t.Fatalf("preview: %s", resText(res))
	}
	for _, r := range e.srv.Statements()[0:] {
		if r.Header.Get("X-Trino-Source") == e.source && r.Header.Get(engine.HeaderUser) != "alice" {
			t.Errorf("%q ran as %q", r.Body, r.Header.Get(engine.HeaderUser))
		}
	}
	e.onlyReads(n)
	if recs := e.records(); len(recs) != 1 || recs[0]["identity"] != "oauth:u-1 user=alice" {
		t.Errorf("audit %v", recs)
	}
	before, n := e.dump(), len(e.statements())
	res = e.exec("DELETE FROM orders WHERE status = 'void'")
	if !res.IsError || !strings.Contains(resText(res), "SQLENGINE_ENABLE_IMPERSONATION") {
		t.Errorf("no identity: %s", resText(res))
	}
	if e.dump() != before || len(e.statements()) != n {
		t.Error("a call without an identity reached the engine")
	}
}

// BenchmarkSelectClassified: a SELECT on a server with writes allowed is
// classified from the checked statement and takes the read path (no
// preview, no audit); compare with writes off, where execute_query is a
// read tool.
func BenchmarkSelectClassified(b *testing.B) {
	for _, writes := range []bool{false, true} {
		h := newHarnessWith(b, mcpserver.Options{AllowWrites: writes}, nil,
			toolcall.Config{Audit: audit.Config{Dest: filepath.Join(b.TempDir(), "audit.log")}})
		b.Run(fmt.Sprintf("writes=%v", writes), func(b *testing.B) {
			b.ReportAllocs()
			req := mcp.CallToolRequest{}
			req.Params.Name = "execute_query"
			req.Params.Arguments = map[string]any{"query": "SELECT * FROM " + trinotest.LargeTable + " WHERE id <= 100", "limit": 100}
			for b.Loop() {
				res, err := h.c.CallTool(context.Background(), req)
				if err != nil || res.IsError {
					b.Fatal(err, res.Content)
				}
			}
		})
	}
}

// TestPreviewStateUnreadable: when the state of the written table cannot
// be read (its catalog does not exist), the dry run and the approval
// request fail saying nothing was changed, with a record, and no write
// reaches the engine.
func TestPreviewStateUnreadable(t *testing.T) {
	e := newApEnv(t, apOptions{})
	n := len(e.statements())
	for _, args := range []map[string]any{
		{"query": "DELETE FROM no_such_catalog.s.t WHERE x = 1", "dryRun": true},
		{"query": "DELETE FROM no_such_catalog.s.t WHERE x = 1"},
	} {
		res := e.call("execute_query", args)
		if !res.IsError || !strings.Contains(resText(res), "read the current state for the preview; nothing was changed") || !strings.Contains(resText(res), "no_such_catalog") {
			t.Errorf("%v: %s", args, resText(res))
		}
	}
	e.onlyReads(n)
	recs := e.records()
	if len(recs) != 2 || recs[0]["outcome"] != "error" || recs[0]["dry_run"] != true || recs[1]["outcome"] != "error" {
		t.Errorf("audit %v", recs)
	}
}

// TestPassThroughPreviewSendsNothing: a statement calling a pass-through
// table function is destructive, and its preview sends nothing to the
// engine (planning it could already reach the other system).
func TestPassThroughPreviewSendsNothing(t *testing.T) {
	e := newApEnv(t, apOptions{})
	n := len(e.statements())
	res := e.exec("SELECT * FROM TABLE(system.query(query => 'DELETE FROM t'))", "dryRun", true)
	pr := preview(t, res)
	if res.IsError || pr.Class != "destructive" || !strings.Contains(pr.Summary, "pass-through table function") || !strings.Contains(pr.Summary, "cannot preview") {
		t.Fatalf("%s", resText(res))
	}
	if got := e.statements()[n:]; len(got) != 0 {
		t.Errorf("the preview sent %q", got)
	}
	code := confirmCode(t, e.exec("SELECT * FROM TABLE(system.query(query => 'DELETE FROM t'))"))
	if len(code) == 0 || len(e.statements()) != n {
		t.Errorf("the approval request sent %q", e.statements()[n:])
	}
}
