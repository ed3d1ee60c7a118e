package trinotest_test

import (
	"context"
	"database/sql"
	"fmt"
	"testing"

	_ "github.com/trinodb/trino-go-client/trino"

	"github.com/mcpfleet/mcpfleet/sqlmcp/internal/trinotest"
)

// BenchmarkReadLargeTable reads the first N rows of the 1,000,000-row table
// through the real client and cancels the rest: the cost should follow N,
// not the table size.
func BenchmarkReadLargeTable(b *testing.B) {
	srv := trinotest.Start(b)
	db, err := sql.Open("trino", srv.DSN("bench"))
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	for _, limit := range []int{100, 1000, 10000} {
		b.Run(fmt.Sprintf("rows=%d", limit), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				rows, err := db.QueryContext(context.Background(), "SELECT * FROM "+trinotest.LargeTable)
				if err != nil {
					b.Fatal(err)
				}
				n := 0
				for n < limit && rows.Next() {
					n++
				}
				_ = rows.Close()
				if n != limit {
					b.Fatalf("read %d rows", n)
				}
			}
		})
	}
}

// BenchmarkStart measures starting an engine with the sample data set.
func BenchmarkStart(b *testing.B) {
	for b.Loop() {
		srv, err := trinotest.New(trinotest.Options{})
		if err != nil {
			b.Fatal(err)
		}
		_ = srv.Close()
	}
}
