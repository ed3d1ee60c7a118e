package serve

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/mcpfleet/mcpfleet/shared/httpauth"
	"github.com/mcpfleet/mcpfleet/shared/httpauth/idptest"
)

// TestRealPrometheusScrapes starts Debian's prometheus on a free port with
// a generated configuration scraping the real HTTP surface, makes known
// calls (failures included), and asks Prometheus's HTTP API, in PromQL, for
// the counts and histograms they caused. scripts/install/shared.sh installs
// prometheus; with CI=true a missing binary fails the test.
func TestRealPrometheusScrapes(t *testing.T) {
	bin, err := exec.LookPath("prometheus")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("prometheus is not installed: run scripts/install/shared.sh")
		}
		t.Skip("prometheus is not installed (scripts/install/shared.sh)")
	}
	tok := idptest.SignHS256(sessionSecret, map[string]any{"sub": "alice", "aud": "x", "exp": time.Now().Add(time.Hour).Unix()})
	p := newInproc(t, Config{}, &httpauth.Config{Provider: "hmac", JWTSecret: sessionSecret, Audience: "x"})
	alice := client{t, p.base, tok}
	resp, _ := alice.do(http.MethodPost, "/mcp", "", initMsg)
	sid := resp.Header.Get("Mcp-Session-Id")
	for i := range 7 {
		alice.do(http.MethodPost, "/mcp", sid, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"whoami","arguments":{}}}`, 10+i))
	}
	for i := range 2 {
		alice.do(http.MethodPost, "/mcp", sid, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"fail","arguments":{}}}`, 30+i))
	}
	alice.do(http.MethodPost, "/mcp", sid, `{"jsonrpc":"2.0","id":40,"method":"tools/call","params":{"name":"boom","arguments":{}}}`)
	for range 3 {
		client{t, p.base, "not.a.jwt"}.do(http.MethodPost, "/mcp", "", initMsg)
	}

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	promAddr := ln.Addr().String()
	ln.Close()
	dir := t.TempDir()
	cfg := fmt.Sprintf("global:\n  scrape_interval: 1s\nscrape_configs:\n  - job_name: mcp\n    static_configs:\n      - targets: [%q]\n", p.addr)
	if err := os.WriteFile(filepath.Join(dir, "prometheus.yml"), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "--config.file="+filepath.Join(dir, "prometheus.yml"), "--storage.tsdb.path="+filepath.Join(dir, "data"),
		"--web.listen-address="+promAddr, "--log.level=warn")
	logs, _ := os.Create(filepath.Join(dir, "prometheus.log"))
	cmd.Stdout, cmd.Stderr = logs, logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
		if t.Failed() {
			b, _ := os.ReadFile(filepath.Join(dir, "prometheus.log"))
			t.Logf("prometheus log:\n%s", b)
		}
	})
	query := func(q string) (float64, bool) {
		resp, err := http.Get("http://" + promAddr + "/api/v1/query?query=" + url.QueryEscape(q))
		if err != nil {
			return 0, false
		}
		defer resp.Body.Close()
		var out struct {
			Status string `json:"status"`
			Data   struct {
				Result []struct {
					Value [2]any `json:"value"`
				} `json:"result"`
			} `json:"data"`
		}
		if json.NewDecoder(resp.Body).Decode(&out) != nil || out.Status != "success" || len(out.Data.Result) != 1 {
			return 0, false
		}
		s, _ := out.Data.Result[0].Value[1].(string)
		v, err := strconv.ParseFloat(s, 64)
		return v, err == nil
	}
	want := map[string]float64{
		`sum(mcpfleet_tool_calls_total{server="inproc",tool="whoami",outcome="ok"})`:                                                  7,
		`sum(mcpfleet_tool_calls_total{server="inproc",tool="fail",outcome="tool_error"})`:                                            2,
		`sum(mcpfleet_tool_calls_total{server="inproc",tool="boom",outcome="protocol_error"})`:                                        1,
		`sum(mcpfleet_requests_total{server="inproc",method="tools/call",outcome="error"})`:                                           1,
		`sum(mcpfleet_request_duration_seconds_count{server="inproc",method="tools/call"})`:                                           10,
		`sum(mcpfleet_tool_call_duration_seconds_bucket{server="inproc",tool="whoami",le="+Inf"})`:                                    7,
		`sum(mcpfleet_auth_failures_total{server="inproc",reason="malformed"})`:                                                       3,
		`count(histogram_quantile(0.5, sum by (le) (mcpfleet_tool_call_duration_seconds_bucket{server="inproc",tool="whoami"})) < 1)`: 1,
		`mcpfleet_build_info{server="inproc",version="0.0.1"}`:                                                                        1,
	}
	deadline := time.Now().Add(60 * time.Second)
	for q, w := range want {
		for {
			got, ok := query(q)
			if ok && got == w {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("PromQL %s = %v (ok=%v), want %v", q, got, ok, w)
			}
			time.Sleep(250 * time.Millisecond)
		}
	}
}
