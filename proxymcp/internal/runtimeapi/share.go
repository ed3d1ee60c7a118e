package runtimeapi

import (
	"context"
	"fmt"
	"sync"
)

// flight is one read on its way to HAProxy, with the callers waiting for
// its answer.
type flight struct {
	done    chan struct{}
	out     string
	err     error
	waiters int
	cancel  context.CancelFunc

	// decoded holds, by Decoder, what the answer decodes to: decoded once
	// for every caller that shares the answer (ReadDecoded).
	decodeMu sync.Mutex
	decoded  map[any]any
}

// shared holds the reads on their way, by command.
type shared struct {
	mu      sync.Mutex
	flights map[string]*flight
}

// Read is Execute for a command that changes nothing ("show info", "show
// stat"): a call made while an identical command is on its way joins it
// and gets that answer, so that many concurrent callers cost HAProxy one
// exchange (and one pooled socket) instead of queueing for the sockets.
// An answer is never kept: a call that starts after an answer arrived
// sends the command again. The exchange runs until its answer or its
// Timeout while any caller still waits; when the last one gives up it is
// cancelled. Never use Read for a command that changes state: two
// identical changes must both be sent.
func (c *Client) Read(ctx context.Context, cmd string) (string, error) {
	f, err := c.join(ctx, cmd)
	if err != nil {
		return "", err
	}
	return f.out, f.err
}

// A Decoder turns a read's answer into a value (a parse, an encoding).
// Decode must depend on the answer alone: its result is shared.
type Decoder[T any] struct {
	Decode func(answer string) (T, error)
}

// decoded is one Decoder's result for one answer.
type decoded[T any] struct {
	v   T
	err error
}

// ReadDecoded is Read followed by d.Decode, where the callers that share
// an answer also share its decoding: d.Decode runs once per exchange with
// HAProxy, however many callers joined it, and each of them gets that one
// value (which they must not modify). The value lives with the exchange,
// so it is never older than the caller's own read.
func ReadDecoded[T any](ctx context.Context, c *Client, cmd string, d *Decoder[T]) (T, error) {
	var zero T
	f, err := c.join(ctx, cmd)
	if err != nil {
		return zero, err
	}
	if f.err != nil {
		return zero, f.err
	}
	f.decodeMu.Lock()
	defer f.decodeMu.Unlock()
	r, ok := f.decoded[d].(decoded[T])
	if !ok {
		r.v, r.err = d.Decode(f.out)
		if f.decoded == nil {
			f.decoded = map[any]any{}
		}
		f.decoded[d] = r
	}
	return r.v, r.err
}

// join sends cmd, or joins the identical read on its way, and returns the
// exchange once it has its answer (or ctx's error if the caller gave up).
func (c *Client) join(ctx context.Context, cmd string) (*flight, error) {
	if err := c.notSent(ctx, cmd); err != nil {
		return nil, err
	}
	s := &c.shared
	s.mu.Lock()
	f, ok := s.flights[cmd]
	if !ok {
		if s.flights == nil {
			s.flights = map[string]*flight{}
		}
		// The exchange outlives the caller that started it (the others
		// wait for it), so it is cancelled by the waiters leaving, not by
		// the first caller's context; it keeps that context's values.
		fctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
		f = &flight{done: make(chan struct{}), cancel: cancel}
		s.flights[cmd] = f
		go func() {
			out, err := c.Execute(fctx, cmd)
			s.mu.Lock()
			if s.flights[cmd] == f {
				delete(s.flights, cmd)
			}
			f.out, f.err = out, err
			s.mu.Unlock()
			cancel()
			close(f.done)
		}()
	}
	f.waiters++
	s.mu.Unlock()
	select {
	case <-f.done:
		return f, nil
	case <-ctx.Done():
		s.mu.Lock()
		f.waiters--
		if f.waiters == 0 {
			// Nobody waits any more: a later caller starts afresh.
			if s.flights[cmd] == f {
				delete(s.flights, cmd)
			}
			f.cancel()
		}
		s.mu.Unlock()
		return nil, c.connErr(fmt.Errorf("%w while waiting for the answer to %q", ctx.Err(), cmd))
	}
}
