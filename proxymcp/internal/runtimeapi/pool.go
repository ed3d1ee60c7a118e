package runtimeapi

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// prompt ends every answer in interactive mode: HAProxy writes it once the
// answer is complete. Answers themselves end with a newline, so the marker
// is searched with that newline in front.
const prompt = "\n> "

// setupLine switches a new connection to interactive mode with numbered
// severities, once per connection rather than once per command. HAProxy
// answers "\n" (severity-output) and then "\n> " (prompt).
const setupLine = "set severity-output number;prompt\n"

// setupAnswer is the exact answer to setupLine.
const setupAnswer = "\n\n> "

// connMaxAge retires pooled connections. After a master-worker reload the
// old worker keeps serving the connections it had, with its old state, and
// lives on as long as they do (verified on 2.6): a connection is therefore
// used for at most this long, which bounds how stale a reload can make an
// answer and lets the old worker exit. A new connection costs ~0.2 ms.
const connMaxAge = time.Second

// errPromptRefused means the endpoint answered the set-up line without
// entering interactive mode; the pool then runs commands one-shot.
var errPromptRefused = errors.New("prompt mode refused")

// pool holds the interactive connections to one endpoint.
type pool struct {
	c *Client
	// slots bounds the connections open at once, idle or in use: a caller
	// takes a slot before using or dialling one and gives it back after.
	slots chan struct{}

	mu     sync.Mutex
	idle   []*pconn // LIFO: the most recently used is the least likely to have timed out
	closed bool
	maxAge time.Duration

	// oneShot is set once the endpoint refused prompt mode.
	oneShot atomic.Bool
}

func (c *Client) getPool() *pool {
	c.poolOnce.Do(func() {
		c.pool = &pool{c: c, slots: make(chan struct{}, c.MaxConns), maxAge: connMaxAge}
	})
	return c.pool
}

var errClosed = errors.New("the runtime API client was closed")

// execute runs cmd on a pooled connection and returns the raw answer
// without the prompt.
func (p *pool) execute(ctx context.Context, cmd string) (string, error) {
	select {
	case p.slots <- struct{}{}:
	case <-ctx.Done():
		return "", p.c.connErr(fmt.Errorf("all %d connections to HAProxy stayed busy with other calls (PROXY_RUNTIME_MAX_CONNS; "+
			"raise it, below the socket's stats maxconn, or PROXY_RUNTIME_TIMEOUT); nothing was sent to HAProxy: %w", cap(p.slots), ctx.Err()))
	}
	defer func() { <-p.slots }()
	// select picks at random among ready cases: a caller that gave up while
	// a slot came free may have won the slot.
	if err := p.c.notSent(ctx, cmd); err != nil {
		return "", err
	}

	// Commands that change the connection's own state (level, modes) would
	// leak into later commands on a shared connection: they get their own.
	if p.oneShot.Load() || changesSession(cmd) {
		return p.c.oneShot(ctx, cmd)
	}
	for stale := 0; ; stale++ {
		conn, reused, err := p.get(ctx)
		if errors.Is(err, errPromptRefused) {
			return p.c.oneShot(ctx, cmd)
		}
		if err != nil {
			return "", err
		}
		raw, n, clean, err := exchange(ctx, conn, cmd)
		if errors.Is(err, errNotSent) {
			// Cancelled before the write: the connection carried nothing,
			// but cancellation may have touched its deadline.
			conn.Close()
			return "", p.c.notSent(ctx, cmd)
		}
		if err == nil {
			if clean {
				p.put(conn)
			} else {
				conn.Close()
			}
			return raw, nil
		}
		conn.Close()
		// A reused connection that HAProxy had already closed (reload,
		// "timeout cli"): it never read the command, so nothing ran. Any
		// other idle connection is probably stale too.
		if reused && n == 0 && ctx.Err() == nil && closedByPeer(err) && stale <= cap(p.slots) {
			p.flushIdle()
			continue
		}
		var cut *CutOffError
		if errors.As(err, &cut) {
			cut.Command, cut.Cause = cmd, ctxErr(ctx, cut.Cause)
			return "", p.c.connErr(cut)
		}
		return "", p.c.connErr(ctxErr(ctx, err))
	}
}

// pconn is a pooled connection.
type pconn struct {
	net.Conn
	born time.Time
	// answer is reused from one command to the next: it would otherwise
	// be most of a call's allocations.
	answer []byte
}

// get returns an idle connection or a new one in interactive mode. The
// caller holds a slot.
func (p *pool) get(ctx context.Context) (conn *pconn, reused bool, err error) {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil, false, p.c.connErr(errClosed)
	}
	var old []*pconn
	keep := p.idle[:0]
	for _, ic := range p.idle {
		if time.Since(ic.born) >= p.maxAge {
			old = append(old, ic)
		} else {
			keep = append(keep, ic)
		}
	}
	p.idle = keep
	if n := len(p.idle); n > 0 {
		conn = p.idle[n-1]
		p.idle = p.idle[:n-1]
	}
	p.mu.Unlock()
	// A retired connection's answer buffer goes to the one that replaces
	// it, already grown to the size of this endpoint's answers.
	var spare []byte
	for _, ic := range old {
		retire(ctx, ic)
		if cap(ic.answer) > cap(spare) {
			spare = ic.answer[:0]
		}
	}
	if conn != nil {
		return conn, true, nil
	}
	nc, err := p.c.dial(ctx)
	if err != nil {
		return nil, false, err
	}
	if err := setup(ctx, nc); err != nil {
		nc.Close()
		if errors.Is(err, errPromptRefused) {
			p.oneShot.Store(true)
			return nil, false, err
		}
		return nil, false, p.c.connErr(fmt.Errorf("switching a new connection to interactive mode: %w", ctxErr(ctx, err)))
	}
	return &pconn{Conn: nc, born: time.Now(), answer: spare}, false, nil
}

