package engine

import (
	"context"
	"database/sql"
	"errors"
	"strings"
	"sync"
	"time"

	"go.opentelemetry.io/otel/attribute"

	"github.com/mcpfleet/mcpfleet/shared/backendcall"
)

// Cursor is one engine query held open between pages: its rows are read
// from the coordinator as they are asked for, so the query is never run
// again for a later page, and memory holds one page (plus the driver's
// read-ahead), whatever the total number of rows. A Cursor is safe for
// concurrent use; pages are read one at a time.
type Cursor struct {
	c       *Client
	columns []Column
	start   time.Time
	timeout time.Duration

	mu     sync.Mutex // held while a page is read
	ctx    context.Context
	cancel context.CancelFunc // ends the query's context (and the driver's reads)
	opts   *requestOptions
	tx     *roTx // its read-only transaction, if any
	rows   *sql.Rows
	conv   []converter
	raw    []any
	ptrs   []any
	peek   []any // a row read ahead of the last page, not yet delivered
	read   int   // rows delivered so far
	closed bool
	eof    bool // every row was read from the engine
	call   *backendcall.Call
	op     string
	unprog func()
}

// Open starts q and returns a cursor on its rows once the engine has
// answered with its columns. The query runs on a context of its own,
// detached from ctx's cancellation (it outlives the call that opened it)
// but bounded by the query timeout; Close ends it. q.Limit and q.MaxBytes
// are ignored: each Page says how much to read.
func (c *Client) Open(ctx context.Context, q Query) (cur *Cursor, err error) {
	sqlText := strings.TrimSpace(q.SQL)
	if sqlText == "" {
		return nil, newError(Invalid, "run a query", errors.New("the query is empty"), "give one SQL statement")
	}
	timeout := c.cfg.QueryTimeout
	if q.Timeout > 0 {
		timeout = q.Timeout
	}
	if ctx.Err() != nil {
		// Nothing was sent, and nothing is: not even a transaction's START.
		return nil, newError(Canceled, "run the query", errors.New("cancelled by the caller before it was sent"), "")
	}
	cur = &Cursor{c: c, start: time.Now(), timeout: timeout, op: operation(ctx), unprog: func() {}}
	qctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), timeout)
	cur.cancel = cancel
	qctx, cur.call = c.rec.Start(qctx, cur.op, attribute.String("db.system.name", "trino"))
	cur.ctx = qctx
	// The caller's cancellation while the query starts ends it.
	stop := context.AfterFunc(ctx, cancel)
	defer stop()
	fail := func(e error) (*Cursor, error) {
		cur.closeLocked(e)
		return nil, e
	}
	qctx, err = withRequestOptions(qctx, c.cfg, q.Catalog, q.Schema)
	if err != nil {
		return fail(err)
	}
	cur.ctx = qctx
	cur.opts = qctx.Value(optionsKey{}).(*requestOptions)
	cur.opts.session = sessionProperties(timeout, c.cfg.QueryMaxMemory)
	var progressArgs []any
	progressArgs, cur.unprog = c.progressArgs(q, cur.opts)
	cur.tx, cur.rows, err = c.submit(qctx, q, cur.opts, sqlText, progressArgs)
	if err != nil {
		return fail(c.callerError(ctx, qctx, err, timeout))
	}
	types, err := cur.rows.ColumnTypes()
	if err != nil {
		return fail(c.callerError(ctx, qctx, err, timeout))
	}
	cur.conv = make([]converter, len(types))
	cur.columns = make([]Column, len(types))
	for i, t := range types {
		cur.columns[i] = Column{Name: t.Name(), Type: TypeName(t)}
		cur.conv[i] = newConverter(cur.columns[i].Type)
	}
	cur.raw = make([]any, len(types))
	cur.ptrs = make([]any, len(types))
	for i := range cur.raw {
		cur.ptrs[i] = &cur.raw[i]
	}
	return cur, nil
}

