package statspage_test

import (
	"context"
	"fmt"
	"net"
	"testing"
	"time"

	"github.com/mcpfleet/mcpfleet/proxymcp/internal/haproxytest"
	"github.com/mcpfleet/mcpfleet/proxymcp/internal/statspage"
	"github.com/mcpfleet/mcpfleet/shared/backendcall"
	"github.com/mcpfleet/mcpfleet/shared/metrics"
	"github.com/mcpfleet/mcpfleet/shared/metrics/promtest"
)

// TestStatsPageRecordsEachRequest: each CSV fetch and admin post to a real
// HAProxy stats page is one back-end call under its own operation
// (stats_page, stats_page_admin): ok; refused when the page answers but
// refuses the action (unknown server, no "stats admin"); error when the
// page cannot be read (wrong password, nothing listening); timeout.
func TestStatsPageRecordsEachRequest(t *testing.T) {
	h := haproxytest.Run(t, haproxytest.Options{})
	m := metrics.New("proxymcp", "test")
	rec := backendcall.New(backendcall.Config{Metrics: m, System: "haproxy"})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	page := func(url, user, password string) *statspage.Client {
		return &statspage.Client{URL: url, Username: user, Password: password, Timeout: 5 * time.Second, Recorder: rec}
	}
	good := page(h.StatsURL, haproxytest.StatsUser, haproxytest.StatsPassword)
	if _, err := good.CSV(ctx); err != nil {
		t.Fatal(err)
	}
	if err := good.Admin(ctx, "be_app", "app2", statspage.ActionDrain); err != nil {
		t.Fatal(err)
	}
	if err := good.Admin(ctx, "be_app", "nosuch", statspage.ActionDrain); err == nil {
		t.Fatal("unknown server accepted")
	}
	if err := page(h.StatsNoAdminURL, "", "").Admin(ctx, "be_app", "app2", statspage.ActionReady); err == nil {
		t.Fatal("admin post accepted by a page without stats admin")
	}
	if _, err := page(h.StatsURL, haproxytest.StatsUser, "wrong").CSV(ctx); err == nil {
		t.Fatal("wrong password accepted")
	}
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "http://" + ln.Addr().String() + "/stats"
	ln.Close()
	if _, err := page(closed, "", "").CSV(ctx); err == nil {
		t.Fatal("nothing listening, no error")
	}
	short, cancel2 := context.WithTimeout(ctx, time.Nanosecond)
	defer cancel2()
	<-short.Done()
	if _, err := good.CSV(short); err == nil {
		t.Fatal("expired context, no error")
	}
	got := promtest.Read(t, m.Handler())
	for _, w := range []struct {
		op, outcome string
		n           float64
	}{
		{statspage.OpCSV, "ok", 1}, {statspage.OpCSV, "error", 2}, {statspage.OpCSV, "timeout", 1},
		{statspage.OpAdmin, "ok", 1}, {statspage.OpAdmin, "refused", 2},
	} {
		k := fmt.Sprintf(`mcpfleet_backend_requests_total{backend="haproxy",operation=%q,outcome=%q,server="proxymcp"}`, w.op, w.outcome)
		if got[k] != w.n {
			t.Errorf("%s = %v, want %v", k, got[k], w.n)
		}
	}
}
