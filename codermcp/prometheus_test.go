package main

import (
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/mcpfleet/mcpfleet/codermcp/internal/codertest"
	"github.com/mcpfleet/mcpfleet/codermcp/internal/codertest/harness"
	"github.com/mcpfleet/mcpfleet/shared/e2e"
	"github.com/mcpfleet/mcpfleet/shared/metrics/promtest"
)

// TestRealPrometheus: Debian's prometheus scrapes the built codermcp (HTTP,
// OAuth on) every second while the test makes known calls through the real
// Codex CLI against codertest's model endpoint — turns, a turn the model
// refuses, a protocol error, refused tokens — and then stops the endpoint.
// PromQL through Prometheus's HTTP API must return the counts and
// histograms those calls caused, and the README's alert rules must become
// active.
func TestRealPrometheus(t *testing.T) {
	t.Parallel()
	promtest.Binary(t, "prometheus")
	h := harness.New(t)
	dir := t.TempDir()
	coder := func(prompt string, want promtest.Outcome) promtest.Call {
		return promtest.Call{Tool: "coder", Args: map[string]any{"prompt": prompt, "workingDirectory": dir}, Want: want}
	}
	promtest.Run(t, e2e.Build(t, "."), promtest.Scenario{
		Server: "codermcp",
		Env: []string{h.Marker, "CODER_CLI_PATH=" + h.CLI, "CODER_HOME=" + h.Home, "CODER_WORKSPACE_ROOTS=" + testRoots(),
			"CODER_MODELS=" + codertest.Model, "CODER_DEFAULT_MODEL=" + codertest.Model},
		Calls: []promtest.Call{
			{Tool: "ping", Times: 3},
			coder("turn 0", promtest.OK),
			coder("turn 1", promtest.OK),
			// The model endpoint refuses the key: the CLI fails, the tool says so.
			coder("refused [[401]]", promtest.ToolError),
			{Tool: "no_such_tool", Want: promtest.ProtocolError},
		},
		Unauthenticated: 3,
		Malformed:       2,
		// Besides the counts the calls and refused tokens imply (Scenario.Implied).
		Expect: map[string]float64{
			`count(histogram_quantile(0.5, sum by (le) (mcpfleet_tool_call_duration_seconds_bucket{S,tool="coder"})) > 0.01)`: 1,
			`count(histogram_quantile(0.5, sum by (le) (mcpfleet_tool_call_duration_seconds_bucket{S,tool="ping"})) < 1)`:     1,
			// Each turn was one CLI run; the refused one ended in the auth class.
			`sum(mcpfleet_backend_requests_total{S,backend="codex",operation="exec",outcome="ok"})`:    2,
			`sum(mcpfleet_backend_requests_total{S,backend="codex",operation="exec",outcome="auth"})`:  1,
			`sum(mcpfleet_backend_request_duration_seconds_count{S,backend="codex",operation="exec"})`: 3,
		},
		// The model endpoint goes away: every turn now fails. A new outcome
		// series needs two scrapes with failures between them before its
		// rate counts, and a failing turn still starts the real CLI: on a
		// loaded machine that takes a while.
		Stop:        func() error { h.Endpoint.Close(); return nil },
		Failing:     coder("no endpoint", promtest.ToolError),
		StopTimeout: 3 * time.Minute,
		Alerts: []promtest.WantAlert{
			{Name: "MCPToolCallsFailing", Labels: map[string]string{"server": "codermcp", "tool": "coder"}},
			{Name: "MCPBackendFailing", Labels: map[string]string{"server": "codermcp", "backend": "codex"}},
		},
		After: func(failed int) map[string]float64 {
			return map[string]float64{
				`sum(mcpfleet_tool_calls_total{S,tool="coder",outcome="tool_error"})`:                                             float64(1 + failed),
				`sum(mcpfleet_backend_requests_total{S,backend="codex",operation="exec",outcome!~"ok|cancelled|unknown_thread"})`: float64(1 + failed),
			}
		},
	})
}

