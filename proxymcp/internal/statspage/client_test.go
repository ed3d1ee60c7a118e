package statspage_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/mcpfleet/mcpfleet/proxymcp/internal/haproxytest"
	"github.com/mcpfleet/mcpfleet/proxymcp/internal/statspage"
)

// TestStatsPageClient reads the CSV with basic auth and uses the admin form.
func TestStatsPageClient(t *testing.T) {
	h := haproxytest.Run(t, haproxytest.Options{})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	st := &statspage.Client{URL: h.StatsURL, Username: haproxytest.StatsUser, Password: haproxytest.StatsPassword, Timeout: 5 * time.Second}
	data, err := st.CSV(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(data), "\n"); !strings.HasPrefix(string(data), "# pxname,svname,") || n < 10 {
		t.Fatalf("CSV lines %d: %.100s", n, data)
	}
	if err := st.Admin(ctx, "be_app", "app2", "drain"); err != nil {
		t.Fatal(err)
	}
	if err := h.WaitServerStatus(ctx, "be_app", "app2", "DRAIN"); err != nil {
		t.Fatal(err)
	}
	if err := st.Admin(ctx, "be_app", "nosuch", "drain"); err == nil || !strings.Contains(err.Error(), "ERRP") {
		t.Errorf("unknown server: %v", err)
	}
	st.Password = "wrong"
	if _, err := st.CSV(ctx); err == nil || !strings.Contains(err.Error(), "401") {
		t.Errorf("bad password: %v", err)
	}
	// Credentials in the URL work too.
	st.Password = ""
	st.Username = ""
	st.URL = strings.Replace(h.StatsURL, "http://", "http://"+haproxytest.StatsUser+":"+haproxytest.StatsPassword+"@", 1)
	if _, err := st.CSV(ctx); err != nil {
		t.Errorf("userinfo credentials: %v", err)
	}
	// A deadline reaches the HTTP request.
	short, cancel2 := context.WithTimeout(ctx, time.Nanosecond)
	defer cancel2()
	time.Sleep(time.Millisecond)
	if _, err := st.CSV(short); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("expired context: %v", err)
	}
}

// TestCancelledAdminPostIsNeverSent: an admin post whose caller already
// gave up is not sent, even over a kept-alive connection: the server's
// state is unchanged.
func TestCancelledAdminPostIsNeverSent(t *testing.T) {
	h := haproxytest.Run(t, haproxytest.Options{})
	st := &statspage.Client{URL: h.StatsURL, Username: haproxytest.StatsUser, Password: haproxytest.StatsPassword, Timeout: 5 * time.Second,
		HTTP: &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
	for range 20 {
		if _, err := st.CSV(context.Background()); err != nil { // a kept-alive connection
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		err := st.Admin(ctx, "be_app", "app2", statspage.ActionMaint)
		if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "nothing was sent") {
			t.Fatalf("cancelled admin post: %v", err)
		}
	}
	out, err := h.Exec(context.Background(), "show servers state be_app")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(out, "\n") {
		f := strings.Fields(line)
		if len(f) > 6 && f[3] == "app2" && f[6] != "0" {
			t.Fatalf("a cancelled admin post changed app2's admin state: %s", line)
		}
	}
}
