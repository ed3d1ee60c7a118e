package promtest

import (
	"maps"
	"testing"
)

// TestImplied: the queries a scenario's calls imply count each tool's
// answered calls by outcome, every tools/call request, the protocol errors
// (zero included) and the refused tokens, with the server's label in place.
func TestImplied(t *testing.T) {
	sc := Scenario{Server: "x", Calls: []Call{
		{Tool: "a", Times: 2}, {Tool: "a", Want: ToolError}, {Tool: "nope", Want: ProtocolError},
	}, Malformed: 2}
	want := map[string]float64{
		`mcpfleet_build_info{server="x"}`:                                                           1,
		`sum(mcpfleet_tool_calls_total{server="x",tool="a",outcome="ok"})`:                          2,
		`sum(mcpfleet_tool_calls_total{server="x",tool="a",outcome="tool_error"})`:                  1,
		`sum(mcpfleet_tool_call_duration_seconds_count{server="x",tool="a"})`:                       3,
		`sum(mcpfleet_tool_call_duration_seconds_bucket{server="x",tool="a",le="+Inf"})`:            3,
		`sum(mcpfleet_requests_total{server="x",method="tools/call"})`:                              4,
		`sum(mcpfleet_requests_total{server="x",method="tools/call",outcome="error"}) or vector(0)`: 1,
		`sum(mcpfleet_auth_failures_total{server="x",reason="malformed"})`:                          2,
	}
	if got := sc.queries(sc.Implied()); !maps.Equal(got, want) {
		t.Errorf("implied:\n got %v\nwant %v", got, want)
	}
}
