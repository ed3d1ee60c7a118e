package engine_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcpfleet/mcpfleet/shared/e2e"

	"github.com/mcpfleet/mcpfleet/sqlmcp/internal/engine"
	"github.com/mcpfleet/mcpfleet/sqlmcp/internal/trinotest"
)

// shared is one test engine (with the 1,000,000-row table) for the tests
// that do not need special options; starting it costs a few seconds.
var shared *trinotest.Server

func TestMain(m *testing.M) {
	s, err := trinotest.New(trinotest.Options{PageSize: 500})
	if err != nil {
		fmt.Fprintln(os.Stderr, "start the test engine:", err)
		os.Exit(1)
	}
	if err := createFixtures(s); err != nil {
		fmt.Fprintln(os.Stderr, "create fixtures:", err)
		s.Close()
		os.Exit(1)
	}
	shared = s
	code := m.Run()
	s.Close()
	os.Exit(code)
}

// hostile is a schema and table name that need quoting: dots, spaces,
// capitals and double quotes.
const (
	hostileSchema = `we"ird.sch ema`
	hostileTable  = `Tab.le "x"; DROP`
)

func createFixtures(s *trinotest.Server) error {
	ctx := context.Background()
	for _, stmt := range []string{
		`CREATE SCHEMA sales.enginetest`,
		`CREATE TABLE sales.enginetest.typed (
			id BIGINT, n INTEGER, d DOUBLE, amount DECIMAL(12,2), name VARCHAR, ok BOOLEAN,
			day DATE, ts TIMESTAMP, tags VARCHAR[], pt STRUCT(x INTEGER, y VARCHAR), attrs MAP(VARCHAR, INTEGER))`,
		`INSERT INTO sales.enginetest.typed VALUES
			(1, 10, 1.5, 1234567890.12, 'one', true, DATE '2024-02-29', TIMESTAMP '2024-02-29 13:14:15.123', ['a','b'], {'x': 1, 'y': 'p'}, MAP {'k': 7}),
			(2, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL)`,
		`CREATE SCHEMA sales."we""ird.sch ema"`,
		`CREATE TABLE sales."we""ird.sch ema"."Tab.le ""x""; DROP" ("Col ""1""" INTEGER, "set" VARCHAR)`,
		`INSERT INTO sales."we""ird.sch ema"."Tab.le ""x""; DROP" VALUES (1, 'a')`,
		`CREATE VIEW sales.enginetest.typed_view AS SELECT id, name FROM sales.enginetest.typed`,
	} {
		if err := s.Exec(ctx, stmt); err != nil {
			return fmt.Errorf("%s: %w", stmt, err)
		}
	}
	return nil
}

