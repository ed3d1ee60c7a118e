package serve

import (
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
	promtest.RunAt(t, promtest.Target{Base: p.base, Token: tok}, promtest.Scenario{
		Server:  "inproc",
		NoRules: true,
		Calls: []promtest.Call{
			{Tool: "whoami", Args: map[string]any{}, Times: 7},
			{Tool: "fail", Args: map[string]any{}, Want: promtest.ToolError, Times: 2},
			{Tool: "boom", Args: map[string]any{}, Want: promtest.ProtocolError},
		},
		Malformed: 3,
		// Besides the counts the calls and refused tokens imply (Scenario.Implied).
		Expect: map[string]float64{
			`sum(mcpfleet_tool_calls_total{S,tool="boom",outcome="protocol_error"})`:                                        1,
			`sum(mcpfleet_request_duration_seconds_count{S,method="tools/call"})`:                                           10,
			`count(histogram_quantile(0.5, sum by (le) (mcpfleet_tool_call_duration_seconds_bucket{S,tool="whoami"})) < 1)`: 1,
			`mcpfleet_build_info{S,version="0.0.1"}`:                                                                        1,
		},
	})
}
