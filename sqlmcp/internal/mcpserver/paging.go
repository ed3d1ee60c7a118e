package mcpserver

import (
	"cmp"
	"container/list"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcpfleet/mcpfleet/shared/httpauth"
	"github.com/mcpfleet/mcpfleet/shared/mcperr"

	"github.com/mcpfleet/mcpfleet/sqlmcp/internal/engine"
)

// Defaults of the cursor store.
const (
	// DefaultCursorTTL is how long a cursor waits for its next fetch_more:
	// below Trino's query.client.timeout (5 minutes), after which the
	// coordinator itself abandons a query whose client stopped fetching.
	DefaultCursorTTL = 4 * time.Minute
	// DefaultCursorsPerCaller is how many open cursors one identity holds.
	DefaultCursorsPerCaller = 8
)

// heldCursor is an engine query held open for its next page.
type heldCursor struct {
	id     string
	owner  httpauth.Principal
	cur    *engine.Cursor
	limit  int    // the page size asked for when it was opened
	format string // the format asked for when it was opened
	timer  *time.Timer
	elem   *list.Element // in its owner's list, oldest first
}

// cursors holds the open cursors: found by id and owner together (another
// identity's cursor is not found), ended after ttl without a fetch (the
// engine query is cancelled), at most perOwner per identity (the least
// recently used is ended to make room).
type cursors struct {
	ttl      time.Duration
	perOwner int

	mu      sync.Mutex
	byID    map[string]*heldCursor
	byOwner map[httpauth.Principal]*list.List
}

func newCursors(ttl time.Duration, perOwner int) *cursors {
	if ttl <= 0 {
		ttl = DefaultCursorTTL
	}
	if perOwner <= 0 {
		perOwner = DefaultCursorsPerCaller
	}
	return &cursors{ttl: ttl, perOwner: perOwner, byID: map[string]*heldCursor{}, byOwner: map[httpauth.Principal]*list.List{}}
}

// put holds cur for the caller in ctx and returns its id.
func (s *cursors) put(ctx context.Context, cur *engine.Cursor, limit int, format string) string {
	var b [18]byte
	rand.Read(b[:])
	h := &heldCursor{id: base64.RawURLEncoding.EncodeToString(b[:]), owner: httpauth.PrincipalFromContext(ctx), cur: cur, limit: limit, format: format}
	s.hold(h)
	return h.id
}

// take removes and returns the caller's cursor id, or a not-found error
// that says the same whether the cursor never existed, ended, expired or
// belongs to someone else.
func (s *cursors) take(ctx context.Context, id string) (*heldCursor, error) {
	owner := httpauth.PrincipalFromContext(ctx)
	s.mu.Lock()
	defer s.mu.Unlock()
	h, ok := s.byID[id]
	if !ok || h.owner != owner {
		return nil, mcperr.New(mcperr.NotFound, "continue the query",
			errors.New("no open cursor "+quoteShort(id)+" for this caller: it was read to the end, expired after "+s.ttl.String()+" without a fetch (SQLENGINE_CURSOR_TTL), was replaced by newer cursors (at most "+itoa(s.perOwner)+" per caller), or never existed"),
			"run execute_query again")
	}
	s.removeLocked(h)
	return h, nil
}

// hold keeps h as its owner's most recent cursor for the time to live
// (a new cursor, or one taken for a page and put back, its time to live
// renewed), ending the owner's least recently used one beyond the bound.
func (s *cursors) hold(h *heldCursor) {
	s.mu.Lock()
	l := s.byOwner[h.owner]
	if l == nil {
		l = list.New()
		s.byOwner[h.owner] = l
	}
	var evicted *heldCursor
	if l.Len() >= s.perOwner {
		evicted = l.Front().Value.(*heldCursor)
		s.removeLocked(evicted)
	}
	h.elem = l.PushBack(h)
	s.byID[h.id] = h
	h.timer = time.AfterFunc(s.ttl, func() { s.expire(h) })
	s.mu.Unlock()
	if evicted != nil {
		evicted.cur.Close()
	}
}

func (s *cursors) removeLocked(h *heldCursor) {
	if s.byID[h.id] != h {
		return
	}
	delete(s.byID, h.id)
	h.timer.Stop()
	l := s.byOwner[h.owner]
	l.Remove(h.elem)
	if l.Len() == 0 {
		delete(s.byOwner, h.owner)
	}
}

// expire ends h if it is still held (not taken for a page meanwhile).
func (s *cursors) expire(h *heldCursor) {
	s.mu.Lock()
	held := s.byID[h.id] == h
	if held {
		s.removeLocked(h)
	}
	s.mu.Unlock()
	if held {
		h.cur.Close()
	}
}

