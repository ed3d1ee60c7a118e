package main

import (
	"fmt"
	"strings"
	"testing"

	"github.com/mcpfleet/mcpfleet/proxymcp/internal/haproxytest"
	"github.com/mcpfleet/mcpfleet/shared/e2e"
	"github.com/mcpfleet/mcpfleet/shared/metrics/promtest"
)

// TestRealPrometheus: Debian's prometheus scrapes the built proxymcp (HTTP,
// OAuth on) every second while the test makes known calls against a real
// HAProxy — successes, tool errors, a protocol error, refused tokens — and
// then stops HAProxy. PromQL through Prometheus's HTTP API must return the
// counts and histograms those calls caused, the back-end requests among
// them, and the README's alert rules must become active for the stopped
// HAProxy.
func TestRealPrometheus(t *testing.T) {
	promtest.Binary(t, "prometheus")
	h := haproxytest.Run(t, haproxytest.Options{})
	promtest.Run(t, e2e.Build(t, "."), promtest.Scenario{
		Server: "proxymcp",
		Env:    haproxyEnv(h, "unix"),
		Calls: []promtest.Call{
			{Tool: "show_info", Times: 5},
			// HAProxy refuses: no such server.
			{Tool: "get_server_weight", Args: map[string]any{"backend": "be_app", "server": "nosuch"}, Want: promtest.ToolError, Times: 2},
			{Tool: "no_such_tool", Want: promtest.ProtocolError},
		},
		Unauthenticated: 3,
		Malformed:       2,
		// Besides the counts the calls and refused tokens imply (Scenario.Implied).
		Expect: map[string]float64{
			`sum(mcpfleet_backend_requests_total{S,backend="haproxy",operation="get",outcome="refused"})`: 2,
			`sum(mcpfleet_backend_requests_total{S,outcome=~"error|timeout"}) or vector(0)`:               0,
			// show_info sends "show info" (once per call; the start-up probe and version detection add more).
			`count(sum(mcpfleet_backend_requests_total{S,backend="haproxy",operation="show",outcome="ok"}) >= 5)`:              1,
			`count(sum(mcpfleet_backend_request_duration_seconds_bucket{S,operation="show",le="+Inf"}) >= 5)`:                  1,
			`count(histogram_quantile(0.5, sum by (le) (mcpfleet_tool_call_duration_seconds_bucket{S,tool="show_info"})) < 1)`: 1,
		},
		// HAProxy stops: every show_info now fails at the runtime API.
		Stop:    h.Stop,
		Failing: promtest.Call{Tool: "show_info"},
		Alerts: []promtest.WantAlert{
			{Name: "MCPBackendFailing", Labels: map[string]string{"server": "proxymcp", "backend": "haproxy"}},
			{Name: "MCPToolCallsFailing", Labels: map[string]string{"server": "proxymcp", "tool": "show_info"}},
		},
		After: func(failed int) map[string]float64 {
			return map[string]float64{
				`sum(mcpfleet_tool_calls_total{S,tool="show_info",outcome="tool_error"})`:                             float64(failed),
				`sum(mcpfleet_backend_requests_total{S,backend="haproxy",operation="show",outcome=~"error|timeout"})`: float64(failed),
			}
		},
	})
}

// TestMetricsCardinality: hundreds of distinct map keys, server names and
// made-up tools add no series: labels hold registered tools, command verbs
// and outcome words only.
func TestMetricsCardinality(t *testing.T) {
	h := haproxytest.Run(t, haproxytest.Options{})
	bin := e2e.Build(t, ".")
	srv := e2e.StartHTTP(t, bin, haproxyEnv(h, "unix"))
	cs := e2e.Connect(t, srv.MCPURL(), nil)
	after := promtest.NoNewSeries(t, srv.Base+"/metrics", 300, func(i int) {
		promtest.CallTool(t, cs, "get_map", map[string]any{"map": h.MapFile, "key": fmt.Sprintf("host-%d.example", i)})
		promtest.CallTool(t, cs, "get_server_weight", map[string]any{"backend": "be_app", "server": fmt.Sprintf("srv%d", i)})
		promtest.CallTool(t, cs, fmt.Sprintf("tool_%d", i), nil)
	})
	if n := after[`mcpfleet_tool_calls_total{outcome="ok",server="proxymcp",tool="get_map"}`]; n != 301 {
		t.Errorf("get_map calls counted: %v, want 301", n)
	}
}

