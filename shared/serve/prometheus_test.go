package serve

import (
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/mcpfleet/mcpfleet/shared/httpauth"
	"github.com/mcpfleet/mcpfleet/shared/httpauth/idptest"
	"github.com/mcpfleet/mcpfleet/shared/metrics/promtest"
)

// TestRealPrometheusScrapes starts Debian's prometheus (promtest) on a free
// port with a generated configuration scraping the real HTTP surface, makes known
// calls (failures included), and asks Prometheus's HTTP API, in PromQL, for
// the counts and histograms they caused. scripts/install/shared.sh installs
// prometheus; with CI=true a missing binary fails the test.
func TestRealPrometheusScrapes(t *testing.T) {
	promtest.Binary(t, "prometheus") // before any work: skip or fail (CI=true) when missing
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

	prom := promtest.Start(t, promtest.Options{Targets: []string{p.addr}, BearerToken: tok})
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
	prom.Expect(t, want)
}
