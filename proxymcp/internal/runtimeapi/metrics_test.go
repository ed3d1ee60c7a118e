package runtimeapi_test

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcpfleet/mcpfleet/proxymcp/internal/haproxytest"
	"github.com/mcpfleet/mcpfleet/proxymcp/internal/runtimeapi"
	"github.com/mcpfleet/mcpfleet/shared/backendcall"
	"github.com/mcpfleet/mcpfleet/shared/metrics"
	"github.com/mcpfleet/mcpfleet/shared/metrics/promtest"
)

func backendCount(s map[string]float64, op, outcome string) float64 {
	return s[fmt.Sprintf(`mcpfleet_backend_requests_total{backend="haproxy",operation=%q,outcome=%q,server="proxymcp"}`, op, outcome)]
}

// TestExecuteRecordsEachCommand: every command sent to a real HAProxy is one
// back-end call labelled by its verb and outcome (ok; refused when HAProxy
// answers with an error; error when it cannot be reached; timeout and
// cancelled from the context), in both connection modes. A command refused
// before anything is sent records nothing.
func TestExecuteRecordsEachCommand(t *testing.T) {
	h := haproxytest.Run(t, haproxytest.Options{})
	for _, maxConns := range []int{0, 2} {
		t.Run(fmt.Sprintf("MaxConns=%d", maxConns), func(t *testing.T) {
			m := metrics.New("proxymcp", "test")
			rec := backendcall.New(backendcall.Config{Metrics: m, System: "haproxy"})
			c := &runtimeapi.Client{Network: "unix", Address: h.Socket, Timeout: 5 * time.Second, MaxConns: maxConns, Recorder: rec}
			defer c.Close()
			ctx := context.Background()
			run := func(ctx context.Context, cmd string) error { _, err := c.Execute(ctx, cmd); return err }
			for _, cmd := range []string{"show info", "show stat", "get weight be_app/app1", "  help"} {
				if err := run(ctx, cmd); err != nil {
					t.Fatalf("%s: %v", cmd, err)
				}
			}
			for _, cmd := range []string{"set server no_such_backend/x state ready", "frobnicate the widgets", "show no-such-thing"} {
				if err := run(ctx, cmd); err == nil {
					t.Fatalf("%s: no error", cmd)
				}
			}
			gone, cancel := context.WithCancel(ctx)
			cancel()
			if err := run(gone, "show info"); err == nil {
				t.Fatal("a cancelled context ran the command")
			}
			if err := run(ctx, "show info\nshutdown sessions server be_app/app1"); err == nil {
				t.Fatal("unsafe command accepted")
			}
			got := promtest.Read(t, m.Handler())
			for _, w := range []struct {
				op, outcome string
				n           float64
			}{
				{"show", "ok", 2}, {"get", "ok", 1}, {"help", "ok", 1},
				{"set", "refused", 1}, {"other", "refused", 1}, {"show", "refused", 1},
				{"show", "cancelled", 1},
			} {
				if n := backendCount(got, w.op, w.outcome); n != w.n {
					t.Errorf("operation=%s outcome=%s: %v, want %v", w.op, w.outcome, n, w.n)
				}
			}
			var total float64
			var series []string
			for k, v := range got {
				if strings.HasPrefix(k, "mcpfleet_backend_requests_total{") {
					total += v
					series = append(series, fmt.Sprint(k, " ", v))
				}
			}
			if total != 8 { // the unsafe command is not counted: nothing was sent
				t.Errorf("%v back-end requests recorded, want 8:\n%s", total, strings.Join(series, "\n"))
			}
		})
	}
	// HAProxy has no command that holds its answer (2.6 has no "wait"): a
	// stand-in that reads the command and never answers shows the timeout.
	t.Run("stalls", func(t *testing.T) {
		m := metrics.New("proxymcp", "test")
		_, c := newFake(t, "unix", func(conn net.Conn, r *bufio.Reader) {
			_, _ = r.ReadString('\n')
			_, _ = r.ReadString('\n') // blocks until the client gives up
		})
		c.Timeout = 200 * time.Millisecond
		c.Recorder = backendcall.New(backendcall.Config{Metrics: m, System: "haproxy"})
		if _, err := c.Execute(context.Background(), "show stat"); backendcall.Classify(err) != backendcall.Timeout {
			t.Fatalf("stalled answer: %v, want a timeout", err)
		}
		if n := backendCount(promtest.Read(t, m.Handler()), "show", "timeout"); n != 1 {
			t.Errorf("operation=show outcome=timeout: %v, want 1", n)
		}
	})
	t.Run("unreachable", func(t *testing.T) {
		m := metrics.New("proxymcp", "test")
		rec := backendcall.New(backendcall.Config{Metrics: m, System: "haproxy"})
		ln, err := net.Listen("tcp4", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		closed := ln.Addr().String()
		ln.Close()
		for _, c := range []*runtimeapi.Client{
			{Network: "unix", Address: filepath.Join(t.TempDir(), "none.sock"), Timeout: time.Second, Recorder: rec},
			{Network: "tcp4", Address: closed, Timeout: time.Second, MaxConns: 2, Recorder: rec},
		} {
			if _, err := c.Execute(context.Background(), "show info"); err == nil {
				t.Fatalf("%s: no error", c.Endpoint())
			}
		}
		if n := backendCount(promtest.Read(t, m.Handler()), "show", "error"); n != 2 {
			t.Errorf("operation=show outcome=error: %v, want 2", n)
		}
	})
}

// TestVerbIsAClosedSet: hundreds of distinct commands, map keys and made-up
// verbs add no operation label beyond the runtime API's verbs and "other".
func TestVerbIsAClosedSet(t *testing.T) {
	h := haproxytest.Run(t, haproxytest.Options{})
	m := metrics.New("proxymcp", "test")
	c := &runtimeapi.Client{Network: "unix", Address: h.Socket, Timeout: 5 * time.Second, MaxConns: 2,
		Recorder: backendcall.New(backendcall.Config{Metrics: m, System: "haproxy"})}
	defer c.Close()
	ctx := context.Background()
	exec := func(cmd string) { _, _ = c.Execute(ctx, cmd) }
	exec("get map " + h.MapFile + " warm.example")
	exec("nonsense")
	before := promtest.Read(t, m.Handler())
	for i := range 300 {
		exec(fmt.Sprintf("get map %s host-%d.example", h.MapFile, i))
		exec(fmt.Sprintf("verb%d x", i))
	}
	after := promtest.Read(t, m.Handler())
	if len(after) != len(before) {
		t.Errorf("600 distinct commands added %d series", len(after)-len(before))
	}
	for k := range after {
		if !strings.HasPrefix(k, "mcpfleet_backend_") {
			continue
		}
		if !strings.Contains(k, `operation="get"`) && !strings.Contains(k, `operation="other"`) {
			t.Errorf("unexpected series %s", k)
		}
	}
	for _, tc := range []struct{ cmd, want string }{
		{"show info", "show"}, {"  set weight b/s 1", "set"}, {"experimental-mode on", "experimental-mode"},
		{"SHOW info", "other"}, {"show\tinfo", "other"}, {"", "other"}, {"host-1.example", "other"},
	} {
		if got := runtimeapi.Verb(tc.cmd); got != tc.want {
			t.Errorf("Verb(%q) = %q, want %q", tc.cmd, got, tc.want)
		}
	}
}

// TestOutcome classifies errors without HAProxy: a refusal is "refused".
func TestOutcome(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want string
	}{
		{nil, "ok"},
		{&runtimeapi.ReplyError{Command: "x", Message: "No such server."}, "refused"},
		{fmt.Errorf("wrapped: %w", &runtimeapi.ReplyError{}), "refused"},
		{&runtimeapi.ConnError{Err: context.DeadlineExceeded}, "timeout"},
		{&runtimeapi.ConnError{Err: context.Canceled}, "cancelled"},
		{&runtimeapi.ConnError{Err: &runtimeapi.CutOffError{Cause: net.ErrClosed}}, "error"},
	} {
		if got := runtimeapi.Outcome(tc.err); got != tc.want {
			t.Errorf("Outcome(%v) = %q, want %q", tc.err, got, tc.want)
		}
	}
}
