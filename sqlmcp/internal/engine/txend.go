package engine

import (
	"context"
	"database/sql"
	"errors"
	"log/slog"
	"time"

	"go.opentelemetry.io/otel/trace"
)

// endTimeout bounds a read-only transaction's START and its ROLLBACK,
// which run on a context of their own, not the call's.
const endTimeout = 10 * time.Second

// SetLogger is where a read-only transaction that could not be ended is
// reported (the default logger otherwise). Set it before the client is
// used.
func (c *Client) SetLogger(l *slog.Logger) { c.log = l }

func (c *Client) logger() *slog.Logger {
	if c.log == nil {
		return slog.Default()
	}
	return c.log
}

// roTx is a query's read-only transaction: begun for it, or begun ahead
// (Config.TxAhead) for the next query of the same caller.
type roTx struct {
	tx   *sql.Tx
	opts *requestOptions    // the START's, which its ROLLBACK carries too
	stop context.CancelFunc // releases tx's own context once it ended
	// caller is who it was begun for (user and attribution); vals holds
	// the caller's context values (identity, token) without cancellation
	// or trace span, to begin the next one ahead with.
	caller string
	vals   context.Context
	ahead  bool
}

// submit sends q (sqlText with args) in its read-only transaction, when it
// is to have one (readOnlyTx), or on the pool. t is returned also when
// the submit failed: the caller ends it (endTx) as it would after reading.
// A transaction begun ahead that the engine no longer knows (a restarted
// coordinator, or one idle past transaction.idle-timeout) refused the
// submit before anything ran: the query is sent once more in a
// transaction begun for it.
func (c *Client) submit(qctx context.Context, q Query, opts *requestOptions, sqlText string, args []any) (t *roTx, rows *sql.Rows, err error) {
	t, err = c.readOnlyTx(qctx, q, opts)
	if err != nil {
		return nil, nil, err
	}
	if t == nil {
		rows, err = c.db.QueryContext(qctx, sqlText, args...)
		return nil, rows, err
	}
	rows, err = t.tx.QueryContext(qctx, sqlText, args...)
	if err == nil || !t.ahead || !unknownTransaction(err) {
		return t, rows, err
	}
	c.endTx(t, false)
	if qctx.Err() != nil {
		return nil, nil, err // the caller is gone: nothing more is sent
	}
	opts.forgetQueryID()
	if t, err = c.beginFor(qctx, opts, t.caller); err != nil {
		return nil, nil, err
	}
	rows, err = t.tx.QueryContext(qctx, sqlText, args...)
	return t, rows, err
}

// unknownTransaction says the engine refused a statement because it does
// not know its transaction.
func unknownTransaction(err error) bool {
	var te *TrinoError
	return errors.As(err, &te) && te.ErrorName == "UNKNOWN_TRANSACTION"
}

// readOnlyTx gives q its read-only transaction when the engine is to be
// given one: ReadOnlyTransactions on, not a metadata query, and not an
// engine known not to do transactions. It is nil when q runs outside one.
// The caller's transaction begun ahead is taken when there is one (its
// START is then off the query's path); otherwise one is begun now. An
// engine that answers the START as unsupported does not do transactions:
// that is remembered, said once in the log, and q runs without.
func (c *Client) readOnlyTx(qctx context.Context, q Query, opts *requestOptions) (*roTx, error) {
	if !c.cfg.ReadOnlyTransactions || q.metadata || c.noTx.Load() {
		return nil, nil
	}
	if err := qctx.Err(); err != nil {
		return nil, err // cancelled before anything was sent: send nothing
	}
	caller := callerKey(qctx, opts)
	if t := c.ahead.take(caller); t != nil {
		return t, nil
	}
	t, err := c.beginFor(qctx, opts, caller)
	var te *TrinoError
	switch {
	case err == nil:
		return t, nil
	case errors.As(err, &te) && (te.ErrorName == "NOT_SUPPORTED" || te.ErrorName == "SYNTAX_ERROR"):
		// The engine does not do transactions. Any other refusal (this
		// caller's access, say) is about the caller: the query fails with
		// it, and every other query keeps its transaction.
		if c.noTx.CompareAndSwap(false, true) {
			c.logger().Warn("the engine refused START TRANSACTION READ ONLY as unsupported; queries now run without a read-only transaction (the SQL guard and the engine user's privileges still apply)",
				"engine", c.cfg.URL(), "error", te.Message)
		}
		return nil, nil
	default:
		return nil, err
	}
}

// beginFor begins a read-only transaction for the query of opts (whose
// callerKey is caller), its START sent with the query's own headers.
func (c *Client) beginFor(qctx context.Context, opts *requestOptions, caller string) (*roTx, error) {
	tx, stop, err := c.beginReadOnly(qctx, opts)
	if err != nil {
		return nil, err
	}
	opts.forgetQueryID() // the START's id; the query's comes next
	return &roTx{tx: tx, opts: opts, stop: stop, caller: caller, vals: callerValues(qctx)}, nil
}

// callerValues keeps ctx's values (the caller's identity and token source)
// without its cancellation, deadline or trace span: a transaction begun
// ahead is nobody's call yet.
func callerValues(ctx context.Context) context.Context {
	return trace.ContextWithSpan(context.WithoutCancel(ctx), nil)
}

// beginReadOnly starts a read-only transaction. It lives on a context of its own, detached from qctx's
// cancellation: database/sql rolls a transaction back by itself when the
// context it began on ends, and that ROLLBACK would be neither waited for
// by Close nor reported when it fails; and the ROLLBACK of a read whose
// rows were all read is sent after the answer, when the call's context may
// be gone. The START runs to its end (bounded by endTimeout) even if qctx
// ends meanwhile: its answer names the transaction, which can only be
// ended once known. stop releases the transaction's context after it
// ended.
func (c *Client) beginReadOnly(qctx context.Context, opts *requestOptions) (tx *sql.Tx, stop context.CancelFunc, err error) {
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
// a read-only transaction ends. It is cleanup, so it is sent also after
// the caller cancelled, bounded by endTimeout, not by the call. Close
// waits for it; a failure is logged (the engine then ends the transaction
// itself after its transaction.idle-timeout). With next, once it ended,
// the caller's next transaction is begun ahead (Config.TxAhead).
func (c *Client) endTx(t *roTx, next bool) {
	end := func() {
		defer t.stop()
		bound, unbound := context.WithTimeout(context.Background(), endTimeout)
		defer unbound()
		t.opts.setBound(bound)
		err := t.tx.Rollback()
		t.opts.setBound(nil)
		if err != nil && !unknownTransaction(err) {
			c.logger().Warn("could not end the read-only transaction of a query; Trino ends it after its transaction.idle-timeout",
				"query_id", t.opts.QueryID(), "engine", c.cfg.URL(), "error", classify(err, "roll back the read-only transaction").Error())
		}
		if next && err == nil {
			c.beginAhead(t)
		}
	}
	c.endMu.RLock()
	if c.closing {
		c.endMu.RUnlock()
		next = false // Close is waiting: nothing new is begun
		end()        // and no goroutine it would not wait for
		return
	}
	c.ending.Add(1)
	c.endMu.RUnlock()
	go func() {
		defer c.ending.Done()
		end()
	}()
}
