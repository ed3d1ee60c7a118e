package main

import (
	"context"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpfleet/mcpfleet/shared/e2e"
	"github.com/mcpfleet/mcpfleet/streammcp/internal/kafkatest"
)

// updates collects the URIs of notifications/resources/updated.
type updates struct {
	mu   sync.Mutex
	uris []string
	ch   chan struct{}
}

func (u *updates) add(uri string) {
	u.mu.Lock()
	u.uris = append(u.uris, uri)
	u.mu.Unlock()
	select {
	case u.ch <- struct{}{}:
	default:
	}
}

func (u *updates) take() []string {
	u.mu.Lock()
	defer u.mu.Unlock()
	out := u.uris
	u.uris = nil
	return out
}

// waitFor waits until every URI in want was notified (or the deadline), then
// keeps listening for settle to catch notifications that should not come,
// and returns everything notified, sorted and without duplicates.
func (u *updates) waitFor(t *testing.T, want []string, settle time.Duration) []string {
	t.Helper()
	var got []string
	deadline := time.After(30 * time.Second)
	for !containsAll(got, want) {
		select {
		case <-u.ch:
			got = append(got, u.take()...)
		case <-deadline:
			t.Fatalf("notified %v within 30s; want at least %v", got, want)
		}
	}
	time.Sleep(settle)
	got = append(got, u.take()...)
	slices.Sort(got)
	return slices.Compact(got)
}

func containsAll(have, want []string) bool {
	for _, w := range want {
		if !slices.Contains(have, w) {
			return false
		}
	}
	return true
}

