package engine

import (
	"context"
	"sync"
	"time"
)

// maxAhead bounds the transactions kept begun ahead, one per caller: more
// callers than that between two queries begin theirs on the query's path.
const maxAhead = 64

// aheadTxs holds read-only transactions begun ahead of their query, at
// most one per caller, each rolled back when no query of its caller took
// it within Config.TxAhead. Trino only makes a transaction's connector
// transactions when a statement first touches a catalog, so one begun
// ahead is the same as one begun at the query, without its START (a
// POST and its polls, queued like any statement) on the query's path.
type aheadTxs struct {
	mu      sync.Mutex
	idle    map[string]*aheadTx
	pending map[string]bool // a START ahead in flight
	closed  bool
	// expiring counts expiries under way (their ROLLBACK); Close waits
	// for them after close.
	expiring sync.WaitGroup
}

type aheadTx struct {
	t     *roTx
	timer *time.Timer
}

// take removes and returns caller's transaction begun ahead, if any.
func (a *aheadTxs) take(caller string) *roTx {
	a.mu.Lock()
	defer a.mu.Unlock()
	e := a.idle[caller]
	if e == nil {
		return nil
	}
	delete(a.idle, caller)
	e.timer.Stop() // if it fired meanwhile, it finds e gone and does nothing
	return e.t
}

// reserve says whether a transaction may be begun ahead for caller: none
// is held or being begun for it, the bound is not reached, and the client
// is not closing.
func (a *aheadTxs) reserve(caller string) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.closed || a.idle[caller] != nil || a.pending[caller] || len(a.idle)+len(a.pending) >= maxAhead {
		return false
	}
	if a.pending == nil {
		a.pending, a.idle = map[string]bool{}, map[string]*aheadTx{}
	}
	a.pending[caller] = true
	return true
}

// put keeps t, begun ahead after reserve, until its caller's next query
// takes it or idle passes (then expire ends it). It says false when the
// client closed meanwhile: the caller ends t.
func (a *aheadTxs) put(t *roTx, idle time.Duration, expire func(*roTx)) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	delete(a.pending, t.caller)
	if a.closed {
		return false
	}
	e := &aheadTx{t: t}
	e.timer = time.AfterFunc(idle, func() {
		// Whoever removes e from idle ends it: this, take or close.
		a.mu.Lock()
		mine := !a.closed && a.idle[t.caller] == e
		if mine {
			delete(a.idle, t.caller)
			a.expiring.Add(1)
		}
		a.mu.Unlock()
		if mine {
			defer a.expiring.Done()
			expire(t)
		}
	})
	a.idle[t.caller] = e
	return true
}

// unreserve gives up caller's reservation (its START failed).
func (a *aheadTxs) unreserve(caller string) {
	a.mu.Lock()
	delete(a.pending, caller)
	a.mu.Unlock()
}

// held is how many transactions begun ahead are held now.
func (a *aheadTxs) held() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return len(a.idle)
}

// close stops beginning ahead and returns the transactions held.
func (a *aheadTxs) close() []*roTx {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.closed = true
	var held []*roTx
	for caller, e := range a.idle {
		e.timer.Stop()
		held = append(held, e.t)
		delete(a.idle, caller)
	}
	return held
}

// TransactionsAhead is how many read-only transactions begun ahead
// (Config.TxAhead) the client holds now, waiting for their callers.
func (c *Client) TransactionsAhead() int { return c.ahead.held() }

// beginAhead begins the next read-only transaction of done's caller, once
// done (that caller's last one) ended, with the same headers as its START.
// It runs on endTx's goroutine, which Close waits for. A START that fails
// is not reported: the next query begins its own and reports it.
func (c *Client) beginAhead(done *roTx) {
	if c.cfg.TxAhead <= 0 || !c.ahead.reserve(done.caller) {
		return
	}
	o := done.opts.headersOnly()
	ctx := context.WithValue(done.vals, optionsKey{}, o)
	tx, stop, err := c.beginReadOnly(ctx, o)
	if err != nil {
		c.ahead.unreserve(done.caller)
		return
	}
	t := &roTx{tx: tx, opts: o, stop: stop, caller: done.caller, vals: done.vals, ahead: true}
	if !c.ahead.put(t, c.cfg.TxAhead, func(t *roTx) { c.endTx(t, false) }) {
		c.endTx(t, false)
	}
}
