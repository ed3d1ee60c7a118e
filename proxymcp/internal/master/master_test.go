package master_test

import (
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcpfleet/mcpfleet/proxymcp/internal/haproxytest"
	"github.com/mcpfleet/mcpfleet/proxymcp/internal/master"
)

// Captured from the master CLIs of 2.6.12, 3.0.11 and 3.2.26.
const (
	proc26 = "#<PID>          <type>          <reloads>       <uptime>        <version>      \n3920            master          2 [failed: 1]   0d00h00m09s     2.6.12-1+deb12u3\n# workers\n4400            worker          1               0d00h00m04s     2.6.12-1+deb12u3\n# programs\n\n"
	proc32 = "#<PID>          <type>          <reloads>       <uptime>        <version>      \n6153            master          2 [failed: 1]   0d00h00m03s     3.2.26-1       \n# workers\n# old workers\n6259            worker          1               0d00h00m02s     3.2.26-1       \n\n"
)

func TestParseProc(t *testing.T) {
	p, err := master.ParseProc(proc26)
	if err != nil {
		t.Fatal(err)
	}
	want := master.Proc{PID: 3920, Type: "master", Reloads: 2, Failed: 1, Uptime: "0d00h00m09s", Version: "2.6.12-1+deb12u3"}
	if p.Master != want || len(p.Workers) != 1 || p.Workers[0].PID != 4400 || p.Workers[0].Reloads != 1 || len(p.OldWorkers) != 0 {
		t.Fatalf("2.6: %+v", p)
	}
	p, err = master.ParseProc(proc32)
	if err != nil {
		t.Fatal(err)
	}
	if p.Master.Failed != 1 || len(p.Workers) != 0 || len(p.OldWorkers) != 1 || p.OldWorkers[0].PID != 6259 {
		t.Fatalf("3.2: %+v", p)
	}
	for _, bad := range []string{"", "Unknown command\n", "#<PID> <type>\nabc master 0 x y\n"} {
		if _, err := master.ParseProc(bad); err == nil {
			t.Errorf("ParseProc(%q) accepted", bad)
		}
	}
}

func TestUnsafeCommandNotSent(t *testing.T) {
	c := &master.Client{Network: "unix", Address: filepath.Join(t.TempDir(), "none.sock")}
	for _, cmd := range []string{"show proc;reload", "show proc\nreload", "@1 set ssl cert x <<"} {
		if _, err := c.Execute(context.Background(), cmd); !errors.Is(err, master.ErrUnsafeCommand) {
			t.Errorf("%q: %v", cmd, err)
		}
	}
}

// TestUnreachableBounded: a socket nobody listens on is retried for the
// Unreachable budget only, and the error says how long and why.
func TestUnreachableBounded(t *testing.T) {
	c := &master.Client{Network: "unix", Address: filepath.Join(t.TempDir(), "gone.sock"), Unreachable: 300 * time.Millisecond}
	start := time.Now()
	_, err := c.ShowProc(context.Background())
	var ce *master.ConnError
	if !errors.As(err, &ce) || !strings.Contains(err.Error(), "still unreachable") || !strings.Contains(err.Error(), "PROXY_MASTER_URL") {
		t.Fatalf("err = %v", err)
	}
	if d := time.Since(start); d < 300*time.Millisecond || d > 3*time.Second {
		t.Fatalf("gave up after %s", d)
	}
}

// TestRetryUntilListening: a master that appears within the budget is
// reached (what happens at start and during a re-exec).
func TestRetryUntilListening(t *testing.T) {
	sock := filepath.Join(t.TempDir(), "late.sock")
	go func() {
		time.Sleep(200 * time.Millisecond)
		l, err := net.Listen("unix", sock)
		if err != nil {
			return
		}
		defer l.Close()
		c, err := l.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		// Like the master: answer only once the client half-closed.
		buf := make([]byte, 64)
		for {
			if _, err := c.Read(buf); err != nil {
				break
			}
		}
		c.Write([]byte(proc26))
	}()
	c := &master.Client{Network: "unix", Address: sock, Unreachable: 3 * time.Second, Timeout: 5 * time.Second}
	p, err := c.ShowProc(context.Background())
	if err != nil || p.Master.PID != 3920 {
		t.Fatalf("%+v %v", p, err)
	}
}

func TestCancelReachesSocket(t *testing.T) {
	sock := filepath.Join(t.TempDir(), "silent.sock")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			defer c.Close() // never answers
		}
	}()
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(100*time.Millisecond, cancel)
	c := &master.Client{Network: "unix", Address: sock, Timeout: 30 * time.Second}
	start := time.Now()
	_, err = c.Execute(ctx, "show proc")
	if !errors.Is(err, context.Canceled) || time.Since(start) > 5*time.Second {
		t.Fatalf("err = %v after %s", err, time.Since(start))
	}
}

