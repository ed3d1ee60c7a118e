package fakekafka

import (
	"context"
	"fmt"

	"github.com/twmb/franz-go/pkg/kgo"
)

// The seeded scenario. Log-end offsets after seeding: orders p0 5100,
// orders p1-p5 100 each, payments p0-p2 100 each, audit p0 10.
const (
	TopicOrders   = "orders"   // 6 partitions, RF 3, min.insync.replicas=2
	TopicPayments = "payments" // 3 partitions, RF 3
	TopicAudit    = "audit"    // 1 partition, RF 1

	// GroupOrdersProcessor is Stable with one member, committed at 100 on
	// every orders partition: lag 5000 on p0 (high at threshold 1000).
	GroupOrdersProcessor = "orders-processor"
	// GroupOrdersReplay is Empty, committed at 0 on orders p0 only: lag 5100
	// with no consumer.
	GroupOrdersReplay = "orders-replay"
	// GroupPaymentsAudit is Empty, committed at 20/100/100 on payments: lag 80.
	GroupPaymentsAudit = "payments-audit"
	// GroupAuditArchiver is Empty, caught up on audit.
	GroupAuditArchiver = "audit-archiver"
)

// Seeded is what SeedScenario started; Close stops the live member.
type Seeded struct {
	Member *Member
}

// Close stops the scenario's live consumer-group member.
func (s *Seeded) Close() {
	if s != nil && s.Member != nil {
		s.Member.Leave()
	}
}

// SeedScenario creates the topics, messages and consumer groups described
// by the constants above. Partition p of every topic is led by broker
// p % brokers, so replica lists are deterministic.
func (c *Cluster) SeedScenario(ctx context.Context) (*Seeded, error) {
	topics := []struct {
		name    string
		parts   int32
		rf      int16
		configs map[string]string
		msgs    int
	}{
		{TopicOrders, 6, 3, map[string]string{"min.insync.replicas": "2"}, 100},
		{TopicPayments, 3, 3, nil, 100},
		{TopicAudit, 1, 1, nil, 10},
	}
	for _, t := range topics {
		if err := c.CreateTopic(ctx, t.name, t.parts, t.rf, t.configs); err != nil {
			return nil, err
		}
		for p := range t.parts {
			if err := c.KF.MoveTopicPartition(t.name, p, p%int32(c.opts.Brokers)); err != nil {
				return nil, fmt.Errorf("place %s/%d: %w", t.name, p, err)
			}
		}
		var recs []*kgo.Record
		for p := range t.parts {
			for i := range t.msgs {
				recs = append(recs, record(t.name, p, i))
			}
		}
		if err := c.produce(ctx, recs); err != nil {
			return nil, err
		}
	}
	all := func(n int32, off int64) map[int32]int64 {
		m := map[int32]int64{}
		for p := range n {
			m[p] = off
		}
		return m
	}
	commits := []struct {
		group string
		offs  map[string]map[int32]int64
	}{
		{GroupOrdersProcessor, map[string]map[int32]int64{TopicOrders: all(6, 100)}},
		{GroupOrdersReplay, map[string]map[int32]int64{TopicOrders: {0: 0}}},
		{GroupPaymentsAudit, map[string]map[int32]int64{TopicPayments: {0: 20, 1: 100, 2: 100}}},
		{GroupAuditArchiver, map[string]map[int32]int64{TopicAudit: {0: 10}}},
	}
	for _, cm := range commits {
		if err := c.Commit(ctx, cm.group, cm.offs); err != nil {
			return nil, err
		}
	}
	m, err := c.JoinGroup(ctx, GroupOrdersProcessor, TopicOrders)
	if err != nil {
		return nil, err
	}
	if err := c.Produce(ctx, TopicOrders, 0, 5000); err != nil {
		m.Leave()
		return nil, err
	}
	return &Seeded{Member: m}, nil
}

func record(topic string, p int32, i int) *kgo.Record {
	return &kgo.Record{Topic: topic, Partition: p, Key: []byte(fmt.Sprintf("key-%d", i%10)), Value: []byte(fmt.Sprintf(`{"n":%d}`, i))}
}

// The quiet scenario: a healthy cluster whose only group is caught up.
const (
	TopicEvents     = "events"      // 3 partitions, RF 3, 100 messages each
	GroupEventsSink = "events-sink" // Empty, committed at the log end: lag 0
)

// SeedQuiet creates the quiet scenario: nothing under-replicated, no lag.
func (c *Cluster) SeedQuiet(ctx context.Context) error {
	if err := c.CreateTopic(ctx, TopicEvents, 3, 3, nil); err != nil {
		return err
	}
	offs := map[int32]int64{}
	for p := range int32(3) {
		if err := c.KF.MoveTopicPartition(TopicEvents, p, p%int32(c.opts.Brokers)); err != nil {
			return fmt.Errorf("place %s/%d: %w", TopicEvents, p, err)
		}
		if err := c.Produce(ctx, TopicEvents, p, 100); err != nil {
			return err
		}
		offs[p] = 100
	}
	return c.Commit(ctx, GroupEventsSink, map[string]map[int32]int64{TopicEvents: offs})
}
