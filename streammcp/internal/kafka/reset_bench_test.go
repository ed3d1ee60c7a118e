package kafka_test

import (
	"context"
	"testing"

	"github.com/mcpfleet/mcpfleet/streammcp/internal/kafka"
	"github.com/mcpfleet/mcpfleet/streammcp/internal/kafkatest"
)

// resetCluster is a cluster with one 1,000-partition topic (RF 1) and an
// Empty group committed at 0 on every partition.
func resetCluster(b *testing.B) *kafkatest.Cluster {
	b.Helper()
	kc, err := kafkatest.Start(kafkatest.Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(kc.Close)
	ctx := context.Background()
	if err := kc.CreateTopic(ctx, "wide", 1000, 1, nil); err != nil {
		b.Fatal(err)
	}
	offs := map[int32]int64{}
	for p := range int32(1000) {
		offs[p] = 0
	}
	if err := kc.Commit(ctx, "wide-sink", map[string]map[int32]int64{"wide": offs}); err != nil {
		b.Fatal(err)
	}
	return kc
}

// BenchmarkResetPreview1000 is the dry run of a reset over 1,000
// partitions; BenchmarkReset1000 the reset itself (plan again + one
// OffsetCommit). requests/op is what the cluster served.
func BenchmarkResetPreview1000(b *testing.B) { benchReset(b, false) }
func BenchmarkReset1000(b *testing.B)        { benchReset(b, true) }

func benchReset(b *testing.B, run bool) {
	kc := resetCluster(b)
	c, err := kafka.New(kafka.Options{Brokers: kc.Addrs()})
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	ctx := context.Background()
	r := kafka.ResetRequest{Group: "wide-sink", Topics: []string{"wide"}, Target: kafka.Target{Kind: kafka.ToEarliest}}
	if _, err := c.PlanReset(ctx, r); err != nil { // connections opened outside the timing
		b.Fatal(err)
	}
	kc.ResetCounts()
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if run {
			_, err = c.Reset(ctx, r)
		} else {
			_, err = c.PlanReset(ctx, r)
		}
		if err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(kc.Total())/float64(b.N), "requests/op")
	if run {
		b.ReportMetric(float64(kc.Counts()["OffsetCommit"])/float64(b.N), "commits/op")
	}
}
