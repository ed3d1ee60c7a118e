package mcpserver

import (
	"context"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcpfleet/mcpfleet/proxymcp/internal/haproxytest"
)

// TestShowStatThousandServers: every row of a 1,000-server backend comes
// back, over both connection modes and the stats page.
func TestShowStatThousandServers(t *testing.T) {
	h := haproxytest.Run(t, haproxytest.Options{BigServers: 1000})
	for _, tc := range []struct {
		name string
		e    *env
	}{
		{"unix", newEnv(t, h, h.Runtime("unix"), nil, Options{})},
		{"tcp4", newEnv(t, h, h.Runtime("tcp4"), nil, Options{})},
		{"stats_page", newEnv(t, h, nil, statsClient(h), Options{})},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rows := tableRows(t, tc.e.call(t, "show_stat", map[string]any{"filter": "be_big"}))
			if len(rows) != 1001 {
				t.Fatalf("be_big rows = %d, want 1000 servers + BACKEND", len(rows))
			}
			seen := map[string]bool{}
			for _, r := range rows {
				seen[r["svname"].(string)] = true
			}
			if !seen["big0001"] || !seen["big1000"] || !seen["BACKEND"] || len(seen) != 1001 {
				t.Errorf("distinct rows = %d", len(seen))
			}
			servers := list(t, tc.e.call(t, "list_servers", map[string]any{"backend": "be_big"}), "servers")
			if len(servers) != 1000 {
				t.Errorf("list_servers = %d", len(servers))
			}
		})
	}
}

// BenchmarkShowStat measures show_stat end to end (tool call, validation,
// runtime API round trip over the Unix socket, CSV parsing, JSON result) on
// the 1,000-server configuration.
func BenchmarkShowStat(b *testing.B) {
	h := haproxytest.Run(b, haproxytest.Options{BigServers: 1000})
	for _, mode := range []string{"unix", "tcp4"} {
		b.Run(mode, func(b *testing.B) {
			srvEnv := newEnvB(h, mode)
			tool := srvEnv.srv.GetTool("show_stat")
			var req mcp.CallToolRequest
			req.Params.Name = "show_stat"
			req.Params.Arguments = map[string]any{"filter": ""}
			ctx := context.Background()
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				res, err := tool.Handler(ctx, req)
				if err != nil || res.IsError {
					b.Fatalf("%v %v", err, text(res))
				}
			}
		})
	}
	// The floor: HAProxy producing the CSV and the socket read alone.
	b.Run("runtime_api_only", func(b *testing.B) {
		rt := h.Runtime("unix")
		ctx := context.Background()
		b.ReportAllocs()
		for b.Loop() {
			if _, err := rt.Execute(ctx, "show stat"); err != nil {
				b.Fatal(err)
			}
		}
	})
}
