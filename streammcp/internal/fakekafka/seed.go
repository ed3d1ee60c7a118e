package fakekafka

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/kversion"
)

// CreateTopic creates a topic with the given partitions and replication
// factor and optional configs.
func (c *Cluster) CreateTopic(ctx context.Context, name string, partitions int32, rf int16, configs map[string]string) error {
	cl, err := c.Client()
	if err != nil {
		return err
	}
	req := kmsg.NewPtrCreateTopicsRequest()
	req.TimeoutMillis = 5000
	t := kmsg.NewCreateTopicsRequestTopic()
	t.Topic, t.NumPartitions, t.ReplicationFactor = name, partitions, rf
	for k, v := range configs {
		cfg := kmsg.NewCreateTopicsRequestTopicConfig()
		cfg.Name, cfg.Value = k, kmsg.StringPtr(v)
		t.Configs = append(t.Configs, cfg)
	}
	req.Topics = append(req.Topics, t)
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		return fmt.Errorf("create topic %s: %w", name, err)
	}
	for _, rt := range resp.Topics {
		if err := kerr.ErrorForCode(rt.ErrorCode); err != nil && !errors.Is(err, kerr.TopicAlreadyExists) {
			return fmt.Errorf("create topic %s: %w", name, err)
		}
	}
	return nil
}

// Produce writes n records to topic/partition (values "<prefix>-<i>").
func (c *Cluster) Produce(ctx context.Context, topic string, partition int32, n int) error {
	recs := make([]*kgo.Record, 0, n)
	for i := range n {
		recs = append(recs, &kgo.Record{
			Topic: topic, Partition: partition,
			Key:   []byte("key-" + strconv.Itoa(i%10)),
			Value: []byte(fmt.Sprintf(`{"n":%d}`, i)),
		})
	}
	return c.produce(ctx, recs)
}

// produce writes records with a manual partitioner, in batches.
func (c *Cluster) produce(ctx context.Context, recs []*kgo.Record) error {
	p, err := c.producer()
	if err != nil {
		return err
	}
	const batch = 5000
	for len(recs) > 0 {
		n := min(batch, len(recs))
		if err := p.ProduceSync(ctx, recs[:n]...).FirstErr(); err != nil {
			return fmt.Errorf("produce to %s: %w", recs[0].Topic, err)
		}
		recs = recs[n:]
	}
	return nil
}

func (c *Cluster) producer() (*kgo.Client, error) {
	c.clientMu.Lock()
	defer c.clientMu.Unlock()
	if c.prod != nil {
		return c.prod, nil
	}
	opts := append(c.ClientOpts(), kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.ProducerLinger(0))
	p, err := kgo.NewClient(opts...)
	if err != nil {
		return nil, err
	}
	c.prod = p
	return p, nil
}

// Commit commits offsets for group the way admin tools do (generation -1,
// no member): the group exists afterwards in state Empty.
func (c *Cluster) Commit(ctx context.Context, group string, offsets map[string]map[int32]int64) error {
	cl, err := c.Client()
	if err != nil {
		return err
	}
	req := kmsg.NewPtrOffsetCommitRequest()
	req.Group = group
	req.Generation = -1
	for topic, ps := range offsets {
		t := kmsg.NewOffsetCommitRequestTopic()
		t.Topic = topic
		for p, off := range ps {
			rp := kmsg.NewOffsetCommitRequestTopicPartition()
			rp.Partition, rp.Offset = p, off
			rp.LeaderEpoch = -1
			t.Partitions = append(t.Partitions, rp)
		}
		req.Topics = append(req.Topics, t)
	}
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		return fmt.Errorf("commit offsets for %s: %w", group, err)
	}
	for _, t := range resp.Topics {
		for _, p := range t.Partitions {
			if err := kerr.ErrorForCode(p.ErrorCode); err != nil {
				return fmt.Errorf("commit offsets for %s %s/%d: %w", group, t.Topic, p.Partition, err)
			}
		}
	}
	return nil
}

// Member is a live consumer-group member (the group reads Stable while it
// runs). It never commits by itself.
type Member struct {
	Consumer *kgo.Client
}

// JoinGroup starts a member of group consuming topics and waits until the
// group is Stable with the member assigned.
func (c *Cluster) JoinGroup(ctx context.Context, group string, topics ...string) (*Member, error) {
	return c.Join(ctx, group, topics, kgo.MaxVersions(kversion.V3_7_0()))
}

// Join starts a member of group consuming topics with the extra client
// options and waits until the group is Stable with the member assigned.
func (c *Cluster) Join(ctx context.Context, group string, topics []string, extra ...kgo.Opt) (*Member, error) {
	assigned := make(chan struct{}, 1)
	opts := append(c.ClientOpts(),
		kgo.ConsumerGroup(group),
		kgo.ConsumeTopics(topics...),
		kgo.DisableAutoCommit(),
		kgo.ClientID(group+"-member"),
		kgo.OnPartitionsAssigned(func(context.Context, *kgo.Client, map[string][]int32) {
			select {
			case assigned <- struct{}{}:
			default:
			}
		}),
	)
	opts = append(opts, extra...)
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		return nil, err
	}
	// Poll in the background so the member joins, heartbeats and stays.
	go func() {
		for {
			f := cl.PollFetches(context.Background())
			if f.IsClientClosed() {
				return
			}
		}
	}()
	select {
	case <-assigned:
	case <-ctx.Done():
		cl.Close()
		return nil, fmt.Errorf("join group %s: %w", group, ctx.Err())
	case <-time.After(20 * time.Second):
		cl.Close()
		return nil, fmt.Errorf("join group %s: not assigned within 20s", group)
	}
	return &Member{Consumer: cl}, nil
}

// Leave stops the member; the group becomes Empty.
func (m *Member) Leave() { m.Consumer.Close() }
