package runtimeapi_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpfleet/mcpfleet/proxymcp/internal/runtimeapi"
)

// The tests in this file use fakeRuntime, a small stand-in for HAProxy's
// runtime API that replays real answers captured from HAProxy 2.6 and then
// misbehaves on purpose. The fake is legitimate here: a real HAProxy cannot
// be made to cut an answer at a chosen byte, reset a connection at a chosen
// byte, or stall half-way through an answer. Everything else is tested
// against a real HAProxy (client_test.go, pool_test.go).

// fakeRuntime serves every connection with handle.
type fakeRuntime struct {
	l       net.Listener
	accepts atomic.Int64
	handle  func(conn net.Conn, r *bufio.Reader)
	wg      sync.WaitGroup
}

func newFake(t *testing.T, network string, handle func(conn net.Conn, r *bufio.Reader)) (*fakeRuntime, *runtimeapi.Client) {
	t.Helper()
	addr := "127.0.0.1:0"
	if network == "unix" {
		addr = filepath.Join(t.TempDir(), "fake.sock")
	}
	l, err := net.Listen(network, addr)
	if err != nil {
		t.Fatal(err)
	}
	f := &fakeRuntime{l: l, handle: handle}
	f.wg.Add(1)
	go func() {
		defer f.wg.Done()
		for {
			conn, err := l.Accept()
			if err != nil {
				return
			}
			f.accepts.Add(1)
			f.wg.Add(1)
			go func() {
				defer f.wg.Done()
				defer conn.Close()
				f.handle(conn, bufio.NewReader(conn))
			}()
		}
	}()
	t.Cleanup(func() { l.Close(); f.wg.Wait() })
	return f, &runtimeapi.Client{Network: network, Address: l.Addr().String(), Timeout: 5 * time.Second}
}

