package trinotest_test

import (
	"context"
	"database/sql"
	"errors"
	"math/big"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/trinodb/trino-go-client/trino"

	"github.com/mcpfleet/mcpfleet/sqlmcp/internal/trinotest"
)

// trinoErrorName returns the Trino errorName inside a driver error.
func trinoErrorName(err error) string {
	var te *trino.ErrTrino
	if errors.As(err, &te) {
		return te.ErrorName
	}
	return ""
}

func TestClientTypes(t *testing.T) {
	t.Parallel()
	srv := trinotest.Start(t, trinotest.WithLargeTableRows(-1))
	db := open(t, srv, "alice", "&timezone=UTC")
	rows, err := db.QueryContext(ctxT(t), "SELECT c_bigint, c_varchar, c_double, c_boolean, c_decimal, c_timestamp, c_date, c_array, c_map FROM all_types ORDER BY id")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	cts, _ := rows.ColumnTypes()
	var dbTypes []string
	for _, ct := range cts {
		dbTypes = append(dbTypes, ct.DatabaseTypeName())
	}
	if want := []string{"BIGINT", "VARCHAR", "DOUBLE", "BOOLEAN", "DECIMAL", "TIMESTAMP", "DATE", "ARRAY(INTEGER)", "MAP(VARCHAR, INTEGER)"}; !reflect.DeepEqual(dbTypes, want) {
		t.Errorf("database types = %v, want %v", dbTypes, want)
	}
	var got [][]any
	for rows.Next() {
		vals := make([]any, 9)
		ptrs := make([]any, 9)
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			t.Fatal(err)
		}
		got = append(got, vals)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 {
		t.Fatalf("rows = %d", len(got))
	}
	r := got[0]
	ts := time.Date(2024, 1, 2, 3, 4, 5, 678e6, time.UTC)
	if r[0] != int64(4) || r[1] != "hello" || r[2] != 2.25 || r[3] != true || r[4] != "12.30" ||
		!r[5].(time.Time).Equal(ts) || r[6].(time.Time).Format("2006-01-02") != "2024-01-02" {
		t.Errorf("row 1 = %#v", r)
	}
	for i, v := range got[2] {
		if v != nil {
			t.Errorf("row 3 column %d = %#v, want nil", i, v)
		}
	}
	// Min values survive the trip.
	if got[1][0] != int64(-9223372036854775808) || got[1][2] != -1e300 {
		t.Errorf("row 2 = %#v", got[1])
	}
	_ = big.NewInt
}

func TestClientPagingManyPages(t *testing.T) {
	t.Parallel()
	srv := trinotest.Start(t, trinotest.WithPageSize(100), trinotest.WithLargeTableRows(5000))
	db := open(t, srv, "alice", "")
	_, rows := queryAll(t, db, "SELECT id, level FROM "+trinotest.LargeTable+" ORDER BY id")
	if len(rows) != 5000 {
		t.Fatalf("rows = %d", len(rows))
	}
	for i, r := range rows {
		if r[0] != int64(i+1) {
			t.Fatalf("row %d id = %v", i, r[0])
		}
	}
	qs := srv.Queries()
	last := qs[len(qs)-1]
	if last.Pages != 50 || last.RowsSent != 5000 || last.State != trinotest.StateFinished {
		t.Errorf("query info = %+v", last)
	}
}

