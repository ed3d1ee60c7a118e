package kafkatest

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/kversion"

	"github.com/mcpfleet/mcpfleet/streammcp/internal/fakekafka"
)

// Faults and probes only tests use: request counts, latency, stalls,
// moving coordinators, offline partitions and brokers, fencing, stopped
// brokers, and KIP-848 and share-group members.

// SetLatency makes every request wait d before it is answered: a cluster
// some distance away (a small fake: in-process brokers answer in
// microseconds, real ones a network round trip away). 0 removes it.
func (c *Cluster) SetLatency(d time.Duration) { c.Latency.Store(int64(d)) }

// Counts returns the requests served since the last ResetCounts, by API
// name (e.g. "Metadata": 1).
func (c *Cluster) Counts() map[string]int {
	c.CountMu.Lock()
	defer c.CountMu.Unlock()
	out := map[string]int{}
	for k, n := range c.Requests {
		out[kmsg.NameForKey(k)] = n
	}
	return out
}

// Total returns the number of requests since the last ResetCounts.
func (c *Cluster) Total() int {
	c.CountMu.Lock()
	defer c.CountMu.Unlock()
	n := 0
	for _, v := range c.Requests {
		n += v
	}
	return n
}

// ResetCounts zeroes the request counters.
func (c *Cluster) ResetCounts() {
	c.CountMu.Lock()
	c.Requests = map[int16]int{}
	c.CountMu.Unlock()
}

// MoveCoordinatorsOnce makes the next n multi-group OffsetFetch requests
// answer NOT_COORDINATOR for every group, as while coordinators move.
func (c *Cluster) MoveCoordinatorsOnce(n int) { c.Moved.Store(int32(n)) }

// Stall makes broker node leave requests of API key (e.g. kmsg.ListGroups)
// unanswered until ClearFaults: a broker that accepts connections but does
// not answer.
func (c *Cluster) Stall(key int16, node int32) {
	if old := c.Stalled.Swap(&fakekafka.Stall{Key: key, Node: node, Release: make(chan struct{})}); old != nil {
		close(old.Release)
	}
}

// Offline makes topic/partition leaderless: leader -1,
// LEADER_NOT_AVAILABLE, empty ISR, every replica offline.
func Offline(topic string, partition int32) func(*kmsg.MetadataResponse) {
	return func(m *kmsg.MetadataResponse) {
		fakekafka.EachPartition(m, func(t string, p *kmsg.MetadataResponseTopicPartition) {
			if t == topic && p.Partition == partition {
				p.Leader = -1
				p.ErrorCode = 5 // LEADER_NOT_AVAILABLE
				p.ISR = []int32{}
				p.OfflineReplicas = slices.Clone(p.Replicas)
			}
		})
	}
}

// BrokerDown removes broker id from the broker list, marks it offline in
// every replica set and drops it from every ISR, the way Kafka reports a
// broker that died. Partitions it led keep it as leader (failover pending),
// so they read as offline.
func BrokerDown(id int32) func(*kmsg.MetadataResponse) {
	return func(m *kmsg.MetadataResponse) {
		m.Brokers = slices.DeleteFunc(m.Brokers, func(b kmsg.MetadataResponseBroker) bool { return b.NodeID == id })
		fakekafka.EachPartition(m, func(_ string, p *kmsg.MetadataResponseTopicPartition) {
			if slices.Contains(p.Replicas, id) {
				p.OfflineReplicas = append(p.OfflineReplicas, id)
				p.ISR = slices.DeleteFunc(p.ISR, func(r int32) bool { return r == id })
			}
		})
	}
}

// Combine applies several metadata faults in order.
func Combine(fns ...func(*kmsg.MetadataResponse)) func(*kmsg.MetadataResponse) {
	return func(m *kmsg.MetadataResponse) {
		for _, f := range fns {
			f(m)
		}
	}
}

// Fence makes DescribeCluster report ids as fenced (Kafka 4.0+), leaving
// Metadata as it is. Call with no ids to clear.
func (c *Cluster) Fence(ctx context.Context, ids ...int32) error {
	if len(ids) == 0 {
		c.Fenced.Store(nil)
		return nil
	}
	if c.MetadataFault.Load() == nil {
		// DescribeCluster answers are built from a metadata snapshot.
		if err := c.SetMetadataFault(ctx, func(*kmsg.MetadataResponse) {}); err != nil {
			return err
		}
	}
	ids = slices.Clone(ids)
	c.Fenced.Store(&ids)
	return nil
}

// StopBroker really stops broker id: its listener closes and dials are
// refused. kfake moves its partitions to the remaining brokers.
func (c *Cluster) StopBroker(id int32) error { return c.KF.RemoveNode(id) }

// RestartBroker brings broker id back on port.
func (c *Cluster) RestartBroker(id int32, port int) error {
	_, _, err := c.KF.AddNode(id, port)
	return err
}

// JoinNextGenGroup is JoinGroup with the KIP-848 consumer protocol (Kafka
// 4.0+): the coordinator assigns partitions and the group's type is
// "consumer" rather than "classic".
func (c *Cluster) JoinNextGenGroup(ctx context.Context, group string, topics ...string) (*Member, error) {
	return c.Join(ctx, group, topics, kgo.MaxVersions(kversion.V4_0_0()), kgo.ServerSideBalancer(),
		kgo.Balancers(kgo.RangeBalancer()))
}

// JoinShareGroup starts a member of share group (KIP-932) group consuming
// topics and waits until the coordinator lists the group Stable with type
// "share" (kadm reads it). Leave stops it.
func (c *Cluster) JoinShareGroup(ctx context.Context, group string, topics ...string) (*Member, error) {
	// Share groups need Kafka 4.1+ requests (ShareGroupHeartbeat, ShareFetch).
	opts := append(c.ClientOpts(), kgo.MaxVersions(kversion.Stable()), kgo.ShareGroup(group), kgo.ConsumeTopics(topics...), kgo.ClientID(group+"-member"))
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		return nil, err
	}
	go func() {
		for {
			f := cl.PollFetches(context.Background())
			if f.IsClientClosed() {
				return
			}
		}
	}()
	deadline := time.After(20 * time.Second)
	for {
		listed, err := kadm.NewClient(cl).ListGroupsByType(ctx, []string{"share"})
		if err == nil {
			if g, ok := listed[group]; ok && g.State == "Stable" {
				return &Member{Consumer: cl}, nil
			}
		}
		select {
		case <-ctx.Done():
			cl.Close()
			return nil, fmt.Errorf("join share group %s: %w", group, ctx.Err())
		case <-deadline:
			cl.Close()
			return nil, fmt.Errorf("join share group %s: not Stable within 20s (last error %v)", group, err)
		case <-time.After(50 * time.Millisecond):
		}
	}
}
