package runtimeapi_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/mcpfleet/mcpfleet/proxymcp/internal/haproxytest"
	"github.com/mcpfleet/mcpfleet/proxymcp/internal/runtimeapi"
)

// countCLISessions counts the runtime API connections of the given proto
// ("tcpv4") open in HAProxy, from its own "show sess" (asked through obs).
func countCLISessions(ctx context.Context, obs *runtimeapi.Client, proto string) (int, error) {
	out, err := obs.Execute(ctx, "show sess")
	if err != nil {
		return 0, err
	}
	n := 0
	for _, line := range strings.Split(out, "\n") {
		if strings.Contains(line, " fe=GLOBAL ") && strings.Contains(line, " proto="+proto+" ") {
			n++
		}
	}
	return n, nil
}

// TestPoolUnderConcurrencyAgainstHAProxy: many callers share at most
// MaxConns connections (counted by HAProxy itself) and every one gets its
// own, whole answer.
func TestPoolUnderConcurrencyAgainstHAProxy(t *testing.T) {
	h := haproxytest.Run(t, haproxytest.Options{})
	c := h.Runtime("tcp4")
	c.MaxConns = 3
	defer c.Close()
	obs := &runtimeapi.Client{Network: "unix", Address: h.OperatorSocket, Timeout: 5 * time.Second}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	stop := make(chan struct{})
	var maxSeen atomic.Int64
	sampled := make(chan error, 1)
	go func() {
		var err error
		defer func() { sampled <- err }()
		for {
			select {
			case <-stop:
				return
			default:
			}
			var n int
			if n, err = countCLISessions(ctx, obs, "tcpv4"); err != nil {
				return
			}
			if int64(n) > maxSeen.Load() {
				maxSeen.Store(int64(n))
			}
		}
	}()
	var wg sync.WaitGroup
	for g := 0; g < 30; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 20; i++ {
				var err error
				switch (g + i) % 4 {
				case 0:
					var out string
					if out, err = c.Execute(ctx, "show info"); err == nil && (!strings.HasPrefix(out, "Name: HAProxy\n") || !strings.Contains(out, "\nPid: ")) {
						err = fmt.Errorf("show info: %.80q", out)
					}
				case 1:
					var out string
					if out, err = c.Execute(ctx, "show stat"); err == nil && (!strings.HasPrefix(out, "# pxname,") || !strings.HasSuffix(out, "\n\n")) {
						err = fmt.Errorf("show stat: %.80q", out)
					}
				case 2:
					var out string
					if out, err = c.Execute(ctx, "get weight be_app/app1"); err == nil && !strings.HasPrefix(out, "100 (initial 100)") {
						err = fmt.Errorf("get weight: %q", out)
					}
				case 3:
					var re *runtimeapi.ReplyError
					if _, err = c.Execute(ctx, "set server be_app/nosuch weight 5"); errors.As(err, &re) && re.NotFound() {
						err = nil
					} else {
						err = fmt.Errorf("refusal expected: %v", err)
					}
				}
				if err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(stop)
	if err := <-sampled; err != nil {
		t.Fatal(err)
	}
	if n := maxSeen.Load(); n > 3 || n < 1 {
		t.Errorf("HAProxy saw up to %d runtime API connections from the pool, want 1..3", n)
	}
}

// TestSessionCommandsDoNotLeak: a command that lowers the level or
// switches a mode must not leave a shared connection in that state.
func TestSessionCommandsDoNotLeak(t *testing.T) {
	h := haproxytest.Run(t, haproxytest.Options{})
	c := h.Runtime("unix")
	c.MaxConns = 1 // every command would share the one connection
	defer c.Close()
	ctx := context.Background()
	for i, cmd := range []string{"user;show info", "operator;show info", " user ; show info", "show info;user", "show info; operator",
		"experimental-mode on;show info", "expert-mode on;show info", "show version;user;show version"} {
		if _, err := c.Execute(ctx, cmd); err != nil {
			t.Fatalf("%q: %v", cmd, err)
		}
		w := fmt.Sprint(10 + i)
		if _, err := c.Execute(ctx, "set server be_app/app1 weight "+w); err != nil {
			t.Fatalf("after %q: %v", cmd, err)
		}
		if out, err := c.Execute(ctx, "get weight be_app/app1"); err != nil || !strings.HasPrefix(out, w+" ") {
			t.Fatalf("after %q: weight %q %v", cmd, out, err)
		}
	}
}

// TestCancelMidAnswerAgainstHAProxy: callers giving up at random points of
// a large answer never leave bytes for the next caller.
func TestCancelMidAnswerAgainstHAProxy(t *testing.T) {
	h := haproxytest.Run(t, haproxytest.Options{BigServers: 1000})
	c := h.Runtime("unix")
	c.MaxConns = 1
	defer c.Close()
	failed := 0
	for i := 0; i < 40; i++ {
		ctx, cancel := context.WithTimeout(context.Background(), time.Duration(100+i*50)*time.Microsecond)
		_, err := c.Execute(ctx, "show stat")
		cancel()
		if err != nil {
			var ce *runtimeapi.ConnError
			if !errors.As(err, &ce) {
				t.Fatalf("err = %v", err)
			}
			failed++
		}
		out, err := c.Execute(context.Background(), "show version")
		if err != nil || !strings.HasPrefix(out, h.Version) {
			t.Fatalf("after cancel %d: %.80q %v", i, out, err)
		}
	}
	t.Logf("%d of 40 show stat calls were cut by their deadline", failed)
	if failed == 0 {
		t.Error("no call was cut: the test proved nothing")
	}
}

// ownHAProxy is a minimal HAProxy in master-worker mode with the given
// "stats timeout" (the runtime API's idle timeout, "timeout cli"), for the
// reload and restart tests that haproxytest's fixed set-up cannot do.
type ownHAProxy struct {
	t      *testing.T
	dir    string
	socket string
	cmd    *exec.Cmd
	done   chan struct{}
}

// stop ends HAProxy and waits for it.
func (o *ownHAProxy) stop() {
	_ = o.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-o.done:
	case <-time.After(5 * time.Second):
		_ = o.cmd.Process.Kill()
		<-o.done
	}
}

