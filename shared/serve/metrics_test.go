package serve

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/mcpfleet/mcpfleet/shared/httpauth"
	"github.com/mcpfleet/mcpfleet/shared/httpauth/idptest"
)

// scrape fetches url and parses the text exposition.
func scrape(t *testing.T, url, token string) map[string]*dto.MetricFamily {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, url, nil)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("scrape %s: %v", url, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("scrape %s: HTTP %d %s", url, resp.StatusCode, b)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := parser.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatalf("parse %s: %v", url, err)
	}
	return fams
}

// value returns the counter, gauge or histogram count of the series of
// family name whose labels include want.
func value(fams map[string]*dto.MetricFamily, name string, want map[string]string) float64 {
	f := fams[name]
	if f == nil {
		return 0
	}
	sum := 0.0
	for _, m := range f.Metric {
		ok := true
		for k, v := range want {
			found := false
			for _, l := range m.Label {
				if l.GetName() == k && l.GetValue() == v {
					found = true
				}
			}
			ok = ok && found
		}
		if !ok {
			continue
		}
		switch {
		case m.Counter != nil:
			sum += m.Counter.GetValue()
		case m.Gauge != nil:
			sum += m.Gauge.GetValue()
		case m.Histogram != nil:
			sum += float64(m.Histogram.GetSampleCount())
		}
	}
	return sum
}

