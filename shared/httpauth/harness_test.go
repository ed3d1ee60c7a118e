package httpauth_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcpfleet/mcpfleet/shared/httpauth"
	"github.com/mcpfleet/mcpfleet/shared/serve"
)

// harness is a real MCP server (serve.NewServer + serve.NewHTTPHandler, the
// transport every server uses) with one tool, "whoami", protected by the
// layer under test. calls counts how often the tool handler ran.
type harness struct {
	layer *httpauth.Layer
	srv   *httptest.Server
	base  string
	calls atomic.Int32
	logs  *lockedWriter
}

// logText returns what the layer logged so far.
func (h *harness) logText() string {
	h.logs.mu.Lock()
	defer h.logs.mu.Unlock()
	return h.logs.w.String()
}

// newHarness starts the server; cfg.BaseURL is filled in with its address.
func newHarness(t *testing.T, cfg httpauth.Config) *harness {
	t.Helper()
	h := &harness{logs: &lockedWriter{w: &bytes.Buffer{}}}
	h.srv = httptest.NewUnstartedServer(nil)
	h.base = "http://" + h.srv.Listener.Addr().String()
	cfg.Enabled = true
	if cfg.BaseURL == "" {
		cfg.BaseURL = h.base
	}
	logger := slog.New(slog.NewTextHandler(h.logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	if testing.Verbose() {
		logger = slog.New(slog.NewTextHandler(io.MultiWriter(os.Stderr, h.logs), &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	layer, err := httpauth.New(context.Background(), cfg, logger)
	if err != nil {
		t.Fatalf("httpauth.New: %v", err)
	}
	h.layer = layer
	s := serve.NewServer("authtest", "0.0.1")
	s.AddTool(mcp.NewTool("whoami", mcp.WithDescription("returns the verified caller")),
		func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			h.calls.Add(1)
			id, ok := httpauth.IdentityFromContext(ctx)
			if !ok {
				return mcp.NewToolResultError("no identity in context"), nil
			}
			return mcp.NewToolResultText(id.Subject + "|" + id.Username + "|" + id.Email), nil
		})
	scfg := serve.Config{Transport: "http", Host: "127.0.0.1", Auth: cfg}
	h.srv.Config.Handler = serve.NewHTTPHandler(serve.Program{Name: "authtest", Version: "0.0.1"}, s, scfg, layer, serve.Options{Logger: logger})
	h.srv.Start()
	t.Cleanup(h.srv.Close)
	return h
}

type lockedWriter struct {
	mu sync.Mutex
	w  *bytes.Buffer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// rpc posts one JSON-RPC message to /mcp with an optional Authorization
// header value and session id.
func (h *harness) rpc(t *testing.T, auth, session, body string) *http.Response {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, h.base+"/mcp", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	if session != "" {
		req.Header.Set("Mcp-Session-Id", session)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("POST /mcp: %v", err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

const (
	initializeBody = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`
	listBody       = `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`
	callBody       = `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"whoami","arguments":{}}}`
)

// session initialises an MCP session with a good token and returns its id.
func (h *harness) session(t *testing.T, token string) string {
	t.Helper()
	resp := h.rpc(t, "Bearer "+token, "", initializeBody)
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("initialize with a valid token: HTTP %d %s", resp.StatusCode, b)
	}
	id := resp.Header.Get("Mcp-Session-Id")
	h.rpc(t, "Bearer "+token, id, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	return id
}

// call runs tools/call whoami in session and returns the tool's text.
func (h *harness) call(t *testing.T, token, session string) string {
	t.Helper()
	resp := h.rpc(t, "Bearer "+token, session, callBody)
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("tools/call with a valid token: HTTP %d %s", resp.StatusCode, b)
	}
	// The answer may come as JSON or as one SSE event.
	s := string(b)
	if i := strings.Index(s, "data: "); i >= 0 {
		s = strings.TrimSpace(s[i+len("data: "):])
	}
	var msg struct {
		Result struct {
			Content []struct{ Text string } `json:"content"`
			IsError bool                    `json:"isError"`
		} `json:"result"`
	}
	if err := json.Unmarshal([]byte(s), &msg); err != nil || len(msg.Result.Content) == 0 {
		t.Fatalf("tools/call answer %q: %v", b, err)
	}
	if msg.Result.IsError {
		t.Fatalf("tools/call failed: %s", msg.Result.Content[0].Text)
	}
	return msg.Result.Content[0].Text
}

// wantChallenge checks a 401 and its WWW-Authenticate challenge: error
// "invalid_token" when a token was presented, no error code otherwise.
func (h *harness) wantChallenge(t *testing.T, resp *http.Response, presented bool) {
	t.Helper()
	if resp.StatusCode != http.StatusUnauthorized {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("status %d, want 401 (body %s)", resp.StatusCode, b)
	}
	ch := resp.Header.Values("WWW-Authenticate")
	if len(ch) != 1 {
		t.Fatalf("WWW-Authenticate %q, want exactly one challenge", ch)
	}
	prefix := `Bearer resource_metadata="` + h.base + `/.well-known/oauth-protected-resource"`
	if presented {
		if !strings.HasPrefix(ch[0], prefix+`, error="invalid_token", error_description="`) {
			t.Fatalf("WWW-Authenticate %q, want %s, error=\"invalid_token\", error_description=...", ch[0], prefix)
		}
	} else if ch[0] != prefix {
		t.Fatalf("WWW-Authenticate %q, want exactly %q", ch[0], prefix)
	}
}

// get sends a GET with an optional Authorization header value.
func (h *harness) get(t *testing.T, auth, path string) *http.Response {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, h.base+path, nil)
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}
