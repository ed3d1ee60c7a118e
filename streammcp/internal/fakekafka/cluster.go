// Package fakekafka runs a real Kafka-protocol cluster in process (franz-go's
// kfake: three brokers on loopback, real produce, fetch, consumer groups and
// commits) for the playground and, through kafkatest, streammcp's tests. Faults that kfake cannot produce by itself (an under-replicated
// or offline partition, an offline or fenced broker) are injected by
// rewriting its Metadata and DescribeCluster answers through kfake's control
// hooks; every request is counted by API so tests can hold the request plan
// to its budget.
package fakekafka

import (
	"context"
	"crypto/tls"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/kversion"
	"github.com/twmb/franz-go/pkg/sasl/plain"
	"github.com/twmb/franz-go/pkg/sasl/scram"
)

// User is a SASL user of the cluster.
type User struct {
	Mechanism string // PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512
	Name      string
	Password  string
}

// Options configure a cluster. The zero value is three plaintext brokers.
type Options struct {
	Brokers int         // default 3
	Ports   []int       // fixed ports, one per broker (default: random)
	TLS     *tls.Config // server TLS config; nil for plaintext
	Users   []User      // enables SASL when non-empty; the first user seeds
	Logf    func(string, ...any)
}

// Cluster is a running in-process cluster.
type Cluster struct {
	KF    *kfake.Cluster
	opts  Options
	addrs []string

	// The faults below are set by kafkatest for tests; the playground
	// only injects metadata faults.
	CountMu  sync.Mutex
	Requests map[int16]int // requests answered, by API key

	MetadataFault atomic.Pointer[mdFault]
	Fenced        atomic.Pointer[[]int32]
	Stalled       atomic.Pointer[Stall]
	Moved         atomic.Int32 // OffsetFetch answers still to fail with NOT_COORDINATOR
	Latency       atomic.Int64 // nanoseconds every request waits before it is answered

	clientMu sync.Mutex
	client   *kgo.Client
	prod     *kgo.Client
}

// Stall leaves requests of API Key to broker Node unanswered until Release
// is closed.
type Stall struct {
	Key     int16
	Node    int32
	Release chan struct{}
}

type mdFault struct {
	snap *kmsg.MetadataResponse
	fn   func(*kmsg.MetadataResponse)
}

// Start starts a cluster.
func Start(o Options) (*Cluster, error) {
	if o.Brokers == 0 {
		o.Brokers = 3
	}
	opts := []kfake.Opt{kfake.NumBrokers(o.Brokers), kfake.ClusterID("streammcp-test")}
	if len(o.Ports) > 0 {
		opts = append(opts, kfake.Ports(o.Ports...))
	}
	if o.TLS != nil {
		opts = append(opts, kfake.TLS(o.TLS))
	}
	if len(o.Users) > 0 {
		opts = append(opts, kfake.EnableSASL())
		for _, u := range o.Users {
			opts = append(opts, kfake.Superuser(u.Mechanism, u.Name, u.Password))
		}
	}
	kf, err := kfake.NewCluster(opts...)
	if err != nil {
		return nil, fmt.Errorf("start in-process Kafka cluster: %w", err)
	}
	c := &Cluster{KF: kf, opts: o, addrs: kf.ListenAddrs(), Requests: map[int16]int{}}
	kf.Control(c.control)
	return c, nil
}

// Addrs returns the brokers' host:port addresses.
func (c *Cluster) Addrs() []string { return slices.Clone(c.addrs) }

// Close stops the cluster.
func (c *Cluster) Close() {
	c.ClearFaults()
	c.clientMu.Lock()
	for _, cl := range []*kgo.Client{c.client, c.prod} {
		if cl != nil {
			cl.Close()
		}
	}
	c.client, c.prod = nil, nil
	c.clientMu.Unlock()
	c.KF.Close()
}

// control runs on kfake's loop for every request: it counts the request and
// answers Metadata and DescribeCluster from the injected faults. It must
// never issue requests to the cluster itself (the loop would deadlock).
func (c *Cluster) control(req kmsg.Request) (kmsg.Response, error, bool) {
	c.KF.KeepControl()
	c.CountMu.Lock()
	c.Requests[req.Key()]++
	c.CountMu.Unlock()
	if d := time.Duration(c.Latency.Load()); d > 0 {
		// The loop serves other requests meanwhile, as a remote broker would.
		c.KF.SleepControl(func() { time.Sleep(d) })
	}
	if st := c.Stalled.Load(); st != nil && st.Key == req.Key() && st.Node == c.KF.CurrentNode() {
		// Yield without answering until the stall is cleared.
		c.KF.SleepControl(func() { <-st.Release })
		return nil, nil, false
	}
	switch r := req.(type) {
	case *kmsg.OffsetFetchRequest:
		if len(r.Groups) == 0 || c.Moved.Load() <= 0 {
			return nil, nil, false
		}
		c.Moved.Add(-1)
		resp := r.ResponseKind().(*kmsg.OffsetFetchResponse)
		resp.Version = r.Version
		for _, g := range r.Groups {
			rg := kmsg.NewOffsetFetchResponseGroup()
			rg.Group, rg.ErrorCode = g.Group, 16 // NOT_COORDINATOR
			resp.Groups = append(resp.Groups, rg)
		}
		return resp, nil, true
	case *kmsg.MetadataRequest:
		f := c.MetadataFault.Load()
		if f == nil {
			return nil, nil, false
		}
		resp := r.ResponseKind().(*kmsg.MetadataResponse)
		resp.Version = r.Version
		fillMetadata(resp, f.snap, r)
		f.fn(resp)
		return resp, nil, true
	case *kmsg.DescribeClusterRequest:
		fenced := c.Fenced.Load()
		f := c.MetadataFault.Load()
		if fenced == nil || f == nil {
			return nil, nil, false
		}
		resp := r.ResponseKind().(*kmsg.DescribeClusterResponse)
		resp.Version = r.Version
		if f.snap.ClusterID != nil {
			resp.ClusterID = *f.snap.ClusterID
		}
		resp.ControllerID = f.snap.ControllerID
		for _, b := range f.snap.Brokers {
			db := kmsg.NewDescribeClusterResponseBroker()
			db.NodeID, db.Host, db.Port, db.Rack = b.NodeID, b.Host, b.Port, b.Rack
			db.IsFenced = slices.Contains(*fenced, b.NodeID)
			resp.Brokers = append(resp.Brokers, db)
		}
		return resp, nil, true
	}
	return nil, nil, false
}

