package main

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpfleet/mcpfleet/shared/e2e"
	"github.com/mcpfleet/mcpfleet/shared/metrics/promtest"
	"github.com/mcpfleet/mcpfleet/sqlmcp/internal/trinotest"
)

// call makes one tool call and reports whether it was a tool error; a
// protocol (JSON-RPC) error is returned as err.
func call(t *testing.T, cs *mcp.ClientSession, tool string, args map[string]any) (bool, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		return false, err
	}
	return res.IsError, nil
}

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
	rules := promtest.READMERules(t, "README.md")
	promtest.CheckRules(t, rules)
	eng, env := ownEngine(t)
	bin := e2e.Build(t, ".")
	srv := e2e.StartHTTP(t, bin, append(env, e2e.OAuthEnv...))
	prom := promtest.Start(t, promtest.Options{Targets: []string{strings.TrimPrefix(srv.Base, "http://")}, Rules: []string{rules}, BearerToken: e2e.OAuthToken("prometheus")})
	cs := e2e.Connect(t, srv.MCPURL(), e2e.Bearer(e2e.OAuthToken("alice")))

	for i := range 5 {
		if isErr, err := call(t, cs, "execute_query", map[string]any{"query": fmt.Sprintf("SELECT %d", i)}); isErr || err != nil {
			t.Fatalf("SELECT: isError=%v err=%v", isErr, err)
		}
	}
	if isErr, err := call(t, cs, "list_catalogs", nil); isErr || err != nil {
		t.Fatalf("list_catalogs: isError=%v err=%v", isErr, err)
	}
	for range 2 { // the engine refuses: no such table
		if isErr, err := call(t, cs, "execute_query", map[string]any{"query": "SELECT * FROM no_such_table"}); !isErr || err != nil {
			t.Fatalf("query of a missing table: isError=%v err=%v", isErr, err)
		}
	}
	// Refused by sqlmcp's guard: nothing reaches the engine.
	if isErr, err := call(t, cs, "execute_query", map[string]any{"query": "DELETE FROM t"}); !isErr || err != nil {
		t.Fatalf("DELETE with writes off: isError=%v err=%v", isErr, err)
	}
	if _, err := call(t, cs, "no_such_tool", nil); err == nil {
		t.Fatal("an unknown tool was answered without a protocol error")
	}
	initMsg := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`
	for range 3 {
		if resp, _ := e2e.Post(t, srv.MCPURL(), initMsg); resp.StatusCode != http.StatusUnauthorized {
			t.Fatalf("no token: HTTP %d", resp.StatusCode)
		}
	}
	for range 2 {
		if resp, _ := e2e.Post(t, srv.MCPURL(), initMsg, "Authorization", "Bearer not.a.jwt"); resp.StatusCode != http.StatusUnauthorized {
			t.Fatalf("malformed token: HTTP %d", resp.StatusCode)
		}
	}
	q := func(s string) string { return strings.ReplaceAll(s, "S", `server="sqlmcp"`) }
	prom.Expect(t, map[string]float64{
		q(`sum(mcpfleet_tool_calls_total{S,tool="execute_query",outcome="ok"})`):                                                   5,
		q(`sum(mcpfleet_tool_calls_total{S,tool="execute_query",outcome="tool_error"})`):                                           3,
		q(`sum(mcpfleet_tool_calls_total{S,tool="list_catalogs",outcome="ok"})`):                                                   1,
		q(`sum(mcpfleet_tool_call_duration_seconds_count{S,tool="execute_query"})`):                                                8,
		q(`sum(mcpfleet_tool_call_duration_seconds_bucket{S,tool="execute_query",le="+Inf"})`):                                     8,
		q(`count(histogram_quantile(0.5, sum by (le) (mcpfleet_tool_call_duration_seconds_bucket{S,tool="execute_query"})) < 10)`): 1,
		q(`sum(mcpfleet_requests_total{S,method="tools/call",outcome="error"})`):                                                   1,
		q(`sum(mcpfleet_requests_total{S,method="tools/call"})`):                                                                   10,
		q(`sum(mcpfleet_auth_failures_total{S,reason="missing"})`):                                                                 3,
		q(`sum(mcpfleet_auth_failures_total{S,reason="malformed"})`):                                                               2,
		q(`mcpfleet_build_info{S}`): 1,
		// Every answered query was one request to Trino; the two the engine
		// refused were requests too; the DELETE the guard refused was not.
		q(`count(sum(mcpfleet_backend_requests_total{S,backend="trino",outcome="ok"}) >= 6)`):                              1,
		q(`sum(mcpfleet_backend_requests_total{S,backend="trino",operation="execute_query",outcome!="ok"})`):               2,
		q(`count(sum(mcpfleet_backend_request_duration_seconds_count{S,backend="trino",operation="execute_query"}) >= 7)`): 1,
		// The engine's own times: one observation per phase for each query
		// it answered, the two it failed included (their FAILED answer
		// carries stats); each waited 100 ms in its queue.
		q(`sum(mcpfleet_trino_query_engine_seconds_count{S,operation="execute_query",phase="queued"})`):             7,
		q(`sum(mcpfleet_trino_query_engine_seconds_count{S,operation="execute_query",phase="execution"})`):          7,
		q(`sum(mcpfleet_trino_query_engine_seconds_count{S,operation="execute_query",phase="cpu"})`):                7,
		q(`sum(mcpfleet_trino_query_engine_seconds_bucket{S,operation="execute_query",phase="queued",le="+Inf"})`):  7,
		q(`count(sum(mcpfleet_trino_query_engine_seconds_sum{S,operation="execute_query",phase="queued"}) >= 0.7)`): 1,
		// None of them queued for less than 50 ms.
		q(`sum(mcpfleet_trino_query_engine_seconds_bucket{S,operation="execute_query",phase="queued",le="0.05"})`): 0,
		q(`count(count by (phase) (mcpfleet_trino_query_engine_seconds_count{S,operation="list_catalogs"}))`):      3,
		q(`count(count by (phase) (mcpfleet_trino_query_engine_seconds_count{S}))`):                                3,
	})

	// The engine stops: every query now fails to reach it. The calls go
	// on, as a client's would, until the alerts are active.
	eng.Close()
	failed := 0
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			select {
			case <-stop:
				return
			case <-time.After(200 * time.Millisecond):
				if isErr, err := call(t, cs, "execute_query", map[string]any{"query": "SELECT 1"}); !isErr || err != nil {
					t.Errorf("query with the engine stopped: isError=%v err=%v", isErr, err)
				}
				failed++
			}
		}
	}()
	for _, a := range []struct {
		name   string
		labels map[string]string
	}{
		{"MCPBackendFailing", map[string]string{"server": "sqlmcp", "backend": "trino"}},
		{"MCPToolCallsFailing", map[string]string{"server": "sqlmcp", "tool": "execute_query"}},
	} {
		got := prom.WaitAlert(t, a.name, a.labels)
		t.Logf("%s is %s: %v", a.name, got.State, got.Labels)
	}
	close(stop)
	<-done
	prom.Expect(t, map[string]float64{
		q(`sum(mcpfleet_tool_calls_total{S,tool="execute_query",outcome="tool_error"})`):                     float64(3 + failed),
		q(`sum(mcpfleet_backend_requests_total{S,backend="trino",operation="execute_query",outcome!="ok"})`): float64(2 + failed),
		// A query that never reached the engine has no engine times.
		q(`sum(mcpfleet_trino_query_engine_seconds_count{S,operation="execute_query",phase="queued"})`): 7,
	})
}

// TestMetricsCardinality: hundreds of distinct SQL statements — answered,
// refused by the engine, refused by the guard — and made-up tools add no
// series: no label holds SQL text (the engine's times included).
func TestMetricsCardinality(t *testing.T) {
	bin := e2e.Build(t, ".")
	srv := e2e.StartHTTP(t, bin, engineEnv(t))
	cs := e2e.Connect(t, srv.MCPURL(), nil)
	round := func(i int) {
		call(t, cs, "execute_query", map[string]any{"query": fmt.Sprintf("SELECT %d AS n_%d", i, i+1000)})
		call(t, cs, "execute_query", map[string]any{"query": fmt.Sprintf("SELECT * FROM missing_%d", i+1000)})
		call(t, cs, "execute_query", map[string]any{"query": fmt.Sprintf("DELETE FROM t_%d", i+1000)})
		call(t, cs, fmt.Sprintf("tool_%d", i+1000), nil)
	}
	round(-1) // every label combination the rounds make, once
	before := promtest.Scrape(t, srv.Base+"/metrics")
	for i := range 250 {
		round(i)
	}
	after := promtest.Scrape(t, srv.Base+"/metrics")
	for k := range after {
		if _, ok := before[k]; !ok {
			t.Errorf("new series after 1,000 distinct calls: %s", k)
		}
	}
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
