// Package kafkametrics exports what streammcp already computes about each
// cluster — consumer-group lag, under-replicated and offline partitions,
// live brokers — as Prometheus gauges, named in the kafka_exporter style
// under mcpfleet_kafka_*. The gauges are set by the watcher that drives
// subscriptions, never by a scrape: a scrape sends no Kafka request.
package kafkametrics

import (
	"sync"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/mcpfleet/mcpfleet/streammcp/internal/report"
)

// Gauges holds streammcp's Kafka gauges. Label values are configured
// cluster names and the cluster's own group ids (bounded by the cluster,
// never by callers, as kafka_exporter labels them).
type Gauges struct {
	up, brokers, urp, offline *prometheus.GaugeVec
	lag                       *prometheus.GaugeVec

	mu     sync.Mutex
	groups map[string]map[string]bool // cluster → groups with a lag series
}

// New registers the gauges in reg with server as a constant label, like
// every mcpfleet metric.
func New(reg prometheus.Registerer, server string) *Gauges {
	l := prometheus.Labels{"server": server}
	g := &Gauges{
		up: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "mcpfleet_kafka_cluster_up", ConstLabels: l,
			Help: "1 when the last refresh read the cluster's metadata, 0 when it failed."}, []string{"cluster"}),
		brokers: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "mcpfleet_kafka_brokers", ConstLabels: l,
			Help: "Live brokers of the cluster (listed in metadata and not fenced)."}, []string{"cluster"}),
		urp: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "mcpfleet_kafka_under_replicated_partitions", ConstLabels: l,
			Help: "Partitions whose ISR is smaller than their replica set (offline ones excluded)."}, []string{"cluster"}),
		offline: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "mcpfleet_kafka_offline_partitions", ConstLabels: l,
			Help: "Partitions without a live leader."}, []string{"cluster"}),
		lag: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "mcpfleet_kafka_consumergroup_lag", ConstLabels: l,
			Help: "Total lag of a consumer group in messages: log-end minus committed offset, summed over its committed partitions (total_lag of the lag report)."}, []string{"cluster", "group"}),
		groups: map[string]map[string]bool{},
	}
	for _, c := range []prometheus.Collector{g.up, g.brokers, g.urp, g.offline, g.lag} {
		reg.MustRegister(c)
	}
	return g
}

// Update sets one cluster's gauges from its snapshots. c is nil when the
// metadata read failed: the cluster is down (up 0) and its figures are
// removed rather than left stale. gr is nil when groups could not be read:
// the lag series are removed. A group that disappeared loses its series.
func (g *Gauges) Update(cluster string, c *report.Cluster, gr *report.Groups, threshold int64) {
	if g == nil {
		return
	}
	if c == nil {
		g.up.WithLabelValues(cluster).Set(0)
		g.brokers.DeleteLabelValues(cluster)
		g.urp.DeleteLabelValues(cluster)
		g.offline.DeleteLabelValues(cluster)
	} else {
		a := report.Analyze(c)
		g.up.WithLabelValues(cluster).Set(1)
		g.brokers.WithLabelValues(cluster).Set(float64(a.LiveCount))
		g.urp.WithLabelValues(cluster).Set(float64(len(a.UnderReplicated)))
		g.offline.WithLabelValues(cluster).Set(float64(len(a.Offline)))
	}
	now := map[string]bool{}
	if gr != nil {
		for _, s := range report.NewLagReport(gr, threshold).GroupSummary {
			if s.TotalLag == nil {
				continue // lag not readable (share groups): no series rather than a false 0
			}
			g.lag.WithLabelValues(cluster, s.GroupID).Set(float64(*s.TotalLag))
			now[s.GroupID] = true
		}
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	for id := range g.groups[cluster] {
		if !now[id] {
			g.lag.DeleteLabelValues(cluster, id)
		}
	}
	g.groups[cluster] = now
}
