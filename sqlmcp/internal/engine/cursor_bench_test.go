package engine_test

import (
	"context"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpfleet/mcpfleet/sqlmcp/internal/engine"
	"github.com/mcpfleet/mcpfleet/sqlmcp/internal/trinotest"
)

// BenchmarkCursor10M pages through a 10,000,000-row result (the 1,000,000
// rows of LargeTable crossed with 10 values) in pages of 10,000 rows, as
// fetch_more does, and reports rows/s and the peak Go heap in use, sampled
// every 20 ms and after every page, against the heap before the query: it
// stays flat in the total row count (one page and the driver's read-ahead).
// The test engine runs in this process, so the heap includes its own
// buffers: the figure is an upper bound of the client's.
func BenchmarkCursor10M(b *testing.B) {
	c := newClient(b, shared, func(c *engine.Config) { c.MaxResultBytes = -1; c.QueryTimeout = 30 * time.Minute })
	const sqlText = "SELECT e.id, e.value, k.x FROM " + trinotest.LargeTable + " e CROSS JOIN (VALUES (1), (2), (3), (4), (5), (6), (7), (8), (9), (10)) AS k(x)"
	for b.Loop() {
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		base := ms.HeapInuse
		var peak atomic.Uint64
		sample := func() {
			var m runtime.MemStats
			runtime.ReadMemStats(&m)
			for {
				p := peak.Load()
				if m.HeapInuse <= p || peak.CompareAndSwap(p, m.HeapInuse) {
					return
				}
			}
		}
		stop := make(chan struct{})
		var wg sync.WaitGroup
		wg.Go(func() {
			t := time.NewTicker(20 * time.Millisecond)
			defer t.Stop()
			for {
				select {
				case <-stop:
					return
				case <-t.C:
					sample()
				}
			}
		})
		start := time.Now()
		cur, err := c.Open(context.Background(), engine.Query{SQL: sqlText})
		if err != nil {
			b.Fatal(err)
		}
		total, pages := 0, 0
		for {
			rows, more, err := cur.Page(context.Background(), 10000, -1)
			if err != nil {
				b.Fatal(err)
			}
			total += len(rows)
			pages++
			sample()
			if !more {
				break
			}
		}
		el := time.Since(start)
		close(stop)
		wg.Wait()
		if total != 10*trinotest.LargeTableRows {
			b.Fatalf("%d rows, want %d", total, 10*trinotest.LargeTableRows)
		}
		b.ReportMetric(float64(total)/el.Seconds(), "rows/s")
		b.ReportMetric(float64(peak.Load()-min(base, peak.Load()))/(1<<20), "peak-heap-MB")
		b.ReportMetric(float64(pages), "pages")
	}
}