// TestAlertRulesFire runs the README's alert rules on synthetic series with
// promtool test rules: HAProxy failing half the requests fires
// MCPBackendFailing after its "for" (with the rendered annotations), a
// burst shorter than "for" and HAProxy's refusals do not; a tool failing
// half its calls fires MCPToolCallsFailing.
func TestAlertRulesFire(t *testing.T) {
	rules := promtest.READMERules(t, "README.md")
	promtest.TestRules(t, rules, `rule_files: [rules.yml]
evaluation_interval: 1m
tests:
  - interval: 1m
    input_series:
      - series: 'mcpfleet_backend_requests_total{server="proxymcp",backend="lb1",operation="show",outcome="ok"}'
        values: '0+10x30'
      - series: 'mcpfleet_backend_requests_total{server="proxymcp",backend="lb1",operation="show",outcome="error"}'
        values: '0+10x30'
      - series: 'mcpfleet_backend_requests_total{server="proxymcp",backend="lb2",operation="show",outcome="ok"}'
        values: '0+10x30'
      - series: 'mcpfleet_backend_requests_total{server="proxymcp",backend="lb2",operation="set",outcome="refused"}'
        values: '0+10x30'
      - series: 'mcpfleet_tool_calls_total{server="proxymcp",tool="show_info",outcome="ok"}'
        values: '0+10x30'
      - series: 'mcpfleet_tool_calls_total{server="proxymcp",tool="show_info",outcome="tool_error"}'
        values: '0+10x30'
      - series: 'mcpfleet_haproxy_ssl_cert_expiry_seconds{server="proxymcp",instance="lb1",cert="/etc/haproxy/site.pem"}'
        values: '864000-60x180'
      - series: 'mcpfleet_haproxy_ssl_cert_expiry_seconds{server="proxymcp",instance="lb2",cert="/etc/haproxy/site.pem"}'
        values: '5184000-60x180'
    alert_rule_test:
      - eval_time: 30m
        alertname: HAProxyCertificateExpiring
        exp_alerts: []
      - eval_time: 2h
        alertname: HAProxyCertificateExpiring
        exp_alerts:
          - exp_labels: {severity: warning, server: proxymcp, instance: lb1, cert: /etc/haproxy/site.pem}
            exp_annotations:
              summary: "HAProxy lb1 certificate /etc/haproxy/site.pem expires soon"
              description: "/etc/haproxy/site.pem on lb1 expires in 9d 22h 0m 0s. Rotate it with set_ssl_cert."
      - eval_time: 3m
        alertname: MCPBackendFailing
        exp_alerts: []
      - eval_time: 20m
        alertname: MCPBackendFailing
        exp_alerts:
          - exp_labels: {severity: critical, server: proxymcp, backend: lb1}
            exp_annotations:
              summary: "proxymcp cannot reach HAProxy lb1"
              description: "50% of proxymcp's requests to lb1 failed or timed out over 5 minutes. Check that HAProxy runs and that PROXY_RUNTIME_URL / PROXY_STATS_URL reach it (GET /readyz says what failed)."
      - eval_time: 20m
        alertname: MCPToolCallsFailing
        exp_alerts:
          - exp_labels: {severity: warning, server: proxymcp, tool: show_info}
            exp_annotations:
              summary: "proxymcp tool show_info keeps failing"
              description: "50% of show_info calls failed over 5 minutes."
`)
}

// TestFleetBackendLabels: with PROXY_INSTANCES the built binary counts each
// instance's requests under its own name, and an instance that stops
// answering counts its own failures, not its neighbour's.
func TestFleetBackendLabels(t *testing.T) {
	a := haproxytest.Run(t, haproxytest.Options{})
	b := haproxytest.Run(t, haproxytest.Options{})
	bin := e2e.Build(t, ".")
	srv := e2e.StartHTTP(t, bin, []string{
		"PROXY_INSTANCES=lb1,lb2",
		"PROXY_LB1_RUNTIME_URL=unix://" + a.Socket, "PROXY_LB1_STATS_URL=" + a.StatsURL,
		"PROXY_LB2_RUNTIME_URL=tcp://" + b.RuntimeTCP, "PROXY_LB2_STATS_URL=" + b.StatsURL,
		"PROXY_STATS_USERNAME=" + haproxytest.StatsUser, "PROXY_STATS_PASSWORD=" + haproxytest.StatsPassword,
	})
	cs := e2e.Connect(t, srv.MCPURL(), nil)
	if isErr, err := promtest.CallTool(t, cs, "show_info", map[string]any{"instance": "all"}); isErr || err != nil {
		t.Fatalf("show_info on all: isError=%v err=%v", isErr, err)
	}
	if err := b.Stop(); err != nil {
		t.Fatal(err)
	}
	promtest.CallTool(t, cs, "show_info", map[string]any{"instance": "all"})
	got := promtest.Scrape(t, srv.Base+"/metrics")
	key := func(backend, outcome string) string {
		return fmt.Sprintf(`mcpfleet_backend_requests_total{backend=%q,operation="show",outcome=%q,server="proxymcp"}`, backend, outcome)
	}
	if got[key("lb1", "ok")] < 2 || got[key("lb2", "ok")] < 1 || got[key("lb2", "error")] < 1 || got[key("lb1", "error")] != 0 {
		var lines []string
		for k, v := range got {
			if strings.HasPrefix(k, "mcpfleet_backend_requests_total") {
				lines = append(lines, fmt.Sprint(k, " ", v))
			}
		}
		t.Errorf("per-instance back-end requests:\n%s", strings.Join(lines, "\n"))
	}
	for k := range got {
		if strings.Contains(k, `backend="haproxy"`) {
			t.Errorf("a request of the fleet was recorded without its instance: %s", k)
		}
	}
}
