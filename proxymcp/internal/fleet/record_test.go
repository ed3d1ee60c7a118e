package fleet_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/mcpfleet/mcpfleet/proxymcp/internal/fleet"
	"github.com/mcpfleet/mcpfleet/proxymcp/internal/haproxytest"
	"github.com/mcpfleet/mcpfleet/shared/backendcall"
	"github.com/mcpfleet/mcpfleet/shared/metrics"
	"github.com/mcpfleet/mcpfleet/shared/metrics/promtest"
)

// TestRecordLabelsEachInstance: after Record, a fleet read sends one
// command per instance, each counted under its instance's name; an
// instance that stopped answering counts its own errors.
func TestRecordLabelsEachInstance(t *testing.T) {
	needHAProxy(t)
	hs := startFleet(t, haproxytest.Options{}, haproxytest.Options{})
	f, names := newFleet(t, hs)
	m := metrics.New("proxymcp", "test")
	f.Record(backendcall.New(backendcall.Config{Metrics: m, System: "haproxy"}))
	ms, err := f.Select(nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := fleet.Read(context.Background(), ms, listServers); err != nil {
		t.Fatal(err)
	}
	if err := hs[1].Stop(); err != nil {
		t.Fatal(err)
	}
	// The read falls back to the stopped instance's stats page, which is
	// gone with it: one failed command and one failed fetch for lb2.
	ans, _ := fleet.Read(context.Background(), ms, listServers)
	if len(ans) != 2 || ans[0].Err != nil || ans[1].Err == nil {
		t.Fatalf("answers after stopping %s: %+v", names[1], ans)
	}
	got := promtest.Read(t, m.Handler())
	series := func(backend, op, outcome string) string {
		return fmt.Sprintf(`mcpfleet_backend_requests_total{backend=%q,operation=%q,outcome=%q,server="proxymcp"}`, backend, op, outcome)
	}
	for k, want := range map[string]float64{
		series(names[0], "show", "ok"):          2,
		series(names[1], "show", "ok"):          1,
		series(names[1], "show", "error"):       1,
		series(names[1], "stats_page", "error"): 1,
	} {
		if got[k] != want {
			t.Errorf("%s = %v, want %v", k, got[k], want)
		}
	}
	for k := range got {
		if strings.Contains(k, `backend="haproxy"`) {
			t.Errorf("a request was recorded without its instance: %s", k)
		}
	}
}
