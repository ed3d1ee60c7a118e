package toolcall_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/mcpfleet/mcpfleet/shared/approval"
	"github.com/mcpfleet/mcpfleet/shared/audit"
	"github.com/mcpfleet/mcpfleet/shared/toolcall"
)

type kvIn struct {
	Key   string  `json:"key"`
	Value float64 `json:"value"`
}

// BenchmarkTypedCall compares a small call (BenchmarkCall's) through
// today's path — the schema found per call by argschema, the handler
// reading its arguments again (GetString, GetFloat) — with the typed path:
// the schema bound at registration, the arguments decoded once into a
// struct. Read tools, and change tools under MCP_APPROVAL=none with
// MCP_AUDIT_LOG=off. Run with -benchmem: allocations per call.
func BenchmarkTypedCall(b *testing.B) {
	msg := []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"%s","arguments":{"key":"a","value":5}}}`)
	tool := func(name string) mcp.Tool {
		return mcp.NewTool(name, mcp.WithString("key", mcp.Required()), mcp.WithNumber("value", mcp.Required()),
			mcp.WithSchemaAdditionalProperties(false))
	}
	var sink string
	use := func(key string, v float64) { sink = key + fmt.Sprint(v > 0) }
	ok := mcp.NewToolResultText("ok")
	run := func(b *testing.B, name string) {
		srv := server.NewMCPServer("b", "v", server.WithHooks(&server.Hooks{}))
		p, err := toolcall.New(srv, toolcall.Config{Audit: audit.Config{Dest: "off"}, Approval: approval.Config{Policy: approval.None}}, toolcall.Options{})
		if err != nil {
			b.Fatal(err)
		}
		defer p.Close()
		p.Read(tool("argschema-read"), func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			use(req.GetString("key", ""), req.GetFloat("value", 0))
			return ok, nil
		})
		p.Change(tool("argschema-change"), toolcall.Change, func(_ context.Context, req mcp.CallToolRequest) (toolcall.Plan, error) {
			key, v := req.GetString("key", ""), req.GetFloat("value", 0)
			return toolcall.Plan{Class: toolcall.Change, Target: "t", Commands: []string{"c"},
				Run: func(context.Context) (*mcp.CallToolResult, error) { use(key, v); return ok, nil }}, nil
		})
		toolcall.AddRead(p, toolcall.Tool{Name: "typed-read", Effect: toolcall.Effect{Most: toolcall.Read}},
			func(_ context.Context, in kvIn) (*mcp.CallToolResult, error) { use(in.Key, in.Value); return ok, nil })
		toolcall.AddChange(p, toolcall.Tool{Name: "typed-change", Effect: toolcall.Effect{Most: toolcall.Change}},
			func(_ context.Context, in kvIn) (toolcall.Plan, error) {
				return toolcall.Plan{Class: toolcall.Change, Target: "t", Commands: []string{"c"},
					Run: func(context.Context) (*mcp.CallToolResult, error) { use(in.Key, in.Value); return ok, nil }}, nil
			})
		m := []byte(fmt.Sprintf(string(msg), name))
		b.ReportAllocs()
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			srv.HandleMessage(context.Background(), m)
		}
	}
	for _, name := range []string{"argschema-read", "typed-read", "argschema-change", "typed-change"} {
		b.Run(name, func(b *testing.B) { run(b, name) })
	}
	_ = sink
}
