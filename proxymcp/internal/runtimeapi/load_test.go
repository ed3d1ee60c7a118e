package runtimeapi_test

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpfleet/mcpfleet/proxymcp/internal/haproxy"
	"github.com/mcpfleet/mcpfleet/proxymcp/internal/haproxytest"
	"github.com/mcpfleet/mcpfleet/proxymcp/internal/runtimeapi"
)

// Load test and benchmark for issue 15: 50 concurrent callers of show_info
// (haproxy.Client.ShowInfo, what the tool runs) against a real HAProxy.
//
//	PROXYMCP_LOADTEST=1 go test -run TestLoadShowInfo -v ./proxymcp/internal/runtimeapi/
//	go test -run XXX -bench BenchmarkShowInfo ./proxymcp/internal/runtimeapi/
//
// The load test asserts latency targets, so it does not run in every
// "go test": only with PROXYMCP_LOADTEST=1 (scripts/test sets it) or CI=true.

const (
	loadCallers  = 50
	loadCalls    = 100 // per caller
	loadMaxConns = 4   // PROXY_RUNTIME_MAX_CONNS's default
)

type loadResult struct {
	lat          []time.Duration // sorted
	errs         int64
	firstErr     error
	maxConns     int // most runtime API connections HAProxy showed at once
	sampleErr    error
	samplesTaken int
}

func (r loadResult) pct(p float64) time.Duration {
	return r.lat[min(len(r.lat)-1, int(float64(len(r.lat))*p))]
}

func (r loadResult) String() string {
	return fmt.Sprintf("%d calls, p50 %s, p99 %s, max %s, errors %d, connections seen at once (show sess) %d",
		len(r.lat), r.pct(0.50).Round(10*time.Microsecond), r.pct(0.99).Round(10*time.Microsecond), r.lat[len(r.lat)-1].Round(10*time.Microsecond), r.errs, r.maxConns)
}

// runLoad runs callers×calls ShowInfo through c while another connection
// (the operator socket) samples "show sess" for the TCP runtime API
// connections.
func runLoad(t *testing.T, h *haproxytest.HAProxy, c *runtimeapi.Client, callers, calls int) loadResult {
	t.Helper()
	hp := haproxy.New(c, nil)
	obs := &runtimeapi.Client{Network: "unix", Address: h.OperatorSocket, Timeout: 5 * time.Second}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	// One call first so that the version detection and the first
	// connection are not part of the figures.
	if _, err := hp.ShowInfo(ctx); err != nil {
		t.Fatal(err)
	}

	var res loadResult
	stop := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		for {
			select {
			case <-stop:
				return
			default:
			}
			n, err := countCLISessions(ctx, obs, "tcpv4")
			if err != nil {
				res.sampleErr = err
				return
			}
			res.samplesTaken++
			res.maxConns = max(res.maxConns, n)
			time.Sleep(2 * time.Millisecond)
		}
	}()

	lat := make([][]time.Duration, callers)
	var errs atomic.Int64
	var firstErr sync.Once
	var wg sync.WaitGroup
	start := make(chan struct{})
	for g := range callers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			for range calls {
				t0 := time.Now()
				// Execute, not the shared read haproxy's ShowInfo makes:
				// this measures the pool, which shared reads would hide
				// (50 identical callers would cost one exchange).
				_, err := c.Execute(ctx, "show info")
				lat[g] = append(lat[g], time.Since(t0))
				if err != nil {
					errs.Add(1)
					firstErr.Do(func() { res.firstErr = err })
				}
			}
		}()
	}
	close(start)
	wg.Wait()
	close(stop)
	<-sampled
	for _, l := range lat {
		res.lat = append(res.lat, l...)
	}
	slices.Sort(res.lat)
	res.errs = errs.Load()
	return res
}