// fixture reads a real answer captured from HAProxy 2.6.12 (the haproxy
// package's parser fixtures).
func fixture(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "haproxy", "testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// answer is what HAProxy sends for cmd after "set severity-output number",
// without the prompt.
type answer struct {
	cmd, body string
}

func answers(t *testing.T) []answer {
	return []answer{
		{cmd: "show stat", body: fixture(t, "show_stat.txt")},
		{cmd: "show servers state", body: fixture(t, "show_servers_state.txt")},
		{cmd: "show info", body: fixture(t, "show_info.txt")},
		{cmd: "show map ./hosts.map", body: fixture(t, "show_map_hosts.map.txt")},
		{cmd: "set server be_app/nosuch weight 5", body: "[3]: No such server.\n\n"},
		{cmd: "frobnicate", body: "[6]: " + fixture(t, "frobnicate.txt")},
		{cmd: "del server be_app/dynx", body: "[6]: Server deleted.\n"},
		{cmd: "set server be_app/app1 weight 5", body: "\n"},
	}
}

// readLine reads one command line; false when the client went away.
func readLine(r *bufio.Reader) (string, bool) {
	line, err := r.ReadString('\n')
	return strings.TrimSuffix(line, "\n"), err == nil
}

// sameResult compares two Execute results.
func sameResult(out1 string, err1 error, out2 string, err2 error) bool {
	if (err1 == nil) != (err2 == nil) {
		return false
	}
	if err1 != nil {
		return err1.Error() == err2.Error()
	}
	return out1 == out2
}

func checkCutOff(t *testing.T, mode string, a answer, k int, err error) {
	t.Helper()
	var ce *runtimeapi.ConnError
	if !errors.Is(err, runtimeapi.ErrCutOff) || !errors.As(err, &ce) {
		t.Fatalf("%s %q cut at %d: err = %v, want a cut-off *ConnError", mode, a.cmd, k, err)
	}
	msg := err.Error()
	for _, want := range []string{fmt.Sprintf("%q", a.cmd), fmt.Sprintf("cut off after %d bytes", k), "check that HAProxy is running"} {
		if !strings.Contains(msg, want) {
			t.Fatalf("%s %q cut at %d: message lacks %q: %s", mode, a.cmd, k, want, msg)
		}
	}
}

// TestOneShotCutAtEveryOffset: a non-interactive answer that stops before
// its end, at any byte, is an error saying so, never a smaller success.
func TestOneShotCutAtEveryOffset(t *testing.T) {
	for _, a := range answers(t) {
		t.Run(a.cmd, func(t *testing.T) {
			t.Parallel()
			raw := "\n" + a.body // the empty answer to set severity-output comes first
			var cut atomic.Int64
			_, c := newFake(t, "unix", func(conn net.Conn, r *bufio.Reader) {
				if line, ok := readLine(r); !ok || line != "set severity-output number;"+a.cmd {
					t.Errorf("sent %q", line)
					return
				}
				_, _ = conn.Write([]byte(raw[:cut.Load()]))
			})
			ctx := context.Background()
			cut.Store(int64(len(raw)))
			whole, wholeErr := c.Execute(ctx, a.cmd)
			wantOut, wantErr := runtimeapi.Classify(a.cmd, raw)
			if !sameResult(whole, wholeErr, wantOut, wantErr) {
				t.Fatalf("whole answer: %q %v", whole, wholeErr)
			}
			for k := 0; k < len(raw); k++ {
				cut.Store(int64(k))
				out, err := c.Execute(ctx, a.cmd)
				// The documented one-shot gap: HAProxy 2.6 ends some
				// severity-prefixed messages with a single newline, so
				// a message cut right after its first line looks whole.
				// It must still be the same outcome (refusal or not).
				if first, _, _ := strings.Cut(a.body, "\n"); strings.HasPrefix(a.body, "[") && k == len(first)+2 {
					if (err == nil) != (wholeErr == nil) || errors.Is(err, runtimeapi.ErrCutOff) {
						t.Fatalf("cut after the first line: %q %v, whole answer gave %v", out, err, wholeErr)
					}
					continue
				}
				checkCutOff(t, "one-shot", a, k, err)
			}
		})
	}
}

// promptFake answers the set-up line like HAProxy, then serves commands in
// interactive mode; serve returns false to close the connection.
func promptFake(t *testing.T, network string, serve func(conn net.Conn, cmd string) bool) (*fakeRuntime, *runtimeapi.Client) {
	f, c := newFake(t, network, func(conn net.Conn, r *bufio.Reader) {
		if line, ok := readLine(r); !ok || line != "set severity-output number;prompt" {
			t.Errorf("set-up line %q", line)
			return
		}
		if _, err := conn.Write([]byte("\n\n> ")); err != nil {
			return
		}
		for {
			cmd, ok := readLine(r)
			if !ok || !serve(conn, cmd) {
				return
			}
		}
	})
	c.MaxConns = 2
	t.Cleanup(func() { c.Close() })
	return f, c
}

// TestPromptCutAtEveryOffset: in interactive mode the prompt ends the
// answer; a connection closed anywhere before it, including inside the
// final newlines and the prompt itself, is a cut-off error.
func TestPromptCutAtEveryOffset(t *testing.T) {
	for _, a := range answers(t) {
		t.Run(a.cmd, func(t *testing.T) {
			t.Parallel()
			full := a.body + "> "
			var cut atomic.Int64
			_, c := promptFake(t, "unix", func(conn net.Conn, cmd string) bool {
				if cmd != a.cmd {
					t.Errorf("sent %q", cmd)
					return false
				}
				k := int(cut.Load())
				_, _ = conn.Write([]byte(full[:k]))
				return k == len(full)
			})
			ctx := context.Background()
			cut.Store(int64(len(full)))
			whole, wholeErr := c.Execute(ctx, a.cmd)
			wantOut, wantErr := runtimeapi.Classify(a.cmd, a.body)
			if !sameResult(whole, wholeErr, wantOut, wantErr) {
				t.Fatalf("whole answer: %q %v, want %q %v", whole, wholeErr, wantOut, wantErr)
			}
			for k := 0; k < len(full); k++ {
				cut.Store(int64(k))
				_, err := c.Execute(ctx, a.cmd)
				checkCutOff(t, "prompt", a, k, err)
			}
			// The pool is still usable after every cut.
			cut.Store(int64(len(full)))
			if out, err := c.Execute(ctx, a.cmd); !sameResult(out, err, whole, wholeErr) {
				t.Fatalf("after the cuts: %q %v", out, err)
			}
		})
	}
}

// TestResetMidAnswer: a reset (RST, via SO_LINGER 0) at any point of the
// answer is a cut-off error in both modes.
func TestResetMidAnswer(t *testing.T) {
	a := answers(t)[0] // show stat
	full := a.body + "> "
	raw := "\n" + a.body
	for _, k := range []int{0, 1, 100, len(a.body) / 2, len(a.body) - 2, len(a.body) - 1, len(a.body), len(full) - 1} {
		reset := func(conn net.Conn, data string) {
			_, _ = conn.Write([]byte(data))
			_ = conn.(*net.TCPConn).SetLinger(0)
			_ = conn.Close()
		}
		t.Run(fmt.Sprintf("prompt/%d", k), func(t *testing.T) {
			_, c := promptFake(t, "tcp4", func(conn net.Conn, cmd string) bool {
				reset(conn, full[:k])
				return false
			})
			_, err := c.Execute(context.Background(), a.cmd)
			if !errors.Is(err, runtimeapi.ErrCutOff) {
				t.Fatalf("err = %v", err)
			}
		})
		if k >= len(raw) {
			continue
		}
		t.Run(fmt.Sprintf("one-shot/%d", k), func(t *testing.T) {
			_, c := newFake(t, "tcp4", func(conn net.Conn, r *bufio.Reader) {
				readLine(r)
				reset(conn, raw[:k])
			})
			_, err := c.Execute(context.Background(), a.cmd)
			if !errors.Is(err, runtimeapi.ErrCutOff) {
				t.Fatalf("err = %v", err)
			}
		})
	}
}

// TestStallPastDeadline: an answer that stops arriving ends the call at the
// deadline as a cut-off; in interactive mode the connection is dropped and
// the next call gets a new one with a whole answer.
func TestStallPastDeadline(t *testing.T) {
	a := answers(t)[2] // show info
	release := make(chan struct{})
	defer close(release)
	var calls atomic.Int64
	f, c := promptFake(t, "unix", func(conn net.Conn, cmd string) bool {
		if calls.Add(1) == 1 {
			_, _ = conn.Write([]byte(a.body[:100]))
			<-release
			// Too late: the rest, then the prompt, as if nothing happened.
			_, _ = conn.Write([]byte(a.body[100:] + "> "))
			return true
		}
		_, _ = conn.Write([]byte(a.body + "> "))
		return true
	})
	c.Timeout = 300 * time.Millisecond
	start := time.Now()
	_, err := c.Execute(context.Background(), a.cmd)
	if !errors.Is(err, runtimeapi.ErrCutOff) || !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "after 100 bytes") {
		t.Fatalf("err = %v", err)
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("the deadline took %s", d)
	}
	out, err := c.Execute(context.Background(), a.cmd)
	if err != nil || out != a.body {
		t.Fatalf("next call: %v %.60q", err, out)
	}
	if n := f.accepts.Load(); n != 2 {
		t.Errorf("connections = %d, want 2 (the stalled one is never reused)", n)
	}

	// One-shot mode ends the same way.
	_, oc := newFake(t, "unix", func(conn net.Conn, r *bufio.Reader) {
		readLine(r)
		_, _ = conn.Write([]byte("\n" + a.body[:100]))
		<-release
	})
	oc.Timeout = 300 * time.Millisecond
	if _, err := oc.Execute(context.Background(), a.cmd); !errors.Is(err, runtimeapi.ErrCutOff) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("one-shot: err = %v", err)
	}
}

