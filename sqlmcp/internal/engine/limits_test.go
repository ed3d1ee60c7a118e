package engine_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/mcpfleet/mcpfleet/sqlmcp/internal/engine"
	"github.com/mcpfleet/mcpfleet/sqlmcp/internal/trinotest"
)

// Every query carries the engine's own limits as Trino session properties.
func TestQueriesCarryEngineLimits(t *testing.T) {
	for _, tt := range []struct {
		timeout       time.Duration
		memory        string
		wantRun, want string
	}{
		{0, "", "query_max_run_time=300s", "query_max_memory=1GB"},
		{7 * time.Second, "256MB", "query_max_run_time=7s", "query_max_memory=256MB"},
		{1500 * time.Millisecond, "2GB", "query_max_run_time=1500ms", "query_max_memory=2GB"},
	} {
		c := newClient(t, shared, func(cfg *engine.Config) { cfg.QueryTimeout, cfg.QueryMaxMemory = tt.timeout, tt.memory })
		res, err := c.Query(t.Context(), engine.Query{SQL: "SELECT 42"})
		if err != nil {
			t.Fatal(err)
		}
		qi := queryInfo(t, shared, res.QueryID)
		got := []string{}
		for k, v := range qi.Session {
			got = append(got, k+"="+v)
		}
		joined := strings.Join(got, ";")
		if !strings.Contains(joined, tt.wantRun) || !strings.Contains(joined, tt.want) {
			t.Errorf("timeout %v memory %q: session %q, want %s and %s", tt.timeout, tt.memory, joined, tt.wantRun, tt.want)
		}
	}
	for _, bad := range []string{"1", "lots", "1 XB", "-1GB", "10kB", "1GiB"} {
		if _, err := engine.New(engine.Config{QueryMaxMemory: bad}); err == nil {
			t.Errorf("QueryMaxMemory %q accepted", bad)
		}
	}
}

// An expensive query ends with the engine's own clear error within the
// timeout, whether memory or time runs out first; the engine is left idle.
func TestExpensiveQueriesEndWithinTheLimits(t *testing.T) {
	srv := trinotest.Start(t, trinotest.WithLargeTableRows(200_000))
	for _, tt := range []struct {
		name    string
		sql     string
		timeout time.Duration
		memory  string
		kind    engine.Kind
		want    string
	}{
		{"memory", "SELECT a.id, string_agg(b.message, ',') FROM warehouse.logs.events a CROSS JOIN warehouse.logs.events b GROUP BY a.id",
			20 * time.Second, "64MB", engine.Unavailable, "SQLENGINE_QUERY_MAX_MEMORY"},
		// The case: a cross join read under a 10000-row limit. DuckDB
		// may spill its sort rather than fail on memory; either limit must
		// end it, with a clear error, within the timeout.
		{"ordered cross join", "SELECT a.message, b.message FROM warehouse.logs.events a CROSS JOIN warehouse.logs.events b ORDER BY a.message || b.message",
			3 * time.Second, "64MB", -1, "SQLENGINE_QUERY_"},
		{"time", "SELECT count(*) FROM warehouse.logs.events a CROSS JOIN warehouse.logs.events b WHERE a.value + b.value > 1e9",
			2 * time.Second, "4GB", engine.Timeout, "SQLENGINE_QUERY_TIMEOUT"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c := newClient(t, srv, func(cfg *engine.Config) { cfg.QueryTimeout, cfg.QueryMaxMemory = tt.timeout, tt.memory })
			start := time.Now()
			_, err := c.Query(t.Context(), engine.Query{SQL: tt.sql, Limit: 10000})
			took := time.Since(start)
			kindOK := engine.KindOf(err) == tt.kind || tt.kind == -1 && (engine.KindOf(err) == engine.Timeout || engine.KindOf(err) == engine.Unavailable)
			if err == nil || !kindOK || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Query = %v (kind %v), want %v naming %s", err, engine.KindOf(err), tt.kind, tt.want)
			}
			if took > tt.timeout+3*time.Second {
				t.Errorf("took %v, beyond the %v timeout", took, tt.timeout)
			}
			t.Logf("ended after %v: %v", took.Round(time.Millisecond), err)
			ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
			defer cancel()
			for _, q := range srv.Queries() {
				if qi, err := srv.WaitQuery(ctx, q.ID); err != nil || qi.State == trinotest.StateRunning {
					t.Errorf("query %s still %s after the error (%v)", q.ID, qi.State, err)
				}
			}
		})
	}
}
