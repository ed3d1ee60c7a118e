package mcpserver_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/mcpfleet/mcpfleet/streammcp/internal/kafkatest"
	"github.com/mcpfleet/mcpfleet/streammcp/internal/mcpserver"
	"github.com/mcpfleet/mcpfleet/streammcp/internal/report"
)

// BenchmarkFleetDocument reads stream-mcp://clusters across 1, 4 and 8
// in-process clusters (3 brokers each, the quiet scenario), with brokers
// answering at once (rtt=0: the in-process brokers' CPU is the benchmark's,
// so on a small machine the time grows with the clusters) and with each
// request answered 5 ms later (rtt=5ms: clusters some distance away, where
// reading them concurrently is what keeps the 8/1 ratio low).
// requests/op counts the Kafka requests of one document.
func BenchmarkFleetDocument(b *testing.B) {
	for _, c := range []struct {
		n   int
		rtt time.Duration
	}{{1, 0}, {4, 0}, {8, 0}, {1, 5 * time.Millisecond}, {4, 5 * time.Millisecond}, {8, 5 * time.Millisecond}} {
		n := c.n
		b.Run(fmt.Sprintf("rtt=%s/clusters=%d", c.rtt, n), func(b *testing.B) {
			kcs := make([]*kafkatest.Cluster, n)
			var wg sync.WaitGroup
			for i := range n {
				wg.Go(func() { kcs[i] = kafkatest.StartQuiet(b) })
			}
			wg.Wait()
			for _, kc := range kcs {
				kc.SetLatency(c.rtt)
			}
			var clusters []mcpserver.Cluster
			for i, kc := range kcs {
				clusters = append(clusters, mcpserver.Cluster{Name: fmt.Sprintf("c%d", i), Client: newClient(b, kc.Addrs(), 10*time.Second), LagThreshold: 1000})
			}
			h, _ := newFleetEnv(b, clusters, mcpserver.Options{})
			ctx := context.Background()
			read := func() {
				v, err := h.Report(ctx, mcpserver.URIClusters)
				if err != nil {
					b.Fatal(err)
				}
				for _, e := range v.(report.Fleet).Clusters {
					if e.Error != "" {
						b.Fatalf("%s: %s", e.Cluster, e.Error)
					}
				}
			}
			read() // connections open
			for _, kc := range kcs {
				kc.ResetCounts()
			}
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				read()
			}
			b.StopTimer()
			total := 0
			for _, kc := range kcs {
				total += kc.Total()
			}
			b.ReportMetric(float64(total)/float64(b.N), "requests/op")
		})
	}
}
