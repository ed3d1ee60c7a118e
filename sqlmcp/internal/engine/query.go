package engine

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"time"

	"go.opentelemetry.io/otel/attribute"

	"github.com/mcpfleet/mcpfleet/sqlmcp/internal/sqlguard"
)

// Query is one SQL statement to run.
type Query struct {
	SQL string
	// Limit is the most rows returned. For Client.Query, 0 means
	// Config.MaxRows; for Client.Stream, 0 means no limit.
	Limit int
	// Catalog and Schema override the configured defaults for this query.
	// A Catalog without a Schema runs with no default schema.
	Catalog string
	Schema  string
	// MaxBytes caps the JSON size of the returned rows. For Client.Query, 0
	// means Config.MaxResultBytes; for Client.Stream, 0 means no cap.
	// Negative means no cap.
	MaxBytes int64
	// Timeout overrides Config.QueryTimeout when positive.
	Timeout time.Duration
	// Progress, when set, hears the coordinator's progress reports while
	// the query runs (at most every ProgressPeriod in one state; a new
	// state at once). It is called on the driver's goroutine and must not
	// block.
	Progress func(Progress)

	metadata bool // the engine's own metadata statement: no transaction needed
}

// Column is one result column: its name and Trino type (e.g. "varchar",
// "decimal(12,2)", "array(row(a integer))").
type Column struct {
	Name string `json:"name"`
	Type string `json:"type"`
}

// Result is a complete, capped query result. Its JSON form is the
// execute_query output of the MCP server and the CLI's json format.
type Result struct {
	Columns   []Column `json:"columns"`
	Rows      [][]any  `json:"rows"`
	RowCount  int      `json:"row_count"`
	Truncated bool     `json:"truncated"`
	Limit     int      `json:"limit"`
	QueryID   string   `json:"query_id"`
	ElapsedMS int64    `json:"elapsed_ms"`
}

// Summary describes a streamed result once it ends.
type Summary struct {
	Columns   []Column `json:"columns"`
	RowCount  int      `json:"row_count"`
	Truncated bool     `json:"truncated"` // more rows existed than were delivered
	Limit     int      `json:"limit"`     // 0 when unlimited
	QueryID   string   `json:"query_id"`
	ElapsedMS int64    `json:"elapsed_ms"`
	// UpdateCount is the rows a write statement (INSERT, UPDATE, DELETE,
	// MERGE, CREATE TABLE AS) changed, taken from the single "rows" value
	// Trino answers such statements with; 0 otherwise.
	UpdateCount int64 `json:"update_count,omitempty"`
}

// Query runs q and returns up to its limit of rows, converted to JSON-ready
// values (see ConvertValue). Truncated is set only when more rows existed or
// the byte cap applied.
func (c *Client) Query(ctx context.Context, q Query) (*Result, error) {
	if q.Limit <= 0 {
		q.Limit = c.cfg.MaxRows
	}
	if q.MaxBytes == 0 {
		q.MaxBytes = c.cfg.MaxResultBytes
	}
	res := &Result{Columns: []Column{}, Rows: [][]any{}}
	sum, err := c.Stream(ctx, q, func(cols []Column) error {
		res.Columns = cols
		return nil
	}, func(row []any) error {
		res.Rows = append(res.Rows, row)
		return nil
	})
	if err != nil {
		return nil, err
	}
	res.RowCount = sum.RowCount
	res.Truncated = sum.Truncated
	res.Limit = sum.Limit
	res.QueryID = sum.QueryID
	res.ElapsedMS = sum.ElapsedMS
	return res, nil
}