// TestCancelMidAnswerDiscardsConnection: a caller that gives up mid-answer
// leaves unread bytes on its connection; reusing it would hand them to the
// next caller as its answer. The pool must open a new connection instead.
func TestCancelMidAnswerDiscardsConnection(t *testing.T) {
	info, version := answers(t)[2].body, "[6]: 2.6.12-1+deb12u4\n\n"
	halfSent := make(chan struct{})
	release := make(chan struct{})
	var calls atomic.Int64
	f, c := promptFake(t, "unix", func(conn net.Conn, cmd string) bool {
		if calls.Add(1) == 1 {
			_, _ = conn.Write([]byte(info[:200]))
			close(halfSent)
			<-release
			_, _ = conn.Write([]byte(info[200:] + "> "))
			return true
		}
		_, _ = conn.Write([]byte(version + "> "))
		return true
	})
	c.MaxConns = 1
	ctx, cancel := context.WithCancel(context.Background())
	go func() { <-halfSent; cancel() }()
	if _, err := c.Execute(ctx, "show info"); !errors.Is(err, context.Canceled) || !errors.Is(err, runtimeapi.ErrCutOff) {
		t.Fatalf("cancelled call: err = %v", err)
	}
	close(release) // the rest of the old answer is now on the old connection
	out, err := c.Execute(context.Background(), "show version")
	if err != nil || out != "2.6.12-1+deb12u4\n\n" {
		t.Fatalf("next call got %.80q, %v", out, err)
	}
	if n := f.accepts.Load(); n != 2 {
		t.Errorf("connections = %d, want 2", n)
	}
}