// TestClientCancelStopsEngine reads a few rows of the 1,000,000-row table
// and closes the rows: the driver sends DELETE and the engine stops reading.
func TestClientCancelStopsEngine(t *testing.T) {
	t.Parallel()
	srv := trinotest.Start(t, trinotest.WithPageSize(100))
	db := open(t, srv, "alice", "")
	ctx := ctxT(t)
	rows, err := db.QueryContext(ctx, "SELECT * FROM "+trinotest.LargeTable)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 150 && rows.Next(); i++ {
	}
	if err := rows.Close(); err != nil {
		t.Fatal(err)
	}
	qs := srv.Queries()
	id := qs[len(qs)-1].ID
	deadline := time.Now().Add(10 * time.Second)
	for !slices.Contains(srv.Cancelled(), id) && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if !slices.Contains(srv.Cancelled(), id) {
		t.Fatalf("the engine saw no DELETE for %s; cancelled = %v", id, srv.Cancelled())
	}
	info, err := srv.WaitQuery(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if !info.Cancelled || !info.Interrupted || info.RowsRead >= trinotest.LargeTableRows || info.ErrorName != "USER_CANCELED" {
		t.Errorf("after cancel: %+v", info)
	}
	if info.RowsSent > 1000 {
		t.Errorf("sent %d rows for a reader that stopped at 150", info.RowsSent)
	}
}

// TestClientTimeoutInterruptsSlowQuery runs pause_ms with a short context
// deadline: the client cancels, the engine interrupts DuckDB.
func TestClientTimeoutInterruptsSlowQuery(t *testing.T) {
	t.Parallel()
	srv := trinotest.Start(t, trinotest.WithLargeTableRows(-1), trinotest.WithMaxWait(50*time.Millisecond))
	db := open(t, srv, "alice", "")
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	start := time.Now()
	var v int64
	err := db.QueryRowContext(ctx, "SELECT pause_ms(60000)").Scan(&v)
	if err == nil {
		t.Fatal("slow query succeeded")
	}
	if time.Since(start) > 10*time.Second {
		t.Fatalf("timeout took %v", time.Since(start))
	}
	qs := srv.Queries()
	id := qs[len(qs)-1].ID
	waitCtx, waitCancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer waitCancel()
	deadline := time.Now().Add(10 * time.Second)
	for !slices.Contains(srv.Cancelled(), id) && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	info, err := srv.WaitQuery(waitCtx, id)
	if err != nil {
		t.Fatalf("DuckDB kept running after the cancel: %v (%+v)", err, info)
	}
	if !info.Cancelled || !info.Interrupted {
		t.Errorf("query info = %+v", info)
	}
}

func TestClientErrors(t *testing.T) {
	t.Parallel()
	srv := trinotest.Start(t, trinotest.WithLargeTableRows(-1))
	db := open(t, srv, "alice", "")
	tests := []struct {
		sql, name, msg string
	}{
		{"SELECT * FROM nope", "TABLE_NOT_FOUND", "Table 'nope' does not exist"},
		{"SELECT * FROM sales.nope.t", "SCHEMA_NOT_FOUND", "does not exist"},
		{"SELECT * FROM nocat.s.t", "CATALOG_NOT_FOUND", "nocat"},
		{"SELECT nope FROM customers", "COLUMN_NOT_FOUND", "nope"},
		{"SELEC 1", "SYNTAX_ERROR", "line 1:1:"},
		{"SELECT 1; SELECT 2", "SYNTAX_ERROR", "line 1:9: mismatched input ';'"},
		{"SELECT 1;", "SYNTAX_ERROR", "mismatched input ';'"},
		{"  ", "SYNTAX_ERROR", "mismatched input '<EOF>'"},
		{"SELECT CAST('x' AS INTEGER)", "INVALID_CAST_ARGUMENT", "x"},
		{"SHOW TABLES FROM nocat.s", "CATALOG_NOT_FOUND", "Catalog 'nocat' not found"},
		{"SHOW TABLES FROM sales.nope", "SCHEMA_NOT_FOUND", "Schema 'sales.nope' does not exist"},
		{"DESCRIBE nope", "TABLE_NOT_FOUND", "Table 'sales.public.nope' does not exist"},
		{"USE sales.nope", "SCHEMA_NOT_FOUND", "Schema does not exist: sales.nope"},
	}
	for _, tt := range tests {
		t.Run(tt.sql, func(t *testing.T) {
			rows, err := db.QueryContext(ctxT(t), tt.sql)
			if err == nil {
				for rows.Next() {
				}
				err = rows.Err()
				rows.Close()
			}
			if err == nil {
				t.Fatal("no error")
			}
			if got := trinoErrorName(err); got != tt.name {
				t.Errorf("errorName = %q, want %q (%v)", got, tt.name, err)
			}
			if !strings.Contains(err.Error(), tt.msg) {
				t.Errorf("error %q does not contain %q", err, tt.msg)
			}
			var qf *trino.ErrQueryFailed
			if !errors.As(err, &qf) {
				t.Errorf("not an ErrQueryFailed: %T", err)
			}
		})
	}
}

func TestClientHeadersRecorded(t *testing.T) {
	t.Parallel()
	srv := trinotest.Start(t, trinotest.WithLargeTableRows(-1))
	db := open(t, srv, "svc", "&source=sqlmcp%2F0.1&clientTags=a,b&client_info=cli-info&session_properties=query_max_run_time%3A10m")
	ctx := ctxT(t)
	var n int
	if err := db.QueryRowContext(ctx, "SELECT count(*) FROM customers", sql.Named("X-Trino-User", "alice"), sql.Named("X-Trino-Client-Tags", "mcp,user:alice")).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 5 {
		t.Errorf("count = %d", n)
	}
	posts := srv.Statements()
	if len(posts) != 1 {
		t.Fatalf("posts = %d", len(posts))
	}
	h := posts[0].Header
	for k, want := range map[string]string{
		"X-Trino-User": "alice", "X-Trino-Source": "sqlmcp/0.1", "X-Trino-Client-Tags": "mcp,user:alice",
		"X-Trino-Client-Info": "cli-info", "X-Trino-Catalog": "sales", "X-Trino-Schema": "public",
		"X-Trino-Session": "query_max_run_time=10m",
	} {
		if got := h.Get(k); got != want {
			t.Errorf("%s = %q, want %q", k, got, want)
		}
	}
	info, ok := srv.Query(posts[0].QueryID)
	if !ok || info.User != "alice" || !reflect.DeepEqual(info.ClientTags, []string{"mcp", "user:alice"}) || info.SQL != "SELECT count(*) FROM customers" {
		t.Errorf("query info = %+v", info)
	}
	// Every request (info, pages) is recorded with its headers.
	var gets int
	for _, r := range srv.Requests() {
		if r.Method == "GET" && r.QueryID == posts[0].QueryID {
			gets++
			if r.Header.Get("X-Trino-Source") != "sqlmcp/0.1" {
				t.Errorf("page request without source header: %v", r.Header)
			}
		}
	}
	if gets == 0 {
		t.Error("no page requests recorded")
	}
}

func TestClientUseOnPinnedConn(t *testing.T) {
	t.Parallel()
	srv := trinotest.Start(t, trinotest.WithLargeTableRows(-1))
	db := open(t, srv, "alice", "")
	ctx := ctxT(t)
	conn, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, "USE warehouse.inventory"); err != nil {
		t.Fatal(err)
	}
	var name string
	if err := conn.QueryRowContext(ctx, "SELECT name FROM products WHERE sku = 'SKU-2'").Scan(&name); err != nil {
		t.Fatal(err)
	}
	if name != "Lamp" {
		t.Errorf("name = %q", name)
	}
	posts := srv.Statements()
	last := posts[len(posts)-1].Header
	if last.Get("X-Trino-Catalog") != "warehouse" || last.Get("X-Trino-Schema") != "inventory" {
		t.Errorf("after USE the client sent catalog %q schema %q", last.Get("X-Trino-Catalog"), last.Get("X-Trino-Schema"))
	}
}

