package engine

import (
	"context"
	"database/sql"
	"errors"
	"log/slog"
	"time"
)

// endTimeout bounds a read-only transaction's START and its ROLLBACK,
// which run on a context of their own, not the call's.
const endTimeout = 10 * time.Second

// SetLogger is where a read-only transaction that could not be ended is
// reported (the default logger otherwise). Set it before the client is
// used.
func (c *Client) SetLogger(l *slog.Logger) { c.log = l }

// querier runs a query: the client's pool, or a read-only transaction.
type querier interface {
	QueryContext(context.Context, string, ...any) (*sql.Rows, error)
}

// readOnlyTx starts q's read-only transaction (a cursor's or Stream's)
// when the engine is to be given one: ReadOnlyTransactions on, not a
// metadata query, and not an engine known to refuse transactions. tx is
// nil when q runs outside one. An engine that answers the START with an
// error does not do transactions: that is remembered, and q runs
// without.
func (c *Client) readOnlyTx(qctx context.Context, q Query, opts *requestOptions) (tx *sql.Tx, stop context.CancelFunc, err error) {
	if !c.cfg.ReadOnlyTransactions || q.metadata || c.noTx.Load() {
		return nil, nil, nil
	}
	tx, stop, err = c.beginReadOnly(qctx, opts)
	var te *TrinoError
	switch {
	case err == nil:
		opts.forgetQueryID()
		return tx, stop, nil
	case errors.As(err, &te):
		c.noTx.Store(true) // the engine answered: it does not do transactions
		return nil, nil, nil
	default:
		return nil, nil, err
	}
}

// beginReadOnly starts the read-only transaction of a query. It lives on a context of its own, detached from qctx's
// cancellation: database/sql rolls a transaction back by itself when the
// context it began on ends, and that ROLLBACK would be neither waited for
// by Close nor reported when it fails; and the ROLLBACK of a read whose
// rows were all read is sent after the answer, when the call's context may
// be gone. The START runs to its end (bounded by endTimeout) even if qctx
// ends meanwhile: its answer names the transaction, which can only be
// ended once known. stop releases the transaction's context after it
// ended.
func (c *Client) beginReadOnly(qctx context.Context, opts *requestOptions) (tx *sql.Tx, stop context.CancelFunc, err error) {
	if err := qctx.Err(); err != nil {
		return nil, nil, err // cancelled before anything was sent: send nothing
	}
	tctx, stop := context.WithCancel(context.WithoutCancel(qctx))
	bound, unbound := context.WithTimeout(context.Background(), endTimeout)
	defer unbound()
	opts.setBound(bound)
	defer opts.setBound(nil)
	tx, err = c.db.BeginTx(tctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		stop()
		return nil, nil, err
	}
	return tx, stop, nil
}

// endTx rolls back a query's read-only transaction (nothing to commit)
// once its rows are closed, in the background: the call that read them
// answers without waiting for the ROLLBACK's requests. It is the one way
// a cursor's or Stream's (Query's) transaction ends. It is cleanup, so it
// is sent also after the caller cancelled, bounded by endTimeout, not by
// the call. Close waits for it; a failure is logged (the engine then ends
// the transaction itself after its transaction.idle-timeout).
func (c *Client) endTx(tx *sql.Tx, opts *requestOptions, stop context.CancelFunc) {
	end := func() {
		defer stop()
		bound, unbound := context.WithTimeout(context.Background(), endTimeout)
		defer unbound()
		opts.setBound(bound)
		if err := tx.Rollback(); err != nil {
			log := c.log
			if log == nil {
				log = slog.Default()
			}
			log.Warn("could not end the read-only transaction of a query; Trino ends it after its transaction.idle-timeout",
				"query_id", opts.QueryID(), "engine", c.cfg.URL(), "error", classify(err, "roll back the read-only transaction").Error())
		}
	}
	c.endMu.RLock()
	if c.closing {
		c.endMu.RUnlock()
		end() // Close is waiting: no goroutine it would not wait for
		return
	}
	c.ending.Add(1)
	c.endMu.RUnlock()
	go func() {
		defer c.ending.Done()
		end()
	}()
}
