package kafka_test

import (
	"context"
	"testing"
	"time"

	"github.com/mcpfleet/mcpfleet/streammcp/internal/kafka"
	"github.com/mcpfleet/mcpfleet/streammcp/internal/kafkatest"
)

// TestCancelledWriteSendsNothing: a write whose caller already gave up sends
// no request, even over a warm pooled connection that would answer at once;
// the cluster's own request counter and its data are the witnesses.
func TestCancelledWriteSendsNothing(t *testing.T) {
	kc := kafkatest.StartSeeded(t)
	c := newClient(t, kc.Addrs())
	ctx := context.Background()
	// Warm every connection the writes would use.
	if _, err := c.Cluster(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Groups(ctx); err != nil {
		t.Fatal(err)
	}
	before, err := c.DescribeTopic(ctx, kafkatest.TopicOrders)
	if err != nil {
		t.Fatal(err)
	}
	gone, cancel := context.WithCancel(ctx)
	cancel()
	writes := []struct {
		name string
		run  func() error
	}{
		{"produce", func() error {
			_, err := c.Produce(gone, kafka.ProduceRequest{Topic: kafkatest.TopicOrders, Value: "late"})
			return err
		}},
		{"create topic", func() error { return c.CreateTopic(gone, "late-topic", 1, 1, nil) }},
		{"create partitions", func() error { _, err := c.CreatePartitions(gone, kafkatest.TopicOrders, 64); return err }},
		{"delete records", func() error { _, err := c.DeleteRecords(gone, kafkatest.TopicOrders, 0, 1); return err }},
		{"alter topic config", func() error {
			return c.AlterTopicConfig(gone, kafkatest.TopicOrders, map[string]string{"retention.ms": "1"}, nil)
		}},
		{"delete topic", func() error { return c.DeleteTopic(gone, kafkatest.TopicOrders) }},
		{"delete group", func() error { _, err := c.DeleteGroup(gone, "orders-replay"); return err }},
	}
	for _, w := range writes {
		t.Run(w.name, func(t *testing.T) {
			kc.ResetCounts()
			if err := w.run(); err == nil {
				t.Fatal("a cancelled write succeeded")
			}
			// Without the check the request went out from a goroutine after
			// the call had returned: watch the counter for a while. A late
			// send can only be missed here, never invented.
			deadline := time.Now().Add(300 * time.Millisecond)
			for time.Now().Before(deadline) {
				// The seeded group members' own traffic is not ours.
				if sent := planCounts(kc); len(sent) != 0 {
					t.Fatalf("a cancelled write sent requests: %v", sent)
				}
				time.Sleep(5 * time.Millisecond)
			}
		})
	}
	after, err := c.DescribeTopic(ctx, kafkatest.TopicOrders)
	if err != nil {
		t.Fatalf("the topic is gone or unreadable after cancelled writes: %v", err)
	}
	if len(after.Partitions) != len(before.Partitions) {
		t.Fatalf("partitions %d → %d after cancelled writes", len(before.Partitions), len(after.Partitions))
	}
}
