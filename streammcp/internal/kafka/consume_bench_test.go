package kafka_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/mcpfleet/mcpfleet/streammcp/internal/kafka"
	"github.com/mcpfleet/mcpfleet/streammcp/internal/kafkatest"
)

// BenchmarkConsumeFromTime100 is consume_messages with from_datetime over
// a 100-partition topic on 3 brokers (RF 1): 50 messages per partition,
// message i stamped base + i seconds, read from message 25 on (2,500
// candidates) and bounded by 100 messages. requests/op is what the cluster
// served.
func BenchmarkConsumeFromTime100(b *testing.B) {
	kc, err := kafkatest.Start(kafkatest.Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(kc.Close)
	ctx := context.Background()
	if err := kc.CreateTopic(ctx, "wide", 100, 1, nil); err != nil {
		b.Fatal(err)
	}
	base := time.Date(2026, 11, 24, 8, 0, 0, 0, time.UTC)
	var recs []*kgo.Record
	for p := range int32(100) {
		for i := range 50 {
			recs = append(recs, &kgo.Record{Topic: "wide", Partition: p, Key: fmt.Appendf(nil, "k%d", i%7),
				Value: fmt.Appendf(nil, `{"p":%d,"i":%d}`, p, i), Timestamp: base.Add(time.Duration(i) * time.Second)})
		}
	}
	prod, err := kgo.NewClient(append(kc.ClientOpts(), kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.ProducerLinger(0))...)
	if err != nil {
		b.Fatal(err)
	}
	if err := prod.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		b.Fatal(err)
	}
	prod.Close()
	c, err := kafka.New(kafka.Options{Brokers: kc.Addrs()})
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	for _, bc := range []struct {
		name string
		key  []byte
	}{{"all", nil}, {"key", []byte("k3")}} {
		b.Run(bc.name, func(b *testing.B) {
			r := kafka.TimeConsumeRequest{Topic: "wide", From: base.Add(25 * time.Second), Key: bc.key, MaxCount: 100, MaxBytes: 64 << 10}
			res, err := c.ConsumeFromTime(ctx, r) // connections opened outside the timing
			if err != nil {
				b.Fatal(err)
			}
			if len(res.Messages) != 100 || res.StoppedBy != kafka.StoppedByMaxMessages {
				b.Fatalf("%d messages, stopped by %q", len(res.Messages), res.StoppedBy)
			}
			kc.ResetCounts()
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				if _, err := c.ConsumeFromTime(ctx, r); err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			b.ReportMetric(float64(kc.Total())/float64(b.N), "requests/op")
			b.Logf("requests: %v over %d ops; scanned %d messages", kc.Counts(), b.N, res.Scanned)
		})
	}
}