// TestLoadShowInfo: the targets of issue 15 with the pool (p99 <= 50 ms, no
// call over 200 ms, never more than PROXY_RUNTIME_MAX_CONNS connections),
// and the figures of one connection per call for comparison.
func TestLoadShowInfo(t *testing.T) {
	if os.Getenv("PROXYMCP_LOADTEST") == "" && os.Getenv("CI") != "true" {
		t.Skip("load test: set PROXYMCP_LOADTEST=1 (scripts/test and CI=true do)")
	}
	h := haproxytest.Run(t, haproxytest.Options{})

	before := runLoad(t, h, h.Runtime("tcp4"), loadCallers, loadCalls)
	t.Logf("one connection per call: %s", before)

	// Let HAProxy finish closing the first run's connections, so that
	// they are not counted against the pool.
	obs := &runtimeapi.Client{Network: "unix", Address: h.OperatorSocket, Timeout: 5 * time.Second}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		n, err := countCLISessions(context.Background(), obs, "tcpv4")
		if err == nil && n == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("connections of the first run still open: %d %v", n, err)
		}
	}
	c := h.Runtime("tcp4")
	c.MaxConns = loadMaxConns
	defer c.Close()
	after := runLoad(t, h, c, loadCallers, loadCalls)
	t.Logf("pool of %d: %s", loadMaxConns, after)

	if after.errs > 0 {
		t.Errorf("%d calls failed, first: %v", after.errs, after.firstErr)
	}
	if after.sampleErr != nil || after.samplesTaken == 0 {
		t.Fatalf("counting connections with show sess: %v (%d samples)", after.sampleErr, after.samplesTaken)
	}
	if after.maxConns > loadMaxConns || after.maxConns < 1 {
		t.Errorf("HAProxy showed %d runtime API connections at once, want 1..%d", after.maxConns, loadMaxConns)
	}
	// Logged, not judged: on a busy machine one connection per call queues
	// in HAProxy's accept backlog (p99 ~1 s) and the pool does not, but on a
	// quiet one HAProxy accepts as fast as the callers connect (p99 11 ms
	// against the pool's 7.6 ms in one CI run), so no ratio between the two
	// holds everywhere. The pool's own targets are judged below.
	t.Logf("p99: pool of %d %s, one connection per call %s", loadMaxConns, after.pct(0.99), before.pct(0.99))
	// The absolute targets assume the test has the machine's CPUs. On a
	// shared machine far beyond its capacity every wake-up waits for a
	// CPU, whatever the client does: the figures are logged, not judged.
	if load, ok := loadPerCPU(); ok && load > 2 {
		t.Logf("load average %.1f per CPU: absolute latency targets not checked", load)
		return
	}
	if p := after.pct(0.99); p > 50*time.Millisecond {
		t.Errorf("p99 = %s, target <= 50ms", p)
	}
	if m := after.lat[len(after.lat)-1]; m > 200*time.Millisecond {
		t.Errorf("slowest call %s, target <= 200ms", m)
	}
}

// loadPerCPU is the 1-minute load average per CPU (Linux only).
func loadPerCPU() (float64, bool) {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return 0, false
	}
	var l float64
	if _, err := fmt.Sscan(string(b), &l); err != nil {
		return 0, false
	}
	return l / float64(runtime.NumCPU()), true
}

// BenchmarkShowInfo: show_info with 50 concurrent callers, one connection
// per call versus the pool; reports p50 and p99 besides ns/op.
func BenchmarkShowInfo(b *testing.B) {
	h := haproxytest.Run(b, haproxytest.Options{})
	for _, tc := range []struct {
		name     string
		maxConns int
	}{{"one-connection-per-call", 0}, {"pool-4", loadMaxConns}} {
		b.Run(tc.name, func(b *testing.B) {
			c := h.Runtime("tcp4")
			c.MaxConns = tc.maxConns
			defer c.Close()
			hp := haproxy.New(c, nil)
			ctx := context.Background()
			if _, err := hp.ShowInfo(ctx); err != nil {
				b.Fatal(err)
			}
			var mu sync.Mutex
			var lat []time.Duration
			// RunParallel starts SetParallelism×GOMAXPROCS goroutines.
			b.SetParallelism((loadCallers + 1) / max(1, runtime.GOMAXPROCS(0)))
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				var mine []time.Duration
				for pb.Next() {
					t0 := time.Now()
					if _, err := hp.ShowInfo(ctx); err != nil {
						b.Error(err)
						return
					}
					mine = append(mine, time.Since(t0))
				}
				mu.Lock()
				lat = append(lat, mine...)
				mu.Unlock()
			})
			b.StopTimer()
			if len(lat) > 0 {
				slices.Sort(lat)
				b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
				b.ReportMetric(float64(lat[min(len(lat)-1, len(lat)*99/100)].Microseconds()), "p99-µs")
			}
		})
	}
}