func TestClientMetadataStatements(t *testing.T) {
	t.Parallel()
	srv := trinotest.Start(t, trinotest.WithLargeTableRows(-1))
	db := open(t, srv, "alice", "")
	tests := []struct {
		sql  string
		cols []string
		rows [][]any
	}{
		{"SHOW CATALOGS", []string{"Catalog"}, [][]any{{"sales"}, {"system"}, {"warehouse"}}},
		{"SHOW CATALOGS LIKE 'w%'", []string{"Catalog"}, [][]any{{"warehouse"}}},
		{"SHOW SCHEMAS", []string{"Schema"}, [][]any{{"Odd Schema"}, {"crm"}, {"information_schema"}, {"public"}}},
		{"SHOW SCHEMAS FROM warehouse LIKE 'i%'", []string{"Schema"}, [][]any{{"information_schema"}, {"inventory"}}},
		{"SHOW TABLES", []string{"Table"}, [][]any{{"all_types"}, {"customers"}, {"order_totals"}, {"orders"}}},
		{"SHOW TABLES FROM warehouse.inventory LIKE 'stock%'", []string{"Table"}, [][]any{{"stock"}, {"stock_by_product"}}},
		{`SHOW TABLES FROM "Odd Schema"`, []string{"Table"}, [][]any{{"Mixed Case Table"}, {"dotted.name"}, {`quote"d`}}},
		{"DESCRIBE customers", []string{"Column", "Type", "Extra", "Comment"}, [][]any{
			{"id", "integer", "", ""}, {"name", "varchar", "", ""}, {"email", "varchar", "", "Contact address; NULL when unknown"},
			{"country", "varchar", "", ""}, {"signup_date", "date", "", ""}, {"vip", "boolean", "", ""}, {"balance", "decimal(12,2)", "", ""},
		}},
		{`SHOW COLUMNS FROM sales."Odd Schema"."Mixed Case Table"`, []string{"Column", "Type", "Extra", "Comment"}, [][]any{
			{"Column One", "varchar", "", ""}, {"select", "integer", "", ""}, {`we"ird`, "varchar", "", ""},
		}},
		{"SHOW COLUMNS FROM warehouse.inventory.products LIKE '%s'", []string{"Column", "Type", "Extra", "Comment"}, [][]any{
			{"tags", "array(varchar)", "", ""}, {"attributes", "map(varchar, varchar)", "", ""}, {"dims", "row(width double, height double)", "", ""},
		}},
		{"DESCRIBE order_totals", []string{"Column", "Type", "Extra", "Comment"}, [][]any{
			{"customer_id", "integer", "", ""}, {"order_count", "bigint", "", ""}, {"total_amount", "decimal(38,2)", "", ""},
		}},
		{"DESCRIBE information_schema.schemata", []string{"Column", "Type", "Extra", "Comment"}, [][]any{
			{"catalog_name", "varchar", "", ""}, {"schema_name", "varchar", "", ""},
		}},
		{"EXPLAIN (TYPE VALIDATE) SELECT * FROM orders", []string{"Valid"}, [][]any{{true}}},
		{"SELECT table_name, table_type FROM information_schema.tables WHERE table_schema = 'public' ORDER BY 1", []string{"table_name", "table_type"}, [][]any{
			{"all_types", "BASE TABLE"}, {"customers", "BASE TABLE"}, {"order_totals", "VIEW"}, {"orders", "BASE TABLE"},
		}},
		{"SELECT column_name, data_type, ordinal_position FROM warehouse.information_schema.columns WHERE table_name = 'stock' ORDER BY ordinal_position", []string{"column_name", "data_type", "ordinal_position"}, [][]any{
			{"sku", "varchar", int64(1)}, {"warehouse", "varchar", int64(2)}, {"qty", "integer", int64(3)}, {"updated_at", "timestamp(3)", int64(4)},
		}},
		{`SELECT "Column One", "select", "we""ird" FROM sales."Odd Schema"."Mixed Case Table" ORDER BY 1`, []string{"Column One", "select", `we"ird`}, [][]any{
			{"a", int64(1), `q"uote`}, {"b", int64(2), nil},
		}},
		{"VALUES 1", []string{"_col0"}, [][]any{{int64(1)}}},
		{"SHOW CREATE TABLE customers", []string{"Create Table"}, [][]any{{"CREATE TABLE sales.public.customers (\n" +
			"   id integer NOT NULL,\n   name varchar NOT NULL,\n   email varchar COMMENT 'Contact address; NULL when unknown',\n" +
			"   country varchar,\n   signup_date date,\n   vip boolean,\n   balance decimal(12,2)\n)\nCOMMENT 'People who bought something'"}}},
		{`SHOW CREATE TABLE "Odd Schema"."dotted.name"`, []string{"Create Table"}, [][]any{{"CREATE TABLE sales.\"Odd Schema\".\"dotted.name\" (\n   id integer\n)"}}},
	}
	for _, tt := range tests {
		t.Run(tt.sql, func(t *testing.T) {
			cols, rows := queryAll(t, db, tt.sql)
			if !reflect.DeepEqual(cols, tt.cols) {
				t.Errorf("columns = %q, want %q", cols, tt.cols)
			}
			if !reflect.DeepEqual(rows, tt.rows) {
				t.Errorf("rows = %q, want %q", rows, tt.rows)
			}
		})
	}
}

