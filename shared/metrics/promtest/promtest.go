// Package promtest runs a real Prometheus (Debian's prometheus package,
// installed by scripts/install/shared.sh) for tests: it scrapes a server's
// /metrics every second, evaluates rule files every second, and answers
// PromQL through its HTTP API, so a test asserts what an operator's
// Prometheus would see. It also checks rule files with promtool. With
// CI=true a missing binary fails the test; otherwise it is skipped.
//
//	prom := promtest.Start(t, promtest.Options{Targets: []string{srv.Addr}})
//	// ... make known calls ...
//	prom.Expect(t, map[string]float64{`sum(mcpfleet_tool_calls_total{tool="x",outcome="ok"})`: 3})
//
// A server's end-to-end Prometheus test is a Scenario that Run drives
// against the built binary (RunAt: a server already running): known calls,
// refused tokens, the PromQL values they cause, a stopped back end and the
// alerts that must become active.
package promtest

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Binary returns the path of name (prometheus or promtool), skipping the
// test when it is missing, or failing it when CI=true.
func Binary(t testing.TB, name string) string {
	t.Helper()
	bin, err := exec.LookPath(name)
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s is not installed: run scripts/install/shared.sh (Debian package prometheus)", name)
		}
		t.Skipf("%s is not installed (scripts/install/shared.sh installs Debian's prometheus)", name)
	}
	return bin
}

// Options configures a test Prometheus.
type Options struct {
	// Targets are host:port addresses whose /metrics is scraped every second.
	Targets []string
	// BearerToken, when set, is sent with every scrape (with OAuth on, /metrics of the HTTP listener needs the token).
	BearerToken string
	// Rules are rule files' contents (YAML with groups:), evaluated every
	// second.
	Rules []string
}

// Prometheus is a running Prometheus process.
type Prometheus struct {
	// URL is its base URL, e.g. http://127.0.0.1:41234.
	URL string
	// Timeout bounds Expect and WaitAlert (default 60 s: a loaded machine).
	Timeout time.Duration
}