// Stream runs q and hands its columns, then each row, to the callbacks as
// they arrive from the coordinator, until the rows end, the limit or byte
// cap is reached, or a callback returns an error. When reading stops early
// the query is cancelled on the coordinator. The row slice passed to onRow
// is not reused; the callee may keep it.
func (c *Client) Stream(ctx context.Context, q Query, onColumns func([]Column) error, onRow func([]any) error) (sum Summary, err error) {
	start := time.Now()
	sum = Summary{Limit: max(q.Limit, 0)}
	sqlText := strings.TrimSpace(q.SQL)
	if sqlText == "" {
		return sum, newError(Invalid, "run a query", errors.New("the query is empty"), "give one SQL statement")
	}
	timeout := c.cfg.QueryTimeout
	if q.Timeout > 0 {
		timeout = q.Timeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	op := operation(ctx)
	ctx, call := c.rec.Start(ctx, op, attribute.String("db.system.name", "trino"))
	var opts *requestOptions
	defer func() {
		c.endQuery(call, op, opts, err)
	}()
	ctx, err = withRequestOptions(ctx, c.cfg, q.Catalog, q.Schema)
	if err != nil {
		return sum, err
	}
	opts = ctx.Value(optionsKey{}).(*requestOptions)
	opts.session = sessionProperties(timeout, c.cfg.QueryMaxMemory)
	done := func() {
		sum.QueryID = opts.QueryID()
		sum.ElapsedMS = time.Since(start).Milliseconds()
	}
	defer done()
	defer func() {
		// On a timeout or a cancelled caller, end the query on the engine
		// before returning: the driver's own cancel runs on another
		// goroutine and may not happen before the process exits.
		if ctx.Err() != nil {
			c.cancel(ctx, opts.QueryID())
		}
	}()
	progressArgs, progressDone := c.progressArgs(q, opts)
	defer progressDone()
	tx, rows, err := c.submit(ctx, q, opts, sqlText, progressArgs)
	if tx != nil {
		// Ended as a cursor's is (endTx): after the rows are closed
		// (deferred below, so run first), in the background, waited for
		// by Close.
		defer c.endTx(tx, true)
	}
	if err != nil {
		done()
		return sum, c.queryError(ctx, err, timeout)
	}
	defer rows.Close()
	types, err := rows.ColumnTypes()
	if err != nil {
		done()
		return sum, c.queryError(ctx, err, timeout)
	}
	conv := make([]converter, len(types))
	sum.Columns = make([]Column, len(types))
	for i, t := range types {
		sum.Columns[i] = Column{Name: t.Name(), Type: TypeName(t)}
		conv[i] = newConverter(sum.Columns[i].Type)
	}
	if onColumns != nil {
		if err := onColumns(sum.Columns); err != nil {
			c.cancel(ctx, opts.QueryID())
			return sum, err
		}
	}
	raw := make([]any, len(types))
	ptrs := make([]any, len(types))
	for i := range raw {
		ptrs[i] = &raw[i]
	}
	var bytes int64
	var first any // the first value of a one-column result
	for rows.Next() {
		if q.Limit > 0 && sum.RowCount >= q.Limit {
			sum.Truncated = true // a row beyond the limit exists
			break
		}
		if err := rows.Scan(ptrs...); err != nil {
			c.cancel(ctx, opts.QueryID())
			done()
			return sum, classify(err, "read a row of the result")
		}
		row := make([]any, len(raw))
		for i, v := range raw {
			row[i] = conv[i](v)
		}
		if q.MaxBytes > 0 {
			bytes += int64(jsonSize(row)) + 1 // the row and its separating comma
			if bytes > q.MaxBytes {
				sum.Truncated = true
				break
			}
		}
		if onRow != nil {
			if err := onRow(row); err != nil {
				c.cancel(ctx, opts.QueryID())
				return sum, err
			}
		}
		if sum.RowCount == 0 && len(row) == 1 {
			first = row[0]
		}
		sum.RowCount++
	}
	if err := rows.Err(); err != nil && !sum.Truncated {
		done()
		return sum, c.queryError(ctx, err, timeout)
	}
	if sum.Truncated {
		c.cancel(ctx, opts.QueryID())
	}
	// Closing rows with pages left cancels the query on the coordinator.
	if err := rows.Close(); err != nil && !sum.Truncated && ctx.Err() == nil {
		done()
		return sum, classify(err, "finish reading the result")
	}
	if n, ok := first.(int64); ok && sum.RowCount == 1 && len(sum.Columns) == 1 && sum.Columns[0].Name == "rows" && sum.Columns[0].Type == "bigint" && isWrite(sqlText) {
		sum.UpdateCount = n
	}
	return sum, nil
}

// isWrite reports whether sqlText starts with a keyword of a statement
// Trino answers with a row count.
func isWrite(sqlText string) bool {
	toks, err := sqlguard.Tokenize(sqlText)
	if err != nil || len(toks) == 0 {
		return false
	}
	switch toks[0].Value {
	case "INSERT", "UPDATE", "DELETE", "MERGE", "CREATE":
		return toks[0].Kind == sqlguard.Word
	}
	return false
}

// queryError explains a failed query, telling a timeout apart from a
// cancellation by the caller.
func (c *Client) queryError(ctx context.Context, err error, timeout time.Duration) error {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return newError(Timeout, "run the query", errors.New("no answer within "+timeout.String()+"; the query was cancelled on the engine"),
			"narrow the query, or raise SQLENGINE_QUERY_TIMEOUT")
	}
	if errors.Is(ctx.Err(), context.Canceled) {
		return newError(Canceled, "run the query", errors.New("cancelled by the caller; the query was cancelled on the engine"), "")
	}
	var te *TrinoError
	if errors.As(err, &te) {
		return classify(err, "run the query")
	}
	return classify(err, "run the query on "+c.cfg.URL())
}

// scanSQL runs a small metadata query and returns every row's raw values.
func (c *Client) scanSQL(ctx context.Context, q Query) (*Result, error) {
	q.MaxBytes = -1
	q.metadata = true
	if q.Limit == 0 {
		q.Limit = 1 << 20 // metadata listings are bounded by the engine's catalog
	}
	return c.Query(ctx, q)
}

// asString renders a metadata cell.
func asString(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return x
	case bool:
		if x {
			return "true"
		}
		return "false"
	default:
		b, _ := json.Marshal(x)
		return string(b)
	}
}
