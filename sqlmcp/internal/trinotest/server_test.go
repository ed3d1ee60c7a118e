package trinotest_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"strconv"
	"testing"
	"time"

	"github.com/trinodb/trino-go-client/trino"

	"github.com/mcpfleet/mcpfleet/sqlmcp/internal/trinotest"
)

// open connects the real trino-go-client to srv.
func open(t *testing.T, srv *trinotest.Server, user string, params string) *sql.DB {
	t.Helper()
	db, err := sql.Open("trino", srv.DSN(user)+params)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	return db
}

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// queryAll runs a query and returns its column names and rows.
func queryAll(t *testing.T, db interface {
	QueryContext(context.Context, string, ...any) (*sql.Rows, error)
}, q string) ([]string, [][]any) {
	t.Helper()
	rows, err := db.QueryContext(ctxT(t), q)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		t.Fatal(err)
	}
	var out [][]any
	for rows.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			t.Fatalf("%s: scan: %v", q, err)
		}
		out = append(out, vals)
	}
	if err := rows.Err(); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return cols, out
}

func TestPingAndSimpleQuery(t *testing.T) {
	t.Parallel()
	srv := trinotest.Start(t, trinotest.WithLargeTableRows(1000))
	db := open(t, srv, "alice", "")
	if err := db.PingContext(ctxT(t)); err != nil {
		t.Fatalf("ping: %v", err)
	}
	cols, rows := queryAll(t, db, "SELECT id, name FROM customers ORDER BY id")
	if len(cols) != 2 || cols[0] != "id" || cols[1] != "name" {
		t.Fatalf("columns = %v", cols)
	}
	if len(rows) != 5 || rows[0][0] != int64(1) || rows[0][1] != "Alice Martin" {
		t.Fatalf("rows = %v", rows)
	}
	_ = trino.ErrQueryCancelled
}

func itoa(n int) string { return strconv.Itoa(n) }

func jsonUnmarshal(s string, v any) error { return json.Unmarshal([]byte(s), v) }