// fillMetadata copies the snapshot into resp, keeping only the topics the
// request asked for (all when its topic list is null).
func fillMetadata(resp, snap *kmsg.MetadataResponse, req *kmsg.MetadataRequest) {
	resp.ClusterID = snap.ClusterID
	resp.ControllerID = snap.ControllerID
	resp.Brokers = slices.Clone(snap.Brokers)
	for _, t := range snap.Topics {
		if req.Topics != nil {
			found := false
			for _, rt := range req.Topics {
				if rt.Topic != nil && t.Topic != nil && *rt.Topic == *t.Topic {
					found = true
				}
			}
			if !found {
				continue
			}
		}
		ct := t
		ct.Partitions = nil
		for _, p := range t.Partitions {
			cp := p
			cp.Replicas = slices.Clone(p.Replicas)
			cp.ISR = slices.Clone(p.ISR)
			cp.OfflineReplicas = slices.Clone(p.OfflineReplicas)
			ct.Partitions = append(ct.Partitions, cp)
		}
		resp.Topics = append(resp.Topics, ct)
	}
}

// Client returns a franz-go client for seeding (created on first use; the
// cluster closes it). It uses Kafka 3.7 request versions, which kfake
// accepts with topic names.
func (c *Cluster) Client() (*kgo.Client, error) {
	c.clientMu.Lock()
	defer c.clientMu.Unlock()
	if c.client != nil {
		return c.client, nil
	}
	cl, err := kgo.NewClient(c.ClientOpts()...)
	if err != nil {
		return nil, err
	}
	c.client = cl
	return cl, nil
}

// ClientOpts are the options a franz-go client needs to reach the cluster
// (seeds, TLS, SASL as the first user).
func (c *Cluster) ClientOpts() []kgo.Opt {
	opts := []kgo.Opt{
		kgo.SeedBrokers(c.addrs...),
		kgo.MaxVersions(kversion.V3_7_0()),
		kgo.RequestRetries(3),
		kgo.RetryTimeout(5 * time.Second),
	}
	if c.opts.TLS != nil {
		opts = append(opts, kgo.DialTLSConfig(&tls.Config{InsecureSkipVerify: true})) //nolint:gosec // loopback test cluster
	}
	if len(c.opts.Users) > 0 {
		u := c.opts.Users[0]
		switch u.Mechanism {
		case "PLAIN":
			opts = append(opts, kgo.SASL(plain.Auth{User: u.Name, Pass: u.Password}.AsMechanism()))
		case "SCRAM-SHA-256":
			opts = append(opts, kgo.SASL(scram.Auth{User: u.Name, Pass: u.Password}.AsSha256Mechanism()))
		case "SCRAM-SHA-512":
			opts = append(opts, kgo.SASL(scram.Auth{User: u.Name, Pass: u.Password}.AsSha512Mechanism()))
		}
	}
	return opts
}

// snapshotMetadata reads the real metadata (no fault applied).
func (c *Cluster) snapshotMetadata(ctx context.Context) (*kmsg.MetadataResponse, error) {
	cl, err := c.Client()
	if err != nil {
		return nil, err
	}
	req := kmsg.NewPtrMetadataRequest()
	req.Topics = nil
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		return nil, fmt.Errorf("snapshot metadata: %w", err)
	}
	return resp, nil
}

// SetMetadataFault makes every Metadata answer a copy of the cluster's
// current metadata passed through fn. nil clears the fault. Topic layout
// changes made after this call are not seen until it is called again.
func (c *Cluster) SetMetadataFault(ctx context.Context, fn func(*kmsg.MetadataResponse)) error {
	c.MetadataFault.Store(nil)
	if fn == nil {
		return nil
	}
	snap, err := c.snapshotMetadata(ctx)
	if err != nil {
		return err
	}
	c.MetadataFault.Store(&mdFault{snap: snap, fn: fn})
	return nil
}

// ClearFaults removes every injected fault.
func (c *Cluster) ClearFaults() {
	c.MetadataFault.Store(nil)
	c.Fenced.Store(nil)
	if st := c.Stalled.Swap(nil); st != nil {
		close(st.Release)
	}
}

// UnderReplicate drops the last replica from the ISR of topic/partition.
func UnderReplicate(topic string, partition int32) func(*kmsg.MetadataResponse) {
	return func(m *kmsg.MetadataResponse) {
		EachPartition(m, func(t string, p *kmsg.MetadataResponseTopicPartition) {
			if t == topic && p.Partition == partition && len(p.ISR) > 0 {
				p.ISR = p.ISR[:len(p.ISR)-1]
			}
		})
	}
}

func EachPartition(m *kmsg.MetadataResponse, fn func(string, *kmsg.MetadataResponseTopicPartition)) {
	for ti := range m.Topics {
		name := ""
		if m.Topics[ti].Topic != nil {
			name = *m.Topics[ti].Topic
		}
		for pi := range m.Topics[ti].Partitions {
			fn(name, &m.Topics[ti].Partitions[pi])
		}
	}
}
