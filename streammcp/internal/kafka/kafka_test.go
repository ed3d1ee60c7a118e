package kafka_test

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"flag"
	"net"
	"path/filepath"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/IBM/sarama"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/kversion"

	"github.com/mcpfleet/mcpfleet/shared/e2e"
	"github.com/mcpfleet/mcpfleet/shared/errkind"
	"github.com/mcpfleet/mcpfleet/streammcp/internal/kafka"
	"github.com/mcpfleet/mcpfleet/streammcp/internal/kafkatest"
	"github.com/mcpfleet/mcpfleet/streammcp/internal/report"
)

var _ = flag.Bool("update", false, "rewrite golden files")

// seeded starts a 3-broker cluster with the standard scenario and a
// client for it.
func seeded(t *testing.T, opts ...func(*kafka.Options)) (*kafkatest.Cluster, *kafka.Client) {
	t.Helper()
	kc := kafkatest.StartSeeded(t)
	return kc, newClient(t, kc.Addrs(), opts...)
}

func newClient(t *testing.T, addrs []string, opts ...func(*kafka.Options)) *kafka.Client {
	t.Helper()
	o := kafka.Options{Brokers: addrs, Timeout: 5 * time.Second}
	for _, f := range opts {
		f(&o)
	}
	c, err := kafka.New(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

type reports struct {
	Overview report.Overview
	Health   report.HealthCheck
	URP      report.URPReport
	Lag      report.LagReport
}

func read(t *testing.T, c *kafka.Client) reports {
	t.Helper()
	ctx := context.Background()
	cl, err := c.Cluster(ctx)
	if err != nil {
		t.Fatal(err)
	}
	g, err := c.Groups(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return reports{report.NewOverview(cl), report.NewHealthCheck(cl, g, "", 1000), report.NewURPReport(cl), report.NewLagReport(g, 1000)}
}

var stamp = regexp.MustCompile(`"timestamp": "[^"]+"`)

// golden compares each report (timestamps masked) with
// testdata/reports/<scenario>.<report>.golden.json.
func golden(t *testing.T, scenario string, r reports) {
	t.Helper()
	for name, v := range map[string]any{"overview": r.Overview, "health-check": r.Health, "under-replicated-partitions": r.URP, "consumer-lag-report": r.Lag} {
		b, _ := json.MarshalIndent(v, "", "  ")
		b = stamp.ReplaceAll(b, []byte(`"timestamp": "<timestamp>"`))
		if strings.Contains(string(b), "null") {
			t.Errorf("%s/%s contains null: %s", scenario, name, b)
		}
		e2e.Golden(t, filepath.Join("..", "..", "testdata", "reports", scenario+"."+name+".golden.json"), append(b, '\n'))
	}
}

func TestHealthyCluster(t *testing.T) {
	_, c := seeded(t)
	r := read(t, c)
	o := r.Overview
	if o.BrokerCount != 3 || o.ControllerID != 2 || o.TopicCount != 3 || o.PartitionCount != 10 ||
		o.UnderReplicatedPartitions != 0 || o.OfflinePartitions != 0 || len(o.OfflineBrokerIDs) != 0 || o.HealthStatus != "healthy" {
		t.Errorf("overview %+v", o)
	}
	h := r.Health
	if h.BrokerStatus.TotalBrokers != 3 || h.BrokerStatus.Status != "healthy" || h.ControllerStatus.Status != "healthy" ||
		h.PartitionStatus.TotalPartitions != 10 || h.PartitionStatus.Status != "healthy" ||
		h.ConsumerStatus.TotalGroups != 4 || h.ConsumerStatus.GroupsWithHighLag != 2 || h.ConsumerStatus.Status != "warning" ||
		h.ConsumerStatus.Error != "" || h.OverallStatus != "warning" {
		t.Errorf("health %+v", h)
	}
	if r.URP.UnderReplicatedPartitionCount != 0 || len(r.URP.Details) != 0 || !strings.Contains(r.URP.Recommendations[0], "nothing to do") {
		t.Errorf("urp %+v", r.URP)
	}
	l := r.Lag
	if l.GroupCount != 4 || l.GroupsWithHighLag != 2 || len(l.HighLagDetails) != 2 {
		t.Errorf("lag %+v", l)
	}
	byID := map[string]report.GroupSummary{}
	for _, g := range l.GroupSummary {
		byID[g.GroupID] = g
	}
	want := map[string]report.GroupSummary{
		kafkatest.GroupAuditArchiver:   {GroupID: kafkatest.GroupAuditArchiver, State: "Empty", Type: "classic", MemberCount: ptr(0), TopicCount: 1, TotalLag: ptr[int64](0)},
		kafkatest.GroupOrdersProcessor: {GroupID: kafkatest.GroupOrdersProcessor, State: "Stable", ProtocolType: "consumer", Type: "classic", MemberCount: ptr(1), TopicCount: 1, TotalLag: ptr[int64](5000), HasHighLag: true},
		kafkatest.GroupOrdersReplay:    {GroupID: kafkatest.GroupOrdersReplay, State: "Empty", Type: "classic", MemberCount: ptr(0), TopicCount: 1, TotalLag: ptr[int64](5100), HasHighLag: true},
		kafkatest.GroupPaymentsAudit:   {GroupID: kafkatest.GroupPaymentsAudit, State: "Empty", Type: "classic", MemberCount: ptr(0), TopicCount: 1, TotalLag: ptr[int64](80)},
	}
	if !reflect.DeepEqual(byID, want) {
		t.Errorf("group summary\n got %+v\nwant %+v", byID, want)
	}
	wantDetails := []report.LagDetail{
		{GroupID: kafkatest.GroupOrdersProcessor, Topic: kafkatest.TopicOrders, Partition: 0, CurrentOffset: 100, LogEndOffset: 5100, Lag: 5000},
		{GroupID: kafkatest.GroupOrdersReplay, Topic: kafkatest.TopicOrders, Partition: 0, CurrentOffset: 0, LogEndOffset: 5100, Lag: 5100},
	}
	if !reflect.DeepEqual(l.HighLagDetails, wantDetails) {
		t.Errorf("high lag details %+v", l.HighLagDetails)
	}
	golden(t, "healthy", r)
}

func TestFaultScenarios(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name   string
		inject func(*kafkatest.Cluster) error
		check  func(*testing.T, reports)
	}{
		{
			name: "under-replicated",
			inject: func(kc *kafkatest.Cluster) error {
				return kc.SetMetadataFault(ctx, kafkatest.UnderReplicate(kafkatest.TopicOrders, 1))
			},
			check: func(t *testing.T, r reports) {
				want := []report.URPDetail{{Topic: "orders", Partition: 1, Leader: 1, ReplicaCount: 3, ISRCount: 2, Replicas: []int32{1, 2, 0}, ISR: []int32{1, 2}, MissingReplicas: []int32{0}, MinISR: 2}}
				if !reflect.DeepEqual(r.URP.Details, want) || r.URP.UnderReplicatedPartitionCount != 1 {
					t.Errorf("urp details %+v", r.URP.Details)
				}
				if r.Overview.UnderReplicatedPartitions != 1 || r.Overview.OfflinePartitions != 0 || r.Overview.HealthStatus != "warning" {
					t.Errorf("overview %+v", r.Overview)
				}
				if r.Health.PartitionStatus.Status != "warning" || r.Health.OverallStatus != "warning" {
					t.Errorf("health %+v", r.Health)
				}
			},
		},
		{
			name: "under-min-isr",
			inject: func(kc *kafkatest.Cluster) error {
				u := kafkatest.UnderReplicate(kafkatest.TopicOrders, 2)
				return kc.SetMetadataFault(ctx, kafkatest.Combine(u, u))
			},
			check: func(t *testing.T, r reports) {
				if r.Overview.UnderMinISRPartitions != 1 || r.Overview.HealthStatus != "critical" || r.Health.PartitionStatus.Status != "critical" {
					t.Errorf("overview %+v health %+v", r.Overview, r.Health.PartitionStatus)
				}
				if len(r.URP.Details) != 1 || !r.URP.Details[0].UnderMinISR || !reflect.DeepEqual(r.URP.Details[0].MissingReplicas, []int32{0, 1}) {
					t.Errorf("urp %+v", r.URP.Details)
				}
			},
		},
		{
			name: "offline-partition",
			inject: func(kc *kafkatest.Cluster) error {
				return kc.SetMetadataFault(ctx, kafkatest.Offline(kafkatest.TopicPayments, 1))
			},
			check: func(t *testing.T, r reports) {
				if r.Overview.OfflinePartitions != 1 || r.Overview.UnderReplicatedPartitions != 0 || r.Overview.HealthStatus != "critical" {
					t.Errorf("overview %+v", r.Overview)
				}
				if len(r.URP.Details) != 0 || len(r.URP.OfflinePartitions) != 1 || r.URP.OfflinePartitions[0].Topic != "payments" {
					t.Errorf("urp %+v", r.URP)
				}
				if r.Health.PartitionStatus.OfflinePartitions != 1 || r.Health.OverallStatus != "critical" {
					t.Errorf("health %+v", r.Health)
				}
				// payments-audit's offsets on the leaderless partition cannot
				// be measured: counted as errors, never as lag.
				for _, g := range r.Lag.GroupSummary {
					if g.GroupID == kafkatest.GroupPaymentsAudit && (g.PartitionsWithErrors != 1 || *g.TotalLag != 80) {
						t.Errorf("payments-audit %+v", g)
					}
				}
			},
		},
		{
			name: "offline-broker",
			inject: func(kc *kafkatest.Cluster) error {
				return kc.SetMetadataFault(ctx, kafkatest.BrokerDown(1))
			},
			check: func(t *testing.T, r reports) {
				o := r.Overview
				// Broker 1 led orders/1, orders/4 and payments/1: offline.
				// Every other 3-replica partition lost it from its ISR.
				if o.BrokerCount != 2 || !reflect.DeepEqual(o.OfflineBrokerIDs, []int32{1}) || o.OfflinePartitions != 3 ||
					o.UnderReplicatedPartitions != 6 || o.HealthStatus != "critical" {
					t.Errorf("overview %+v", o)
				}
				b := r.Health.BrokerStatus
				if b.TotalBrokers != 3 || b.OfflineBrokers != 1 || b.Status != "warning" {
					t.Errorf("broker status %+v", b)
				}
				for _, d := range r.URP.Details {
					if !reflect.DeepEqual(d.MissingReplicas, []int32{1}) {
						t.Errorf("urp detail %+v", d)
					}
				}
				if !strings.Contains(strings.Join(r.URP.Recommendations, " "), "Broker(s) 1 are offline") {
					t.Errorf("recommendations %v", r.URP.Recommendations)
				}
			},
		},
		{
			name: "fenced-broker",
			inject: func(kc *kafkatest.Cluster) error {
				return kc.Fence(ctx, 2)
			},
			check: func(t *testing.T, r reports) {
				o := r.Overview
				if o.BrokerCount != 2 || !reflect.DeepEqual(o.OfflineBrokerIDs, []int32{2}) || o.OfflinePartitions != 3 || o.HealthStatus != "critical" {
					t.Errorf("overview %+v", o)
				}
				if r.Health.BrokerStatus.Status != "warning" || r.Health.BrokerStatus.TotalBrokers != 3 {
					t.Errorf("broker status %+v", r.Health.BrokerStatus)
				}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			kc, c := seeded(t)
			if err := tt.inject(kc); err != nil {
				t.Fatal(err)
			}
			r := read(t, c)
			tt.check(t, r)
			golden(t, tt.name, r)
			// Clearing the fault brings the cluster back to healthy.
			kc.ClearFaults()
			if o := read(t, c).Overview; o.HealthStatus != "healthy" {
				t.Errorf("after clearing: %+v", o)
			}
		})
	}
}

func TestStoppedBrokerWithExpectedIDs(t *testing.T) {
	kc, c := seeded(t, func(o *kafka.Options) { o.Expected = []int32{0, 1, 2} })
	if _, err := c.Cluster(context.Background()); err != nil { // warm connections to every broker
		t.Fatal(err)
	}
	if err := kc.StopBroker(1); err != nil {
		t.Fatal(err)
	}
	r := read(t, c)
	o := r.Overview
	if o.BrokerCount != 2 || !reflect.DeepEqual(o.OfflineBrokerIDs, []int32{1}) || o.HealthStatus != "warning" {
		t.Errorf("overview %+v", o)
	}
	if r.Health.BrokerStatus.TotalBrokers != 3 || r.Health.BrokerStatus.Status != "warning" {
		t.Errorf("health %+v", r.Health.BrokerStatus)
	}
	// Groups and offsets survive on the remaining brokers.
	if r.Lag.GroupCount != 4 || r.Lag.GroupsWithHighLag != 2 {
		t.Errorf("lag %+v", r.Lag)
	}
	// Without the expected list a stopped broker holding no replicas is invisible.
	c2 := newClient(t, kc.Addrs())
	cl, err := c2.Cluster(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if o := report.NewOverview(cl); len(o.OfflineBrokerIDs) != 0 || o.BrokerCount != 2 {
		t.Errorf("without expected ids: %+v", o)
	}
}

// planCounts are the requests of one report by API, ignoring the seeded
// member's own background traffic.
func planCounts(kc *kafkatest.Cluster) map[string]int {
	out := map[string]int{}
	for k, v := range kc.Counts() {
		switch k {
		case "Fetch", "Heartbeat", "OffsetCommit":
			continue
		}
		out[k] = v
	}
	return out
}

// TestRequestBudget holds the request plan to its contract: the number of
// Kafka requests per report does not grow with topics, partitions or
// groups (an N+1 pattern fails here).
func TestRequestBudget(t *testing.T) {
	ctx := context.Background()
	kc, c := seeded(t)
	measure := func() (cluster, groups map[string]int) {
		// Warm the connections so dial-time ApiVersions do not count.
		if _, err := c.Groups(ctx); err != nil {
			t.Fatal(err)
		}
		kc.ResetCounts()
		if _, err := c.Cluster(ctx); err != nil {
			t.Fatal(err)
		}
		cluster = planCounts(kc)
		kc.ResetCounts()
		if _, err := c.Groups(ctx); err != nil {
			t.Fatal(err)
		}
		return cluster, planCounts(kc)
	}
	smallCluster, smallGroups := measure()
	wantCluster := map[string]int{"Metadata": 1, "DescribeCluster": 1, "DescribeConfigs": 1}
	if !reflect.DeepEqual(smallCluster, wantCluster) {
		t.Errorf("cluster snapshot requests = %v, want %v", smallCluster, wantCluster)
	}
	// Grow the cluster ten-fold: 20 more topics of 8 partitions, 40 more groups.
	for i := range 20 {
		name := "bulk-" + string(rune('a'+i))
		if err := kc.CreateTopic(ctx, name, 8, 3, nil); err != nil {
			t.Fatal(err)
		}
		if err := kc.Produce(ctx, name, int32(i%8), 5); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 40 {
		offs := map[string]map[int32]int64{}
		for j := range 3 {
			name := "bulk-" + string(rune('a'+(i+j)%20))
			offs[name] = map[int32]int64{0: 0, 1: 0, 2: 0, 3: 0, 4: 0, 5: 0, 6: 0, 7: 0}
		}
		if err := kc.Commit(ctx, "bulk-group-"+string(rune('A'+i)), offs); err != nil {
			t.Fatal(err)
		}
	}
	bigCluster, bigGroups := measure()
	if !reflect.DeepEqual(bigCluster, smallCluster) {
		t.Errorf("cluster snapshot grew with the cluster: %v then %v", smallCluster, bigCluster)
	}
	for api, n := range bigGroups {
		max := 3 // one per broker
		if api == "Metadata" {
			max = 1
		}
		if n > max {
			t.Errorf("lag plan sent %d %s requests with 44 groups over 170 partitions (budget %d): %v", n, api, max, bigGroups)
		}
	}
	for _, api := range []string{"FindCoordinator", "ApiVersions"} {
		if bigGroups[api] != 0 {
			t.Errorf("lag plan sent %s requests: %v", api, bigGroups)
		}
	}
	t.Logf("lag plan: small %v, big %v", smallGroups, bigGroups)
}

func TestUnreachableClusterFailsWithinTimeoutAndRecovers(t *testing.T) {
	// A port that refuses connections, and one that accepts but never answers.
	refused := freePort(t)
	silent := kafkatest.SilentBroker(t)
	tests := []struct {
		name, addr string
		want       []string
	}{
		{"refused", net.JoinHostPort("127.0.0.1", refused), []string{"connect to Kafka broker 127.0.0.1:" + refused, "STREAM_BROKERS"}},
		{"silent", silent, []string{"no answer within 1s", "STREAM_TIMEOUT"}},
		{"several refused", net.JoinHostPort("127.0.0.1", refused) + "," + net.JoinHostPort("127.0.0.1", freePort(t)),
			[]string{"no broker answered (127.0.0.1:" + refused + ": dial tcp", "; 127.0.0.1:", "STREAM_BROKERS"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newClient(t, strings.Split(tt.addr, ","), func(o *kafka.Options) { o.Timeout = time.Second })
			start := time.Now()
			_, err := c.Cluster(context.Background())
			if err == nil {
				t.Fatal("no error")
			}
			// The error comes within STREAM_TIMEOUT; the slack absorbs a loaded machine.
			if d := time.Since(start); d > 2*time.Second {
				t.Errorf("took %s with a 1s timeout", d)
			}
			msg := errkind.Message(err)
			for _, w := range tt.want {
				if !strings.Contains(msg, w) {
					t.Errorf("error %q lacks %q", msg, w)
				}
			}
		})
	}
	// The cluster comes up on the refused port: the same client recovers.
	c := newClient(t, []string{net.JoinHostPort("127.0.0.1", refused)}, func(o *kafka.Options) { o.Timeout = time.Second })
	if _, err := c.Cluster(context.Background()); err == nil {
		t.Fatal("no error before the cluster starts")
	}
	kc, err := kafkatest.Start(kafkatest.Options{Ports: []int{atoi(refused), 0, 0}})
	if err != nil {
		t.Fatal(err)
	}
	defer kc.Close()
	cl, err := c.Cluster(context.Background())
	if err != nil {
		t.Fatalf("client did not recover: %v", err)
	}
	if len(cl.Brokers) != 3 {
		t.Errorf("brokers %+v", cl.Brokers)
	}
}

func TestCancellation(t *testing.T) {
	silent := kafkatest.SilentBroker(t)
	c := newClient(t, []string{silent}, func(o *kafka.Options) { o.Timeout = 30 * time.Second })
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(100*time.Millisecond, cancel)
	start := time.Now()
	_, err := c.Groups(ctx)
	if d := time.Since(start); d > 2*time.Second {
		t.Fatalf("cancelled read took %s", d)
	}
	if !errors.Is(err, context.Canceled) && errkind.KindOf(err) != errkind.Canceled {
		t.Fatalf("err = %v, want a cancellation", err)
	}
}

func TestSASLAndTLS(t *testing.T) {
	fx, err := kafkatest.NewTLS()
	if err != nil {
		t.Fatal(err)
	}
	users := []kafkatest.User{
		{Mechanism: "PLAIN", Name: "plain-user", Password: "plain-secret"},
		{Mechanism: "SCRAM-SHA-256", Name: "scram256", Password: "s256-secret"},
		{Mechanism: "SCRAM-SHA-512", Name: "scram512", Password: "s512-secret"},
	}
	tests := []struct {
		name     string
		tls      bool
		mech     string
		user     string
		pass     string
		clientCA bool
		want     string // error substring; empty for success
	}{
		{"plain", false, "PLAIN", "plain-user", "plain-secret", false, ""},
		{"scram-sha-256", false, "SCRAM-SHA-256", "scram256", "s256-secret", false, ""},
		{"scram-sha-512", false, "SCRAM-SHA-512", "scram512", "s512-secret", false, ""},
		{"wrong password", false, "PLAIN", "plain-user", "nope", false, "authentication failed"},
		{"wrong scram password", false, "SCRAM-SHA-256", "scram256", "nope", false, "authentication failed"},
		{"tls with scram", true, "SCRAM-SHA-512", "scram512", "s512-secret", true, ""},
		{"tls untrusted CA", true, "SCRAM-SHA-512", "scram512", "s512-secret", false, "STREAM_TLS_CA_FILE"},
	}
	plainKC, err := kafkatest.Start(kafkatest.Options{Users: users})
	if err != nil {
		t.Fatal(err)
	}
	defer plainKC.Close()
	tlsKC, err := kafkatest.Start(kafkatest.Options{Users: users, TLS: fx.Server})
	if err != nil {
		t.Fatal(err)
	}
	defer tlsKC.Close()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			kc := plainKC
			if tt.tls {
				kc = tlsKC
			}
			c := newClient(t, kc.Addrs(), func(o *kafka.Options) {
				o.SASLMechanism, o.SASLUser, o.SASLPassword = tt.mech, tt.user, tt.pass
				o.Timeout = 3 * time.Second
				if tt.tls {
					o.TLS = &tls.Config{MinVersion: tls.VersionTLS12}
					if tt.clientCA {
						o.TLS.RootCAs = fx.Pool
					}
				}
			})
			cl, err := c.Cluster(context.Background())
			if tt.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				if len(cl.Brokers) != 3 {
					t.Errorf("brokers %+v", cl.Brokers)
				}
				return
			}
			if err == nil {
				t.Fatal("no error")
			}
			msg := errkind.Message(err)
			if !strings.Contains(msg, tt.want) {
				t.Errorf("error %q lacks %q", msg, tt.want)
			}
			if strings.Contains(msg, tt.pass) {
				t.Errorf("error echoes the password: %q", msg)
			}
			if errkind.KindOf(err) != errkind.Permission {
				t.Errorf("kind = %v, want permission", errkind.KindOf(err))
			}
		})
	}
}

