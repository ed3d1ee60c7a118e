package main

import (
	"context"
	"os"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpfleet/mcpfleet/proxymcp/internal/haproxytest"
	"github.com/mcpfleet/mcpfleet/proxymcp/internal/runtimeapi"
	"github.com/mcpfleet/mcpfleet/shared/e2e"
)

// BenchmarkShowInfoConcurrentHTTP is issue 31's second target: 50 callers,
// each with its own streamable HTTP session to one proxymcp, make 20
// show_info calls each, all at once; proxymcp keeps at most 4 runtime API
// connections (PROXY_RUNTIME_MAX_CONNS=4). Beside it, in the same process
// and run, the floor: a raw runtime API client capped at 4 sockets, with
// 50 goroutines × 20 "show info". One op is one round of 1,000 calls;
// p50_ms/p99_ms are over every call of every round, and x_floor_p50 is the
// ratio of the medians (target: p99 <= 50 ms, x_floor_p50 <= 3).
//
//	go test -run XXX -bench BenchmarkShowInfoConcurrentHTTP -benchtime 5x ./proxymcp/
//
// PROXYMCP_BENCH_BIN runs another build (an older commit) for before/after.
func BenchmarkShowInfoConcurrentHTTP(b *testing.B) {
	const callers, calls = 50, 20
	bin := os.Getenv("PROXYMCP_BENCH_BIN")
	if bin == "" {
		bin = e2e.Build(b, ".")
	}
	h := haproxytest.Run(b, haproxytest.Options{})

	round := func(call func(ctx context.Context, caller int) error) ([]time.Duration, error) {
		lat := make([][]time.Duration, callers)
		errs := make([]error, callers)
		var wg sync.WaitGroup
		start := make(chan struct{})
		for c := range callers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				for range calls {
					t0 := time.Now()
					if err := call(context.Background(), c); err != nil {
						errs[c] = err
						return
					}
					lat[c] = append(lat[c], time.Since(t0))
				}
			}()
		}
		close(start)
		wg.Wait()
		var all []time.Duration
		for c := range callers {
			if errs[c] != nil {
				return nil, errs[c]
			}
			all = append(all, lat[c]...)
		}
		return all, nil
	}
	pct := func(d []time.Duration, p float64) time.Duration {
		s := slices.Clone(d)
		slices.Sort(s)
		return s[int(p*float64(len(s)-1))]
	}
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

	// The floor, measured first and in the same run.
	raw := &runtimeapi.Client{Network: "unix", Address: h.Socket, Timeout: 30 * time.Second, MaxConns: 4}
	defer raw.Close()
	var floor []time.Duration
	for range 3 {
		d, err := round(func(ctx context.Context, _ int) error { _, err := raw.Execute(ctx, "show info"); return err })
		if err != nil {
			b.Fatal(err)
		}
		floor = append(floor, d...)
	}

	srv := e2e.StartHTTP(b, bin, append(haproxyEnv(h, "unix"), "PROXY_RUNTIME_MAX_CONNS=4", "LOG_LEVEL=error",
		// 50 callers of one identity: each session holds a request and a
		// listening stream open.
		"MCP_MAX_INFLIGHT_PER_IDENTITY=200", "MCP_MAX_SESSIONS_PER_IDENTITY=100"))
	sessions := make([]*mcp.ClientSession, callers)
	for i := range sessions {
		sessions[i] = e2e.Connect(b, srv.MCPURL(), nil)
	}
	call := func(ctx context.Context, c int) error {
		res, err := sessions[c].CallTool(ctx, &mcp.CallToolParams{Name: "show_info", Arguments: map[string]any{}})
		if err == nil && res.IsError {
			b.Errorf("show_info: %s", e2e.Text(res))
		}
		return err
	}
	if _, err := round(call); err != nil { // warm up: sessions, pool, version
		b.Fatal(err)
	}
	var got []time.Duration
	b.ResetTimer()
	for range b.N {
		d, err := round(call)
		if err != nil {
			b.Fatal(err)
		}
		got = append(got, d...)
	}
	b.StopTimer()
	b.ReportMetric(ms(pct(got, 0.5)), "p50_ms")
	b.ReportMetric(ms(pct(got, 0.99)), "p99_ms")
	b.ReportMetric(ms(pct(floor, 0.5)), "floor_p50_ms")
	b.ReportMetric(ms(pct(floor, 0.99)), "floor_p99_ms")
	b.ReportMetric(float64(pct(got, 0.5))/float64(pct(floor, 0.5)), "x_floor_p50")
}
