package kafka_test

import (
	"context"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/mcpfleet/mcpfleet/streammcp/internal/kafka"
	"github.com/mcpfleet/mcpfleet/streammcp/internal/kafkatest"
	"github.com/mcpfleet/mcpfleet/streammcp/internal/report"
)

// scale seeds a 3-broker cluster with groups consumer groups over
// partitions partitions (topics of 20 partitions, RF 3, a few records
// each); every group commits on all partitions of one topic.
func scale(tb testing.TB, groups, partitions int) *kafkatest.Cluster {
	tb.Helper()
	kc, err := kafkatest.Start(kafkatest.Options{})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(kc.Close)
	seedScale(tb, kc, groups, partitions)
	return kc
}

// benchClusters keeps one seeded cluster per size for the whole benchmark
// run: the testing package calls a benchmark function several times while
// it calibrates b.N, and seeding 1,000 groups each time would dominate.
var benchClusters sync.Map

func benchCluster(b *testing.B, groups, partitions int) *kafkatest.Cluster {
	key := fmt.Sprint(groups, "/", partitions)
	if v, ok := benchClusters.Load(key); ok {
		return v.(*kafkatest.Cluster)
	}
	kc, err := kafkatest.Start(kafkatest.Options{})
	if err != nil {
		b.Fatal(err)
	}
	seedScale(b, kc, groups, partitions)
	benchClusters.Store(key, kc)
	return kc
}

func seedScale(tb testing.TB, kc *kafkatest.Cluster, groups, partitions int) {
	ctx := context.Background()
	const per = 20
	topics := partitions / per
	for i := range topics {
		if err := kc.CreateTopic(ctx, fmt.Sprintf("t%04d", i), per, 3, nil); err != nil {
			tb.Fatal(err)
		}
	}
	for i := range topics {
		for p := range int32(per) {
			if err := kc.Produce(ctx, fmt.Sprintf("t%04d", i), p, 3); err != nil {
				tb.Fatal(err)
			}
		}
	}
	for g := range groups {
		offs := map[int32]int64{}
		for p := range int32(per) {
			offs[p] = int64(g % 3)
		}
		topic := fmt.Sprintf("t%04d", g%topics)
		if err := kc.Commit(ctx, fmt.Sprintf("group-%05d", g), map[string]map[int32]int64{topic: offs}); err != nil {
			tb.Fatal(err)
		}
	}
}

// BenchmarkLagReport measures one consumer-lag report (the per-broker plan
// plus the pure report) and the Kafka requests it costs.
func BenchmarkLagReport(b *testing.B) {
	for _, size := range []struct{ groups, partitions int }{{10, 100}, {100, 500}, {1000, 2000}} {
		b.Run(fmt.Sprintf("groups=%d/partitions=%d", size.groups, size.partitions), func(b *testing.B) {
			kc := benchCluster(b, size.groups, size.partitions)
			c, err := kafka.New(kafka.Options{Brokers: kc.Addrs(), Timeout: 30 * time.Second})
			if err != nil {
				b.Fatal(err)
			}
			defer c.Close()
			ctx := context.Background()
			if _, err := c.Groups(ctx); err != nil { // warm connections
				b.Fatal(err)
			}
			kc.ResetCounts()
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				g, err := c.Groups(ctx)
				if err != nil {
					b.Fatal(err)
				}
				r := report.NewLagReport(g, 1000)
				if r.GroupCount != size.groups {
					b.Fatalf("%d groups, want %d", r.GroupCount, size.groups)
				}
			}
			b.StopTimer()
			b.ReportMetric(float64(kc.Total())/float64(b.N), "requests/op")
		})
	}
}

// TestLagReportAtScale holds the largest benchmark size to its contract:
// one report over 1,000 groups and 2,000 partitions in under a second with
// a constant number of requests. Skipped with -short.
func TestLagReportAtScale(t *testing.T) {
	if testing.Short() && os.Getenv("CI") == "" {
		t.Skip("seeding 1,000 groups takes a few seconds (always run when CI is set)")
	}
	kc := scale(t, 1000, 2000)
	c, err := kafka.New(kafka.Options{Brokers: kc.Addrs(), Timeout: 30 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx := context.Background()
	if _, err := c.Groups(ctx); err != nil {
		t.Fatal(err)
	}
	kc.ResetCounts()
	start := time.Now()
	g, err := c.Groups(ctx)
	if err != nil {
		t.Fatal(err)
	}
	r := report.NewLagReport(g, 1000)
	d := time.Since(start)
	if r.GroupCount != 1000 {
		t.Fatalf("%d groups", r.GroupCount)
	}
	if n := kc.Total(); n > 13 {
		t.Errorf("%d requests for 1,000 groups (budget 13: 1 Metadata + 3 x 4 per broker): %v", n, kc.Counts())
	}
	limit := time.Second
	if raceEnabled {
		limit = 5 * time.Second // the race detector slows everything several-fold
	}
	if d > limit {
		t.Errorf("one report took %s (limit %s)", d, limit)
	}
	t.Logf("1,000 groups / 2,000 partitions: %s, %d requests %v", d, kc.Total(), kc.Counts())
}