func TestClientExplain(t *testing.T) {
	t.Parallel()
	srv := trinotest.Start(t, trinotest.WithLargeTableRows(-1))
	db := open(t, srv, "alice", "")
	cols, rows := queryAll(t, db, "EXPLAIN SELECT * FROM orders WHERE id > 3")
	if !reflect.DeepEqual(cols, []string{"Query Plan"}) || len(rows) != 1 || !strings.Contains(rows[0][0].(string), "orders") {
		t.Errorf("EXPLAIN: %v %v", cols, rows)
	}
	tests := []struct {
		sql    string
		inputs []string
		output string
	}{
		{"SELECT * FROM orders", []string{"sales.public.orders"}, ""},
		{"SELECT * FROM order_totals", []string{"sales.public.orders"}, ""},
		{"WITH x AS (SELECT * FROM sales.crm.contacts) SELECT * FROM x JOIN customers c ON c.id = x.id", []string{"sales.crm.contacts", "sales.public.customers"}, ""},
		{"SELECT * FROM customers WHERE id IN (SELECT qty FROM warehouse.inventory.stock)", []string{"sales.public.customers", "warehouse.inventory.stock"}, ""},
		{"SELECT * FROM warehouse.inventory.stock_by_product", []string{"warehouse.inventory.products", "warehouse.inventory.stock"}, ""},
		{`SELECT * FROM "Odd Schema"."dotted.name"`, []string{"sales.Odd Schema.dotted.name"}, ""},
		{"SELECT * FROM warehouse.information_schema.tables", []string{"warehouse.information_schema.tables"}, ""},
		{"VALUES 1", nil, ""},
		{"INSERT INTO sales.crm.contacts SELECT id, name, NULL, NULL FROM customers", []string{"sales.public.customers"}, "sales.crm.contacts"},
	}
	for _, tt := range tests {
		t.Run(tt.sql, func(t *testing.T) {
			cols, rows := queryAll(t, db, "EXPLAIN (TYPE IO, FORMAT JSON) "+tt.sql)
			if !reflect.DeepEqual(cols, []string{"Query Plan"}) || len(rows) != 1 {
				t.Fatalf("%v %v", cols, rows)
			}
			var plan struct {
				InputTableColumnInfos []struct {
					Table struct {
						Catalog     string `json:"catalog"`
						SchemaTable struct{ Schema, Table string }
					} `json:"table"`
				} `json:"inputTableColumnInfos"`
				OutputTable *struct {
					Catalog     string `json:"catalog"`
					SchemaTable struct{ Schema, Table string }
				} `json:"outputTable"`
			}
			if err := jsonUnmarshal(rows[0][0].(string), &plan); err != nil {
				t.Fatal(err)
			}
			var inputs []string
			for _, in := range plan.InputTableColumnInfos {
				inputs = append(inputs, in.Table.Catalog+"."+in.Table.SchemaTable.Schema+"."+in.Table.SchemaTable.Table)
			}
			if !reflect.DeepEqual(inputs, tt.inputs) {
				t.Errorf("inputs = %q, want %q (%s)", inputs, tt.inputs, rows[0][0])
			}
			var output string
			if plan.OutputTable != nil {
				output = plan.OutputTable.Catalog + "." + plan.OutputTable.SchemaTable.Schema + "." + plan.OutputTable.SchemaTable.Table
			}
			if output != tt.output {
				t.Errorf("output = %q, want %q", output, tt.output)
			}
		})
	}
	// EXPLAIN does not execute; the table is unchanged.
	var n int
	if err := db.QueryRowContext(ctxT(t), "SELECT count(*) FROM sales.crm.contacts").Scan(&n); err != nil || n != 3 {
		t.Errorf("contacts = %d, %v", n, err)
	}
}