// closeAll ends every held cursor (server shutdown).
func (s *cursors) closeAll() {
	s.mu.Lock()
	all := make([]*heldCursor, 0, len(s.byID))
	for _, h := range s.byID {
		all = append(all, h)
		s.removeLocked(h)
	}
	s.mu.Unlock()
	for _, h := range all {
		h.cur.Close()
	}
}

// quoteShort quotes a caller's cursor for an error, cut and with control
// characters escaped.
func quoteShort(s string) string {
	if len(s) > 40 {
		s = s[:40] + "..."
	}
	return strconv.QuoteToASCII(s)
}

func itoa(n int) string { return strconv.Itoa(n) }

// pageResult is the output of execute_query and fetch_more.
type pageResult struct {
	Columns    []engine.Column `json:"columns"`
	Rows       *[][]any        `json:"rows,omitempty"`
	Format     string          `json:"format,omitempty"`
	Data       *string         `json:"data,omitempty"`
	RowCount   int             `json:"row_count"`
	Truncated  bool            `json:"truncated"`
	Limit      int             `json:"limit"`
	QueryID    string          `json:"query_id"`
	ElapsedMS  int64           `json:"elapsed_ms"`
	NextCursor string          `json:"next_cursor,omitempty"`
}

// checkFormat refuses an unknown format; "" is the default.
func checkFormat(tool, f string) (string, error) {
	switch f {
	case "", FormatJSON, FormatCSV, FormatMarkdown:
		return f, nil
	}
	return "", mcperr.Invalidf("%s: argument %q is %s; give json, csv or markdown", tool, "format", quoteShort(f))
}

// openPage starts q and returns its first page, holding the query open
// when more rows exist.
func (t *Tools) openPage(ctx context.Context, tool string, q engine.Query, format string) (*mcp.CallToolResult, error) {
	start := time.Now()
	cur, err := t.eng.Open(ctx, q)
	if err != nil {
		return t.fail(ctx, tool, err)
	}
	h := &heldCursor{cur: cur, limit: q.Limit, format: cmp.Or(format, FormatJSON)}
	return t.page(ctx, tool, h, q.Limit, h.format, start, true)
}

// fetchMore is fetch_more: the next page of the caller's cursor.
func (t *Tools) fetchMore(ctx context.Context, in fetchIn) (*mcp.CallToolResult, error) {
	const tool = "fetch_more"
	start := time.Now()
	if err := notBlank(tool, "cursor", in.Cursor); err != nil {
		return t.fail(ctx, tool, err)
	}
	format, err := checkFormat(tool, in.Format)
	if err != nil {
		return t.fail(ctx, tool, err)
	}
	if in.Limit < 0 || in.Limit > t.opts.MaxRowsCeiling {
		return t.fail(ctx, tool, mcperr.Invalidf("%s: argument %q must be between 1 and %d (SQLENGINE_MAX_ROWS_CEILING)", tool, "limit", t.opts.MaxRowsCeiling))
	}
	h, err := t.curs.take(ctx, in.Cursor)
	if err != nil {
		return t.fail(ctx, tool, err)
	}
	return t.page(ctx, tool, h, cmp.Or(in.Limit, h.limit), cmp.Or(format, h.format), start, false)
}

// page reads the next page of h and words it; h is held again while rows
// remain.
func (t *Tools) page(ctx context.Context, tool string, h *heldCursor, limit int, format string, start time.Time, first bool) (*mcp.CallToolResult, error) {
	rows, more, err := h.cur.Page(ctx, limit, t.eng.Config().MaxResultBytes)
	if err != nil {
		return t.fail(ctx, tool, err)
	}
	res := pageResult{Columns: h.cur.Columns(), RowCount: len(rows), Truncated: more, Limit: limit,
		QueryID: h.cur.QueryID(), ElapsedMS: time.Since(start).Milliseconds()}
	if more {
		if first {
			res.NextCursor = t.curs.put(ctx, h.cur, h.limit, h.format)
		} else {
			t.curs.hold(h)
			res.NextCursor = h.id
		}
	}
	t.logger.Debug("page read", "tool", tool, "query_id", res.QueryID, "rows", res.RowCount, "more", more, "elapsed_ms", res.ElapsedMS)
	if format == FormatJSON {
		res.Rows = &rows
		return result(res)
	}
	data := renderCSV(res.Columns, rows)
	if format == FormatMarkdown {
		data = renderMarkdown(res.Columns, rows)
	}
	res.Format, res.Data = format, &data
	b, err := json.Marshal(res)
	if err != nil {
		return mcperr.ToolResult(mcperr.New(mcperr.Internal, "encode the result", err, "")), nil
	}
	out := mcp.NewToolResultStructured(json.RawMessage(b), data)
	if more {
		out.Content = append(out.Content, mcp.NewTextContent(fmt.Sprintf("%d rows shown; more exist: call fetch_more with cursor %q.", len(rows), res.NextCursor)))
	}
	return out, nil
}