// TestFleetSubscriptionsEndToEnd runs the binary with two clusters, c1 and
// c2 (both healthy, group events-sink caught up, STREAM_LAG_THRESHOLD=50),
// and subscribes through the official Go SDK client, over stdio and over
// streamable HTTP, to c2's health-check, lag report and overview, c1's
// health-check and lag report, and the fleet document. Producing 100
// messages on c2 puts events-sink over the threshold: exactly c2's
// health-check, c2's lag report and the fleet document are notified (not
// c2's overview, which reads metadata only, nor anything of c1), and reads
// then show the lag. After unsubscribing c2's two reports, committing the
// group back to the log end notifies the fleet document only. Subscribing
// to an unknown cluster's URI is refused naming the configured clusters.
func TestFleetSubscriptionsEndToEnd(t *testing.T) {
	bin := e2e.Build(t, ".")
	const interval = time.Second
	settle := 3 * interval // three more re-reads: anything still to come has come
	var (
		c2Health   = "stream-mcp://clusters/c2/health-check"
		c2Lag      = "stream-mcp://clusters/c2/consumer-lag-report"
		c2Overview = "stream-mcp://clusters/c2/overview"
		c1Health   = "stream-mcp://clusters/c1/health-check"
		c1Lag      = "stream-mcp://clusters/c1/consumer-lag-report"
		fleetURI   = "stream-mcp://clusters"
	)
	for _, transport := range []string{"stdio", "streamable HTTP"} {
		t.Run(transport, func(t *testing.T) {
			var c1, c2 *kafkatest.Cluster
			var wg sync.WaitGroup
			wg.Go(func() { c1 = kafkatest.StartQuiet(t) })
			wg.Go(func() { c2 = kafkatest.StartQuiet(t) })
			wg.Wait()
			if t.Failed() {
				t.FailNow()
			}
			env := []string{"STREAM_CLUSTERS=c1,c2", "STREAM_C1_BROKERS=" + strings.Join(c1.Addrs(), ","),
				"STREAM_C2_BROKERS=" + strings.Join(c2.Addrs(), ","), "STREAM_LAG_THRESHOLD=50", "STREAM_WATCH_INTERVAL=" + interval.String()}
			var tr mcp.Transport
			if transport == "stdio" {
				cmd := exec.Command(bin)
				cmd.Env = append([]string{"PATH=" + os.Getenv("PATH")}, env...)
				tr = &mcp.CommandTransport{Command: cmd}
			} else {
				srv := e2e.StartHTTP(t, bin, env)
				tr = &mcp.StreamableClientTransport{Endpoint: srv.MCPURL(), MaxRetries: -1}
			}
			u := &updates{ch: make(chan struct{}, 1)}
			c := mcp.NewClient(&mcp.Implementation{Name: "streammcp-e2e", Version: "test"}, &mcp.ClientOptions{
				ResourceUpdatedHandler: func(_ context.Context, r *mcp.ResourceUpdatedNotificationRequest) { u.add(r.Params.URI) },
			})
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			cs, err := c.Connect(ctx, tr, &mcp.ClientSessionOptions{ProtocolVersion: e2e.Legacy})
			if err != nil {
				t.Fatal(err)
			}
			defer cs.Close()

			for _, uri := range []string{"stream-mcp://clusters/c3/health-check", "stream-mcp://clusters/C2/health-check", "stream-mcp://clusters/c2 /overview"} {
				err := cs.Subscribe(ctx, &mcp.SubscribeParams{URI: uri})
				if err == nil || !strings.Contains(err.Error(), "unknown cluster") || !strings.Contains(err.Error(), "the configured clusters are c1, c2") {
					t.Errorf("subscribe %s: err = %v, want a refusal naming c1, c2", uri, err)
				}
			}

			for _, uri := range []string{c2Health, c2Lag, c2Overview, c1Health, c1Lag, fleetURI} {
				if err := cs.Subscribe(ctx, &mcp.SubscribeParams{URI: uri}); err != nil {
					t.Fatalf("subscribe %s: %v", uri, err)
				}
			}
			// Nothing changes while the baselines are taken and re-read.
			time.Sleep(settle)
			if got := u.take(); len(got) > 0 {
				t.Fatalf("notified without a change: %v", got)
			}

			if err := c2.Produce(ctx, kafkatest.TopicEvents, 0, 100); err != nil {
				t.Fatal(err)
			}
			want := []string{c2Health, c2Lag, fleetURI}
			slices.Sort(want)
			if got := u.waitFor(t, want, settle); !slices.Equal(got, want) {
				t.Errorf("notified %v after c2's group fell behind; want exactly %v", got, want)
			}
			h := readJSON(t, cs, c2Health)
			if cons := h["consumer_status"].(map[string]any); cons["groups_with_high_lag"] != 1.0 || cons["status"] != "warning" || h["overall_status"] != "warning" {
				t.Errorf("c2 health-check after the change: %v", h)
			}
			l := readJSON(t, cs, c2Lag)
			if g := l["group_summary"].([]any); len(g) != 1 || g[0].(map[string]any)["has_high_lag"] != true || g[0].(map[string]any)["total_lag"] != 100.0 {
				t.Errorf("c2 lag report after the change: %v", l)
			}
			f := readJSON(t, cs, fleetURI)
			entries := f["clusters"].([]any)
			if e1, e2 := entries[0].(map[string]any), entries[1].(map[string]any); e1["cluster"] != "c1" || e1["groups_with_high_lag"] != 0.0 ||
				e2["cluster"] != "c2" || e2["groups_with_high_lag"] != 1.0 || e2["health_status"] != "warning" {
				t.Errorf("fleet after the change: %v", f)
			}

			// Unsubscribed reports stay silent; the fleet document, still
			// subscribed, shows the watcher did see the change back.
			for _, uri := range []string{c2Health, c2Lag} {
				if err := cs.Unsubscribe(ctx, &mcp.UnsubscribeParams{URI: uri}); err != nil {
					t.Fatalf("unsubscribe %s: %v", uri, err)
				}
			}
			if err := c2.Commit(ctx, kafkatest.GroupEventsSink, map[string]map[int32]int64{kafkatest.TopicEvents: {0: 200}}); err != nil {
				t.Fatal(err)
			}
			if got := u.waitFor(t, []string{fleetURI}, settle); !slices.Equal(got, []string{fleetURI}) {
				t.Errorf("notified %v after c2's group caught up; want only %s", got, fleetURI)
			}
			if h := readJSON(t, cs, c2Health); h["overall_status"] != "healthy" {
				t.Errorf("c2 health-check after catching up: %v", h)
			}
		})
	}
}
