package tasks

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/mcpfleet/mcpfleet/shared/httpbody"
	"github.com/mcpfleet/mcpfleet/shared/state/redistest"
)

var updateGolden = flag.Bool("update", false, "rewrite testdata/wrap_hostile.golden from the code as it is")

// wrapLimit is the body limit in front of Wrap in the hostile table, as
// serve's limitBody puts one there.
const wrapLimit = 2048

// hostileBodies are messages Wrap must read exactly as encoding/json does:
// the keeper's decisions (task or not, which TTL, which refusal, which
// answer it gives itself) must not move when its decoding does.
var hostileBodies = []struct{ name, body, header string }{
	{"plain call", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo"}}`, ""},
	{"task", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","task":{}}}`, ""},
	{"task ttl shorter", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","task":{"ttl":5000,"x":[1]}}}`, ""},
	{"task ttl null", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","task":{"ttl":null}}}`, ""},
	{"task ttl string", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","task":{"ttl":"5000"}}}`, ""},
	{"task ttl negative", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","task":{"ttl":-1}}}`, ""},
	{"task ttl zero", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","task":{"ttl":0}}}`, ""},
	{"task ttl fraction", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","task":{"ttl":1.5}}}`, ""},
	{"task ttl huge", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","task":{"ttl":1e300}}}`, ""},
	{"task ttl overflow", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","task":{"ttl":1e999}}}`, ""},
	{"task ttl twice", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","task":{"ttl":5000,"ttl":-1}}}`, ""},
	{"task not an object", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","task":5}}`, ""},
	{"task an array", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","task":[]}}`, ""},
	{"task null", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","task":null}}`, ""},
	{"task then null", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","task":{},"task":null}}`, ""},
	{"null then task", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","task":null,"task":{"ttl":7000}}}`, ""},
	{"task under another case", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","TASK":{"ttl":6000}}}`, ""},
	{"params twice, task first", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","task":{}},"params":{"name":"echo"}}`, ""},
	{"params twice, null last", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","task":{}},"params":null}`, ""},
	{"params thrice, null between", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","task":{}},"params":null,"params":{"name":"echo"}}`, ""},
	{"params not an object", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":"x"}`, ""},
	{"task on tools/list", `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"task":{}}}`, ""},
	{"task on ping", `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"task":{"ttl":-1}}}`, ""},
	{"method twice, call last", `{"jsonrpc":"2.0","id":1,"method":"tools/list","method":"tools/call","params":{"name":"echo","task":{}}}`, ""},
	{"method twice, call first", `{"jsonrpc":"2.0","id":1,"method":"tools/call","method":"tools/list","params":{"name":"echo","task":{}}}`, ""},
	{"method under another case", `{"jsonrpc":"2.0","id":1,"METHOD":"tools/call","params":{"name":"echo","task":{}}}`, ""},
	{"method both cases", `{"jsonrpc":"2.0","id":1,"method":"ping","Method":"tools/call","params":{"name":"echo","task":{}}}`, ""},
	{"escaped method", `{"jsonrpc":"2.0","id":1,"method":"tools\/call","params":{"name":"echo","task":{}}}`, ""},
	{"escaped key", `{"jsonrpc":"2.0","id":1,"m\u0065thod":"tools/call","params":{"name":"echo","task":{}}}`, ""},
	{"method not a string", `{"jsonrpc":"2.0","id":1,"method":5,"params":{"name":"echo","task":{}}}`, ""},
	{"batch", `[{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","task":{}}}]`, ""},
	{"invalid JSON", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","task":{}}`, ""},
	{"trailing text", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","task":{}}}x`, ""},
	{"larger than the limit", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","task":{},"pad":"` + strings.Repeat("x", wrapLimit) + `"}}`, ""},
	{"id an object", `{"jsonrpc":"2.0","id":{"a":1},"method":"tools/call","params":{"name":"echo","task":{"ttl":-1}}}`, ""},
	{"no id", `{"jsonrpc":"2.0","method":"tools/call","params":{"name":"echo","task":{"ttl":-1}}}`, ""},
	{"many members", `{"a":1,"b":2,"c":3,"d":4,"e":5,"f":6,"g":7,"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","task":{"ttl":-1}}}`, ""},
	// 2026-07-28: the version is params._meta's, nowhere else.
	{"modern call", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"extensions":{"io.modelcontextprotocol/tasks":{}}}}}}`, ""},
	{"modern call, no extension", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"only","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`, ""},
	{"version spoofed in arguments", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"only","arguments":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}}`, ""},
	{"version spoofed at the top", `{"jsonrpc":"2.0","id":1,"method":"tools/call","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"},"params":{"name":"only"}}`, ""},
	{"version key another case", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"only","_META":{"IO.modelcontextprotocol/PROTOCOLVERSION":"2026-07-28"}}}`, ""},
	{"modern call, Mcp-Name mismatch", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`, "Mcp-Name: other"},
	{"modern call, version header mismatch", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`, "MCP-Protocol-Version: 2025-11-25"},
	{"modern call with a task too", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","task":{"ttl":-1},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`, ""},
	{"modern tasks/get, no extension", `{"jsonrpc":"2.0","id":1,"method":"tasks/get","params":{"taskId":"nope","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`, ""},
	{"modern tasks/update, taskId not a string", `{"jsonrpc":"2.0","id":1,"method":"tasks/update","params":{"taskId":5,"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`, ""},
	{"tasks/get", `{"jsonrpc":"2.0","id":1,"method":"tasks/get","params":{"taskId":"nope"}}`, ""},
	{"tasks/list", `{"jsonrpc":"2.0","id":1,"method":"tasks/list","params":{}}`, ""},
	{"tasks/cancel escaped", `{"jsonrpc":"2.0","id":1,"method":"tasks\/cancel","params":{"taskId":"nope"}}`, ""},
	{"listen, no extension", `{"jsonrpc":"2.0","id":1,"method":"subscriptions/listen","params":{"notifications":{"taskIds":["nope"]},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`, ""},
	{"listen, taskIds not strings", `{"jsonrpc":"2.0","id":1,"method":"subscriptions/listen","params":{"notifications":{"taskIds":[1]},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`, ""},
	{"listen, version spoofed", `{"jsonrpc":"2.0","id":1,"method":"subscriptions/listen","params":{"notifications":{"taskIds":["nope"],"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}}`, ""},
	{"listen escaped", `{"jsonrpc":"2.0","id":1,"method":"subscriptions\/listen","params":{"notifications":{"taskIds":["nope"]},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`, ""},
	{"notification", `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}`, ""},
	{"a response", `{"jsonrpc":"2.0","id":1,"result":{}}`, ""},
}

// wrapRig is mcp-go's streamable handler for a server with a keeper, Wrap
// in front and a body limit in front of that, driven without sockets.
type wrapRig struct {
	k       *Keeper
	h       http.Handler
	session string
}

func newWrapRig(t testing.TB, cfg Config) *wrapRig {
	k := NewKeeper(cfg)
	t.Cleanup(k.Stop)
	ms := server.NewMCPServer("t", "1", append([]server.ServerOption{server.WithToolCapabilities(false)}, k.ServerOptions()...)...)
	// A task's run waits for Stop, so every answer is given while it is
	// still working; a plain call answers at once.
	echo := func(ctx context.Context, r mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		if ctx.Value(statusKey{}) != nil {
			<-ctx.Done()
			return nil, ctx.Err()
		}
		return mcp.NewToolResultText("echo"), nil
	}
	ms.AddTool(mcp.NewTool("echo", mcp.WithTaskSupport(mcp.TaskSupportOptional)), k.Tool(echo))
	ms.AddTool(mcp.NewTool("only", mcp.WithTaskSupport(mcp.TaskSupportRequired)), k.Tool(echo))
	wrapped := k.Wrap(server.NewStreamableHTTPServer(ms))
	rg := &wrapRig{k: k, h: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.Body = http.MaxBytesReader(w, r.Body, wrapLimit)
		if b, err := io.ReadAll(r.Body); err == nil {
			httpbody.Hold(r, b) // in memory, as serve's body limit leaves it
		}
		wrapped.ServeHTTP(w, r)
	})}
	code, _, hdr := rg.post(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`, "")
	rg.session = hdr.Get("Mcp-Session-Id")
	if code != 200 || rg.session == "" {
		t.Fatalf("initialize: HTTP %d, session %q", code, rg.session)
	}
	rg.post(`{"jsonrpc":"2.0","method":"notifications/initialized"}`, "")
	return rg
}

func (rg *wrapRig) post(body, header string) (int, string, http.Header) {
	req := httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if rg.session != "" {
		req.Header.Set("Mcp-Session-Id", rg.session)
		req.Header.Set("MCP-Protocol-Version", "2025-11-25")
	}
	if k, v, ok := strings.Cut(header, ": "); ok {
		req.Header.Set(k, v)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	w := httptest.NewRecorder()
	rg.h.ServeHTTP(w, req.WithContext(ctx))
	b, _ := io.ReadAll(w.Result().Body)
	return w.Code, string(b), w.Header()
}

var (
	uuids = regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)
	times = regexp.MustCompile(`"\d{4}-\d\d-\d\dT[0-9:.]+Z"`)
)

// TestWrapHostileBodies sends each hostile body through Wrap to the real
// mcp-go handler, with and without a shared store (real Redis), and holds
// the answers — HTTP status, body (task ids and times blanked) and the
// task slots taken — to testdata/wrap_hostile.golden, recorded from the
// keeper that decoded each message once per reader.
func TestWrapHostileBodies(t *testing.T) {
	var out strings.Builder
	for _, store := range []bool{false, true} {
		cfg := Config{Max: 5}
		if store {
			cfg.StateURL = redistest.Start(t, false).URL()
		}
		for _, tc := range hostileBodies {
			rg := newWrapRig(t, cfg)
			code, body, _ := rg.post(tc.body, tc.header)
			body = times.ReplaceAllString(uuids.ReplaceAllString(body, "UUID"), `"TIME"`)
			fmt.Fprintf(&out, "== store=%v %s\nHTTP %d, slots %d\n%s\n", store, tc.name, code, rg.k.Stored(), strings.TrimSpace(body))
			rg.k.Stop()
		}
	}
	const golden = "testdata/wrap_hostile.golden"
	if *updateGolden {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(golden, []byte(out.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if got := out.String(); got != string(want) {
		wl, gl := strings.Split(string(want), "\n"), strings.Split(got, "\n")
		for i := 0; i < len(wl) && i < len(gl); i++ {
			if wl[i] != gl[i] {
				t.Fatalf("answers moved; first difference at line %d:\ngot  %s\nwant %s", i+1, gl[i], wl[i])
			}
		}
		t.Fatalf("answers moved: %d lines, want %d", len(gl), len(wl))
	}
}

// BenchmarkWrapToolsCall is one tools/call through Wrap to the real mcp-go
// handler (no sockets): a plain call, one that creates a task, and a
// tools/list (none of the keeper's methods).
func BenchmarkWrapToolsCall(b *testing.B) {
	for _, tc := range []struct{ name, body string }{
		{"plain", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"q":"select 1"}}}`},
		{"task", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"q":"select 1"},"task":{"ttl":60000}}}`},
		{"list", `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}`},
	} {
		b.Run(tc.name, func(b *testing.B) {
			rg := newWrapRig(b, Config{Max: 1 << 30})
			b.ReportAllocs()
			for b.Loop() {
				if code, out, _ := rg.post(tc.body, ""); code != 200 || strings.Contains(out, `"error"`) {
					b.Fatalf("HTTP %d %s", code, out)
				}
			}
		})
	}
}