func TestClientWritesAndTransactions(t *testing.T) {
	t.Parallel()
	srv := trinotest.Start(t, trinotest.WithLargeTableRows(-1))
	db := open(t, srv, "alice", "")
	ctx := ctxT(t)
	if _, err := db.ExecContext(ctx, "CREATE TABLE sales.crm.notes (id INTEGER, body VARCHAR)"); err != nil {
		t.Fatal(err)
	}
	res, err := db.ExecContext(ctx, "INSERT INTO sales.crm.notes VALUES (1, 'a'), (2, 'b')")
	if err != nil {
		t.Fatal(err)
	}
	if n, _ := res.RowsAffected(); n != 2 {
		t.Errorf("rows affected = %d", n)
	}
	res, err = db.ExecContext(ctx, "DELETE FROM sales.crm.notes WHERE id = 2")
	if n, _ := res.RowsAffected(); err != nil || n != 1 {
		t.Errorf("delete: %d rows, %v", n, err)
	}
	if _, err := db.ExecContext(ctx, "INSERT INTO sales.crm.notes VALUES (2, 'b')"); err != nil {
		t.Fatal(err)
	}
	tx, err := db.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	var n int
	if err := tx.QueryRowContext(ctx, "SELECT count(*) FROM sales.crm.notes").Scan(&n); err != nil || n != 2 {
		t.Errorf("count in read-only tx = %d, %v", n, err)
	}
	_, err = tx.ExecContext(ctx, "INSERT INTO sales.crm.notes VALUES (3, 'c')")
	if trinoErrorName(err) != "READ_ONLY_VIOLATION" {
		t.Errorf("write in read-only tx: %v", err)
	}
	if err := tx.Rollback(); err != nil {
		t.Errorf("rollback: %v", err)
	}
	// Parameters travel as EXECUTE ... USING.
	var body string
	if err := db.QueryRowContext(ctx, "SELECT body FROM sales.crm.notes WHERE id = ? AND body <> ?", 2, "o'hara").Scan(&body); err != nil || body != "b" {
		t.Errorf("parameter query = %q, %v", body, err)
	}
}