func TestCheckNotCheckable(t *testing.T) {
	_, err := master.Checker{Files: []string{"/etc/haproxy/haproxy.cfg"}}.Check(context.Background())
	if !errors.Is(err, master.ErrNotCheckable) || !strings.Contains(err.Error(), "PROXY_<NAME>_HAPROXY_BIN") {
		t.Fatal(err)
	}
	_, err = master.Checker{Command: []string{"/nonexistent/haproxy"}, Files: []string{"x.cfg"}}.Check(context.Background())
	if err == nil || !strings.Contains(err.Error(), "HAPROXY_BIN") {
		t.Fatal(err)
	}
}

// TestCheckCancelKillsChild: cancelling stops the child (a long-running
// stand-in for haproxy, since haproxy -c finishes in milliseconds).
func TestCheckCancelKillsChild(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := master.Checker{Command: []string{"sh", "-c", "sleep 30", "sh"}, Files: []string{"x"}}.Check(ctx)
	if !errors.Is(err, context.DeadlineExceeded) || time.Since(start) > 5*time.Second {
		t.Fatalf("err = %v after %s", err, time.Since(start))
	}
}

// TestReload runs on every branch of the matrix: a good reload is confirmed
// by a new worker, then a configuration broken behind our back is reported
// by the check, a forced reload is refused with HAProxy's own words and the
// old worker keeps serving real HTTP traffic.
func TestReload(t *testing.T) {
	haproxytest.EachVersion(t, func(t *testing.T, branch string) {
		h := haproxytest.RunMaster(t, haproxytest.MasterOptions{Version: branch})
		ctx, cancel := context.WithTimeout(context.Background(), 45*time.Second)
		defer cancel()
		c := &master.Client{Network: "unix", Address: h.MasterSocket}
		check := &master.Checker{Command: h.Check, Files: []string{h.ConfigPath}, Dir: h.Dir}

		res, err := check.Check(ctx)
		if err != nil || !res.Valid {
			t.Fatalf("check of the good configuration: %+v %v", res, err)
		}
		out, err := c.Reload(ctx, master.ReloadOptions{Check: check})
		if err != nil || !out.Reloaded || len(out.NewWorkers) != 1 {
			t.Fatalf("reload: %+v %v\n%s", out, err, h.Log())
		}
		if out.After.Master.Reloads != out.Before.Master.Reloads+1 {
			t.Errorf("reload counter %d -> %d", out.Before.Master.Reloads, out.After.Master.Reloads)
		}
		if branch != "2.6" && !strings.Contains(out.Messages, "Loading success") {
			t.Errorf("3.x reload answer should carry the startup log, got %q", out.Messages)
		}
		serving := out.NewWorkers[0]
		waitServes(ctx, t, h)

		cfg, _ := os.ReadFile(h.ConfigPath)
		if err := os.WriteFile(h.ConfigPath, append(cfg, "    bogus_keyword on\n"...), 0o644); err != nil {
			t.Fatal(err)
		}
		res, err = check.Check(ctx)
		if err != nil || res.Valid || !strings.Contains(res.Output, "bogus_keyword") {
			t.Fatalf("check of the broken configuration: %+v %v", res, err)
		}
		out, err = c.Reload(ctx, master.ReloadOptions{Check: check})
		var refused *master.RefusedError
		if !errors.As(err, &refused) || out.Reloaded {
			t.Fatalf("forced reload of a broken configuration: %+v %v", out, err)
		}
		if !strings.Contains(err.Error(), "unknown keyword 'bogus_keyword'") || !slices.Contains(refused.Serving, serving) {
			t.Fatalf("refusal should quote HAProxy and name worker %d: %v", serving, err)
		}
		wantFrom := "reload answer"
		if branch == "2.6" {
			wantFrom = "haproxy -c" // the 2.6 master answers nothing and has no startup log
		}
		if out.MessagesFrom != wantFrom {
			t.Errorf("messages from %q, want %q", out.MessagesFrom, wantFrom)
		}
		// The old worker still answers real traffic and its runtime API.
		if code, err := h.Get(ctx, "www.example.com"); err != nil || code != 200 {
			t.Fatalf("after the refused reload fe_web answered %d, %v", code, err)
		}
		procs, err := c.ShowProc(ctx)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%s after refusal: workers %+v old %+v", branch, procs.Workers, procs.OldWorkers)
	})
}

func waitServes(ctx context.Context, t *testing.T, h *haproxytest.MasterWorker) {
	t.Helper()
	for {
		code, err := h.Get(ctx, "www.example.com")
		if err == nil && code == 200 {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("fe_web never served: %d %v", code, err)
		case <-time.After(50 * time.Millisecond):
		}
	}
}
