package kafka_test

import (
	"context"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/mcpfleet/mcpfleet/shared/backendcall"
	"github.com/mcpfleet/mcpfleet/shared/metrics"
	"github.com/mcpfleet/mcpfleet/shared/metrics/promtest"
	"github.com/mcpfleet/mcpfleet/streammcp/internal/kafka"
	"github.com/mcpfleet/mcpfleet/streammcp/internal/kafkatest"
)

func recorded(m *metrics.Metrics, t *testing.T, backend string) map[string]int {
	t.Helper()
	out := map[string]int{}
	prefix := `mcpfleet_backend_requests_total{backend="` + backend + `",operation="`
	for k, v := range promtest.Read(t, m.Handler()) {
		if rest, ok := strings.CutPrefix(k, prefix); ok {
			op, rest, _ := strings.Cut(rest, `"`)
			outcome, _, _ := strings.Cut(strings.TrimPrefix(rest, `,outcome="`), `"`)
			out[op+" "+outcome] += int(v)
		}
	}
	return out
}

// TestEveryRequestIsRecorded: each request the cluster served is one
// observation labelled with the cluster's configured name and the Kafka API
// key name, counted the same as the cluster counted it.
func TestEveryRequestIsRecorded(t *testing.T) {
	ctx := context.Background()
	kc := kafkatest.StartSeeded(t)
	m := metrics.New("streammcp", "test")
	c := newClient(t, kc.Addrs(), func(o *kafka.Options) {
		o.Recorder = backendcall.New(backendcall.Config{Metrics: m, System: "kafka", Backend: "prod"})
	})
	// Warm the connections: dial-time ApiVersions are not requests of ours.
	if _, err := c.Groups(ctx); err != nil {
		t.Fatal(err)
	}
	before := recorded(m, t, "prod")
	kc.ResetCounts()
	if _, err := c.Cluster(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Groups(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := c.DescribeTopic(ctx, kafkatest.TopicOrders); err != nil {
		t.Fatal(err)
	}
	served := planCounts(kc)
	after := recorded(m, t, "prod")
	for api, n := range served {
		if got := after[api+" ok"] - before[api+" ok"]; got != n {
			t.Errorf("%s: recorded %d, the cluster served %d (all: %v)", api, got, n, after)
		}
	}
	for k := range after {
		op, _, _ := strings.Cut(k, " ")
		if _, ok := served[op]; !ok && after[k] != before[k] {
			t.Errorf("recorded %s, which the cluster did not serve (%v)", k, served)
		}
	}
}

// TestFailedRequestsAreRecorded: a refused connection is an error, a broker
// that never answers a timeout, each under the operation that needed it.
func TestFailedRequestsAreRecorded(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	refused := l.Addr().String()
	l.Close()
	for _, tt := range []struct {
		name, addr, outcome string
	}{
		{"refused", refused, "error"},
		{"silent", kafkatest.SilentBroker(t), "timeout"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			m := metrics.New("streammcp", "test")
			c := newClient(t, []string{tt.addr}, func(o *kafka.Options) {
				o.Timeout = 500 * time.Millisecond
				o.Recorder = backendcall.New(backendcall.Config{Metrics: m, System: "kafka", Backend: "staging"})
			})
			if _, err := c.Cluster(context.Background()); err == nil {
				t.Fatal("no error")
			}
			got := recorded(m, t, "staging")
			if want := map[string]int{"Metadata " + tt.outcome: 1}; fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("recorded %v, want %v", got, want)
			}
		})
	}
}

// TestHintsNameTheClustersOwnVariables: in a fleet, a connection error
// names STREAM_<NAME>_BROKERS, the variable the operator sets for it.
func TestHintsNameTheClustersOwnVariables(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	refused := l.Addr().String()
	l.Close()
	for prefix, want := range map[string]string{"": "check STREAM_BROKERS and", "STREAM_DEV_": "check STREAM_DEV_BROKERS and"} {
		c := newClient(t, []string{refused}, func(o *kafka.Options) { o.VarPrefix = prefix })
		if _, err := c.Cluster(context.Background()); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("prefix %q: %v", prefix, err)
		}
	}
}
