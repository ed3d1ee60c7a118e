package serve

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpfleet/mcpfleet/shared/httpauth/idptest"
)

// TestReadyzCachesTheProbe: any number of concurrent /readyz requests cost
// one probe per readyTTL; a failing probe is 503 naming what failed; a
// hanging probe fails at its deadline; no probe means ready.
func TestReadyzCachesTheProbe(t *testing.T) {
	var probes atomic.Int32
	var fail atomic.Bool
	release := make(chan struct{})
	r := newReadiness(func(ctx context.Context) error {
		probes.Add(1)
		<-release
		if fail.Load() {
			return errors.New("show info on haproxy-1: connection refused")
		}
		return nil
	}, nil, func(*http.Request) bool { return true })
	clock := time.Unix(1000, 0)
	var clockMu sync.Mutex
	r.now = func() time.Time { clockMu.Lock(); defer clockMu.Unlock(); return clock }
	advance := func(d time.Duration) { clockMu.Lock(); clock = clock.Add(d); clockMu.Unlock() }
	srv := httptest.NewServer(r)
	defer srv.Close()
	get := func() (int, map[string]string) {
		resp, err := http.Get(srv.URL)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var body map[string]string
		json.NewDecoder(resp.Body).Decode(&body)
		return resp.StatusCode, body
	}
	// 50 scrapers at once while the probe runs: one probe.
	var wg sync.WaitGroup
	codes := make(chan int, 50)
	for range 50 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, b := get()
			if c != http.StatusOK {
				t.Logf("%v", b)
			}
			codes <- c
		}()
	}
	time.Sleep(100 * time.Millisecond)
	close(release)
	wg.Wait()
	close(codes)
	for c := range codes {
		if c != http.StatusOK {
			t.Errorf("concurrent /readyz: HTTP %d", c)
		}
	}
	if n := probes.Load(); n != 1 {
		t.Errorf("50 concurrent requests ran %d probes, want 1", n)
	}
	// Within the TTL: cached.
	for range 20 {
		get()
	}
	if n := probes.Load(); n != 1 {
		t.Errorf("cached requests ran %d probes, want 1", n)
	}
	// After it: probed again, and a failure is 503 with the reason.
	fail.Store(true)
	advance(readyTTL)
	code, body := get()
	if code != http.StatusServiceUnavailable || body["status"] != "unavailable" || body["error"] != "show info on haproxy-1: connection refused" {
		t.Errorf("failing probe: HTTP %d %v", code, body)
	}
	if n := probes.Load(); n != 2 {
		t.Errorf("probes = %d, want 2", n)
	}
	// A hanging probe fails at its deadline.
	h := newReadiness(func(ctx context.Context) error { <-ctx.Done(); return nil }, nil, nil)
	h.timeout = 50 * time.Millisecond
	if err := h.check(context.Background()); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("hanging probe: %v", err)
	}
	// No probe: ready, and the route exists on the real surface.
	p := newInproc(t, Config{}, nil)
	resp, err := http.Get(p.base + "/readyz")
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Errorf("/readyz without a probe: %v %v", resp, err)
	}
}

// realProbeFailures are the readiness errors the four servers gave on
// GET /readyz with their back ends unreachable (captured from the built
// servers): broker addresses, a SASL user, a socket path, a CLI path, an
// engine URL.
var realProbeFailures = map[string]struct {
	err     string
	secrets []string
}{
	"streammcp": {`no Kafka cluster answers a metadata request (cluster default: authenticate to Kafka broker 10.2.3.4:9092 with SASL SCRAM-SHA-512 as user "svc-kafka-admin": authentication failed (unexpected EOF). check STREAM_SASL_USERNAME, STREAM_SASL_PASSWORD and STREAM_SASL_MECHANISM)`,
		[]string{"10.2.3.4", "9092", "svc-kafka-admin", "SCRAM", "STREAM_SASL"}},
	"proxymcp": {`runtime API at unix /var/run/haproxy/prod-admin.sock: dial unix /var/run/haproxy/prod-admin.sock: connect: no such file or directory`,
		[]string{"/var/run", "prod-admin.sock", "runtime API"}},
	"codermcp": {`Codex CLI: cannot run /opt/tools/bin/codex-cli-secret-path: fork/exec /opt/tools/bin/codex-cli-secret-path: no such file or directory; set CODER_CLI_PATH to a working Codex CLI 0.36.0 or later`,
		[]string{"/opt/tools", "codex-cli-secret-path", "CODER_CLI_PATH"}},
	"sqlmcp": {`reach the Trino coordinator at http://trino-coordinator.prod.internal:8443: the host name "trino-coordinator.prod.internal" does not resolve (no such host). check SQLENGINE_HOST`,
		[]string{"trino-coordinator", "prod.internal", "8443", "SQLENGINE_HOST"}},
}

