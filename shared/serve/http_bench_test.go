package serve_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcpfleet/mcpfleet/shared/audit"
	"github.com/mcpfleet/mcpfleet/shared/serve"
	"github.com/mcpfleet/mcpfleet/shared/toolcall"
)

// BenchmarkHTTPCall is the server's own cost of one call over streamable
// HTTP (issue 31): the whole handler every server mounts on /mcp (host
// guard, in-flight bound, body limit, method aliases, session guard,
// mcp-go's streamable transport) and the tool-call pipeline (argument
// check, metrics, audit off), without sockets: each request goes straight
// to the handler, in a session opened first. "tools/call" calls a read
// tool without arguments that answers ~1.3 KB of structured JSON, as
// proxymcp's show_info does; "ping" is MCP's ping. ns/op and allocs/op
// are the server's (and the request's construction: a few allocations).
//
//	go test -run XXX -bench BenchmarkHTTPCall -benchmem ./shared/serve/
func BenchmarkHTTPCall(b *testing.B) {
	s := serve.NewServer("bench", "v0")
	p := serve.Program{Name: "bench", Version: "v0"}
	cfg := serve.Config{Transport: "http", Host: "127.0.0.1", Calls: toolcall.Config{Audit: audit.Config{Dest: "off"}}}
	calls, err := p.Pipeline(s, cfg, io.Discard, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer calls.Close()
	// ~60 fields, as "show info" has.
	fields := map[string]any{}
	for i := range 60 {
		if i%2 == 0 {
			fields[fmt.Sprintf("Field%02d", i)] = int64(i * 1000)
		} else {
			fields[fmt.Sprintf("Field%02d", i)] = fmt.Sprintf("value %d", i)
		}
	}
	info, _ := json.Marshal(map[string]any{"info": fields, "source": "runtime"})
	toolcall.AddRead(calls, toolcall.Tool{Name: "info", Effect: toolcall.Effect{Most: toolcall.Read}},
		func(context.Context, struct{}) (*mcp.CallToolResult, error) {
			return mcp.NewToolResultStructured(json.RawMessage(info), "60 fields"), nil
		})
	h := serve.NewHTTPHandler(p, s, cfg, nil, serve.Options{MethodAliases: map[string]string{"callTool": "tools/call"}})
	defer h.Close()
	post := func(body, session string) *httptest.ResponseRecorder {
		req := httptest.NewRequest(http.MethodPost, "http://127.0.0.1/mcp", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("MCP-Protocol-Version", "2025-11-25")
		if session != "" {
			req.Header.Set("Mcp-Session-Id", session)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		return rec
	}
	init := post(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"b","version":"1"}}}`, "")
	session := init.Header().Get("Mcp-Session-Id")
	if init.Code != http.StatusOK || session == "" {
		b.Fatalf("initialize: HTTP %d %s", init.Code, init.Body)
	}
	post(`{"jsonrpc":"2.0","method":"notifications/initialized"}`, session)
	for _, tc := range []struct{ name, method, params, want string }{
		{"tools/call", "tools/call", `{"name":"info","arguments":{}}`, `"structuredContent"`},
		{"ping", "ping", `{}`, `"result":{}`},
	} {
		b.Run(tc.name, func(b *testing.B) {
			i := 0
			b.ReportAllocs()
			for b.Loop() {
				i++
				rec := post(`{"jsonrpc":"2.0","id":`+strconv.Itoa(i)+`,"method":"`+tc.method+`","params":`+tc.params+`}`, session)
				if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), tc.want) || strings.Contains(rec.Body.String(), `"isError":true`) {
					b.Fatalf("%s: HTTP %d %s", tc.method, rec.Code, rec.Body)
				}
			}
		})
	}
}
