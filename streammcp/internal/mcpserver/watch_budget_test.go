package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/mcpfleet/mcpfleet/streammcp/internal/kafka"
	"github.com/mcpfleet/mcpfleet/streammcp/internal/kafkametrics"
	"github.com/mcpfleet/mcpfleet/streammcp/internal/kafkatest"
)

// TestWatcherTickKeepsEachClustersBudget: with every URI of every cluster
// subscribed (the four reports, a lag report with another threshold, the
// seed URIs of the default cluster and the fleet document) and the gauges
// on, one watcher tick costs each cluster exactly what reading its own
// health-check costs — one metadata and one groups read, per-broker
// batched — also once the cluster has thirty more groups (at most one
// ListGroups, DescribeGroups and OffsetFetch per broker). It calls
// tick directly (an internal test) so that exactly one tick is counted.
func TestWatcherTickKeepsEachClustersBudget(t *testing.T) {
	var lagging, quiet *kafkatest.Cluster
	var wg sync.WaitGroup
	wg.Go(func() {
		// The seeded scenario without its live member, whose fetches,
		// heartbeats and metadata refreshes would blur the count.
		kc, err := kafkatest.Start(kafkatest.Options{})
		if err != nil {
			t.Errorf("start the in-process Kafka cluster: %v", err)
			return
		}
		t.Cleanup(kc.Close)
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		s, err := kc.SeedScenario(ctx)
		if err != nil {
			t.Errorf("seed the in-process Kafka cluster: %v", err)
			return
		}
		s.Close()
		lagging = kc
	})
	wg.Go(func() { quiet = kafkatest.StartQuiet(t) })
	wg.Wait()
	if t.Failed() {
		t.FailNow()
	}
	client := func(addrs []string) *kafka.Client {
		kc, err := kafka.New(kafka.Options{Brokers: addrs, Timeout: 10 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { kc.Close() })
		return kc
	}
	h := New([]Cluster{
		{Name: "lagging", Client: client(lagging.Addrs()), LagThreshold: 1000},
		{Name: "quiet", Client: client(quiet.Addrs()), LagThreshold: 1000},
	}, Options{})
	h.SetGauges(kafkametrics.New(prometheus.NewRegistry(), "streammcp"))
	kcs := map[string]*kafkatest.Cluster{"lagging": lagging, "quiet": quiet}
	ctx := context.Background()

	// What one health-check read costs each cluster on its own.
	count := func(kc *kafkatest.Cluster) int { return kc.Total() }
	health := map[string]int{}
	measure := func() {
		t.Helper()
		for name, kc := range kcs {
			// The first read also dials the brokers (ApiVersions): measure
			// the second, as the watcher's clients are long connected.
			for range 2 {
				kc.ResetCounts()
				if _, err := h.Report(ctx, ClusterURI(name, "health-check")); err != nil {
					t.Fatal(err)
				}
			}
			health[name] = count(kc)
		}
	}
	measure()

	for _, name := range []string{"lagging", "quiet"} {
		for _, r := range reports {
			h.subs.add(ClusterURI(name, r), "session-1")
		}
		h.subs.add(ClusterURI(name, "consumer-lag-report")+"?threshold=5", "session-2")
	}
	for _, uri := range []string{URIOverview, URIHealthCheck, URIURP, URILagReport, URILagReport + "?threshold=7", URIClusters} {
		h.subs.add(uri, "session-1")
	}
	tick := func(when string) {
		t.Helper()
		for _, kc := range kcs {
			kc.ResetCounts()
		}
		h.tick(ctx)
		for name, kc := range kcs {
			if n := count(kc); n != health[name] || n == 0 {
				t.Errorf("%s: one tick sent %d requests to %s %v; its health-check alone sends %d", when, n, name, kc.Counts(), health[name])
			}
		}
	}
	tick("everything subscribed")

	// Thirty more groups on quiet: the same number of requests.
	for i := range 30 {
		if err := quiet.Commit(ctx, fmt.Sprintf("extra-%02d", i), map[string]map[int32]int64{kafkatest.TopicEvents: {0: 10, 1: 20}}); err != nil {
			t.Fatal(err)
		}
	}
	// Groups are batched per coordinating broker, not per group.
	measure()
	tick("30 more groups on quiet")
	for _, api := range []string{"ListGroups", "DescribeGroups", "OffsetFetch"} {
		if n := quiet.Counts()[api]; n > len(quiet.Addrs()) {
			t.Errorf("%d %s requests for 31 groups on %d brokers", n, api, len(quiet.Addrs()))
		}
	}
}

// BenchmarkSubscriptionGate is what refuseUnknownSubscriptions adds to every
// request: a byte scan for most, a decode and URI check for subscriptions.
func BenchmarkSubscriptionGate(b *testing.B) {
	h := New([]Cluster{{Name: "prod"}, {Name: "staging"}}, Options{})
	for name, msg := range map[string]string{
		"ping":        `{"jsonrpc":"2.0","id":7,"method":"ping"}`,
		"tools-call":  `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"describe_consumer_group","arguments":{"cluster":"staging","group_id":"payments-ledger-writer"}}}`,
		"subscribe":   `{"jsonrpc":"2.0","id":7,"method":"resources/subscribe","params":{"uri":"stream-mcp://clusters/staging/consumer-lag-report?threshold=5000"}}`,
		"subscribe-x": `{"jsonrpc":"2.0","id":7,"method":"resources/subscribe","params":{"uri":"stream-mcp://clusters/stagin/health-check"}}`,
	} {
		raw := json.RawMessage(msg)
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				_ = h.refuseUnknownSubscriptions(context.Background(), nil, raw)
			}
		})
	}
}