func TestClientTLSAndPassword(t *testing.T) {
	t.Parallel()
	srv := trinotest.Start(t, trinotest.WithPassword("alice", "s3cret"), trinotest.WithLargeTableRows(-1))
	if !strings.HasPrefix(srv.URL(), "https://") || len(srv.CACertPEM()) == 0 {
		t.Fatalf("url %s", srv.URL())
	}
	db := open(t, srv, "alice", "")
	var n int
	if err := db.QueryRowContext(ctxT(t), "SELECT count(*) FROM orders").Scan(&n); err != nil || n != 8 {
		t.Fatalf("count = %d, %v", n, err)
	}
	if got := srv.Statements()[0].Header.Get("Authorization"); !strings.HasPrefix(got, "Basic ") {
		t.Errorf("authorization header = %q", got)
	}
	bad := open(t, srv, "alice", "")
	_ = bad.Close()
	wrong, err := sql.Open("trino", strings.Replace(srv.DSN("alice"), "s3cret", "wrong", 1))
	if err != nil {
		t.Fatal(err)
	}
	defer wrong.Close()
	err = wrong.PingContext(ctxT(t))
	if err == nil || !strings.Contains(err.Error(), "401") {
		t.Errorf("wrong password: %v", err)
	}
	insecure, err := sql.Open("trino", "https://alice:s3cret@"+srv.Host()+":"+itoa(srv.Port())+"?catalog=sales&schema=public&SSLVerification=NONE")
	if err != nil {
		t.Fatal(err)
	}
	defer insecure.Close()
	if err := insecure.PingContext(ctxT(t)); err != nil {
		t.Errorf("SSLVerification=NONE: %v", err)
	}
	untrusted, _ := sql.Open("trino", "https://alice:s3cret@"+srv.Host()+":"+itoa(srv.Port())+"?catalog=sales&schema=public")
	defer untrusted.Close()
	if err := untrusted.PingContext(ctxT(t)); err == nil || !strings.Contains(err.Error(), "certificate") {
		t.Errorf("unverified self-signed certificate accepted: %v", err)
	}
}

func TestPasswordNeedsTLS(t *testing.T) {
	t.Parallel()
	_, err := trinotest.New(trinotest.Options{Users: map[string]string{"a": "b"}})
	if err == nil || !strings.Contains(err.Error(), "TLS") {
		t.Errorf("err = %v", err)
	}
}

// TestClientLargeScanIsExact reads large scans completely: the engine reads
// them from DuckDB in windows, and the windows must add up to exactly the
// full result in order.
func TestClientLargeScanIsExact(t *testing.T) {
	t.Parallel()
	srv := trinotest.Start(t, trinotest.WithPageSize(100), trinotest.WithLargeTableRows(30000))
	db := open(t, srv, "alice", "")
	for _, tt := range []struct {
		sql  string
		want func(i int) int64
		n    int
	}{
		{"SELECT id, message FROM " + trinotest.LargeTable, func(i int) int64 { return int64(i + 1) }, 30000},
		{"SELECT id FROM " + trinotest.LargeTable + " WHERE id % 7 = 0 -- trailing comment", func(i int) int64 { return int64(7 * (i + 1)) }, 4285},
		{"SELECT id FROM " + trinotest.LargeTable + " ORDER BY id DESC", func(i int) int64 { return int64(30000 - i) }, 30000},
	} {
		_, rows := queryAll(t, db, tt.sql)
		if len(rows) != tt.n {
			t.Fatalf("%s: %d rows, want %d", tt.sql, len(rows), tt.n)
		}
		for i, r := range rows {
			if r[0] != tt.want(i) {
				t.Fatalf("%s: row %d = %v, want %d", tt.sql, i, r[0], tt.want(i))
			}
		}
	}
}

func TestClientQueryMaxRunTime(t *testing.T) {
	t.Parallel()
	srv := trinotest.Start(t, trinotest.WithLargeTableRows(-1), trinotest.WithMaxWait(50*time.Millisecond))
	db := open(t, srv, "alice", "&session_properties=query_max_run_time%3A200ms")
	var v int64
	err := db.QueryRowContext(ctxT(t), "SELECT pause_ms(30000)").Scan(&v)
	if trinoErrorName(err) != "EXCEEDED_TIME_LIMIT" {
		t.Fatalf("err = %v", err)
	}
	qs := srv.Queries()
	info, werr := srv.WaitQuery(ctxT(t), qs[len(qs)-1].ID)
	if werr != nil || info.ErrorName != "EXCEEDED_TIME_LIMIT" {
		t.Errorf("info = %+v, %v", info, werr)
	}
}

