package serve

import (
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpfleet/mcpfleet/shared/httpauth"
	"github.com/mcpfleet/mcpfleet/shared/state/redistest"
)

// TestEndedSessionRefusedOnEveryReplica: two replicas (real HTTP, the same
// OAuth secret, so each accepts the other's session ids) sharing one real
// redis-server through MCP_STATE_URL. A session DELETEd on A, and one that
// expired idle on A, is refused on B — and on A and B after A restarts
// (a new process: only the store remembers). Without the store B would
// serve both (the control replica C proves it). Redis down: a request
// naming a session is refused with 503 naming MCP_STATE_URL, never served.
func TestEndedSessionRefusedOnEveryReplica(t *testing.T) {
	rs := redistest.Start(t, false)
	authCfg := httpauth.Config{Provider: "hmac", JWTSecret: sessionSecret, Audience: "x"}
	token := sessionSuites(t)[1].alice
	cfg := Config{StateURL: rs.URL()}
	a := newInproc(t, cfg, &authCfg)
	b := newInproc(t, cfg, &authCfg)
	c := newInproc(t, Config{}, &authCfg) // no store: the control

	// A's clock, to expire a session idle without waiting.
	var mu sync.Mutex
	skew := time.Duration(0)
	a.handler.sessions.now = func() time.Time { mu.Lock(); defer mu.Unlock(); return time.Now().Add(skew) }

	open := func(p *inproc) string {
		t.Helper()
		cl := client{t, p.base, token}
		resp, body := cl.do(http.MethodPost, "/mcp", "", initMsg)
		id := resp.Header.Get("Mcp-Session-Id")
		if resp.StatusCode != http.StatusOK || id == "" {
			t.Fatalf("initialize: HTTP %d %s", resp.StatusCode, body)
		}
		cl.do(http.MethodPost, "/mcp", id, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
		return id
	}
	call := func(p *inproc, id string) (int, string) {
		t.Helper()
		resp, body := client{t, p.base, token}.do(http.MethodPost, "/mcp", id, toolsCall)
		return resp.StatusCode, body
	}
	refused := func(where string, p *inproc, id string) {
		t.Helper()
		if st, body := call(p, id); st != http.StatusNotFound || !strings.Contains(body, "session not found") {
			t.Errorf("%s: HTTP %d %s, want 404 session not found", where, st, body)
		}
	}

	deleted := open(a)
	if st, body := call(b, deleted); st != http.StatusOK {
		t.Fatalf("A's live session on B: HTTP %d %s", st, body)
	}
	if st, body := call(c, deleted); st != http.StatusOK {
		t.Fatalf("A's live session on C: HTTP %d %s", st, body)
	}
	if resp, body := (client{t, a.base, token}).do(http.MethodDelete, "/mcp", deleted, ""); resp.StatusCode != http.StatusOK {
		t.Fatalf("DELETE on A: HTTP %d %s", resp.StatusCode, body)
	}
	refused("deleted on A, used on A", a, deleted)
	refused("deleted on A, used on B", b, deleted)
	// The control: a replica without the store still serves it — what
	// the store prevents.
	if st, _ := call(c, deleted); st != http.StatusOK {
		t.Errorf("control replica without the store: HTTP %d, want it served (the test proves nothing)", st)
	}

	// Idle expiry on A: the sweep ends it, B refuses it.
	idle := open(a)
	if st, body := call(b, idle); st != http.StatusOK {
		t.Fatalf("A's idle session on B before expiry: HTTP %d %s", st, body)
	}
	mu.Lock()
	skew = DefaultSessionIdleTimeout + time.Minute
	mu.Unlock()
	if n := a.handler.sessions.sweep(); n != 1 {
		t.Fatalf("sweep ended %d sessions, want 1", n)
	}
	refused("expired on A, used on B", b, idle)
	refused("expired on A, used on A", a, idle)

	// A new process (a restart of A): it remembers nothing, the store does.
	a2 := newInproc(t, cfg, &authCfg)
	refused("deleted, used on A restarted", a2, deleted)
	refused("expired, used on A restarted", a2, idle)
	live := open(a2)
	if st, body := call(b, live); st != http.StatusOK {
		t.Fatalf("a live session on B: HTTP %d %s", st, body)
	}

	// Redis down: refused with 503 naming the variable, not served.
	rs.Stop()
	resp, body := client{t, b.base, token}.do(http.MethodPost, "/mcp", live, toolsCall)
	if resp.StatusCode != http.StatusServiceUnavailable || !strings.Contains(body, "MCP_STATE_URL") {
		t.Errorf("Redis down: HTTP %d %s, want 503 naming MCP_STATE_URL", resp.StatusCode, body)
	}
	if strings.Contains(body, live) {
		t.Errorf("Redis down: the answer echoes the session id: %s", body)
	}
	// A DELETE while the store is down fails (503): the client retries.
	if resp, _ := (client{t, a2.base, token}).do(http.MethodDelete, "/mcp", live, ""); resp.StatusCode != http.StatusServiceUnavailable {
		t.Errorf("DELETE with Redis down: HTTP %d, want 503", resp.StatusCode)
	}
	rs.Restart()
	// Recovered: the session lives (its DELETE failed), its retried
	// DELETE on B is refused on A2.
	if st, body := call(a2, live); st != http.StatusOK {
		t.Errorf("after Redis came back: HTTP %d %s", st, body)
	}
	if resp, body := (client{t, b.base, token}).do(http.MethodDelete, "/mcp", live, ""); resp.StatusCode != http.StatusOK {
		t.Fatalf("DELETE on B after recovery: HTTP %d %s", resp.StatusCode, body)
	}
	refused("deleted on B after recovery, used on A2", a2, live)
	if st, body := call(b, open(a2)); st != http.StatusOK {
		t.Errorf("after Redis came back: HTTP %d %s", st, body)
	}
}
