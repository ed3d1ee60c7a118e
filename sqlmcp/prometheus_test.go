package main

import (
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/mcpfleet/mcpfleet/shared/e2e"
	"github.com/mcpfleet/mcpfleet/shared/metrics/promtest"
	"github.com/mcpfleet/mcpfleet/sqlmcp/internal/trinotest"
)

// ownEngine starts a Trino-protocol engine of the test's own, so that the
// test can stop it, and returns the environment pointing sqlmcp at it.
func ownEngine(t *testing.T) (*trinotest.Server, []string) {
	t.Helper()
	// Each query waits 100 ms in the engine's queue, so that the engine's
	// queued time shows in mcpfleet_trino_query_engine_seconds.
	eng, err := trinotest.New(trinotest.Options{QueueTime: 100 * time.Millisecond, LargeTableRows: -1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { eng.Close() })
	return eng, []string{
		"XDG_CONFIG_HOME=" + t.TempDir(),
		"SQLENGINE_HOST=" + eng.Host(), "SQLENGINE_PORT=" + strconv.Itoa(eng.Port()), "SQLENGINE_USER=svc",
		"SQLENGINE_CATALOG=" + trinotest.DefaultCatalog, "SQLENGINE_SCHEMA=" + trinotest.DefaultSchema,
	}
}

// TestRealPrometheus: Debian's prometheus scrapes the built sqlmcp (HTTP,
// OAuth on) every second while the test makes known calls against the
// Trino-protocol engine — queries, a failing query, a refused write, a
// protocol error, refused tokens — and then stops the engine. PromQL
// through Prometheus's HTTP API must return the counts and histograms those
// calls caused, the back-end requests among them, and the README's alert
// rules must become active for the stopped engine.
func TestRealPrometheus(t *testing.T) {
	promtest.Binary(t, "prometheus")
	eng, env := ownEngine(t)
	var selects []promtest.Call
	for i := range 5 {
		selects = append(selects, promtest.Call{Tool: "execute_query", Args: map[string]any{"query": fmt.Sprintf("SELECT %d", i)}})
	}
	promtest.Run(t, e2e.Build(t, "."), promtest.Scenario{
		Server: "sqlmcp",
		Env:    env,
		Calls: append(selects, []promtest.Call{
			{Tool: "list_catalogs"},
			// The engine refuses: no such table.
			{Tool: "execute_query", Args: map[string]any{"query": "SELECT * FROM no_such_table"}, Want: promtest.ToolError, Times: 2},
			// Refused by sqlmcp's guard: nothing reaches the engine.
			{Tool: "execute_query", Args: map[string]any{"query": "DELETE FROM t"}, Want: promtest.ToolError},
			{Tool: "no_such_tool", Want: promtest.ProtocolError},
		}...),
		Unauthenticated: 3,
		Malformed:       2,
		// Besides the counts the calls and refused tokens imply (Scenario.Implied).
		Expect: map[string]float64{
			`count(histogram_quantile(0.5, sum by (le) (mcpfleet_tool_call_duration_seconds_bucket{S,tool="execute_query"})) < 10)`: 1,
			// Every answered query was one request to Trino; the two the engine
			// refused were requests too; the DELETE the guard refused was not.
			`count(sum(mcpfleet_backend_requests_total{S,backend="trino",outcome="ok"}) >= 6)`:                              1,
			`sum(mcpfleet_backend_requests_total{S,backend="trino",operation="execute_query",outcome!="ok"})`:               2,
			`count(sum(mcpfleet_backend_request_duration_seconds_count{S,backend="trino",operation="execute_query"}) >= 7)`: 1,
			// The engine's own times: one observation per phase for each query
			// it answered, the two it failed included (their FAILED answer
			// carries stats); each waited 100 ms in its queue.
			`sum(mcpfleet_trino_query_engine_seconds_count{S,operation="execute_query",phase="queued"})`:             7,
			`sum(mcpfleet_trino_query_engine_seconds_count{S,operation="execute_query",phase="execution"})`:          7,
			`sum(mcpfleet_trino_query_engine_seconds_count{S,operation="execute_query",phase="cpu"})`:                7,
			`sum(mcpfleet_trino_query_engine_seconds_bucket{S,operation="execute_query",phase="queued",le="+Inf"})`:  7,
			`count(sum(mcpfleet_trino_query_engine_seconds_sum{S,operation="execute_query",phase="queued"}) >= 0.7)`: 1,
			// None of them queued for less than 50 ms.
			`sum(mcpfleet_trino_query_engine_seconds_bucket{S,operation="execute_query",phase="queued",le="0.05"})`: 0,
			`count(count by (phase) (mcpfleet_trino_query_engine_seconds_count{S,operation="list_catalogs"}))`:      3,
			`count(count by (phase) (mcpfleet_trino_query_engine_seconds_count{S}))`:                                3,
			// The read-only transaction begun ahead for the one caller's next
			// query: the series is there, and never more than one is held.
			`count(mcpfleet_trino_transactions_ahead{S,backend=""} <= 1)`: 1,
		},
		// The engine stops: every query now fails to reach it.
		Stop:    func() error { eng.Close(); return nil },
		Failing: promtest.Call{Tool: "execute_query", Args: map[string]any{"query": "SELECT 1"}},
		Alerts: []promtest.WantAlert{
			{Name: "MCPBackendFailing", Labels: map[string]string{"server": "sqlmcp", "backend": "trino"}},
			{Name: "MCPToolCallsFailing", Labels: map[string]string{"server": "sqlmcp", "tool": "execute_query"}},
		},
		After: func(failed int) map[string]float64 {
			return map[string]float64{
				`sum(mcpfleet_tool_calls_total{S,tool="execute_query",outcome="tool_error"})`:                     float64(3 + failed),
				`sum(mcpfleet_backend_requests_total{S,backend="trino",operation="execute_query",outcome!="ok"})`: float64(2 + failed),
				// A query that never reached the engine has no engine times.
				`sum(mcpfleet_trino_query_engine_seconds_count{S,operation="execute_query",phase="queued"})`: 7,
			}
		},
	})
}

// TestMetricsCardinality: hundreds of distinct SQL statements — answered,
// refused by the engine, refused by the guard — and made-up tools add no
// series: no label holds SQL text (the engine's times included).
func TestMetricsCardinality(t *testing.T) {
	bin := e2e.Build(t, ".")
	srv := e2e.StartHTTP(t, bin, engineEnv(t))
	cs := e2e.Connect(t, srv.MCPURL(), nil)
	after := promtest.NoNewSeries(t, srv.Base+"/metrics", 250, func(i int) {
		promtest.CallTool(t, cs, "execute_query", map[string]any{"query": fmt.Sprintf("SELECT %d AS n_%d", i, i+1000)})
		promtest.CallTool(t, cs, "execute_query", map[string]any{"query": fmt.Sprintf("SELECT * FROM missing_%d", i+1000)})
		promtest.CallTool(t, cs, "execute_query", map[string]any{"query": fmt.Sprintf("DELETE FROM t_%d", i+1000)})
		promtest.CallTool(t, cs, fmt.Sprintf("tool_%d", i+1000), nil)
	})
	if n := after[`mcpfleet_tool_calls_total{outcome="ok",server="sqlmcp",tool="execute_query"}`]; n != 251 {
		t.Errorf("answered queries counted: %v, want 251", n)
	}
	// The engine's times: the answered and the failed queries, 251 each.
	for _, phase := range []string{"queued", "execution", "cpu"} {
		k := `mcpfleet_trino_query_engine_seconds_count{operation="execute_query",phase="` + phase + `",server="sqlmcp"}`
		if n := after[k]; n != 502 {
			t.Errorf("%s = %v, want 502", k, n)
		}
	}
}

// TestAlertRulesFire runs the README's alert rules on synthetic series with
// promtool test rules: Trino failing half the queries fires
// MCPBackendFailing after its "for" (with the rendered annotations), a
// burst shorter than "for" and a low failure rate do not; a tool failing
// half its calls fires MCPToolCallsFailing.
func TestAlertRulesFire(t *testing.T) {
	rules := promtest.READMERules(t, "README.md")
	promtest.TestRules(t, rules, `rule_files: [rules.yml]
evaluation_interval: 1m
tests:
  - interval: 1m
    input_series:
      - series: 'mcpfleet_backend_requests_total{server="sqlmcp",backend="trino",operation="execute_query",outcome="ok"}'
        values: '0+10x30'
      - series: 'mcpfleet_backend_requests_total{server="sqlmcp",backend="trino",operation="execute_query",outcome="error"}'
        values: '0+10x30'
      - series: 'mcpfleet_backend_requests_total{server="sqlmcp",backend="warehouse",operation="execute_query",outcome="ok"}'
        values: '0+100x30'
      - series: 'mcpfleet_backend_requests_total{server="sqlmcp",backend="warehouse",operation="execute_query",outcome="timeout"}'
        values: '0+5x30'
      - series: 'mcpfleet_tool_calls_total{server="sqlmcp",tool="execute_query",outcome="ok"}'
        values: '0+10x30'
      - series: 'mcpfleet_tool_calls_total{server="sqlmcp",tool="execute_query",outcome="tool_error"}'
        values: '0+10x30'
    alert_rule_test:
      - eval_time: 3m
        alertname: MCPBackendFailing
        exp_alerts: []
      - eval_time: 20m
        alertname: MCPBackendFailing
        exp_alerts:
          - exp_labels: {severity: critical, server: sqlmcp, backend: trino}
            exp_annotations:
              summary: "sqlmcp's queries to trino keep failing"
              description: "50% of the queries sqlmcp sent to trino failed or timed out over 5 minutes. GET /readyz says whether the coordinator answers; the engine's own query log has the errors."
      - eval_time: 20m
        alertname: MCPToolCallsFailing
        exp_alerts:
          - exp_labels: {severity: warning, server: sqlmcp, tool: execute_query}
            exp_annotations:
              summary: "sqlmcp tool execute_query keeps failing"
              description: "50% of execute_query calls failed over 5 minutes."
`)
}
