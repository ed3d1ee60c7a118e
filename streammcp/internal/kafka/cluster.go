package kafka

import (
	"context"
	"errors"
	"net"
	"strconv"
	"time"

	"github.com/IBM/sarama"

	"github.com/mcpfleet/mcpfleet/streammcp/internal/report"
)

// metadata reads cluster metadata for topics (all topics when nil) with one
// Metadata request, and remembers the broker addresses for later calls.
func (c *Client) metadata(ctx context.Context, topics []string) (*sarama.MetadataResponse, error) {
	md, _, err := anyBroker(ctx, c, APIMetadata, "read cluster metadata", func(b *sarama.Broker) (*sarama.MetadataResponse, error) {
		req := sarama.NewMetadataRequest(c.conf.Version, topics)
		req.AllowAutoTopicCreation = false
		return b.GetMetadata(req)
	})
	if err != nil {
		return nil, err
	}
	known := make([]string, 0, len(md.Brokers))
	for _, b := range md.Brokers {
		known = append(known, b.Addr())
	}
	c.mu.Lock()
	c.known = known
	if topics == nil {
		ids := make(map[sarama.Uuid]string, len(md.Topics))
		for _, t := range md.Topics {
			ids[t.Uuid] = t.Name
		}
		c.topicIDs = ids
	}
	c.mu.Unlock()
	return md, nil
}

// Ping sends one Metadata request (the readiness probe), within the
// client's timeout.
func (c *Client) Ping(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, c.opts.Timeout)
	defer cancel()
	_, err := c.metadata(ctx, nil)
	return err
}

// brokerAddrs maps broker id to address from a metadata answer.
func brokerAddrs(md *sarama.MetadataResponse) map[int32]string {
	m := make(map[int32]string, len(md.Brokers))
	for _, b := range md.Brokers {
		m[b.ID()] = b.Addr()
	}
	return m
}

// Cluster reads the cluster snapshot behind the overview, health-check and
// under-replicated reports: one Metadata request for everything, one
// DescribeCluster for fenced brokers and one DescribeConfigs for every
// topic's min.insync.replicas, whatever the cluster's size.
func (c *Client) Cluster(ctx context.Context) (*report.Cluster, error) {
	ctx, cancel := context.WithTimeout(ctx, c.opts.Timeout)
	defer cancel()
	md, err := c.metadata(ctx, nil)
	if err != nil {
		return nil, err
	}
	snap := snapshot(md)
	snap.Expected = c.opts.Expected
	addrs := brokerAddrs(md)
	if len(addrs) == 0 {
		return snap, nil
	}
	addr := anyAddr(md)
	// DescribeCluster and DescribeConfigs go to the same broker, in parallel.
	type fencedResult struct {
		ids []int32
	}
	fencedCh := make(chan fencedResult, 1)
	go func() {
		ids, err := c.fenced(ctx, addr)
		if err != nil {
			c.log.Debug("fenced brokers unknown", "err", err)
		}
		fencedCh <- fencedResult{ids}
	}()
	minISR, err := c.minISR(ctx, addr, snap.Topics)
	if err != nil {
		snap.ConfigErr = err.Error()
	}
	for i := range snap.Topics {
		snap.Topics[i].MinISR = minISR[snap.Topics[i].Name]
	}
	snap.Fenced = (<-fencedCh).ids
	snap.Time = time.Now()
	return snap, nil
}

// anyAddr picks the controller's address when listed, else the first broker.
func anyAddr(md *sarama.MetadataResponse) string {
	for _, b := range md.Brokers {
		if b.ID() == md.ControllerID {
			return b.Addr()
		}
	}
	return md.Brokers[0].Addr()
}

func snapshot(md *sarama.MetadataResponse) *report.Cluster {
	snap := &report.Cluster{Time: time.Now(), ControllerID: md.ControllerID}
	if md.ClusterID != nil {
		snap.ClusterID = *md.ClusterID
	}
	for _, b := range md.Brokers {
		host, port, _ := net.SplitHostPort(b.Addr())
		p, _ := strconv.Atoi(port)
		snap.Brokers = append(snap.Brokers, report.Broker{ID: b.ID(), Host: host, Port: int32(p), Rack: b.Rack()})
	}
	for _, t := range md.Topics {
		topic := report.Topic{Name: t.Name, Internal: t.IsInternal, Err: ErrorName(t.Err)}
		for _, p := range t.Partitions {
			topic.Partitions = append(topic.Partitions, report.Partition{
				ID:              p.ID,
				Leader:          p.Leader,
				Replicas:        p.Replicas,
				ISR:             p.Isr,
				OfflineReplicas: p.OfflineReplicas,
				Err:             ErrorName(p.Err),
			})
		}
		snap.Topics = append(snap.Topics, topic)
	}
	return snap
}

// fenced asks one broker which brokers are fenced (DescribeCluster v2,
// Kafka 4.0+). Older brokers do not know; that is not an error.
func (c *Client) fenced(ctx context.Context, addr string) ([]int32, error) {
	if !c.conf.Version.IsAtLeast(sarama.V2_8_0_0) {
		return nil, nil
	}
	resp, err := call(ctx, c, addr, APIDescribeCluster, "describe cluster", func(b *sarama.Broker) (*sarama.DescribeClusterResponse, error) {
		return b.DescribeCluster(sarama.NewDescribeClusterRequest(c.conf.Version))
	})
	if err != nil {
		if errors.Is(err, sarama.ErrUnsupportedVersion) {
			return nil, nil
		}
		return nil, err
	}
	var ids []int32
	for _, b := range resp.Brokers {
		if b.IsFenced {
			ids = append(ids, b.BrokerID)
		}
	}
	return ids, nil
}

// minISR reads min.insync.replicas for every topic in one DescribeConfigs.
func (c *Client) minISR(ctx context.Context, addr string, topics []report.Topic) (map[string]int, error) {
	out := map[string]int{}
	if len(topics) == 0 {
		return out, nil
	}
	req := &sarama.DescribeConfigsRequest{Version: describeConfigsVersion(c.conf.Version)}
	for _, t := range topics {
		req.Resources = append(req.Resources, &sarama.ConfigResource{
			Type: sarama.TopicResource, Name: t.Name, ConfigNames: []string{"min.insync.replicas"},
		})
	}
	resp, err := call(ctx, c, addr, APIDescribeConfigs, "read min.insync.replicas", func(b *sarama.Broker) (*sarama.DescribeConfigsResponse, error) {
		return b.DescribeConfigs(req)
	})
	if err != nil {
		return out, err
	}
	for _, r := range resp.Resources {
		for _, e := range r.Configs {
			if e.Name == "min.insync.replicas" {
				if n, err := strconv.Atoi(e.Value); err == nil {
					out[r.Name] = n
				}
			}
		}
	}
	return out, nil
}