// callerError is queryError for a query on its own context qctx: a
// cancellation of the caller's ctx is reported as the caller's.
func (c *Client) callerError(ctx, qctx context.Context, err error, timeout time.Duration) error {
	if ctx.Err() != nil {
		return c.queryError(ctx, err, timeout)
	}
	return c.queryError(qctx, err, timeout)
}

// Columns are the result's columns in query order.
func (cur *Cursor) Columns() []Column { return cur.columns }

// QueryID is the engine's id of the query.
func (cur *Cursor) QueryID() string {
	if cur.opts == nil {
		return ""
	}
	return cur.opts.QueryID()
}

// Delivered is the number of rows handed out so far.
func (cur *Cursor) Delivered() int {
	cur.mu.Lock()
	defer cur.mu.Unlock()
	return cur.read
}

// Elapsed is the time since the query was opened.
func (cur *Cursor) Elapsed() time.Duration { return time.Since(cur.start) }

// Page reads the next rows, at most limit of them and, when maxBytes is
// positive, at most that many bytes of their JSON (always at least one
// row). more tells whether rows remain; when none remain the cursor is
// closed. A cancelled ctx ends the query (and the cursor) with a
// Canceled error; an error always closes the cursor.
func (cur *Cursor) Page(ctx context.Context, limit int, maxBytes int64) (rows [][]any, more bool, err error) {
	cur.mu.Lock()
	defer cur.mu.Unlock()
	if cur.closed {
		return nil, false, newError(NotFound, "read the next page", errors.New("the query has ended"), "run the query again")
	}
	stop := context.AfterFunc(ctx, cur.cancel)
	defer stop()
	rows = make([][]any, 0, min(limit, 1024))
	var bytes int64
	for {
		row := cur.peek
		cur.peek = nil
		if row == nil {
			if !cur.rows.Next() {
				break
			}
			if err := cur.rows.Scan(cur.ptrs...); err != nil {
				e := classify(err, "read a row of the result")
				cur.closeLocked(e)
				return nil, false, e
			}
			row = make([]any, len(cur.raw))
			for i, v := range cur.raw {
				row[i] = cur.conv[i](v)
			}
		}
		if len(rows) >= limit {
			cur.peek = row // a row beyond this page exists
			break
		}
		if maxBytes > 0 {
			bytes += int64(jsonSize(row)) + 1
			if bytes > maxBytes && len(rows) > 0 {
				cur.peek = row
				break
			}
		}
		rows = append(rows, row)
	}
	cur.read += len(rows)
	if cur.peek != nil {
		return rows, true, nil
	}
	if err := cur.rows.Err(); err != nil {
		e := cur.c.callerError(ctx, cur.ctx, err, cur.timeout)
		cur.closeLocked(e)
		return nil, false, e
	}
	cur.eof = true
	cur.closeLocked(nil)
	return rows, false, nil
}

// Close ends the cursor: a query with rows left is cancelled on the
// engine (it ends USER_CANCELED). Closing twice does nothing.
func (cur *Cursor) Close() {
	// A page being read stops at once: its context ends first.
	cur.cancel()
	cur.mu.Lock()
	defer cur.mu.Unlock()
	cur.closeLocked(nil)
}

func (cur *Cursor) closeLocked(err error) {
	if cur.closed {
		return
	}
	cur.closed = true
	if !cur.eof && cur.opts != nil {
		cur.c.cancel(cur.ctx, cur.opts.QueryID())
	}
	if cur.rows != nil {
		cur.rows.Close()
	}
	if cur.tx != nil {
		// After rows.Close: the ROLLBACK waits for the rows to be released.
		cur.c.endTx(cur.tx, true)
		cur.tx = nil
	}
	cur.peek = nil
	cur.finish(err)
}

func (cur *Cursor) finish(err error) {
	cur.unprog()
	cur.c.endQuery(cur.call, cur.op, cur.opts, err)
	cur.cancel()
}
