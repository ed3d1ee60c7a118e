package inproc

import (
	"context"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcpfleet/mcpfleet/shared/metrics/promtest"
	"github.com/mcpfleet/mcpfleet/shared/toolcall"
)

// TestStartRunsThePipeline: a tool registered through the harness is
// answered through the pipeline: its schema is enforced before the handler
// runs, and the server's metrics count both calls by outcome.
func TestStartRunsThePipeline(t *testing.T) {
	ran := 0
	s := Start(t, Options{Name: "inproc-test"}, func(p *toolcall.Pipeline) {
		p.Read(mcp.NewTool("echo", mcp.WithString("text", mcp.Required())),
			func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				ran++
				return mcp.NewToolResultText(req.GetString("text", "")), nil
			})
	})
	if res := s.Call("echo", map[string]any{"text": "hi"}); res.IsError || Text(res) != "hi" {
		t.Fatalf("echo: isError=%v %q", res.IsError, Text(res))
	}
	if res := s.Call("echo", map[string]any{}); !res.IsError {
		t.Fatalf("echo without its required text: %q, want a tool error", Text(res))
	}
	if ran != 1 {
		t.Errorf("the handler ran %d times, want 1 (the invalid call stops in the pipeline)", ran)
	}
	got := promtest.Read(t, s.Serve.Metrics.Handler())
	for k, want := range map[string]float64{
		`mcpfleet_tool_calls_total{outcome="ok",server="inproc-test",tool="echo"}`:         1,
		`mcpfleet_tool_calls_total{outcome="tool_error",server="inproc-test",tool="echo"}`: 1,
	} {
		if got[k] != want {
			t.Errorf("%s = %v, want %v", k, got[k], want)
		}
	}
}