// TestPromptRefusedFallsBackToOneShot: an endpoint that answers and closes
// (non-interactive only) still serves every call, one connection each.
func TestPromptRefusedFallsBackToOneShot(t *testing.T) {
	a := answers(t)[2]
	for _, refusal := range []string{"\n", "\n[6]: Unknown command, but maybe one of the following ones is a better match:\n\n", "\n\n"} {
		f, c := newFake(t, "unix", func(conn net.Conn, r *bufio.Reader) {
			line, _ := readLine(r)
			if strings.HasSuffix(line, ";prompt") {
				_, _ = conn.Write([]byte(refusal))
				return
			}
			_, _ = conn.Write([]byte("\n" + a.body))
		})
		c.MaxConns = 3
		for i := 0; i < 5; i++ {
			out, err := c.Execute(context.Background(), a.cmd)
			if err != nil || out != a.body {
				t.Fatalf("refusal %q call %d: %v %.40q", refusal, i, err, out)
			}
		}
		if runtimeapi.Interactive(c) {
			t.Errorf("refusal %q: still in prompt mode", refusal)
		}
		if n := f.accepts.Load(); n != 6 {
			t.Errorf("refusal %q: connections = %d, want 1 set-up + 5 one-shot", refusal, n)
		}
		c.Close()
	}
}

// TestWaitForConnectionUnderDeadline: with every connection busy a call
// waits under its own deadline, opens nothing, and says what to change.
func TestWaitForConnectionUnderDeadline(t *testing.T) {
	release := make(chan struct{})
	busy := make(chan struct{})
	f, c := promptFake(t, "unix", func(conn net.Conn, cmd string) bool {
		if cmd == "show info" {
			close(busy)
			<-release
		}
		_, _ = conn.Write([]byte("\n> "))
		return true
	})
	c.MaxConns = 1
	done := make(chan error)
	go func() { _, err := c.Execute(context.Background(), "show info"); done <- err }()
	<-busy
	ctx, cancel := context.WithTimeout(context.Background(), 150*time.Millisecond)
	defer cancel()
	_, err := c.Execute(ctx, "show version")
	var ce *runtimeapi.ConnError
	if !errors.As(err, &ce) || !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "PROXY_RUNTIME_MAX_CONNS") {
		t.Fatalf("err = %v", err)
	}
	if n := f.accepts.Load(); n != 1 {
		t.Errorf("connections = %d, want 1", n)
	}
	close(release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	// The slot is free again.
	if _, err := c.Execute(context.Background(), "show version"); err != nil {
		t.Fatal(err)
	}
	c.Close()
	if _, err := c.Execute(context.Background(), "show version"); !errors.As(err, &ce) || !strings.Contains(err.Error(), "closed") {
		t.Fatalf("after Close: %v", err)
	}
}