// TestMetricsCountWhatHappened drives the real HTTP surface with OAuth and
// checks /metrics counts exactly the requests, tool outcomes, auth failures
// and streams it caused, with the server as a label; then hundreds of
// distinct arguments and unknown tool names add no series.
func TestMetricsCountWhatHappened(t *testing.T) {
	exp := time.Now().Add(time.Hour).Unix()
	tok := idptest.SignHS256(sessionSecret, map[string]any{"sub": "alice", "aud": "x", "exp": exp})
	p := newInproc(t, Config{}, &httpauth.Config{Provider: "hmac", JWTSecret: sessionSecret, Audience: "x"})
	alice := client{t, p.base, tok}
	resp, _ := alice.do(http.MethodPost, "/mcp", "", initMsg)
	sid := resp.Header.Get("Mcp-Session-Id")
	alice.do(http.MethodPost, "/mcp", sid, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	call := func(id int, tool string, args string) {
		alice.do(http.MethodPost, "/mcp", sid, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":%q,"arguments":%s}}`, id, tool, args))
	}
	for i := range 3 {
		call(10+i, "whoami", "{}")
	}
	call(20, "fail", "{}")
	call(21, "boom", "{}")
	alice.do(http.MethodPost, "/mcp", sid, `{"jsonrpc":"2.0","id":30,"method":"tools/list"}`)
	alice.do(http.MethodPost, "/mcp", sid, `{"jsonrpc":"2.0","id":31,"method":"ping"}`)
	// Refused callers.
	if resp, err := http.Post(p.base+"/mcp", "application/json", strings.NewReader(initMsg)); err == nil {
		resp.Body.Close()
	}
	client{t, p.base, ""}.do(http.MethodPost, "/mcp", "", initMsg) // "Bearer " with nothing
	client{t, p.base, idptest.SignHS256(sessionSecret+"!", map[string]any{"sub": "a", "aud": "x", "exp": exp})}.do(http.MethodPost, "/mcp", "", initMsg)
	client{t, p.base, idptest.SignHS256(sessionSecret, map[string]any{"sub": "a", "aud": "x", "exp": time.Now().Add(-time.Hour).Unix()})}.do(http.MethodPost, "/mcp", "", initMsg)
	client{t, p.base, idptest.SignHS256(sessionSecret, map[string]any{"aud": "x", "exp": exp})}.do(http.MethodPost, "/mcp", "", initMsg)
	// An open listening stream.
	listen, _ := alice.open("/mcp", sid)
	_ = listen

	fams := scrape(t, p.base+"/metrics", tok)
	srv := map[string]string{"server": "inproc"}
	with := func(kv ...string) map[string]string {
		m := map[string]string{"server": "inproc"}
		for i := 0; i+1 < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return m
	}
	checks := []struct {
		name   string
		labels map[string]string
		want   float64
	}{
		{"mcpfleet_build_info", with("version", "0.0.1"), 1},
		{"mcpfleet_requests_total", with("method", "initialize", "outcome", "ok"), 1},
		{"mcpfleet_requests_total", with("method", "tools/call", "outcome", "ok"), 4},
		{"mcpfleet_requests_total", with("method", "tools/call", "outcome", "error"), 1},
		{"mcpfleet_requests_total", with("method", "tools/list", "outcome", "ok"), 1},
		{"mcpfleet_requests_total", with("method", "ping", "outcome", "ok"), 1},
		{"mcpfleet_request_duration_seconds", with("method", "tools/call"), 5},
		{"mcpfleet_tool_calls_total", with("tool", "whoami", "outcome", "ok"), 3},
		{"mcpfleet_tool_calls_total", with("tool", "fail", "outcome", "tool_error"), 1},
		{"mcpfleet_tool_calls_total", with("tool", "boom", "outcome", "protocol_error"), 1},
		{"mcpfleet_tool_call_duration_seconds", with("tool", "whoami"), 3},
		{"mcpfleet_inflight_calls", srv, 0},
		{"mcpfleet_sessions", with("transport", "streamable_http"), 1},
		{"mcpfleet_auth_failures_total", with("reason", "missing"), 1},
		{"mcpfleet_auth_failures_total", with("reason", "signature"), 1},
		{"mcpfleet_auth_failures_total", with("reason", "expired"), 1},
		{"mcpfleet_auth_failures_total", with("reason", "subject"), 1},
		{"mcpfleet_auth_failures_total", with("reason", "malformed"), 1},
	}
	for _, c := range checks {
		if got := value(fams, c.name, c.labels); got != c.want {
			t.Errorf("%s%v = %v, want %v", c.name, c.labels, got, c.want)
		}
	}
	if fams["go_goroutines"] == nil || fams["process_resident_memory_bytes"] == nil {
		t.Error("the Go runtime and process collectors are missing")
	}

	// Cardinality: distinct arguments and unknown tools add no series.
	series := func(f map[string]*dto.MetricFamily) int {
		n := 0
		for name, fam := range f {
			if strings.HasPrefix(name, "mcpfleet_") {
				n += len(fam.Metric)
			}
		}
		return n
	}
	before := series(scrape(t, p.base+"/metrics", tok))
	for i := range 300 {
		call(100+i, "fail", fmt.Sprintf(`{"why":"SELECT %d FROM t WHERE k = 'key-%d' -- prompt %d"}`, i, i, i))
	}
	for i := range 100 {
		call(500+i, fmt.Sprintf("no_such_tool_%d", i), "{}")
	}
	for i := range 50 {
		alice.do(http.MethodPost, "/mcp", sid, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"custom/method-%d"}`, 700+i, i))
	}
	after := scrape(t, p.base+"/metrics", tok)
	// tools/call error and the "other" method are new series at most once.
	if n := series(after); n > before+4 {
		t.Errorf("450 distinct calls added %d series (before %d)", n-before, before)
	}
	for name, fam := range after {
		for _, m := range fam.Metric {
			for _, l := range m.Label {
				if strings.Contains(l.GetValue(), "key-") || strings.Contains(l.GetValue(), "no_such_tool") || strings.Contains(l.GetValue(), "custom/") {
					t.Fatalf("%s carries caller input in label %s=%q", name, l.GetName(), l.GetValue())
				}
			}
		}
	}
}

// TestMetricsNeedTheTokenWithOAuthAndOwnListener (issue 23 item 14): with
// OAuth on, /metrics on the MCP listener needs the bearer token (a bad one
// too is 401); without OAuth it is open; MCP_METRICS_ADDR serves it on a
// listener of its own, also for a stdio server.
func TestMetricsNeedTheTokenWithOAuthAndOwnListener(t *testing.T) {
	tok := idptest.SignHS256(sessionSecret, map[string]any{"sub": "alice", "aud": "x", "exp": time.Now().Add(time.Hour).Unix()})
	p := newInproc(t, Config{}, &httpauth.Config{Provider: "hmac", JWTSecret: sessionSecret, Audience: "x"})
	for name, auth := range map[string]string{
		"no token":        "",
		"forged token":    "Bearer " + idptest.SignHS256("another-secret-of-at-least-32-bytes!!", map[string]any{"sub": "alice", "aud": "x", "exp": time.Now().Add(time.Hour).Unix()}),
		"expired token":   "Bearer " + idptest.SignHS256(sessionSecret, map[string]any{"sub": "alice", "aud": "x", "exp": time.Now().Add(-time.Hour).Unix()}),
		"basic auth":      "Basic YWxpY2U6YWxpY2U=",
		"garbage":         "Bearer !!",
		"token as scheme": tok,
	} {
		req, _ := http.NewRequest(http.MethodGet, p.base+"/metrics", nil)
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnauthorized || strings.Contains(string(b), "mcpfleet_") {
			t.Errorf("/metrics with %s under OAuth: HTTP %d %.100s", name, resp.StatusCode, b)
		}
	}
	scrape(t, p.base+"/metrics", tok)
	open := newInproc(t, Config{}, nil)
	scrape(t, open.base+"/metrics", "")

	s := NewServer("stdiometrics", "1.2.3")
	addr := make(chan net.Addr, 1)
	pr, pw := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- Run(ctx, Program{Name: "stdiometrics"}, s, Config{Transport: "stdio", MetricsAddr: "127.0.0.1:0", ShutdownTimeout: time.Second},
			Options{Stdin: pr, Stdout: io.Discard, MetricsListening: func(a net.Addr) { addr <- a }})
	}()
	a := <-addr
	io.WriteString(pw, `{"jsonrpc":"2.0","id":1,"method":"ping"}`+"\n")
	deadline := time.Now().Add(10 * time.Second)
	for {
		fams := scrape(t, "http://"+a.String()+"/metrics", "")
		if value(fams, "mcpfleet_requests_total", map[string]string{"server": "stdiometrics", "method": "ping"}) == 1 {
			if got := value(fams, "mcpfleet_sessions", map[string]string{"transport": "stdio"}); got != 1 {
				t.Errorf("stdio sessions = %v, want 1", got)
			}
			if got := value(fams, "mcpfleet_build_info", map[string]string{"version": "1.2.3"}); got != 1 {
				t.Errorf("build_info = %v", got)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the stdio ping never showed in /metrics")
		}
		time.Sleep(20 * time.Millisecond)
	}
	pw.Close()
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if _, err := http.Get("http://" + a.String() + "/metrics"); err == nil {
		t.Error("the metrics listener outlived the server")
	}
}
