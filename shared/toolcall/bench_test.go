package toolcall_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/mcpfleet/mcpfleet/shared/approval"
	"github.com/mcpfleet/mcpfleet/shared/audit"
	"github.com/mcpfleet/mcpfleet/shared/toolcall"
)

// BenchmarkCall measures what the pipeline adds to a call, through
// HandleMessage (JSON-RPC decode to result): a plain AddTool handler, the
// same handler as a Read tool (argument validation), and a Change call
// under MCP_APPROVAL=none with its intent and outcome records (to a file:
// two writes and two fsyncs; and with MCP_AUDIT_LOG=off).
func BenchmarkCall(b *testing.B) {
	msg := []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"%s","arguments":{"key":"a","value":5}}}`)
	tool := func(name string) mcp.Tool {
		return mcp.NewTool(name, mcp.WithString("key", mcp.Required()), mcp.WithNumber("value", mcp.Required()))
	}
	h := func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return mcp.NewToolResultText("ok"), nil
	}
	run := func(b *testing.B, dest, name string) {
		srv := server.NewMCPServer("b", "v", server.WithHooks(&server.Hooks{}))
		p, err := toolcall.New(srv, toolcall.Config{Audit: audit.Config{Dest: dest}, Approval: approval.Config{Policy: approval.None}}, toolcall.Options{})
		if err != nil {
			b.Fatal(err)
		}
		defer p.Close()
		srv.AddTool(tool("plain"), h)
		p.Read(tool("read"), h)
		p.Change(tool("change"), toolcall.Change, func(context.Context, mcp.CallToolRequest) (toolcall.Plan, error) {
			return toolcall.Plan{Class: toolcall.Change, Target: "t", Commands: []string{"c"},
				Run: func(ctx context.Context) (*mcp.CallToolResult, error) { return h(ctx, mcp.CallToolRequest{}) }}, nil
		})
		m := []byte(fmt.Sprintf(string(msg), name))
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			srv.HandleMessage(context.Background(), m)
		}
	}
	b.Run("plain", func(b *testing.B) { run(b, "off", "plain") })
	b.Run("read", func(b *testing.B) { run(b, "off", "read") })
	b.Run("change-audit-off", func(b *testing.B) { run(b, "off", "change") })
	b.Run("change-audit-file", func(b *testing.B) { run(b, filepath.Join(b.TempDir(), "a.log"), "change") })
}
