package serve

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
)

// aliasLines adds to gateLines what rewriteMethod's fast path must leave to
// encoding/json or read as it does: duplicate methods in both orders, an
// escaped alias, invalid UTF-8, a method only nested deeper.
var aliasLines = append([]string{
	`{"jsonrpc":"2.0","id":3,"method":"ping","method":"callTool","params":{"name":"x"}}`,
	`{"jsonrpc":"2.0","id":3,"method":"callTool","method":"ping","params":{"name":"x"}}`,
	`{"jsonrpc":"2.0","id":3,"method":"callTool"}x`,
	"{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"call\xffTool\"}",
	"{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"\xff\"}",
	`{"jsonrpc":"2.0","id":3,"params":{"method":"callTool"}}`,
	`{"jsonrpc":"2.0","id":3,"method":"readIt","params":{"uri":"x"}}`,
}, gateLines...)

var testAliases = map[string]string{"callTool": "tools/call", "readIt": "resources/read", "\ufffd": "ping"}

// TestRewriteMethodFastAgrees proves the fast path of rewriteMethod changes
// nothing: every message comes out as encoding/json's rewriting makes it.
func TestRewriteMethodFastAgrees(t *testing.T) {
	for _, l := range aliasLines {
		checkRewrite(t, []byte(l))
	}
}

func checkRewrite(t *testing.T, msg []byte) {
	t.Helper()
	for _, aliases := range []map[string]string{nil, testAliases} {
		got, _ := rewriteMethod(bytes.Clone(msg), aliases)
		want, _ := rewriteMethodDecoded(bytes.Clone(msg), aliases)
		if len(aliases) == 0 {
			want = msg
		}
		if !bytes.Equal(got, want) {
			t.Errorf("aliases %v, %q: rewritten to %q, encoding/json %q", aliases, msg, got, want)
		}
	}
}

func FuzzRewriteMethodFastAgrees(f *testing.F) {
	for _, l := range aliasLines {
		f.Add([]byte(l))
	}
	f.Fuzz(checkRewrite)
}

// TestHostileBodiesOverHTTP: the body is read once (limitBody) and its bytes
// handed from layer to layer; every layer must still see the message the
// next one runs, and every refusal stays what it was. Each request is sent
// in a live session to the real HTTP surface with method aliases
// (callTool, readIt); the tool's own count says whether it ran.
func TestHostileBodiesOverHTTP(t *testing.T) {
	const max = 4096
	p := newInprocWith(t, Config{MaxRequestBytes: max}, nil, Options{MethodAliases: map[string]string{"callTool": "tools/call", "readIt": "resources/read"}})
	send := func(body, contentType, session string) (int, string) {
		t.Helper()
		req, _ := http.NewRequest(http.MethodPost, p.base+"/mcp", strings.NewReader(body))
		req.Header.Set("Content-Type", contentType)
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("MCP-Protocol-Version", "2025-06-18")
		if session != "" {
			req.Header.Set("Mcp-Session-Id", session)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		resp, err := http.DefaultClient.Do(req.WithContext(ctx))
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		return resp.StatusCode, string(b)
	}
	p.server.AddResource(mcp.NewResource("test://known", "known"), func(context.Context, mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
		return []mcp.ResourceContents{mcp.TextResourceContents{URI: "test://known", Text: "known"}}, nil
	})
	// A session, as a client opens one (its id comes back in a header).
	req, _ := http.NewRequest(http.MethodPost, p.base+"/mcp", strings.NewReader(initializeMsg))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	r, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	r.Body.Close()
	sess := r.Header.Get("Mcp-Session-Id")
	if r.StatusCode != http.StatusOK || sess == "" {
		t.Fatalf("initialize: HTTP %d, session %q", r.StatusCode, sess)
	}
	call := func(method string) string {
		return `{"jsonrpc":"2.0","id":7,"method":"` + method + `","params":{"name":"whoami","arguments":{}}}`
	}
	for _, tc := range []struct {
		name        string
		body        string
		contentType string
		status      int
		want        string // in the answer
		ran         int32  // calls of the tool
	}{
		{"aliased call runs as tools/call", call("callTool"), "application/json", 200, `"text":"anonymous"`, 1},
		{"escaped alias", call(`call\u0054ool`), "application/json", 200, `"text":"anonymous"`, 1},
		{"duplicate method, alias last", `{"jsonrpc":"2.0","id":7,"method":"tools/list","method":"callTool","params":{"name":"whoami","arguments":{}}}`, "application/json", 200, `"text":"anonymous"`, 1},
		{"duplicate method, alias first", `{"jsonrpc":"2.0","id":7,"method":"callTool","method":"tools/list","params":{"name":"whoami","arguments":{}}}`, "application/json", 200, `"tools":[`, 0},
		{"alias under another case", `{"jsonrpc":"2.0","id":7,"Method":"callTool","params":{"name":"whoami","arguments":{}}}`, "application/json", 200, `"code":-32601`, 0},
		// The not-found answer of a resources/read gets data.uri from a
		// layer that reads the message aliasMethods rewrote (SEP-2164).
		{"aliased resources/read", `{"jsonrpc":"2.0","id":8,"method":"readIt","params":{"uri":"test://nowhere"}}`, "application/json", 200, `"data":{"uri":"test://nowhere"}`, 0},
		{"oversized", call("callTool")[:len(call("callTool"))-1] + `,"pad":"` + strings.Repeat("x", max) + `"}`, "application/json", 413, "MCP_MAX_REQUEST_BYTES", 0},
		{"wrong content type", call("callTool"), "text/plain", 400, "Invalid content type", 0},
		{"invalid JSON", call("callTool")[:40], "application/json", 400, `"code":-32700`, 0},
		{"batch", "[" + call("callTool") + "]", "application/json", 400, `"code":-32700`, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := p.calls.Load()
			code, ans := send(tc.body, tc.contentType, sess)
			if code != tc.status || !strings.Contains(ans, tc.want) {
				t.Errorf("HTTP %d %s, want %d with %s", code, ans, tc.status, tc.want)
			}
			if ran := p.calls.Load() - before; ran != tc.ran {
				t.Errorf("the tool ran %d times, want %d", ran, tc.ran)
			}
		})
	}
}