// Start starts Prometheus on a free port with a generated configuration and
// stops it when the test ends; its log is shown when the test failed.
func Start(t testing.TB, o Options) *Prometheus {
	t.Helper()
	bin := Binary(t, "prometheus")
	dir := t.TempDir()
	var cfg strings.Builder
	cfg.WriteString("global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\n  evaluation_interval: 1s\n")
	if len(o.Rules) > 0 {
		cfg.WriteString("rule_files:\n")
		for i, r := range o.Rules {
			p := filepath.Join(dir, fmt.Sprintf("rules%d.yml", i))
			if err := os.WriteFile(p, []byte(r), 0o600); err != nil {
				t.Fatal(err)
			}
			fmt.Fprintf(&cfg, "  - %q\n", p)
		}
	}
	cfg.WriteString("scrape_configs:\n  - job_name: mcp\n")
	if o.BearerToken != "" {
		fmt.Fprintf(&cfg, "    authorization:\n      credentials: %q\n", o.BearerToken)
	}
	cfg.WriteString("    static_configs:\n      - targets: [")
	for i, tg := range o.Targets {
		if i > 0 {
			cfg.WriteString(", ")
		}
		fmt.Fprintf(&cfg, "%q", tg)
	}
	cfg.WriteString("]\n")
	if err := os.WriteFile(filepath.Join(dir, "prometheus.yml"), []byte(cfg.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	cmd := exec.Command(bin, "--config.file="+filepath.Join(dir, "prometheus.yml"), "--storage.tsdb.path="+filepath.Join(dir, "data"),
		"--web.listen-address="+addr, "--log.level=warn")
	logs, err := os.Create(filepath.Join(dir, "prometheus.log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = logs, logs
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", bin, err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
		logs.Close()
		if t.Failed() {
			b, _ := os.ReadFile(filepath.Join(dir, "prometheus.log"))
			t.Logf("prometheus configuration:\n%s\nprometheus log:\n%s", cfg.String(), b)
		}
	})
	return &Prometheus{URL: "http://" + addr, Timeout: 60 * time.Second}
}

func (p *Prometheus) get(path string, out any) error {
	resp, err := http.Get(p.URL + path)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	var env struct {
		Status string          `json:"status"`
		Error  string          `json:"error"`
		Data   json.RawMessage `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&env); err != nil {
		return fmt.Errorf("GET %s: HTTP %d: %v", path, resp.StatusCode, err)
	}
	if env.Status != "success" {
		return fmt.Errorf("GET %s: %s", path, env.Error)
	}
	return json.Unmarshal(env.Data, out)
}

// Query evaluates an instant PromQL query that must return exactly one
// sample, and returns its value.
func (p *Prometheus) Query(q string) (float64, error) {
	var data struct {
		Result []struct {
			Metric map[string]string `json:"metric"`
			Value  [2]any            `json:"value"`
		} `json:"result"`
	}
	if err := p.get("/api/v1/query?query="+url.QueryEscape(q), &data); err != nil {
		return 0, err
	}
	if len(data.Result) != 1 {
		return 0, fmt.Errorf("%d samples, want 1", len(data.Result))
	}
	s, _ := data.Result[0].Value[1].(string)
	return strconv.ParseFloat(s, 64)
}

// Expect waits until every query returns its wanted value (after the
// scrapes that carry it), and fails the test naming the first query that
// still differs at the deadline.
func (p *Prometheus) Expect(t testing.TB, want map[string]float64) {
	t.Helper()
	deadline := time.Now().Add(p.Timeout)
	for q, w := range want {
		for {
			got, err := p.Query(q)
			if err == nil && got == w {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("PromQL %s = %v (error: %v), want %v", q, got, err, w)
			}
			time.Sleep(250 * time.Millisecond)
		}
	}
}

// Alert is an alert as /api/v1/alerts reports it.
type Alert struct {
	Labels map[string]string `json:"labels"`
	State  string            `json:"state"` // pending or firing
}

// Alerts returns the active (pending or firing) alerts.
func (p *Prometheus) Alerts() ([]Alert, error) {
	var data struct {
		Alerts []Alert `json:"alerts"`
	}
	err := p.get("/api/v1/alerts", &data)
	return data.Alerts, err
}

// WaitAlert waits until an alert named name is active (pending or firing;
// an example rule's "for" is longer than a test) with every label of
// labels, and returns it.
func (p *Prometheus) WaitAlert(t testing.TB, name string, labels map[string]string) Alert {
	t.Helper()
	deadline := time.Now().Add(p.Timeout)
	var last []Alert
	for {
		alerts, err := p.Alerts()
		if err == nil {
			last = alerts
		}
	next:
		for _, a := range alerts {
			if a.Labels["alertname"] != name {
				continue
			}
			for k, v := range labels {
				if a.Labels[k] != v {
					continue next
				}
			}
			return a
		}
		if time.Now().After(deadline) {
			t.Fatalf("alert %s %v never became active; active alerts: %v (error: %v)", name, labels, last, err)
		}
		time.Sleep(250 * time.Millisecond)
	}
}

// CheckRules runs `promtool check rules` on rules (a rule file's contents)
// and fails the test with promtool's words when it is not valid.
func CheckRules(t testing.TB, rules string) {
	t.Helper()
	bin := Binary(t, "promtool")
	p := filepath.Join(t.TempDir(), "rules.yml")
	if err := os.WriteFile(p, []byte(rules), 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(bin, "check", "rules", p).CombinedOutput()
	if err != nil {
		t.Fatalf("promtool check rules: %v\n%s\nrules:\n%s", err, out, rules)
	}
	if !strings.Contains(string(out), "SUCCESS") {
		t.Fatalf("promtool check rules did not say SUCCESS:\n%s", out)
	}
}

// Samples returns the mcpfleet_* samples of a /metrics exposition (text
// format) by series, "name{labels}" (labels as exposed, sorted by name).
func Samples(exposition string) map[string]float64 {
	out := map[string]float64{}
	for _, line := range strings.Split(exposition, "\n") {
		if !strings.HasPrefix(line, "mcpfleet_") {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		if i < 0 {
			continue
		}
		v, err := strconv.ParseFloat(line[i+1:], 64)
		if err != nil {
			continue
		}
		out[line[:i]] = v
	}
	return out
}

// Series returns the mcpfleet_* series of a /metrics exposition (text
// format), for cardinality checks.
func Series(exposition string) map[string]bool {
	out := map[string]bool{}
	for k := range Samples(exposition) {
		out[k] = true
	}
	return out
}

// Scrape fetches a /metrics URL in the text format and returns its
// mcpfleet_* samples (see Samples).
func Scrape(t testing.TB, metricsURL string) map[string]float64 {
	t.Helper()
	resp, err := http.Get(metricsURL)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("GET %s: %v", metricsURL, err)
	}
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: HTTP %d %s", metricsURL, resp.StatusCode, b)
	}
	return Samples(string(b))
}

// Read serves h (a metrics.Metrics Handler) one scrape in process and
// returns its mcpfleet_* samples (see Samples).
func Read(t testing.TB, h http.Handler) map[string]float64 {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	if rec.Code != http.StatusOK {
		t.Fatalf("/metrics: HTTP %d %s", rec.Code, rec.Body)
	}
	return Samples(rec.Body.String())
}

// READMERules returns the alert rules a README documents: the first ```yaml
// block holding "groups:" in its "## Monitoring" section, so that the rules
// a reader copies are the ones the tests check (CheckRules) and load into
// a real Prometheus (Options.Rules).
func READMERules(t testing.TB, readme string) string {
	t.Helper()
	b, err := os.ReadFile(readme)
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(b), "\n## Monitoring\n")
	if !ok {
		t.Fatalf("%s has no \"## Monitoring\" section", readme)
	}
	if i := strings.Index(section, "\n## "); i >= 0 {
		section = section[:i]
	}
	for {
		_, rest, ok := strings.Cut(section, "```yaml\n")
		if !ok {
			t.Fatalf("%s: the Monitoring section has no ```yaml block with groups:", readme)
		}
		block, after, ok := strings.Cut(rest, "```")
		if !ok {
			t.Fatalf("%s: unterminated ```yaml block in the Monitoring section", readme)
		}
		if strings.Contains(block, "groups:") {
			return block
		}
		section = after
	}
}

// TestRules runs `promtool test rules` on rules (a rule file's contents)
// with tests, a unit-test file's contents whose rule_files is
// [rules.yml]: synthetic series in, the alerts expected out (labels and
// rendered annotations). It fails the test with promtool's words.
func TestRules(t testing.TB, rules, tests string) {
	t.Helper()
	bin := Binary(t, "promtool")
	dir := t.TempDir()
	for name, body := range map[string]string{"rules.yml": rules, "tests.yml": tests} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command(bin, "test", "rules", "tests.yml")
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("promtool test rules: %v\n%s", err, out)
	}
}
