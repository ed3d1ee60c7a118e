package promtest

import (
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/mcpfleet/mcpfleet/shared/metrics"
)

// TestStartScrapesWithTokenAndEvaluatesRules: the generated configuration
// makes Prometheus send the bearer token (a target that refuses scrapes
// without it would show no samples), load the rules and evaluate them.
func TestStartScrapesWithTokenAndEvaluatesRules(t *testing.T) {
	t.Parallel()
	m := metrics.New("promtest", "v9")
	m.Backend("local", "ping", "error", 0)
	m.Backend("local", "ping", "error", 0)
	h := m.Handler()
	var refused atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer s3cret" {
			refused.Add(1)
			http.Error(w, "no", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	}))
	defer srv.Close()
	rule := `groups:
  - name: t
    rules:
      - alert: PingFailing
        expr: sum by (server, backend) (mcpfleet_backend_requests_total{outcome!="ok"}) > 1
`
	CheckRules(t, rule)
	p := Start(t, Options{Targets: []string{strings.TrimPrefix(srv.URL, "http://")}, BearerToken: "s3cret", Rules: []string{rule}})
	p.Expect(t, map[string]float64{
		`sum(mcpfleet_backend_requests_total{server="promtest",backend="local",operation="ping",outcome="error"})`: 2,
		`mcpfleet_build_info{server="promtest",version="v9"}`:                                                      1,
	})
	a := p.WaitAlert(t, "PingFailing", map[string]string{"server": "promtest", "backend": "local"})
	if a.State != "firing" { // no "for": it fires at once
		t.Errorf("alert state = %q", a.State)
	}
	if _, err := p.Query(`mcpfleet_no_such_metric`); err == nil {
		t.Error("Query of an absent metric returned a value")
	}
	if n := refused.Load(); n != 0 {
		t.Errorf("%d scrapes came without the token", n)
	}
}

func TestSeries(t *testing.T) {
	t.Parallel()
	got := Series("# HELP x\n# TYPE x counter\nmcpfleet_a_total{server=\"s\",tool=\"t t\"} 3\nmcpfleet_b 1\ngo_goroutines 7\nmcpfleet_a_total{server=\"s\",tool=\"u\"} 4\n")
	want := []string{`mcpfleet_a_total{server="s",tool="t t"}`, `mcpfleet_b`, `mcpfleet_a_total{server="s",tool="u"}`}
	if len(got) != len(want) {
		t.Fatalf("Series = %v", got)
	}
	for _, w := range want {
		if !got[w] {
			t.Errorf("Series lacks %s: %v", w, got)
		}
	}
}

func TestRead(t *testing.T) {
	t.Parallel()
	m := metrics.New("promtest", "v9")
	m.Backend("local", "ping", "ok", 0)
	m.Backend("local", "ping", "ok", 0)
	got := Read(t, m.Handler())
	if v := got[`mcpfleet_backend_requests_total{backend="local",operation="ping",outcome="ok",server="promtest"}`]; v != 2 {
		t.Errorf("count = %v; samples: %v", v, got)
	}
}

// TestTestRules: a rule that fires as expected passes TestRules, and
// promtool rejects an expectation the rule does not meet, so a server's
// alert test can fail.
func TestTestRules(t *testing.T) {
	t.Parallel()
	rules := "groups:\n  - name: t\n    rules:\n      - alert: Up\n        expr: up == 1\n"
	tests := `rule_files: [rules.yml]
tests:
  - interval: 1m
    input_series:
      - series: 'up{job="x"}'
        values: '1x5'
    alert_rule_test:
      - eval_time: 2m
        alertname: Up
        exp_alerts:
          - exp_labels: {job: x}
`
	TestRules(t, rules, tests)
	bin := Binary(t, "promtool")
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "rules.yml"), []byte(rules), 0o600)
	os.WriteFile(filepath.Join(dir, "tests.yml"), []byte(strings.Replace(tests, "{job: x}", "{job: y}", 1)), 0o600)
	cmd := exec.Command(bin, "test", "rules", "tests.yml")
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err == nil {
		t.Errorf("promtool accepted a wrong expectation:\n%s", out)
	}
}