func startOwn(t *testing.T, dir, statsTimeout string) *ownHAProxy {
	t.Helper()
	return startOwnWith(t, dir, statsTimeout, "")
}

// startOwnWith adds extra to the configuration.
func startOwnWith(t *testing.T, dir, statsTimeout, extra string) *ownHAProxy {
	t.Helper()
	if !haproxytest.Available() {
		if os.Getenv("CI") == "true" {
			t.Fatal("haproxy is not installed; CI=true forbids skipping")
		}
		t.Skip("haproxy is not installed")
	}
	o := &ownHAProxy{t: t, dir: dir, socket: filepath.Join(dir, "admin.sock")}
	cfg := fmt.Sprintf(`global
    stats socket %s mode 600 level admin
    stats timeout %s
defaults
    mode http
    timeout connect 2s
    timeout client 10s
    timeout server 10s
backend be_app
    server app1 127.0.0.1:1 weight 100
%s`, o.socket, statsTimeout, extra)
	path := filepath.Join(dir, "haproxy.cfg")
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	o.cmd = exec.Command("haproxy", "-W", "-db", "-f", path)
	o.cmd.Stdout, o.cmd.Stderr = os.Stderr, os.Stderr
	if err := o.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	o.done = make(chan struct{})
	go func() { _ = o.cmd.Wait(); close(o.done) }()
	t.Cleanup(o.stop)
	o.pid() // waits until it answers
	return o
}