// TestReadyzTellsWhatFailedOnlyToAVerifiedCaller (issue 23 item 14): with
// OAuth on, /readyz answers a caller without a valid token only ready or
// not (503 and a fixed text), for every server's real probe failure: no
// address, user, path or variable of it; a verified caller, the log and
// the MCP_METRICS_ADDR listener get what failed. Without OAuth (the
// listener is as open as /mcp) the detail stays.
func TestReadyzTellsWhatFailedOnlyToAVerifiedCaller(t *testing.T) {
	good := hmacToken("https://idp-a.example", "alice")
	for server, f := range realProbeFailures {
		var logged strings.Builder
		var logMu sync.Mutex
		logger := slog.New(slog.NewTextHandler(writerFunc(func(b []byte) (int, error) {
			logMu.Lock()
			defer logMu.Unlock()
			return logged.Write(b)
		}), nil))
		probe := func(ctx context.Context) error { return errors.New(f.err) }
		p := newInprocWith(t, Config{}, hmacAuth, Options{Ready: probe, Logger: logger})
		for name, auth := range map[string]string{
			"no token":      "",
			"forged token":  "Bearer " + idptest.SignHS256("another-secret-of-at-least-32-bytes!!", map[string]any{"sub": "alice", "aud": "x", "exp": time.Now().Add(time.Hour).Unix()}),
			"expired token": "Bearer " + idptest.SignHS256(sessionSecret, map[string]any{"sub": "alice", "aud": "x", "exp": time.Now().Add(-time.Hour).Unix()}),
			"wrong scheme":  "Basic " + good,
			"malformed":     "Bearer a b",
		} {
			code, body := getReadyz(t, p.base, auth)
			if code != http.StatusServiceUnavailable || !strings.Contains(body, `"status":"unavailable"`) {
				t.Errorf("%s, %s: HTTP %d %s", server, name, code, body)
			}
			for _, s := range f.secrets {
				if strings.Contains(body, s) {
					t.Errorf("%s, %s: /readyz leaks %q: %s", server, name, s, body)
				}
			}
		}
		if code, body := getReadyz(t, p.base, "Bearer "+good); code != http.StatusServiceUnavailable || !strings.Contains(body, f.secrets[0]) {
			t.Errorf("%s, verified caller: HTTP %d %s, want what failed", server, code, body)
		}
		logMu.Lock()
		if !strings.Contains(logged.String(), f.secrets[0]) {
			t.Errorf("%s: the log does not say what failed: %s", server, logged.String())
		}
		logMu.Unlock()
		open := newInprocWith(t, Config{}, nil, Options{Ready: probe})
		if code, body := getReadyz(t, open.base, ""); code != http.StatusServiceUnavailable || !strings.Contains(body, f.secrets[0]) {
			t.Errorf("%s without OAuth: HTTP %d %s, want what failed", server, code, body)
		}
	}
	// MCP_METRICS_ADDR's listener says what failed.
	s := NewServer("readyaddr", "0.0.1")
	addr := make(chan net.Addr, 1)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	pr, pw := io.Pipe()
	go func() {
		done <- Run(ctx, Program{Name: "readyaddr"}, s, Config{Transport: "stdio", MetricsAddr: "127.0.0.1:0", ShutdownTimeout: time.Second},
			Options{Stdin: pr, Stdout: io.Discard, Ready: func(context.Context) error { return errors.New(realProbeFailures["sqlmcp"].err) },
				MetricsListening: func(a net.Addr) { addr <- a }})
	}()
	if code, body := getReadyz(t, "http://"+(<-addr).String(), ""); code != http.StatusServiceUnavailable || !strings.Contains(body, "trino-coordinator") {
		t.Errorf("MCP_METRICS_ADDR /readyz: HTTP %d %s, want what failed", code, body)
	}
	pw.Close()
	cancel()
	<-done
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(b []byte) (int, error) { return f(b) }

func getReadyz(t *testing.T, base, auth string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, base+"/readyz", nil)
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}