// TestClientRefusesNonTrinoStatements checks that DuckDB-only commands and
// file access do not get through the Trino front.
func TestClientRefusesNonTrinoStatements(t *testing.T) {
	t.Parallel()
	srv := trinotest.Start(t, trinotest.WithLargeTableRows(-1))
	db := open(t, srv, "alice", "")
	for _, tt := range []struct{ sql, name string }{
		{"PRAGMA version", "SYNTAX_ERROR"},
		{"FROM customers", "SYNTAX_ERROR"},
		{"COPY customers TO '/tmp/x.csv'", "SYNTAX_ERROR"},
		{"ATTACH '/tmp/x.db' AS x", "SYNTAX_ERROR"},
		{"INSTALL httpfs", "SYNTAX_ERROR"},
		{"SET threads = 1", "NOT_SUPPORTED"},
		{"CALL system.runtime.kill_query('x')", "NOT_SUPPORTED"},
		{"SELECT * FROM read_text('/etc/hostname')", "FUNCTION_NOT_FOUND"},
		{"EXPLAIN PRAGMA version", "SYNTAX_ERROR"},
		{"SELECT * FROM duckdb_tables()", "FUNCTION_NOT_FOUND"},
		{"SELECT * FROM duckdb_tables", "TABLE_NOT_FOUND"},
		{"SELECT * FROM pg_catalog.pg_tables", "TABLE_NOT_FOUND"},
		{"SELECT * FROM sqlite_master", "TABLE_NOT_FOUND"},
		{"SELECT * FROM sales.trinotest_information_schema.tables", "TABLE_NOT_FOUND"},
		{"EXPLAIN (TYPE IO, FORMAT JSON) SELECT * FROM duckdb_views()", "FUNCTION_NOT_FOUND"},
	} {
		_, err := db.ExecContext(ctxT(t), tt.sql)
		if got := trinoErrorName(err); got != tt.name {
			t.Errorf("%s: errorName %q, want %q (%v)", tt.sql, got, tt.name, err)
		}
	}
	if _, rows := queryAll(t, db, "TABLE sales.crm.contacts"); len(rows) != 3 {
		t.Errorf("TABLE contacts: %d rows", len(rows))
	}
}

func TestAddCatalogAndExec(t *testing.T) {
	t.Parallel()
	srv := trinotest.Start(t, trinotest.WithoutSampleData())
	ctx := ctxT(t)
	if err := srv.AddCatalog(ctx, "lake"); err != nil {
		t.Fatal(err)
	}
	if err := srv.Exec(ctx, `CREATE SCHEMA lake.raw; CREATE TABLE lake.raw."My Table" (x INTEGER); INSERT INTO lake.raw."My Table" VALUES (1)`); err != nil {
		t.Fatal(err)
	}
	if err := srv.AddCatalog(ctx, "system"); err == nil {
		t.Error("reserved catalog name accepted")
	}
	db := open(t, srv, "alice", "")
	if _, rows := queryAll(t, db, "SHOW CATALOGS"); !reflect.DeepEqual(rows, [][]any{{"lake"}, {"sales"}, {"system"}, {"warehouse"}}) {
		t.Errorf("catalogs = %v", rows)
	}
	if _, rows := queryAll(t, db, "SHOW TABLES FROM lake.raw"); !reflect.DeepEqual(rows, [][]any{{"My Table"}}) {
		t.Errorf("tables = %v", rows)
	}
	if _, rows := queryAll(t, db, "SHOW TABLES"); len(rows) != 0 {
		t.Errorf("empty sales.public has tables: %v", rows)
	}
}

// TestClientRetriesWhileUnavailable: the driver retries 503 answers, so an
// engine that comes back within the retry window serves the query.
func TestClientRetriesWhileUnavailable(t *testing.T) {
	t.Parallel()
	srv := trinotest.Start(t, trinotest.WithLargeTableRows(-1))
	db := open(t, srv, "alice", "")
	srv.SetUnavailable(true)
	time.AfterFunc(300*time.Millisecond, func() { srv.SetUnavailable(false) })
	var n int
	if err := db.QueryRowContext(ctxT(t), "SELECT count(*) FROM customers").Scan(&n); err != nil || n != 5 {
		t.Fatalf("count = %d, %v", n, err)
	}
	var unavailable int
	for _, r := range srv.Requests() {
		if r.Method == "POST" && r.Status == 503 {
			unavailable++
		}
	}
	if unavailable == 0 {
		t.Error("no request was answered 503")
	}
}

