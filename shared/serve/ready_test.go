package serve

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"
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