func TestTools(t *testing.T) {
	ctx := context.Background()
	_, c := seeded(t)
	brokers, err := c.ListBrokers(ctx)
	if err != nil || len(brokers) != 3 || !brokers[2].IsController || brokers[0].Rack == "" {
		t.Fatalf("brokers %+v, %v", brokers, err)
	}
	topics, err := c.ListTopics(ctx)
	want := []kafka.TopicInfo{{Name: "audit", Partitions: 1, ReplicationFactor: 1}, {Name: "orders", Partitions: 6, ReplicationFactor: 3}, {Name: "payments", Partitions: 3, ReplicationFactor: 3}}
	if err != nil || !reflect.DeepEqual(topics, want) {
		t.Fatalf("topics %+v, %v", topics, err)
	}
	d, err := c.DescribeTopic(ctx, "orders")
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Partitions) != 6 || d.Partitions[0].LatestOffset != 5100 || d.Partitions[0].EarliestOffset != 0 || d.Partitions[1].LatestOffset != 100 {
		t.Errorf("describe topic %+v", d.Partitions)
	}
	found := false
	for _, cfg := range d.Configs {
		if cfg.Name == "min.insync.replicas" && cfg.Value == "2" {
			found = true
		}
	}
	if !found {
		t.Errorf("configs lack min.insync.replicas=2: %+v", d.Configs)
	}
	if _, err := c.DescribeTopic(ctx, "nope"); errkind.KindOf(err) != errkind.NotFound {
		t.Errorf("unknown topic: %v", err)
	}
	g, err := c.DescribeConsumerGroup(ctx, kafkatest.GroupOrdersProcessor)
	if err != nil {
		t.Fatal(err)
	}
	if g.State != "Stable" || len(g.Members) != 1 || len(g.Members[0].Assigned) != 1 || len(g.Offsets) != 6 || *g.TotalLag != 5000 || *g.Offsets[0].Lag != 5000 {
		t.Errorf("group %+v", g)
	}
	gl, err := c.ListConsumerGroups(ctx)
	if err != nil || len(gl.Groups) != 4 {
		t.Fatalf("groups %+v %v", gl, err)
	}
	bc, err := c.DescribeConfigs(ctx, "broker", "1")
	if err != nil || len(bc) == 0 {
		t.Errorf("broker configs %d, %v", len(bc), err)
	}
	msgs, err := c.Consume(ctx, kafka.ConsumeRequest{Topic: "orders", Partition: 1, Offset: 98, MaxCount: 10, MaxBytes: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	if len(msgs.Messages) != 2 || msgs.Messages[0].Offset != 98 || *msgs.Messages[0].Value != `{"n":98}` || msgs.NextOffset != 100 || msgs.Truncated {
		t.Errorf("consume %+v", msgs)
	}
	last, err := c.Consume(ctx, kafka.ConsumeRequest{Topic: "orders", Partition: 0, Offset: -1, Last: 3, MaxCount: 3, MaxBytes: 1 << 20})
	if err != nil || len(last.Messages) != 3 || last.Messages[2].Offset != 5099 {
		t.Errorf("last 3: %+v %v", last, err)
	}
	bounded, err := c.Consume(ctx, kafka.ConsumeRequest{Topic: "orders", Partition: 0, Offset: 0, MaxCount: 5, MaxBytes: 1 << 20})
	if err != nil || len(bounded.Messages) != 5 || !bounded.Truncated || bounded.NextOffset != 5 {
		t.Errorf("bounded: %+v %v", bounded, err)
	}
	// Peeking never creates or moves a consumer group.
	after, _ := c.ListConsumerGroups(ctx)
	if len(after.Groups) != 4 {
		t.Errorf("consume created a group: %+v", after.Groups)
	}
	// Writes.
	p := int32(2)
	key := "k"
	res, err := c.Produce(ctx, kafka.ProduceRequest{Topic: "payments", Partition: &p, Key: &key, Value: "\xff\xfe", Headers: map[string]string{"h": "v"}})
	if err != nil || res.Partition != 2 || res.Offset != 100 {
		t.Fatalf("produce %+v %v", res, err)
	}
	got, err := c.Consume(ctx, kafka.ConsumeRequest{Topic: "payments", Partition: 2, Offset: 100, MaxCount: 1, MaxBytes: 1024})
	if err != nil || len(got.Messages) != 1 || got.Messages[0].ValueEncoding != "base64" || *got.Messages[0].Value != "//4=" || got.Messages[0].Headers[0].Value != "v" {
		t.Errorf("read back %+v %v", got, err)
	}
	if err := c.CreateTopic(ctx, "fresh", 4, 3, map[string]string{"retention.ms": "1000"}); err != nil {
		t.Fatal(err)
	}
	if err := c.CreateTopic(ctx, "fresh", 4, 3, nil); errkind.KindOf(err) != errkind.Conflict {
		t.Errorf("duplicate topic: %v", err)
	}
}

func freePort(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	_, port, _ := net.SplitHostPort(l.Addr().String())
	return port
}

func atoi(s string) int {
	n := 0
	for _, c := range s {
		n = n*10 + int(c-'0')
	}
	return n
}

func TestSilentBrokerLeavesAPartialReport(t *testing.T) {
	kc, c := seeded(t, func(o *kafka.Options) { o.Timeout = 2 * time.Second })
	if _, err := c.Groups(context.Background()); err != nil { // warm connections
		t.Fatal(err)
	}
	node := kc.KF.CoordinatorFor(kafkatest.GroupOrdersProcessor)
	kc.Stall(kmsg.ListGroups.Int16(), node)
	start := time.Now()
	g, err := c.Groups(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > 3500*time.Millisecond {
		t.Errorf("took %s with a 2s timeout", d)
	}
	want := "broker " + strconv.Itoa(int(node))
	if !strings.Contains(g.Err, want) {
		t.Errorf("Err %q does not name %s", g.Err, want)
	}
	for _, gr := range g.Groups {
		if kc.KF.CoordinatorFor(gr.ID) == node {
			t.Errorf("group %s of the silent broker reported", gr.ID)
		}
		for _, o := range gr.Offsets {
			if o.Err != "" {
				t.Errorf("group %s: offsets of the answering brokers failed: %+v", gr.ID, o)
			}
		}
	}
	cl, err := c.Cluster(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if h := report.NewHealthCheck(cl, g, "", 1000); h.ConsumerStatus.Status == "healthy" || h.ConsumerStatus.Error == "" {
		t.Errorf("consumer status %+v", h.ConsumerStatus)
	}
	kc.ClearFaults()
	g, err = c.Groups(context.Background())
	if err != nil || g.Err != "" || len(g.Groups) != 4 {
		t.Errorf("after the broker answers again: %+v %v", g, err)
	}
}

func TestSeedFailover(t *testing.T) {
	kc, _ := seeded(t)
	// A silent address and a stopped broker first in the seed list: the
	// client moves on to a live broker within the time limit.
	silent := kafkatest.SilentBroker(t)
	addrs := kc.Addrs()
	stopped := addrs[1]
	if err := kc.StopBroker(1); err != nil {
		t.Fatal(err)
	}
	c := newClient(t, []string{silent, stopped, addrs[0]}, func(o *kafka.Options) { o.Timeout = 3 * time.Second })
	start := time.Now()
	cl, err := c.Cluster(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(cl.Brokers) != 2 || time.Since(start) > 4*time.Second {
		t.Errorf("brokers %+v after %s", cl.Brokers, time.Since(start))
	}
}

func TestMovedCoordinatorIsRetried(t *testing.T) {
	kc, c := seeded(t)
	want := read(t, c).Lag
	kc.MoveCoordinatorsOnce(1)
	kc.ResetCounts()
	g, err := c.Groups(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if n := kc.Counts()["FindCoordinator"]; n == 0 {
		t.Errorf("no FindCoordinator after NOT_COORDINATOR: %v", kc.Counts())
	}
	got := report.NewLagReport(g, 1000)
	got.Timestamp, want.Timestamp = "", ""
	if !reflect.DeepEqual(got, want) {
		t.Errorf("after retry\n got %+v\nwant %+v", got, want)
	}
}

func TestClusterRestartIsPickedUpOnTheNextRead(t *testing.T) {
	kc, err := kafkatest.Start(kafkatest.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var ports []int
	for _, a := range kc.Addrs() {
		_, p, _ := net.SplitHostPort(a)
		ports = append(ports, atoi(p))
	}
	c := newClient(t, kc.Addrs())
	if _, err := c.Groups(context.Background()); err != nil { // pool a connection to every broker
		t.Fatal(err)
	}
	kc.Close()
	kc, err = kafkatest.Start(kafkatest.Options{Ports: ports})
	if err != nil {
		t.Fatal(err)
	}
	defer kc.Close()
	if _, err := c.Groups(context.Background()); err != nil {
		t.Fatalf("first read after the restart: %v", err)
	}
}

// TestOlderProtocolVersion reads the lag report as a client configured for
// Kafka 2.8 (STREAM_KAFKA_VERSION=2.8.0): offsets come from one OffsetFetch
// per group instead of one per broker, with the same result.
func TestOlderProtocolVersion(t *testing.T) {
	kc, c := seeded(t)
	want := read(t, c)
	old := newClient(t, kc.Addrs(), func(o *kafka.Options) { o.Version = sarama.V2_8_0_0 })
	if _, err := old.Groups(context.Background()); err != nil { // warm connections
		t.Fatal(err)
	}
	kc.ResetCounts()
	got := read(t, old)
	if n := kc.Counts()["OffsetFetch"]; n != 4 {
		t.Errorf("%d OffsetFetch requests for 4 groups at 2.8, want one per group", n)
	}
	for _, r := range []*reports{&want, &got} {
		r.Overview.Timestamp, r.Health.Timestamp, r.URP.Timestamp, r.Lag.Timestamp = "", "", "", ""
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("reports differ at 2.8\n got %+v\nwant %+v", got, want)
	}
}

// TestNextGenConsumerGroup covers a KIP-848 group (Kafka 4.0 consumer
// protocol), whose members only ConsumerGroupDescribe reports.
func TestNextGenConsumerGroup(t *testing.T) {
	kc, c := seeded(t)
	m, err := kc.JoinNextGenGroup(context.Background(), "nextgen", kafkatest.TopicPayments)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Leave()
	if _, err := c.Groups(context.Background()); err != nil { // warm connections
		t.Fatal(err)
	}
	kc.ResetCounts()
	g, err := c.Groups(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if n := kc.Counts()["ConsumerGroupDescribe"]; n != 1 {
		t.Errorf("%d ConsumerGroupDescribe requests, want 1 (only the broker coordinating the KIP-848 group)", n)
	}
	var got *report.GroupSummary
	r := report.NewLagReport(g, 1000)
	for i := range r.GroupSummary {
		if r.GroupSummary[i].GroupID == "nextgen" {
			got = &r.GroupSummary[i]
		}
	}
	want := report.GroupSummary{GroupID: "nextgen", State: "Stable", ProtocolType: "consumer", Type: "consumer", MemberCount: ptr(1), TopicCount: 1, TotalLag: ptr[int64](0), PartitionsWithoutCommit: 3}
	if got == nil || !reflect.DeepEqual(*got, want) {
		t.Errorf("nextgen summary %+v, want %+v", got, want)
	}
	d, err := c.DescribeConsumerGroup(context.Background(), "nextgen")
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Members) != 1 || len(d.Members[0].Assigned) != 1 || d.Members[0].Assigned[0].Topic != kafkatest.TopicPayments ||
		len(d.Offsets) != 3 || d.Offsets[0].CommittedOffset != nil || d.Offsets[0].Lag != nil {
		t.Errorf("describe nextgen %+v", d)
	}
	// A classic group described by id is unaffected by the KIP-848 probe.
	p, err := c.DescribeConsumerGroup(context.Background(), kafkatest.GroupOrdersProcessor)
	if err != nil || p.ProtocolType != "consumer" || len(p.Members) != 1 || *p.TotalLag != 5000 {
		t.Errorf("describe classic group %+v %v", p, err)
	}
}

// TestGroupTypes: a classic group, a KIP-848 group (group.protocol=consumer,
// joined by franz-go through ConsumerGroupHeartbeat) and a KIP-932 share
// group, all live on kfake, are each in the lag report, list and describe
// with their type as kadm's ListGroups reports it; the share group says
// what sarama cannot read for it instead of being left out or read as
// missing.
func TestGroupTypes(t *testing.T) {
	kc, c := seeded(t)
	ctx := context.Background()
	ng, err := kc.JoinNextGenGroup(ctx, "nextgen", kafkatest.TopicPayments)
	if err != nil {
		t.Fatal(err)
	}
	defer ng.Leave()
	sh, err := kc.JoinShareGroup(ctx, "sharers", kafkatest.TopicPayments)
	if err != nil {
		t.Fatal(err)
	}
	defer sh.Leave()

	cl, err := kgo.NewClient(append(kc.ClientOpts(), kgo.MaxVersions(kversion.Stable()))...) // ListGroups v5 for types
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	listed, err := kadm.NewClient(cl).ListGroupsByType(ctx, []string{"classic", "consumer", "share"})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{}
	for id, g := range listed {
		want[id] = g.GroupType
	}
	if want["nextgen"] != "consumer" || want["sharers"] != "share" || want[kafkatest.GroupOrdersProcessor] != "classic" {
		t.Fatalf("kadm lists %v", want)
	}

	g, err := c.Groups(ctx)
	if err != nil {
		t.Fatal(err)
	}
	r := report.NewLagReport(g, 1000)
	got := map[string]string{}
	for _, s := range r.GroupSummary {
		got[s.GroupID] = s.Type
		if s.GroupID == "sharers" {
			if s.State != "Stable" || s.Unavailable != kafka.ShareGroupsUnavailable || s.Error != "" {
				t.Errorf("share group summary %+v", s)
			}
		} else if s.Unavailable != "" {
			t.Errorf("%s says %q", s.GroupID, s.Unavailable)
		}
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("lag report types %v, kadm %v", got, want)
	}
	gl, err := c.ListConsumerGroups(ctx)
	if err != nil {
		t.Fatal(err)
	}
	got = map[string]string{}
	for _, gi := range gl.Groups {
		got[gi.GroupID] = gi.Type
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("list types %v, kadm %v", got, want)
	}
	for id, typ := range want {
		d, err := c.DescribeConsumerGroup(ctx, id)
		if err != nil {
			t.Errorf("describe %s: %v", id, err)
			continue
		}
		if d.Type != typ {
			t.Errorf("describe %s: type %q, kadm %q", id, d.Type, typ)
		}
		if typ == "share" && (d.State != "Stable" || !strings.Contains(d.Unavailable, "members and lag of share groups are not available") || d.TotalLag != nil) {
			t.Errorf("describe share group %+v", d)
		}
		if typ == "consumer" && len(d.Members) != 1 {
			t.Errorf("describe KIP-848 group: %d members", len(d.Members))
		}
	}
}

func ptr[T any](v T) *T { return &v }
