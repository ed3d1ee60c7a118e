package mcpserver_test

import (
	"context"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/mcpfleet/mcpfleet/shared/metrics/promtest"
	"github.com/mcpfleet/mcpfleet/streammcp/internal/kafkametrics"
	"github.com/mcpfleet/mcpfleet/streammcp/internal/kafkatest"
	"github.com/mcpfleet/mcpfleet/streammcp/internal/mcpserver"
)

// TestGaugesComeFromTheWatcherNotTheScrape: the watcher reads every
// cluster once at start and each interval; scrapes in between send no
// Kafka request.
func TestGaugesComeFromTheWatcherNotTheScrape(t *testing.T) {
	f := startFleet(t)
	reg := prometheus.NewRegistry()
	h, _ := newFleetEnv(t, f.clusters(t), mcpserver.Options{WatchInterval: time.Hour, Gauges: kafkametrics.New(reg, "streammcp")})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go h.Watch(ctx)
	scrape := promhttp.HandlerFor(reg, promhttp.HandlerOpts{})
	const l = `,server="streammcp"}`
	want := map[string]float64{
		`mcpfleet_kafka_consumergroup_lag{cluster="lagging",group="orders-processor"` + l: 5000,
		`mcpfleet_kafka_consumergroup_lag{cluster="lagging",group="orders-replay"` + l:    5100,
		`mcpfleet_kafka_consumergroup_lag{cluster="lagging",group="payments-audit"` + l:   80,
		`mcpfleet_kafka_consumergroup_lag{cluster="quiet",group="events-sink"` + l:        0,
		`mcpfleet_kafka_under_replicated_partitions{cluster="degraded"` + l:               6,
		`mcpfleet_kafka_offline_partitions{cluster="degraded"` + l:                        3,
		`mcpfleet_kafka_brokers{cluster="degraded"` + l:                                   2,
		`mcpfleet_kafka_under_replicated_partitions{cluster="quiet"` + l:                  0,
		`mcpfleet_kafka_cluster_up{cluster="quiet"` + l:                                   1,
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		got := promtest.Read(t, scrape)
		missing := ""
		for k, v := range want {
			if got[k] != v {
				missing = k
			}
		}
		if missing == "" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s never reached %v; samples %v", missing, want[missing], got)
		}
		time.Sleep(100 * time.Millisecond)
	}
	for _, kc := range []*kafkatest.Cluster{f.lagging, f.degraded, f.quiet} {
		kc.ResetCounts()
	}
	for range 20 {
		promtest.Read(t, scrape)
	}
	for name, kc := range map[string]*kafkatest.Cluster{"lagging": f.lagging, "degraded": f.degraded, "quiet": f.quiet} {
		if n := planCounts(kc); n != 0 {
			t.Errorf("20 scrapes sent %d Kafka requests to %s", n, name)
		}
	}
}

// planCounts counts the requests a cluster served, leaving out the live
// consumer member's own (Fetch, Heartbeat, OffsetCommit).
func planCounts(kc *kafkatest.Cluster) int {
	n := 0
	for k, v := range kc.Counts() {
		switch k {
		case "Fetch", "Heartbeat", "OffsetCommit":
			continue
		}
		n += v
	}
	return n
}

// TestReady: ready while one cluster answers; when none does, the error
// names each cluster and why.
func TestReady(t *testing.T) {
	quiet := kafkatest.StartQuiet(t)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	refused := l.Addr().String()
	l.Close()
	silent := kafkatest.SilentBroker(t)
	up := mcpserver.Cluster{Name: "quiet", Client: newClient(t, quiet.Addrs(), 5*time.Second)}
	gone := mcpserver.Cluster{Name: "gone", Client: newClient(t, []string{refused}, 5*time.Second)}
	hung := mcpserver.Cluster{Name: "hung", Client: newClient(t, []string{silent}, time.Hour)}
	ctx := context.Background()

	h, _ := newFleetEnv(t, []mcpserver.Cluster{gone, hung, up}, mcpserver.Options{})
	// The hung cluster would hold the probe for an hour: the answering one
	// makes the server ready at once.
	quiet.ResetCounts()
	if err := h.Ready(ctx); err != nil {
		t.Errorf("one cluster answers: %v", err)
	}
	if n := quiet.Counts()["Metadata"]; n != 1 {
		t.Errorf("the probe sent %d Metadata requests to the answering cluster, want 1", n)
	}

	h, _ = newFleetEnv(t, []mcpserver.Cluster{gone}, mcpserver.Options{})
	err = h.Ready(ctx)
	if err == nil || !strings.Contains(err.Error(), "no Kafka cluster answers a metadata request (cluster gone: connect to Kafka broker "+refused) {
		t.Errorf("no cluster answers: %v", err)
	}
	tctx, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	defer cancel()
	h, _ = newFleetEnv(t, []mcpserver.Cluster{gone, hung}, mcpserver.Options{})
	err = h.Ready(tctx)
	if err == nil || !strings.Contains(err.Error(), "cluster gone: connect to Kafka broker") || !strings.Contains(err.Error(), "cluster hung: ") {
		t.Errorf("none answers within the probe's time: %v", err)
	}
}