// TestMetricsCardinality: hundreds of distinct prompts, session ids and
// made-up tools add no series: no label holds a prompt. The CLI here is the
// repository's fake script (testdata/fakecli): the label set does not
// depend on the CLI, and hundreds of real turns take minutes on a shared
// 2-core machine; TestRealPrometheus runs the real CLI.
func TestMetricsCardinality(t *testing.T) {
	t.Parallel()
	fake, err := filepath.Abs("testdata/fakecli/codex")
	if err != nil {
		t.Fatal(err)
	}
	bin := e2e.Build(t, ".")
	srv := e2e.StartHTTP(t, bin, []string{"CODER_CLI_PATH=" + fake, "CODER_WORKSPACE_ROOTS=" + testRoots(), "CODER_MODELS=m1", "CODER_DEFAULT_MODEL=m1"})
	cs := e2e.Connect(t, srv.MCPURL(), nil)
	dir := t.TempDir()
	after := promtest.NoNewSeries(t, srv.Base+"/metrics", 200, func(i int) {
		if isErr, err := promtest.CallTool(t, cs, "coder", map[string]any{"prompt": fmt.Sprintf("prompt number %d", i), "sessionId": fmt.Sprintf("s%d", i+1000), "workingDirectory": dir}); isErr || err != nil {
			t.Fatalf("coder: isError=%v err=%v", isErr, err)
		}
		promtest.CallTool(t, cs, "coder", map[string]any{"prompt": fmt.Sprintf("bad model %d", i), "model": fmt.Sprintf("model-%d", i+1000)})
		promtest.CallTool(t, cs, fmt.Sprintf("tool_%d", i+1000), nil)
	})
	if n := after[`mcpfleet_tool_calls_total{outcome="ok",server="codermcp",tool="coder"}`]; n != 201 {
		t.Errorf("coder turns counted: %v, want 201", n)
	}
}

// TestAlertRulesFire runs the README's alert rules on synthetic series with
// promtool test rules: CLI runs failing half the time fire
// MCPBackendFailing after its "for" (with the rendered annotations),
// cancelled runs, resumes of unknown sessions and a burst shorter than "for" do not; a tool failing half
// its calls fires MCPToolCallsFailing.
func TestAlertRulesFire(t *testing.T) {
	t.Parallel()
	rules := promtest.READMERules(t, "README.md")
	promtest.TestRules(t, rules, `rule_files: [rules.yml]
evaluation_interval: 1m
tests:
  - interval: 1m
    input_series:
      - series: 'mcpfleet_backend_requests_total{server="codermcp",backend="codex",operation="exec",outcome="ok"}'
        values: '0+2x60'
      - series: 'mcpfleet_backend_requests_total{server="codermcp",backend="codex",operation="exec",outcome="exit_1"}'
        values: '0+2x60'
      - series: 'mcpfleet_tool_calls_total{server="codermcp",tool="coder",outcome="ok"}'
        values: '0+2x60'
      - series: 'mcpfleet_tool_calls_total{server="codermcp",tool="coder",outcome="tool_error"}'
        values: '0+2x60'
    alert_rule_test:
      - eval_time: 10m
        alertname: MCPBackendFailing
        exp_alerts: []
      - eval_time: 40m
        alertname: MCPBackendFailing
        exp_alerts:
          - exp_labels: {severity: critical, server: codermcp, backend: codex}
            exp_annotations:
              summary: "codermcp's Codex CLI runs keep failing"
              description: "50% of the CLI runs failed over 15 minutes. Check the CLI (GET /readyz runs --version), its credentials and the model provider."
      - eval_time: 40m
        alertname: MCPToolCallsFailing
        exp_alerts:
          - exp_labels: {severity: warning, server: codermcp, tool: coder}
            exp_annotations:
              summary: "codermcp tool coder keeps failing"
              description: "50% of coder calls failed over 15 minutes."
  - interval: 1m
    input_series:
      - series: 'mcpfleet_backend_requests_total{server="codermcp",backend="codex",operation="exec",outcome="ok"}'
        values: '0+2x60'
      - series: 'mcpfleet_backend_requests_total{server="codermcp",backend="codex",operation="exec",outcome="cancelled"}'
        values: '0+2x60'
      - series: 'mcpfleet_backend_requests_total{server="codermcp",backend="codex",operation="exec",outcome="unknown_thread"}'
        values: '0+2x60'
    alert_rule_test:
      - eval_time: 40m
        alertname: MCPBackendFailing
        exp_alerts: []
`)
}
