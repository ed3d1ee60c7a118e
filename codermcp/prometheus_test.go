package main

import (
	"context"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpfleet/mcpfleet/codermcp/internal/codertest"
	"github.com/mcpfleet/mcpfleet/codermcp/internal/codertest/testdata/harness"
	"github.com/mcpfleet/mcpfleet/shared/e2e"
	"github.com/mcpfleet/mcpfleet/shared/metrics/promtest"
)

// call makes one tool call and reports whether it was a tool error; a
// protocol (JSON-RPC) error is returned as err.
func call(t *testing.T, cs *mcp.ClientSession, tool string, args map[string]any) (bool, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		return false, err
	}
	return res.IsError, nil
}

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
	rules := promtest.READMERules(t, "README.md")
	promtest.CheckRules(t, rules)
	h := harness.New(t)
	bin := e2e.Build(t, ".")
	srv := e2e.StartHTTP(t, bin, append([]string{h.Marker, "CODER_CLI_PATH=" + h.CLI, "CODER_HOME=" + h.Home, "CODER_WORKSPACE_ROOTS=" + testRoots(),
		"CODER_MODELS=" + codertest.Model, "CODER_DEFAULT_MODEL=" + codertest.Model}, e2e.OAuthEnv...))
	prom := promtest.Start(t, promtest.Options{Targets: []string{strings.TrimPrefix(srv.Base, "http://")}, Rules: []string{rules}, BearerToken: e2e.OAuthToken("prometheus")})
	cs := e2e.Connect(t, srv.MCPURL(), e2e.Bearer(e2e.OAuthToken("alice")))
	dir := t.TempDir()

	for range 3 {
		if isErr, err := call(t, cs, "ping", nil); isErr || err != nil {
			t.Fatalf("ping: isError=%v err=%v", isErr, err)
		}
	}
	for i := range 2 {
		if isErr, err := call(t, cs, "coder", map[string]any{"prompt": fmt.Sprintf("turn %d", i), "workingDirectory": dir}); isErr || err != nil {
			t.Fatalf("coder: isError=%v err=%v", isErr, err)
		}
	}
	// The model endpoint refuses the key: the CLI fails, the tool says so.
	if isErr, err := call(t, cs, "coder", map[string]any{"prompt": "refused [[401]]", "workingDirectory": dir}); !isErr || err != nil {
		t.Fatalf("coder refused by the model endpoint: isError=%v err=%v", isErr, err)
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
	q := func(s string) string { return strings.ReplaceAll(s, "S", `server="codermcp"`) }
	prom.Expect(t, map[string]float64{
		q(`sum(mcpfleet_tool_calls_total{S,tool="ping",outcome="ok"})`):                                                      3,
		q(`sum(mcpfleet_tool_calls_total{S,tool="coder",outcome="ok"})`):                                                     2,
		q(`sum(mcpfleet_tool_calls_total{S,tool="coder",outcome="tool_error"})`):                                             1,
		q(`sum(mcpfleet_tool_call_duration_seconds_count{S,tool="coder"})`):                                                  3,
		q(`sum(mcpfleet_tool_call_duration_seconds_bucket{S,tool="coder",le="+Inf"})`):                                       3,
		q(`count(histogram_quantile(0.5, sum by (le) (mcpfleet_tool_call_duration_seconds_bucket{S,tool="coder"})) > 0.01)`): 1,
		q(`count(histogram_quantile(0.5, sum by (le) (mcpfleet_tool_call_duration_seconds_bucket{S,tool="ping"})) < 1)`):     1,
		q(`sum(mcpfleet_requests_total{S,method="tools/call",outcome="error"})`):                                             1,
		q(`sum(mcpfleet_requests_total{S,method="tools/call"})`):                                                             7,
		q(`sum(mcpfleet_auth_failures_total{S,reason="missing"})`):                                                           3,
		q(`sum(mcpfleet_auth_failures_total{S,reason="malformed"})`):                                                         2,
		q(`mcpfleet_build_info{S}`): 1,
		// Each turn was one CLI run; the refused one ended in the auth class.
		q(`sum(mcpfleet_backend_requests_total{S,backend="codex",operation="exec",outcome="ok"})`):    2,
		q(`sum(mcpfleet_backend_requests_total{S,backend="codex",operation="exec",outcome="auth"})`):  1,
		q(`sum(mcpfleet_backend_request_duration_seconds_count{S,backend="codex",operation="exec"})`): 3,
	})

	// The model endpoint goes away: every turn now fails. The calls go on,
	// as a client's would, until the alerts are active. A new outcome
	// series needs two scrapes with failures between them before its rate
	// counts, and a failing turn still starts the real CLI: on a loaded
	// machine that takes a while.
	prom.Timeout = 3 * time.Minute
	h.Endpoint.Close()
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
				if isErr, err := call(t, cs, "coder", map[string]any{"prompt": "no endpoint", "workingDirectory": dir}); !isErr || err != nil {
					t.Errorf("coder with the endpoint gone: isError=%v err=%v", isErr, err)
				}
				failed++
			}
		}
	}()
	for _, a := range []struct {
		name   string
		labels map[string]string
	}{
		{"MCPToolCallsFailing", map[string]string{"server": "codermcp", "tool": "coder"}},
		{"MCPBackendFailing", map[string]string{"server": "codermcp", "backend": "codex"}},
	} {
		got := prom.WaitAlert(t, a.name, a.labels)
		t.Logf("%s is %s: %v", a.name, got.State, got.Labels)
	}
	close(stop)
	<-done
	prom.Expect(t, map[string]float64{
		q(`sum(mcpfleet_tool_calls_total{S,tool="coder",outcome="tool_error"})`):                                             float64(1 + failed),
		q(`sum(mcpfleet_backend_requests_total{S,backend="codex",operation="exec",outcome!~"ok|cancelled|unknown_thread"})`): float64(1 + failed),
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
	round := func(i int) {
		if isErr, err := call(t, cs, "coder", map[string]any{"prompt": fmt.Sprintf("prompt number %d", i), "sessionId": fmt.Sprintf("s%d", i+1000), "workingDirectory": dir}); isErr || err != nil {
			t.Fatalf("coder: isError=%v err=%v", isErr, err)
		}
		call(t, cs, "coder", map[string]any{"prompt": fmt.Sprintf("bad model %d", i), "model": fmt.Sprintf("model-%d", i+1000)})
		call(t, cs, fmt.Sprintf("tool_%d", i+1000), nil)
	}
	round(-1) // every label combination the rounds make, once
	before := promtest.Scrape(t, srv.Base+"/metrics")
	for i := range 200 {
		round(i)
	}
	after := promtest.Scrape(t, srv.Base+"/metrics")
	for k := range after {
		if _, ok := before[k]; !ok {
			t.Errorf("new series after 600 distinct calls: %s", k)
		}
	}
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
