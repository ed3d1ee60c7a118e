// Package flight shares one computation among concurrent callers asking
// for the same key (single flight). Unlike a plain single flight, a
// caller that gives up (its context ends) leaves at once, and the shared
// computation is cancelled only when every caller has left, so one
// impatient client never cancels another's read.
package flight

import (
	"context"
	"sync"
)

// Group runs at most one computation per key at a time.
type Group[T any] struct {
	mu    sync.Mutex
	calls map[string]*call[T]
}

type call[T any] struct {
	done    chan struct{}
	val     T
	err     error
	waiters int
	cancel  context.CancelFunc
}

// Do returns the result of fn for key, joining a computation already in
// flight. fn runs with a context that keeps ctx's values, is detached from
// its cancellation, and is cancelled when all callers have left. shared
// reports whether the result was computed for another caller too.
func (g *Group[T]) Do(ctx context.Context, key string, fn func(context.Context) (T, error)) (v T, shared bool, err error) {
	g.mu.Lock()
	if g.calls == nil {
		g.calls = map[string]*call[T]{}
	}
	c, ok := g.calls[key]
	if ok {
		c.waiters++
	} else {
		cctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
		c = &call[T]{done: make(chan struct{}), waiters: 1, cancel: cancel}
		g.calls[key] = c
		go func() {
			c.val, c.err = fn(cctx)
			g.mu.Lock()
			if g.calls[key] == c {
				delete(g.calls, key)
			}
			g.mu.Unlock()
			cancel()
			close(c.done)
		}()
	}
	g.mu.Unlock()
	select {
	case <-c.done:
		g.mu.Lock()
		c.waiters--
		g.mu.Unlock()
		return c.val, ok, c.err
	case <-ctx.Done():
		g.mu.Lock()
		c.waiters--
		if c.waiters == 0 {
			c.cancel()
			// Later callers start afresh rather than join a cancelled run.
			if g.calls[key] == c {
				delete(g.calls, key)
			}
		}
		g.mu.Unlock()
		var zero T
		return zero, ok, ctx.Err()
	}
}