// pid asks a new connection which worker answers, waiting for one to.
func (o *ownHAProxy) pid() string {
	o.t.Helper()
	c := &runtimeapi.Client{Network: "unix", Address: o.socket, Timeout: time.Second}
	deadline := time.Now().Add(10 * time.Second)
	for {
		out, err := c.Execute(context.Background(), "show info")
		if err == nil {
			return infoPid(o.t, out)
		}
		if time.Now().After(deadline) {
			o.t.Fatalf("HAProxy does not answer: %v", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func infoPid(t *testing.T, info string) string {
	for _, line := range strings.Split(info, "\n") {
		if p, ok := strings.CutPrefix(line, "Pid: "); ok {
			return p
		}
	}
	t.Fatalf("no Pid in %.100q", info)
	return ""
}

// TestReconnectAfterIdleTimeout: HAProxy closes an idle interactive
// connection after "stats timeout" (here 1s); the next call reconnects
// without an error.
func TestReconnectAfterIdleTimeout(t *testing.T) {
	o := startOwn(t, t.TempDir(), "1s")
	c := &runtimeapi.Client{Network: "unix", Address: o.socket, Timeout: 5 * time.Second, MaxConns: 2}
	defer c.Close()
	runtimeapi.SetMaxAge(c, time.Minute) // keep the connection past HAProxy's timeout
	ctx := context.Background()
	for i := 0; i < 3; i++ {
		if _, err := c.Execute(ctx, "show info"); err != nil {
			t.Fatalf("call %d: %v", i, err)
		}
		time.Sleep(1500 * time.Millisecond)
	}
}

// TestReconnectAfterRestart: HAProxy stopped and started again on the same
// socket; the pool's connections are dead and the next call reconnects.
func TestReconnectAfterRestart(t *testing.T) {
	dir := t.TempDir()
	o := startOwn(t, dir, "30s")
	c := &runtimeapi.Client{Network: "unix", Address: o.socket, Timeout: 5 * time.Second, MaxConns: 2}
	defer c.Close()
	runtimeapi.SetMaxAge(c, time.Minute)
	ctx := context.Background()
	out, err := c.Execute(ctx, "show info")
	if err != nil {
		t.Fatal(err)
	}
	before := infoPid(t, out)
	o.stop()
	_ = os.Remove(o.socket)
	o2 := startOwn(t, dir, "30s")
	out, err = c.Execute(ctx, "show info")
	if err != nil {
		t.Fatalf("after the restart: %v", err)
	}
	if after := infoPid(t, out); after == before || after != o2.pid() {
		t.Errorf("answered by worker %s; before %s, now %s", after, before, o2.pid())
	}
}

// TestReloadReachesNewWorker: after a master-worker reload the old worker
// keeps serving the connections it had, with its old state. Pooled
// connections are retired after a second, so answers come from the new
// worker soon after, and the old worker can exit.
func TestReloadReachesNewWorker(t *testing.T) {
	o := startOwn(t, t.TempDir(), "30s")
	c := &runtimeapi.Client{Network: "unix", Address: o.socket, Timeout: 5 * time.Second, MaxConns: 2}
	defer c.Close()
	ctx := context.Background()
	out, err := c.Execute(ctx, "show info")
	if err != nil {
		t.Fatal(err)
	}
	oldPid := infoPid(t, out)
	// The master handles SIGUSR2 only once its own loop runs, which can be
	// after the worker answers: signal until a new worker answers.
	deadline := time.Now().Add(10 * time.Second)
	for i := 0; o.pid() == oldPid; i++ {
		if i%10 == 0 {
			if err := o.cmd.Process.Signal(syscall.SIGUSR2); err != nil {
				t.Fatal(err)
			}
		}
		if time.Now().After(deadline) {
			t.Fatal("no new worker after the reload")
		}
		time.Sleep(50 * time.Millisecond)
	}
	newPid := o.pid()
	time.Sleep(1100 * time.Millisecond) // the pool's connection age limit
	out, err = c.Execute(ctx, "show info")
	if err != nil {
		t.Fatal(err)
	}
	if got := infoPid(t, out); got != newPid {
		t.Fatalf("answered by worker %s, want the new one %s (old %s)", got, newPid, oldPid)
	}
	// Nothing holds the old worker any more: it exits.
	var pid int
	fmt.Sscan(oldPid, &pid)
	for deadline := time.Now().Add(10 * time.Second); syscall.Kill(pid, 0) == nil; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("old worker %d still runs", pid)
		}
	}
}

// TestKilledMidAnswer: a real HAProxy killed (SIGKILL) while it sends a
// large "show stat". To kill it at a known point of the answer, a relay
// between the client and the socket passes the first 64 KB of a
// connection's answers, then holds the rest back; HAProxy, unable to write
// its 1.5 MB answer past the socket buffers, is killed mid-answer, and the
// relay passes on whatever HAProxy wrote before it died. The relay only
// forwards bytes: the cut is HAProxy's death.
func TestKilledMidAnswer(t *testing.T) {
	var big strings.Builder
	big.WriteString("backend be_big\n    balance roundrobin\n")
	for i := range 4000 {
		fmt.Fprintf(&big, "    server big%d 127.0.0.1:%d\n", i, 20000+i)
	}
	for _, maxConns := range []int{0, 1} {
		t.Run(fmt.Sprintf("MaxConns=%d", maxConns), func(t *testing.T) {
			dir := t.TempDir()
			o := startOwnWith(t, dir, "30s", big.String())
			worker := o.pid()
			relayPath := filepath.Join(dir, "relay.sock")
			l, err := net.Listen("unix", relayPath)
			if err != nil {
				t.Fatal(err)
			}
			defer l.Close()
			held := make(chan struct{})
			resume := make(chan struct{})
			var holdOnce sync.Once
			go func() {
				for {
					c, err := l.Accept()
					if err != nil {
						return
					}
					up, err := net.Dial("unix", o.socket)
					if err != nil {
						c.Close()
						return
					}
					go func() { _, _ = io.Copy(up, c) }()
					go func() {
						defer c.Close()
						defer up.Close()
						if n, _ := io.CopyN(c, up, 64<<10); n == 64<<10 {
							holdOnce.Do(func() { close(held); <-resume })
						}
						_, _ = io.Copy(c, up)
					}()
				}
			}()
			c := &runtimeapi.Client{Network: "unix", Address: relayPath, Timeout: 20 * time.Second, MaxConns: maxConns}
			defer c.Close()
			// A small answer first: in pool mode the connection then
			// already exists when show stat runs on it.
			if _, err := c.Execute(context.Background(), "show version"); err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() {
				_, err := c.Execute(context.Background(), "show stat")
				done <- err
			}()
			select {
			case <-held:
			case err := <-done:
				t.Fatalf("the answer ended before the relay held it: %v", err)
			}
			var pid int
			fmt.Sscan(worker, &pid)
			if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
			time.Sleep(100 * time.Millisecond)
			close(resume)
			err = <-done
			var cut *runtimeapi.CutOffError
			if !errors.As(err, &cut) || !errors.Is(err, runtimeapi.ErrCutOff) || cut.Bytes < 64<<10 || cut.Bytes > 1<<20 {
				t.Fatalf("err = %v", err)
			}
			t.Logf("cut off after %d bytes: %v", cut.Bytes, err)
		})
	}
}

// TestPoolOnEveryBranch: interactive mode, severity numbering once per
// connection, refusals and large answers on every HAProxy branch of the
// version matrix, on both sockets.
func TestPoolOnEveryBranch(t *testing.T) {
	haproxytest.EachVersion(t, func(t *testing.T, branch string) {
		h := haproxytest.Run(t, haproxytest.Options{Version: branch, BigServers: 500})
		for _, mode := range []string{"unix", "tcp4"} {
			c := h.Runtime(mode)
			c.MaxConns = 2
			defer c.Close()
			ctx := context.Background()
			for i := 0; i < 3; i++ { // the same connections again
				out, err := c.Execute(ctx, "show stat")
				if err != nil || strings.Count(out, "\nbe_big,big") != 500 {
					t.Fatalf("%s %s show stat: %v (%d bytes)", branch, mode, err, len(out))
				}
				if out, err := c.Execute(ctx, "show version"); err != nil || !strings.HasPrefix(out, h.Version) {
					t.Fatalf("%s %s show version: %q %v", branch, mode, out, err)
				}
				var re *runtimeapi.ReplyError
				if _, err := c.Execute(ctx, "set server be_app/nosuch weight 5"); !errors.As(err, &re) || !re.NotFound() {
					t.Fatalf("%s %s refusal: %v", branch, mode, err)
				}
				if _, err := c.Execute(ctx, "frobnicate"); !errors.As(err, &re) || !re.UnknownCommand() {
					t.Fatalf("%s %s unknown command: %v", branch, mode, err)
				}
				if out, err := c.Execute(ctx, "set server be_app/app1 weight 100"); err != nil || strings.TrimSpace(out) != "" {
					t.Fatalf("%s %s empty success: %q %v", branch, mode, out, err)
				}
			}
			if !runtimeapi.Interactive(c) {
				t.Errorf("%s %s: the pool fell back to one-shot mode", branch, mode)
			}
		}
	})
}