// retire ends a connection the way HAProxy expects ("quit"), and waits for
// HAProxy to close its side, briefly: HAProxy has then let go of the
// session, so the connection about to replace it does not briefly make one
// more than MaxConns in HAProxy's eyes.
func retire(ctx context.Context, conn *pconn) {
	defer conn.Close()
	dl := time.Now().Add(200 * time.Millisecond)
	if cdl, ok := ctx.Deadline(); ok && cdl.Before(dl) {
		dl = cdl
	}
	_ = conn.SetDeadline(dl)
	if _, err := io.WriteString(conn, "quit\n"); err != nil {
		return
	}
	discard := conn.answer[:cap(conn.answer)]
	if len(discard) == 0 {
		discard = make([]byte, 512)
	}
	for {
		if _, err := conn.Read(discard); err != nil {
			return
		}
	}
}

// setup sends setupLine and checks the answer.
func setup(ctx context.Context, conn net.Conn) error {
	stop := watch(ctx, conn)
	defer stop()
	if _, err := io.WriteString(conn, setupLine); err != nil {
		return err
	}
	got, err := readAnswer(conn, make([]byte, 0, 512))
	switch {
	case err == nil && string(got) == setupAnswer:
		return nil
	case err == nil:
		// A prompt, but not after the expected answers: not HAProxy as
		// we know it. One-shot mode still classifies its answers.
		return fmt.Errorf("%w: answered %q", errPromptRefused, got)
	case len(got) > 0 && errors.Is(err, io.EOF):
		// It answered and closed: a runtime API that stays non-interactive.
		return fmt.Errorf("%w: answered %q and closed the connection", errPromptRefused, got)
	}
	return err
}

// exchange sends cmd on an interactive connection and reads its answer up
// to the prompt. n is how many answer bytes arrived; clean says the
// connection can carry another command.
func exchange(ctx context.Context, conn *pconn, cmd string) (raw string, n int, clean bool, err error) {
	stop := watch(ctx, conn)
	// The last hand-off before the socket: checking out and dialling took
	// time, during which the caller may have given up.
	if ctx.Err() != nil {
		stop()
		return "", 0, false, errNotSent
	}
	if _, err := io.WriteString(conn, cmd+"\n"); err != nil {
		stop()
		return "", 0, false, err
	}
	got, err := readAnswer(conn, conn.answer[:0])
	conn.answer = got
	// Once cancellation has touched the connection its deadline may be in
	// the past: the answer is whole, but the connection is not reused.
	clean = stop()
	if err != nil {
		return "", len(got), false, &CutOffError{Bytes: len(got), Cause: err}
	}
	_ = conn.SetDeadline(time.Time{})
	return string(got[:len(got)-len(prompt)+1]), len(got), clean, nil
}

// readAnswer appends to buf until the data ends with the prompt. It reads
// straight into buf's spare capacity, growing it as needed, rather than
// through a second buffer: a show stat answer is copied once, into the
// string exchange returns. An error comes with what arrived so far.
func readAnswer(conn net.Conn, buf []byte) ([]byte, error) {
	const minRead = 16 << 10
	for {
		if cap(buf)-len(buf) < minRead {
			buf = slices.Grow(buf, max(minRead, cap(buf)))
		}
		n, err := conn.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if bytes.HasSuffix(buf, []byte(prompt)) {
			return buf, nil
		}
		if err != nil {
			return buf, err
		}
	}
}

// put returns a connection whose answer was read to its end.
func (p *pool) put(conn *pconn) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		conn.Close()
		return
	}
	p.idle = append(p.idle, conn)
}

func (p *pool) flushIdle() {
	p.mu.Lock()
	idle := p.idle
	p.idle = nil
	p.mu.Unlock()
	for _, c := range idle {
		c.Close()
	}
}

func (p *pool) close() {
	p.mu.Lock()
	p.closed = true
	p.mu.Unlock()
	p.flushIdle()
}

// closedByPeer reports whether err means the other end had closed the
// connection before answering.
func closedByPeer(err error) bool {
	return errors.Is(err, io.EOF) || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE)
}

// sessionCommands change the state of the CLI connection they run on.
var sessionCommands = map[string]bool{
	"prompt": true, "quit": true, "user": true, "operator": true, "experimental-mode": true,
	"expert-mode": true, "mcli-debug-mode": true, "set severity-output": true, "set anon": true,
}

// changesSession reports whether any command of the chain changes the
// connection's state. Splitting on every ";" (even an escaped one) only
// errs towards a connection of its own.
func changesSession(cmd string) bool {
	for _, part := range strings.Split(cmd, ";") {
		f := strings.Fields(part)
		if len(f) == 0 {
			continue
		}
		if sessionCommands[f[0]] || (len(f) > 1 && sessionCommands[f[0]+" "+f[1]]) {
			return true
		}
	}
	return false
}
