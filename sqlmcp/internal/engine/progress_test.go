package engine_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/mcpfleet/mcpfleet/sqlmcp/internal/engine"
)

func TestProgressText(t *testing.T) {
	for _, tc := range []struct {
		p    engine.Progress
		want string
	}{
		{engine.Progress{State: "QUEUED"}, "query QUEUED"},
		{engine.Progress{State: "RUNNING"}, "query RUNNING — 0 rows scanned"},
		{engine.Progress{State: "RUNNING", Percent: 45.2, ProcessedRows: 1_234_567}, "query RUNNING 45% — 1.2M rows scanned"},
		{engine.Progress{State: "RUNNING", ProcessedRows: 950}, "query RUNNING — 950 rows scanned"},
		{engine.Progress{State: "RUNNING", ProcessedRows: 12_345}, "query RUNNING — 12.3K rows scanned"},
		{engine.Progress{State: "FINISHED", Percent: 100, ProcessedRows: 4_500_000_000}, "query FINISHED 100% — 4.5B rows scanned"},
		{engine.Progress{State: "RUNNING", Percent: 250}, "query RUNNING — 0 rows scanned"}, // nonsense percent left out
	} {
		if got := tc.p.String(); got != tc.want {
			t.Errorf("%+v: %q, want %q", tc.p, got, tc.want)
		}
	}
}

// TestQueryProgressReports: a query that asks hears its own progress from
// the coordinator's pages, and a later query on the same connections that
// did not ask reports nothing to it.
func TestQueryProgressReports(t *testing.T) {
	for _, tx := range []bool{false, true} {
		t.Run(fmt.Sprintf("read-only transaction %v", tx), func(t *testing.T) { queryProgressReports(t, tx) })
	}
}

func queryProgressReports(t *testing.T, tx bool) {
	c := newClient(t, shared, func(c *engine.Config) { c.ReadOnlyTransactions = tx })
	var mu sync.Mutex
	var seen []engine.Progress
	res, err := c.Query(context.Background(), engine.Query{SQL: "SELECT pause_ms(2500) AS progress_slow", Progress: func(p engine.Progress) {
		mu.Lock()
		seen = append(seen, p)
		mu.Unlock()
	}})
	if err != nil {
		t.Fatal(err)
	}
	if qi := queryInfo(t, shared, res.QueryID); qi.SQL != "SELECT pause_ms(2500) AS progress_slow" {
		t.Errorf("the result's query id %s names %q on the engine", res.QueryID, qi.SQL)
	}
	mu.Lock()
	got := append([]engine.Progress(nil), seen...)
	mu.Unlock()
	var running bool
	for _, p := range got {
		if p.QueryID != res.QueryID {
			t.Errorf("a report for query %q reached query %q's callback", p.QueryID, res.QueryID)
		}
		if p.State == "RUNNING" && strings.HasPrefix(p.String(), "query RUNNING — ") {
			running = true
		}
	}
	if !running {
		t.Fatalf("no RUNNING report among %+v", got)
	}
	for range 3 {
		if _, err := c.Query(context.Background(), engine.Query{SQL: "SELECT pause_ms(1200) AS no_progress_asked"}); err != nil {
			t.Fatal(err)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if len(seen) != len(got) {
		t.Errorf("later queries that asked for no progress reported %+v to an earlier query's callback", seen[len(got):])
	}
}
