package kafkametrics

import (
	"maps"
	"net/http"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/mcpfleet/mcpfleet/shared/metrics/promtest"
	"github.com/mcpfleet/mcpfleet/streammcp/internal/report"
)

func TestUpdate(t *testing.T) {
	reg := prometheus.NewRegistry()
	g := New(reg, "streammcp")
	var h http.Handler = promhttp.HandlerFor(reg, promhttp.HandlerOpts{})
	t0 := time.Now()
	cluster := &report.Cluster{Time: t0, ControllerID: 0, Brokers: []report.Broker{{ID: 0}, {ID: 1}},
		Topics: []report.Topic{{Name: "t", Partitions: []report.Partition{
			{ID: 0, Leader: 0, Replicas: []int32{0, 1}, ISR: []int32{0}},
			{ID: 1, Leader: 5, Replicas: []int32{5}, ISR: []int32{5}},
		}}}}
	groups := &report.Groups{Time: t0, Groups: []report.Group{
		{ID: "a", State: "Empty", Offsets: []report.Offset{{Topic: "t", Partition: 0, Committed: 10, LogEnd: 2010}, {Topic: "t", Partition: 1, Committed: 0, LogEnd: 5}}},
		{ID: "b", State: "Empty", Offsets: []report.Offset{{Topic: "t", Partition: 0, Committed: 2010, LogEnd: 2010}}},
	}}
	const l = `,server="streammcp"}`
	steps := []struct {
		name string
		c    *report.Cluster
		g    *report.Groups
		want map[string]float64
	}{
		{"read", cluster, groups, map[string]float64{
			`mcpfleet_kafka_cluster_up{cluster="prod"` + l: 1, `mcpfleet_kafka_brokers{cluster="prod"` + l: 2,
			`mcpfleet_kafka_under_replicated_partitions{cluster="prod"` + l: 1, `mcpfleet_kafka_offline_partitions{cluster="prod"` + l: 1,
			`mcpfleet_kafka_consumergroup_lag{cluster="prod",group="a"` + l: 2005, `mcpfleet_kafka_consumergroup_lag{cluster="prod",group="b"` + l: 0,
		}},
		{"group b gone", cluster, &report.Groups{Time: t0, Groups: groups.Groups[:1]}, map[string]float64{
			`mcpfleet_kafka_cluster_up{cluster="prod"` + l: 1, `mcpfleet_kafka_brokers{cluster="prod"` + l: 2,
			`mcpfleet_kafka_under_replicated_partitions{cluster="prod"` + l: 1, `mcpfleet_kafka_offline_partitions{cluster="prod"` + l: 1,
			`mcpfleet_kafka_consumergroup_lag{cluster="prod",group="a"` + l: 2005,
		}},
		{"groups unreadable", cluster, nil, map[string]float64{
			`mcpfleet_kafka_cluster_up{cluster="prod"` + l: 1, `mcpfleet_kafka_brokers{cluster="prod"` + l: 2,
			`mcpfleet_kafka_under_replicated_partitions{cluster="prod"` + l: 1, `mcpfleet_kafka_offline_partitions{cluster="prod"` + l: 1,
		}},
		{"cluster down: nothing stale", nil, nil, map[string]float64{`mcpfleet_kafka_cluster_up{cluster="prod"` + l: 0}},
		{"back", cluster, groups, map[string]float64{
			`mcpfleet_kafka_cluster_up{cluster="prod"` + l: 1, `mcpfleet_kafka_brokers{cluster="prod"` + l: 2,
			`mcpfleet_kafka_under_replicated_partitions{cluster="prod"` + l: 1, `mcpfleet_kafka_offline_partitions{cluster="prod"` + l: 1,
			`mcpfleet_kafka_consumergroup_lag{cluster="prod",group="a"` + l: 2005, `mcpfleet_kafka_consumergroup_lag{cluster="prod",group="b"` + l: 0,
		}},
	}
	for _, s := range steps {
		g.Update("prod", s.c, s.g, 1000)
		if got := promtest.Read(t, h); !maps.Equal(got, s.want) {
			t.Errorf("%s:\n got %v\nwant %v", s.name, got, s.want)
		}
	}
	var nilGauges *Gauges
	nilGauges.Update("prod", cluster, groups, 1000) // no-op, no panic
}