func TestClientTransactionCommitAndRollback(t *testing.T) {
	t.Parallel()
	srv := trinotest.Start(t, trinotest.WithLargeTableRows(-1))
	db := open(t, srv, "alice", "")
	ctx := ctxT(t)
	count := func() int {
		var n int
		if err := db.QueryRowContext(ctx, "SELECT count(*) FROM sales.crm.contacts").Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	for _, commit := range []bool{false, true} {
		before := count()
		tx, err := db.BeginTx(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := tx.ExecContext(ctx, "INSERT INTO sales.crm.contacts VALUES (10, 'Tx', NULL, NULL)"); err != nil {
			t.Fatal(err)
		}
		if commit {
			err = tx.Commit()
		} else {
			err = tx.Rollback()
		}
		if err != nil {
			t.Fatal(err)
		}
		want := before
		if commit {
			want++
		}
		if got := count(); got != want {
			t.Errorf("commit=%v: %d rows, want %d", commit, got, want)
		}
	}
	var started bool
	for _, r := range srv.Statements() {
		if r.Body == "START TRANSACTION" && r.Header.Get("X-Trino-Transaction-Id") == "NONE" {
			started = true
		}
	}
	if !started {
		t.Error("no START TRANSACTION with X-Trino-Transaction-Id: NONE recorded")
	}
}

func TestClientPingWhileStarting(t *testing.T) {
	t.Parallel()
	srv := trinotest.Start(t, trinotest.WithoutSampleData())
	db := open(t, srv, "alice", "")
	srv.SetStarting(true)
	if err := db.PingContext(ctxT(t)); err == nil {
		t.Error("ping succeeded against a starting engine")
	}
	srv.SetStarting(false)
	if err := db.PingContext(ctxT(t)); err != nil {
		t.Errorf("ping: %v", err)
	}
}

// TestClientErrorMidStream: DuckDB's error() fails a query after some
// pages were served; the client sees the rows, then the error.
func TestClientErrorMidStream(t *testing.T) {
	t.Parallel()
	srv := trinotest.Start(t, trinotest.WithPageSize(100), trinotest.WithLargeTableRows(5000))
	db := open(t, srv, "alice", "")
	rows, err := db.QueryContext(ctxT(t), "SELECT CASE WHEN id = 2500 THEN error('boom at 2500') ELSE id END FROM "+trinotest.LargeTable)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	n := 0
	for rows.Next() {
		n++
	}
	err = rows.Err()
	if err == nil || !strings.Contains(err.Error(), "boom at 2500") {
		t.Fatalf("err = %v", err)
	}
	if n == 0 || n >= 2500 {
		t.Errorf("read %d rows before the error", n)
	}
}

// TestDetachedCatalogIsForgotten: a session catalog the engine found once
// and that Exec then detaches answers exactly as a catalog that never
// existed (the engine remembers catalogs it found; Exec makes it forget).
func TestDetachedCatalogIsForgotten(t *testing.T) {
	t.Parallel()
	srv := trinotest.Start(t, trinotest.WithoutSampleData())
	ctx := ctxT(t)
	if err := srv.AddCatalog(ctx, "lake"); err != nil {
		t.Fatal(err)
	}
	if err := srv.Exec(ctx, `CREATE SCHEMA lake.raw; CREATE TABLE lake.raw.t (x INTEGER); INSERT INTO lake.raw.t VALUES (7)`); err != nil {
		t.Fatal(err)
	}
	session := func(catalog string) *sql.DB {
		dsn := strings.Replace(srv.DSN("alice"), "catalog="+trinotest.DefaultCatalog, "catalog="+catalog, 1)
		dsn = strings.Replace(dsn, "schema="+trinotest.DefaultSchema, "schema=raw", 1)
		db, err := sql.Open("trino", dsn)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = db.Close() })
		return db
	}
	lake := session("lake")
	if _, rows := queryAll(t, lake, "SELECT x FROM t"); !reflect.DeepEqual(rows, [][]any{{int64(7)}}) {
		t.Fatalf("SELECT x FROM t in lake.raw = %v", rows)
	}
	if err := srv.Exec(ctx, `USE memory.main; DETACH lake`); err != nil {
		t.Fatal(err)
	}
	none := session("nolake")
	_, want := none.QueryContext(ctx, "SELECT x FROM t")
	_, got := lake.QueryContext(ctx, "SELECT x FROM t")
	if want == nil || got == nil {
		t.Fatalf("a query in a missing catalog ran: detached %v, never there %v", got, want)
	}
	if w := strings.ReplaceAll(want.Error(), "nolake", "lake"); got.Error() != w {
		t.Errorf("detached catalog answers\n  %v\nwant (as a catalog never there)\n  %v", got, w)
	}
}
