package serve

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"

	mcpclient "github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcpfleet/mcpfleet/shared/argschema"
	"github.com/mcpfleet/mcpfleet/shared/argschema/argschematest"
)

// TestArgumentsValidated: a tool registered directly with AddTool (not
// through the pipeline) is validated against its schema before its
// handler, and the handler sees the call marked as checked, which is what
// keeps the pipeline from validating a second time.
func TestArgumentsValidated(t *testing.T) {
	s := NewServer("x", "v0")
	var ran, unchecked atomic.Int32
	tool := mcp.NewTool("set_port", mcp.WithString("name", mcp.Required()),
		mcp.WithNumber("port", mcp.Required(), mcp.Min(1), mcp.Max(65535)), mcp.WithBoolean("force"))
	s.AddTool(tool, func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		ran.Add(1)
		if !argschema.Checked(ctx) {
			unchecked.Add(1)
		}
		return mcp.NewToolResultText("ok"), nil
	})
	c, err := mcpclient.NewInProcessClient(s.MCPServer)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx := context.Background()
	if err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	init := mcp.InitializeRequest{}
	init.Params.ProtocolVersion = mcp.LATEST_PROTOCOL_VERSION
	if _, err := c.Initialize(ctx, init); err != nil {
		t.Fatal(err)
	}
	call := func(args map[string]any) *mcp.CallToolResult {
		req := mcp.CallToolRequest{}
		req.Params.Name = "set_port"
		req.Params.Arguments = args
		res, err := c.CallTool(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	valid := map[string]any{"name": "a", "port": 8080}
	cases := argschematest.Cases(tool, valid)
	for _, tc := range cases {
		res := call(tc.Args)
		txt := res.Content[0].(mcp.TextContent).Text
		if !res.IsError || !strings.Contains(txt, `argument "`+tc.Arg+`"`) {
			t.Errorf("%s=%#v: isError=%v %s", tc.Arg, tc.Value, res.IsError, txt)
		}
	}
	if n := ran.Load(); n != 0 {
		t.Fatalf("the handler ran %d times on wrongly typed arguments", n)
	}
	if res := call(valid); res.IsError || ran.Load() != 1 || unchecked.Load() != 0 {
		t.Fatalf("valid call: isError=%v ran=%d unchecked=%d", res.IsError, ran.Load(), unchecked.Load())
	}
	if len(cases) < 30 {
		t.Fatalf("only %d cases", len(cases))
	}
}