func newClient(t testing.TB, s *trinotest.Server, mod func(*engine.Config)) *engine.Client {
	t.Helper()
	cfg := engine.Config{
		Host: s.Host(), Port: s.Port(), User: "tester",
		Catalog: trinotest.DefaultCatalog, Schema: trinotest.DefaultSchema,
		SSL: s.TLS(), RootCAs: s.CertPool(), QueryTimeout: 30 * time.Second,
	}
	if mod != nil {
		mod(&cfg)
	}
	c, err := engine.New(cfg)
	if err != nil {
		t.Fatalf("engine.New: %v", err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func toJSON(t testing.TB, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func queryInfo(t testing.TB, s *trinotest.Server, id string) trinotest.QueryInfo {
	t.Helper()
	if id == "" {
		t.Fatal("the result carries no query id")
	}
	qi, ok := s.Query(id)
	if !ok {
		t.Fatalf("the engine has no query %s", id)
	}
	return qi
}

func TestQueryTypesOrderAndNulls(t *testing.T) {
	c := newClient(t, shared, nil)
	res, err := c.Query(context.Background(), engine.Query{SQL: "SELECT * FROM sales.enginetest.typed ORDER BY id", Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	wantCols := `[{"name":"id","type":"bigint"},{"name":"n","type":"integer"},{"name":"d","type":"double"},` +
		`{"name":"amount","type":"decimal(12,2)"},{"name":"name","type":"varchar"},{"name":"ok","type":"boolean"},` +
		`{"name":"day","type":"date"},{"name":"ts","type":"timestamp(6)"},{"name":"tags","type":"array(varchar)"},` +
		`{"name":"pt","type":"row(x integer, y varchar)"},{"name":"attrs","type":"map(varchar, integer)"}]`
	if got := toJSON(t, res.Columns); got != wantCols {
		t.Errorf("columns:\n got %s\nwant %s", got, wantCols)
	}
	wantRows := `[[1,10,1.5,"1234567890.12","one",true,"2024-02-29","2024-02-29T13:14:15.123000",["a","b"],{"x":1,"y":"p"},{"k":7}],` +
		`[2,null,null,null,null,null,null,null,null,null,null]]`
	if got := toJSON(t, res.Rows); got != wantRows {
		t.Errorf("rows:\n got %s\nwant %s", got, wantRows)
	}
	if res.RowCount != 2 || res.Truncated || res.Limit != 10 || res.QueryID == "" {
		t.Errorf("summary = %+v", res)
	}
}

func TestQueryPagesInOrder(t *testing.T) {
	c := newClient(t, shared, nil)
	res, err := c.Query(context.Background(), engine.Query{SQL: "SELECT id FROM " + trinotest.LargeTable + " WHERE id <= 2600 ORDER BY id", Limit: 5000})
	if err != nil {
		t.Fatal(err)
	}
	if res.RowCount != 2600 || res.Truncated {
		t.Fatalf("row_count=%d truncated=%v, want 2600 false", res.RowCount, res.Truncated)
	}
	for i, r := range res.Rows {
		if r[0] != int64(i+1) {
			t.Fatalf("row %d = %v, want %d", i, r[0], i+1)
		}
	}
	if qi := queryInfo(t, shared, res.QueryID); qi.Pages < 5 {
		t.Errorf("served in %d pages, want at least 5 (page size 500)", qi.Pages)
	}
}

func TestTruncationCancelsOnEngine(t *testing.T) {
	c := newClient(t, shared, nil)
	res, err := c.Query(context.Background(), engine.Query{SQL: "SELECT * FROM " + trinotest.LargeTable + " ORDER BY id", Limit: 700})
	if err != nil {
		t.Fatal(err)
	}
	if res.RowCount != 700 || !res.Truncated || len(res.Rows) != 700 {
		t.Fatalf("row_count=%d truncated=%v rows=%d", res.RowCount, res.Truncated, len(res.Rows))
	}
	if !slices.Contains(shared.Cancelled(), res.QueryID) {
		t.Fatalf("the engine saw no DELETE for %s (cancelled: %v)", res.QueryID, shared.Cancelled())
	}
	qi := queryInfo(t, shared, res.QueryID)
	if !qi.Cancelled || qi.RowsSent > 5000 {
		t.Errorf("engine side: cancelled=%v rows sent=%d (want cancelled, far fewer than 1,000,000)", qi.Cancelled, qi.RowsSent)
	}
}

func TestExactLimitIsNotTruncated(t *testing.T) {
	c := newClient(t, shared, nil)
	res, err := c.Query(context.Background(), engine.Query{SQL: "SELECT id FROM " + trinotest.LargeTable + " WHERE id <= 3", Limit: 3})
	if err != nil {
		t.Fatal(err)
	}
	if res.RowCount != 3 || res.Truncated {
		t.Errorf("row_count=%d truncated=%v, want 3 false", res.RowCount, res.Truncated)
	}
}

func TestByteCapTruncates(t *testing.T) {
	c := newClient(t, shared, func(c *engine.Config) { c.MaxResultBytes = 100 })
	res, err := c.Query(context.Background(), engine.Query{SQL: "SELECT id, 'some text to fill bytes' AS pad FROM " + trinotest.LargeTable, Limit: 1000})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Truncated || res.RowCount == 0 || res.RowCount > 4 {
		t.Errorf("row_count=%d truncated=%v, want a few rows and truncated", res.RowCount, res.Truncated)
	}
	if b, _ := json.Marshal(res.Rows); len(b) > 100 {
		t.Errorf("rows are %d bytes, cap 100", len(b))
	}
}

func TestStreamUnlimited(t *testing.T) {
	c := newClient(t, shared, nil)
	var n int
	var cols []engine.Column
	sum, err := c.Stream(context.Background(), engine.Query{SQL: "SELECT id FROM " + trinotest.LargeTable + " WHERE id <= 1200"},
		func(c []engine.Column) error { cols = c; return nil },
		func(row []any) error { n++; return nil })
	if err != nil {
		t.Fatal(err)
	}
	if n != 1200 || sum.RowCount != 1200 || sum.Truncated || len(cols) != 1 || cols[0].Name != "id" {
		t.Errorf("streamed %d rows, summary %+v, columns %v", n, sum, cols)
	}
	// A callback error stops reading and cancels the query.
	stop := errors.New("enough")
	sum, err = c.Stream(context.Background(), engine.Query{SQL: "SELECT id FROM " + trinotest.LargeTable}, nil,
		func(row []any) error {
			if row[0] == int64(10) {
				return stop
			}
			return nil
		})
	if !errors.Is(err, stop) {
		t.Fatalf("err = %v, want the callback's", err)
	}
	waitCancelled(t, shared, sum.QueryID)
}

func waitCancelled(t *testing.T, s *trinotest.Server, id string) {
	t.Helper()
	// Generous: the DELETE is sent on its own goroutine, which a loaded
	// 2-core machine may run seconds late.
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if slices.Contains(s.Cancelled(), id) {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("the engine saw no DELETE for query %q", id)
}

func TestTimeoutCancelsOnEngine(t *testing.T) {
	// The client's timeout and the engine's query_max_run_time (sent with
	// the same value) race: the engine's usually ends the query first
	// (EXCEEDED_TIME_LIMIT), else the client's DELETE does (USER_CANCELED);
	// when the engine's failure reaches the client before its own deadline,
	// no DELETE is sent (nothing is left to cancel: the old test, which
	// waited for a DELETE, failed then). Either way the query must not outlive the timeout, and the
	// caller is told of SQLENGINE_QUERY_TIMEOUT. The DELETE path alone is
	// TestCallerCancelCancelsOnEngine's.
	c := newClient(t, shared, func(c *engine.Config) { c.QueryTimeout = 2 * time.Second })
	start := time.Now()
	_, err := c.Query(context.Background(), engine.Query{SQL: "SELECT pause_ms(60000) AS timed_out"})
	if engine.KindOf(err) != engine.Timeout || !strings.Contains(err.Error(), "SQLENGINE_QUERY_TIMEOUT") {
		t.Fatalf("err = %v (kind %v), want a timeout naming SQLENGINE_QUERY_TIMEOUT", err, engine.KindOf(err))
	}
	if d := time.Since(start); d > 20*time.Second {
		t.Errorf("took %v to time out", d)
	}
	var id string
	for _, q := range shared.Queries() {
		if strings.Contains(q.SQL, "timed_out") {
			id = q.ID
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	info, werr := shared.WaitQuery(ctx, id)
	if werr != nil {
		t.Fatalf("the query was still running on the engine 30 s after its timeout: %+v", info)
	}
	// Its 60 s pause did not run out: it ended at the timeout, by one limit
	// or the other (a DELETE may follow the engine's own end; it changes
	// nothing then).
	if info.ErrorName != "USER_CANCELED" && info.ErrorName != "EXCEEDED_TIME_LIMIT" {
		t.Errorf("the query ended %s/%s, cancelled %v; want cancelled by the client (USER_CANCELED) or ended by its own limit (EXCEEDED_TIME_LIMIT)",
			info.State, info.ErrorName, info.Cancelled)
	}
}

func TestCallerCancelCancelsOnEngine(t *testing.T) {
	c := newClient(t, shared, nil)
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(200*time.Millisecond, cancel)
	_, err := c.Query(ctx, engine.Query{SQL: "SELECT pause_ms(60000) AS cancelled_by_caller"})
	if engine.KindOf(err) != engine.Canceled {
		t.Fatalf("err = %v (kind %v), want canceled", err, engine.KindOf(err))
	}
	var id string
	for _, q := range shared.Queries() {
		if strings.Contains(q.SQL, "cancelled_by_caller") {
			id = q.ID
		}
	}
	waitCancelled(t, shared, id)
}

func TestPerQueryCatalogSchema(t *testing.T) {
	c := newClient(t, shared, nil)
	res, err := c.Query(context.Background(), engine.Query{SQL: "SELECT count(*) AS n FROM typed", Catalog: "sales", Schema: "enginetest"})
	if err != nil {
		t.Fatal(err)
	}
	if toJSON(t, res.Rows) != "[[2]]" {
		t.Errorf("rows = %s", toJSON(t, res.Rows))
	}
	qi := queryInfo(t, shared, res.QueryID)
	if qi.Catalog != "sales" || qi.Schema != "enginetest" || qi.User != "tester" {
		t.Errorf("engine saw catalog=%q schema=%q user=%q", qi.Catalog, qi.Schema, qi.User)
	}
	// A catalog without a schema drops the configured schema.
	res, err = c.Query(context.Background(), engine.Query{SQL: "SELECT 1", Catalog: "warehouse"})
	if err != nil {
		t.Fatal(err)
	}
	qi = queryInfo(t, shared, res.QueryID)
	if qi.Catalog != "warehouse" || qi.Schema != "" {
		t.Errorf("engine saw catalog=%q schema=%q", qi.Catalog, qi.Schema)
	}
}

func TestErrorsAreClassified(t *testing.T) {
	c := newClient(t, shared, nil)
	tests := []struct {
		sql  string
		kind engine.Kind
		want string
	}{
		{"SELEC 1", engine.Invalid, "fix the SQL"},
		{"SELECT * FROM sales.enginetest.nope", engine.NotFound, "TABLE_NOT_FOUND"},
		{"", engine.Invalid, "empty"},
	}
	for _, tt := range tests {
		_, err := c.Query(context.Background(), engine.Query{SQL: tt.sql})
		if err == nil || engine.KindOf(err) != tt.kind || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Query(%q) = %v (kind %v), want kind %v mentioning %q", tt.sql, err, engine.KindOf(err), tt.kind, tt.want)
		}
	}
}

func TestEngineDown(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	c, err := engine.New(engine.Config{Host: "127.0.0.1", Port: port, RetryTimeout: 300 * time.Millisecond})
	if err != nil {
		t.Fatalf("New must not contact the engine: %v", err)
	}
	defer c.Close()
	err = c.Ping(context.Background())
	if engine.KindOf(err) != engine.Unavailable || !strings.Contains(err.Error(), "SQLENGINE_HOST") {
		t.Errorf("Ping = %v (kind %v), want unavailable with a hint", err, engine.KindOf(err))
	}
	_, err = c.Catalogs(context.Background())
	if engine.KindOf(err) != engine.Unavailable {
		t.Errorf("Catalogs = %v, want unavailable", err)
	}
}

func TestMetadata(t *testing.T) {
	c := newClient(t, shared, nil)
	ctx := context.Background()
	cats, err := c.Catalogs(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(cats, "sales") || !slices.Contains(cats, "warehouse") {
		t.Errorf("catalogs = %v", cats)
	}
	schemas, err := c.Schemas(ctx, "sales")
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(schemas, "enginetest") || !slices.Contains(schemas, hostileSchema) {
		t.Errorf("schemas = %v", schemas)
	}
	tables, err := c.Tables(ctx, "sales", "enginetest", "")
	if err != nil {
		t.Fatal(err)
	}
	if got := toJSON(t, tables); got != `[{"name":"typed","type":"TABLE"},{"name":"typed_view","type":"VIEW"}]` {
		t.Errorf("tables = %s", got)
	}
	tables, err = c.Tables(ctx, "sales", "enginetest", "%view")
	if err != nil || len(tables) != 1 || tables[0].Name != "typed_view" {
		t.Errorf("tables LIKE %%view = %v, %v", tables, err)
	}
	info, err := c.TableSchema(ctx, "sales", "enginetest", "typed")
	if err != nil {
		t.Fatal(err)
	}
	if len(info.Columns) != 11 || info.Columns[0].Name != "id" || info.Columns[0].Type != "bigint" || info.Columns[3].Type != "decimal(12,2)" {
		t.Errorf("columns = %s", toJSON(t, info.Columns))
	}
	if _, err := c.TableSchema(ctx, "sales", "enginetest", "nope"); engine.KindOf(err) != engine.NotFound {
		t.Errorf("describe missing table: %v", err)
	}
	if _, err := c.Schemas(ctx, "nocatalog"); engine.KindOf(err) != engine.NotFound {
		t.Errorf("schemas of a missing catalog: %v", err)
	}
}

func TestHostileIdentifiers(t *testing.T) {
	c := newClient(t, shared, nil)
	ctx := context.Background()
	tables, err := c.Tables(ctx, "sales", hostileSchema, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(tables) != 1 || tables[0].Name != hostileTable {
		t.Fatalf("tables = %v", tables)
	}
	info, err := c.TableSchema(ctx, "sales", hostileSchema, hostileTable)
	if err != nil {
		t.Fatal(err)
	}
	if got := toJSON(t, info.Columns); !strings.Contains(got, `"name":"Col \"1\""`) || !strings.Contains(got, `"name":"set"`) {
		t.Errorf("columns = %s", got)
	}
	// A pattern with quotes is a literal, not SQL.
	if _, err := c.Tables(ctx, "sales", "enginetest", "x' OR '1'='1"); err != nil {
		t.Errorf("quoted pattern: %v", err)
	}
	res, err := c.Query(ctx, engine.Query{SQL: "SELECT * FROM " + engine.QualifiedName("sales", hostileSchema, hostileTable)})
	if err != nil || toJSON(t, res.Rows) != `[[1,"a"]]` {
		t.Errorf("query through QualifiedName: %v %v", res, err)
	}
}

func TestExplainAndIO(t *testing.T) {
	c := newClient(t, shared, nil)
	ctx := context.Background()
	plan, err := c.Explain(ctx, engine.Query{SQL: "SELECT * FROM sales.enginetest.typed"}, "", "")
	if err != nil || plan == "" {
		t.Fatalf("explain: %q %v", plan, err)
	}
	io, err := c.IO(ctx, engine.Query{SQL: "SELECT t.id FROM sales.enginetest.typed t JOIN " + trinotest.LargeTable + " e ON e.id = t.id"})
	if err != nil {
		t.Fatal(err)
	}
	got := toJSON(t, io.Inputs)
	if !strings.Contains(got, `{"catalog":"sales","schema":"enginetest","table":"typed"}`) || !strings.Contains(got, `{"catalog":"warehouse","schema":"logs","table":"events"}`) {
		t.Errorf("IO inputs = %s", got)
	}
	valid, err := c.Explain(ctx, engine.Query{SQL: "SELECT 1"}, "VALIDATE", "")
	if err != nil || valid != "true" {
		t.Errorf("validate = %q, %v", valid, err)
	}
}

func TestIdentityHeaders(t *testing.T) {
	c := newClient(t, shared, nil)
	ctx := engine.WithIdentity(context.Background(), engine.Identity{
		RunAs: "alice", Principal: "ali,ce\r\nX-Evil: 1", Subject: "sub-1", Email: "alice@example.com",
	})
	res, err := c.Query(ctx, engine.Query{SQL: "SELECT 1"})
	if err != nil {
		t.Fatal(err)
	}
	qi := queryInfo(t, shared, res.QueryID)
	if qi.User != "alice" {
		t.Errorf("X-Trino-User = %q, want alice", qi.User)
	}
	if len(qi.ClientTags) != 2 || qi.ClientTags[0] != "sqlmcp" || strings.ContainsAny(qi.ClientTags[1], ",\r\n") || !strings.HasPrefix(qi.ClientTags[1], "user:ali") {
		t.Errorf("X-Trino-Client-Tags = %q", qi.ClientTags)
	}
	var info map[string]string
	if err := json.Unmarshal([]byte(qi.ClientInfo), &info); err != nil || info["email"] != "alice@example.com" || info["subject"] != "sub-1" || strings.ContainsAny(qi.ClientInfo, "\r\n") {
		t.Errorf("X-Trino-Client-Info = %q (%v)", qi.ClientInfo, err)
	}
	// Every request of the query carries the impersonated user, the cancel included.
	res, err = c.Query(ctx, engine.Query{SQL: "SELECT id FROM " + trinotest.LargeTable, Limit: 1})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range shared.Requests() {
		if r.QueryID == res.QueryID && r.Header.Get("X-Trino-User") != "alice" {
			t.Errorf("%s %s carried X-Trino-User %q", r.Method, r.Path, r.Header.Get("X-Trino-User"))
		}
	}
	// A user name with control characters is refused, not altered.
	bad := engine.WithIdentity(context.Background(), engine.Identity{RunAs: "bob\nadmin"})
	if _, err := c.Query(bad, engine.Query{SQL: "SELECT 1"}); engine.KindOf(err) != engine.Permission {
		t.Errorf("control characters in the user: %v", err)
	}
}

func TestTLSInsecureTakesEffect(t *testing.T) {
	s := trinotest.Start(t, trinotest.WithTLS(), trinotest.WithLargeTableRows(-1))
	verified := newClient(t, s, func(c *engine.Config) { c.RootCAs = nil })
	err := verified.Ping(context.Background())
	if err == nil || !strings.Contains(err.Error(), "SQLENGINE_SSL_INSECURE") {
		t.Fatalf("self-signed certificate without SSL_INSECURE: %v, want a certificate error", err)
	}
	insecure := newClient(t, s, func(c *engine.Config) { c.RootCAs = nil; c.SSLInsecure = true })
	if res, err := insecure.Query(context.Background(), engine.Query{SQL: "SELECT 1"}); err != nil || toJSON(t, res.Rows) != "[[1]]" {
		t.Fatalf("with SSL_INSECURE: %v %v", res, err)
	}
	trusted := newClient(t, s, nil)
	if err := trusted.Ping(context.Background()); err != nil {
		t.Fatalf("with the CA trusted: %v", err)
	}
	plain := newClient(t, s, func(c *engine.Config) { c.SSL = false })
	if err := plain.Ping(context.Background()); err == nil {
		t.Fatal("plain HTTP against TLS answered")
	}
}

func TestPasswordOverTLS(t *testing.T) {
	s := trinotest.Start(t, trinotest.WithTLS(), trinotest.WithPassword("alice", "s3cret pass"), trinotest.WithLargeTableRows(-1))
	good := newClient(t, s, func(c *engine.Config) { c.User = "alice"; c.Password = "s3cret pass" })
	res, err := good.Query(context.Background(), engine.Query{SQL: "SELECT 1"})
	if err != nil {
		t.Fatal(err)
	}
	if qi := queryInfo(t, s, res.QueryID); qi.Principal != "alice" {
		t.Errorf("principal = %q", qi.Principal)
	}
	bad := newClient(t, s, func(c *engine.Config) { c.User = "alice"; c.Password = "wrong" })
	_, err = bad.Query(context.Background(), engine.Query{SQL: "SELECT 1"})
	if engine.KindOf(err) != engine.Permission || !strings.Contains(err.Error(), "SQLENGINE_PASSWORD") {
		t.Errorf("wrong password: %v (kind %v)", err, engine.KindOf(err))
	}
	if _, err := engine.New(engine.Config{Host: s.Host(), Port: s.Port(), User: "alice", Password: "x"}); err == nil {
		t.Error("a password without TLS was accepted")
	}
}

func BenchmarkQuery(b *testing.B) {
	c := newClient(b, shared, func(c *engine.Config) { c.MaxResultBytes = -1 })
	for _, limit := range []int{100, 1000, 10000} {
		b.Run(fmt.Sprintf("limit=%d", limit), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				res, err := c.Query(context.Background(), engine.Query{SQL: "SELECT * FROM " + trinotest.LargeTable, Limit: limit})
				if err != nil {
					b.Fatal(err)
				}
				if res.RowCount != limit || !res.Truncated {
					b.Fatalf("row_count=%d truncated=%v", res.RowCount, res.Truncated)
				}
			}
		})
	}
}

func TestReadOnlyTransaction(t *testing.T) {
	c := newClient(t, shared, func(c *engine.Config) { c.ReadOnlyTransactions = true })
	ctx := context.Background()
	shared.ResetRequests()
	res, err := c.Query(ctx, engine.Query{SQL: "SELECT id FROM " + trinotest.LargeTable + " ORDER BY id", Limit: 5})
	if err != nil || res.RowCount != 5 || !res.Truncated {
		t.Fatalf("read in a read-only transaction: %+v %v", res, err)
	}
	// The ROLLBACK is sent after the answer: wait for it.
	statements := func() string {
		var bodies []string
		for _, r := range shared.Statements() {
			bodies = append(bodies, r.Body)
		}
		return strings.Join(bodies, " | ")
	}
	e2e.WaitFor(t, "ROLLBACK", func() bool { return strings.Contains(statements(), "ROLLBACK") })
	if got := statements(); !strings.Contains(got, "START TRANSACTION READ ONLY") {
		t.Errorf("statements = %s", got)
	}
	// The engine itself refuses a write inside the transaction.
	_, err = c.Query(ctx, engine.Query{SQL: "INSERT INTO sales.enginetest.typed (id) VALUES (99)"})
	if err == nil {
		t.Fatal("a write ran inside a read-only transaction")
	}
	res, err = c.Query(ctx, engine.Query{SQL: "SELECT count(*) FROM sales.enginetest.typed WHERE id = 99"})
	if err != nil || toJSON(t, res.Rows) != "[[0]]" {
		t.Errorf("the write took effect: %v %v", res, err)
	}
}

func TestWriteReportsUpdateCount(t *testing.T) {
	c := newClient(t, shared, nil)
	ctx := context.Background()
	// The engine is shared by the package's tests: start from no table, so
	// that the test also passes when run again (-count).
	if _, err := c.Stream(ctx, engine.Query{SQL: "DROP TABLE IF EXISTS sales.public.engine_counted"}, nil, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Stream(ctx, engine.Query{SQL: "CREATE TABLE sales.public.engine_counted (x INTEGER)"}, nil, nil); err != nil {
		t.Fatal(err)
	}
	sum, err := c.Stream(ctx, engine.Query{SQL: "INSERT INTO sales.public.engine_counted VALUES (1), (2), (3)"}, nil, nil)
	if err != nil || sum.UpdateCount != 3 {
		t.Errorf("insert: %+v %v", sum, err)
	}
	sum, err = c.Stream(ctx, engine.Query{SQL: "SELECT count(*) AS \"rows\" FROM sales.public.engine_counted"}, nil, nil)
	if err != nil || sum.UpdateCount != 0 {
		t.Errorf("a query is not a write: %+v %v", sum, err)
	}
}
