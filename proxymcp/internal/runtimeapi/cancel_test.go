package runtimeapi_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpfleet/mcpfleet/proxymcp/internal/haproxytest"
	"github.com/mcpfleet/mcpfleet/proxymcp/internal/runtimeapi"
)

// recordingRelay sits between the client and HAProxy's Unix socket: it
// records every byte the client sends and can hold HAProxy's answers back,
// which keeps a pooled connection busy for as long as a test needs. It is
// a relay, not a fake: HAProxy still answers every command.
type recordingRelay struct {
	path string

	mu   sync.Mutex
	sent bytes.Buffer
	held chan struct{} // non-nil while answers are held back
}

func newRecordingRelay(t *testing.T, target string) *recordingRelay {
	t.Helper()
	r := &recordingRelay{path: filepath.Join(t.TempDir(), "relay.sock")}
	l, err := net.Listen("unix", r.path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			s, err := net.Dial("unix", target)
			if err != nil {
				c.Close()
				continue
			}
			go func() {
				defer s.Close()
				buf := make([]byte, 4096)
				for {
					n, err := c.Read(buf)
					if n > 0 {
						r.mu.Lock()
						r.sent.Write(buf[:n])
						r.mu.Unlock()
						if _, werr := s.Write(buf[:n]); werr != nil {
							return
						}
					}
					if err != nil {
						return
					}
				}
			}()
			go func() {
				defer c.Close()
				buf := make([]byte, 64<<10)
				for {
					n, err := s.Read(buf)
					if n > 0 {
						r.mu.Lock()
						held := r.held
						r.mu.Unlock()
						if held != nil {
							<-held
						}
						if _, werr := c.Write(buf[:n]); werr != nil {
							return
						}
					}
					if err != nil {
						return
					}
				}
			}()
		}
	}()
	t.Cleanup(r.release)
	return r
}

func (r *recordingRelay) hold() {
	r.mu.Lock()
	r.held = make(chan struct{})
	r.mu.Unlock()
}

func (r *recordingRelay) release() {
	r.mu.Lock()
	if r.held != nil {
		close(r.held)
		r.held = nil
	}
	r.mu.Unlock()
}

func (r *recordingRelay) sentText() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.sent.String()
}

// waitSent waits until the client has sent s n times through the relay.
func (r *recordingRelay) waitSent(t *testing.T, s string, n int) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); strings.Count(r.sentText(), s) < n; {
		if time.Now().After(deadline) {
			t.Fatalf("%q never reached the relay; sent: %q", s, r.sentText())
		}
		time.Sleep(time.Millisecond)
	}
}

// checkNotSent checks that a cancelled write reached neither the socket (the
// relay's record) nor HAProxy (its state, read past the relay).
func checkNotSent(t *testing.T, h *haproxytest.HAProxy, r *recordingRelay, err error) {
	t.Helper()
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled write: err = %v, want context.Canceled", err)
	}
	if !strings.Contains(err.Error(), "nothing was sent") {
		t.Errorf("cancelled write: the error does not say nothing was sent: %v", err)
	}
	if got := r.sentText(); strings.Contains(got, "set weight") {
		t.Fatalf("a cancelled write went out on the socket: %q", got)
	}
	out, gerr := h.Exec(context.Background(), "get weight be_app/app2")
	if gerr != nil || !strings.HasPrefix(out, "50 ") {
		t.Fatalf("HAProxy's weight of be_app/app2 changed after a cancelled write: %q %v", out, gerr)
	}
}

// TestCancelledWriteIsNeverSent: a caller that gave up before its command
// reached the socket sends nothing, whether it was cancelled before the
// call (with an idle pooled connection ready and a free slot: select used
// to pick the slot half of the time, and the write beat the cancellation
// to the socket) or while it waited for a pooled connection. Run it with
// -count=50 -race: each run repeats each case.
func TestCancelledWriteIsNeverSent(t *testing.T) {
	h := haproxytest.Run(t, haproxytest.Options{})
	const write = "set weight be_app/app2 7"

	for _, maxConns := range []int{0, 1, 4} {
		t.Run(fmt.Sprintf("pre-cancelled/max_conns=%d", maxConns), func(t *testing.T) {
			r := newRecordingRelay(t, h.Socket)
			c := &runtimeapi.Client{Network: "unix", Address: r.path, Timeout: 10 * time.Second, MaxConns: maxConns}
			defer c.Close()
			for range 20 {
				// An idle connection in the pool and a free slot.
				if _, err := c.Execute(context.Background(), "show version"); err != nil {
					t.Fatal(err)
				}
				ctx, cancel := context.WithCancel(context.Background())
				cancel()
				_, err := c.Execute(ctx, write)
				checkNotSent(t, h, r, err)
			}
		})
	}

	t.Run("cancelled-while-waiting-for-a-pooled-connection", func(t *testing.T) {
		r := newRecordingRelay(t, h.Socket)
		c := &runtimeapi.Client{Network: "unix", Address: r.path, Timeout: 10 * time.Second, MaxConns: 1}
		defer c.Close()
		for i := range 20 {
			if _, err := c.Execute(context.Background(), "show version"); err != nil {
				t.Fatal(err)
			}
			// The one connection is busy: its answer is held back.
			r.hold()
			busy := make(chan error, 1)
			go func() {
				_, err := c.Execute(context.Background(), "show info")
				busy <- err
			}()
			r.waitSent(t, "show info\n", i+1)
			ctx, cancel := context.WithCancel(context.Background())
			waiting := make(chan error, 1)
			go func() {
				_, err := c.Execute(ctx, write)
				waiting <- err
			}()
			time.Sleep(2 * time.Millisecond) // the write waits for the slot
			// The slot comes free as the caller gives up: both are ready.
			cancel()
			r.release()
			if err := <-busy; err != nil {
				t.Fatalf("the call holding the connection: %v", err)
			}
			checkNotSent(t, h, r, <-waiting)
		}
		// The pool still works after the cancelled callers.
		if out, err := c.Execute(context.Background(), "show version"); err != nil || !strings.HasPrefix(out, h.Version) {
			t.Fatalf("after the cancelled calls: %q %v", out, err)
		}
	})
}
