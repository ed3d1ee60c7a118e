package mcpserver_test

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcpfleet/mcpfleet/shared/httpauth"

	"github.com/mcpfleet/mcpfleet/sqlmcp/internal/mcpserver"
	"github.com/mcpfleet/mcpfleet/sqlmcp/internal/trinotest"
)

// raw calls a tool and returns the whole result.
func (h *harness) raw(t testing.TB, ctx context.Context, tool string, args map[string]any) *mcp.CallToolResult {
	t.Helper()
	req := mcp.CallToolRequest{}
	req.Params.Name = tool
	req.Params.Arguments = args
	res, err := h.c.CallTool(ctx, req)
	if err != nil {
		t.Fatalf("%s: protocol error %v", tool, err)
	}
	return res
}

type page struct {
	Rows       [][]any `json:"rows"`
	RowCount   int     `json:"row_count"`
	Truncated  bool    `json:"truncated"`
	QueryID    string  `json:"query_id"`
	NextCursor string  `json:"next_cursor"`
	Format     string  `json:"format"`
	Data       string  `json:"data"`
}

func (h *harness) page(t testing.TB, ctx context.Context, tool string, args map[string]any) page {
	t.Helper()
	res := h.raw(t, ctx, tool, args)
	if res.IsError {
		t.Fatalf("%s(%v): %s", tool, args, res.Content[0].(mcp.TextContent).Text)
	}
	b, _ := json.Marshal(res.StructuredContent)
	var p page
	if err := json.Unmarshal(b, &p); err != nil {
		t.Fatal(err)
	}
	return p
}

func (h *harness) notFound(t testing.TB, ctx context.Context, cursor string) {
	t.Helper()
	res := h.raw(t, ctx, "fetch_more", map[string]any{"cursor": cursor})
	text := res.Content[0].(mcp.TextContent).Text
	if !res.IsError || !strings.Contains(text, "no open cursor") || !strings.Contains(text, "run execute_query again") {
		t.Fatalf("fetch_more of an unusable cursor: isError=%v %s", res.IsError, text)
	}
}

// ended waits (event-driven: the engine reports the query's end) for the
// query to end and checks it was cancelled.
func ended(t testing.TB, id string, want string) trinotest.QueryInfo {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	info, err := trino.WaitQuery(ctx, id)
	if err != nil {
		t.Fatalf("query %s did not end: %v", id, err)
	}
	if info.ErrorName != want {
		t.Fatalf("query %s ended with %q, want %q (%+v)", id, info.ErrorName, want, info)
	}
	return info
}

// TestPagingAcross50Pages reads 5,000 rows in 50 pages of 100: every id
// once, in order, from one engine query that is never run again.
func TestPagingAcross50Pages(t *testing.T) {
	h := newHarness(t, mcpserver.Options{}, nil)
	ctx := context.Background()
	const sqlText = "SELECT id, 'paging50' AS tag FROM warehouse.logs.events WHERE id <= 5000 ORDER BY id"
	p := h.page(t, ctx, "execute_query", map[string]any{"query": sqlText, "limit": 100})
	queryID := p.QueryID
	next := 1
	pages := 0
	for {
		pages++
		if p.QueryID != queryID {
			t.Fatalf("page %d from query %s, want %s: the query was run again", pages, p.QueryID, queryID)
		}
		for _, r := range p.Rows {
			if int(r[0].(float64)) != next {
				t.Fatalf("page %d: id %v, want %d", pages, r[0], next)
			}
			next++
		}
		if p.NextCursor == "" {
			break
		}
		if p.RowCount != 100 || !p.Truncated {
			t.Fatalf("page %d: %d rows, truncated %v", pages, p.RowCount, p.Truncated)
		}
		p = h.page(t, ctx, "fetch_more", map[string]any{"cursor": p.NextCursor})
	}
	if pages != 50 || next != 5001 || p.Truncated {
		t.Fatalf("%d pages, last id %d, truncated %v; want 50 pages of ids 1..5000", pages, next-1, p.Truncated)
	}
	n := 0
	for _, q := range trino.Queries() {
		if strings.Contains(q.SQL, "paging50") {
			n++
		}
	}
	if n != 1 {
		t.Errorf("the engine ran the query %d times, want 1", n)
	}
	ended(t, queryID, "") // read to the end: finished, not cancelled
}

// TestCursorOwnership: another identity's cursor is not found (and stays
// usable by its owner); without OAuth the zero identity owns it.
func TestCursorOwnership(t *testing.T) {
	h := newHarness(t, mcpserver.Options{}, nil)
	alice := httpauth.ContextWithIdentity(context.Background(), &httpauth.Identity{Issuer: "https://idp.example", Subject: "u-1", Username: "alice"})
	bob := httpauth.ContextWithIdentity(context.Background(), &httpauth.Identity{Issuer: "https://idp.example", Subject: "u-2", Username: "bob"})
	// Same subject at another issuer: a different principal.
	mallory := httpauth.ContextWithIdentity(context.Background(), &httpauth.Identity{Issuer: "https://evil.example", Subject: "u-1", Username: "alice"})
	p := h.page(t, alice, "execute_query", map[string]any{"query": "SELECT id FROM warehouse.logs.events WHERE id <= 30 ORDER BY id", "limit": 10})
	if p.NextCursor == "" {
		t.Fatal("no next_cursor")
	}
	h.notFound(t, bob, p.NextCursor)
	h.notFound(t, mallory, p.NextCursor)
	h.notFound(t, context.Background(), p.NextCursor)
	p2 := h.page(t, alice, "fetch_more", map[string]any{"cursor": p.NextCursor})
	if p2.RowCount != 10 || p2.Rows[0][0].(float64) != 11 {
		t.Fatalf("owner's next page: %+v", p2)
	}
	// A cursor read to the end is gone.
	p3 := h.page(t, alice, "fetch_more", map[string]any{"cursor": p2.NextCursor, "limit": 1000})
	if p3.NextCursor != "" || p3.RowCount != 10 {
		t.Fatalf("last page: %+v", p3)
	}
	h.notFound(t, alice, p2.NextCursor)
}

// TestCursorExpires: a cursor not fetched within SQLENGINE_CURSOR_TTL is
// gone and its engine query ends USER_CANCELED.
func TestCursorExpires(t *testing.T) {
	h := newHarness(t, mcpserver.Options{CursorTTL: 300 * time.Millisecond}, nil)
	ctx := context.Background()
	p := h.page(t, ctx, "execute_query", map[string]any{"query": "SELECT id FROM " + trinotest.LargeTable, "limit": 10})
	if p.NextCursor == "" {
		t.Fatal("no next_cursor")
	}
	info := ended(t, p.QueryID, "USER_CANCELED")
	if info.RowsRead >= trinotest.LargeTableRows {
		t.Errorf("the engine read every row of a query cancelled after 10: %+v", info)
	}
	h.notFound(t, ctx, p.NextCursor)
}

// TestCursorBoundPerCaller: a caller holding the most cursors that opens
// one more loses the least recently used (its query is cancelled); other
// callers' cursors are untouched. Closing the tools cancels the rest.
func TestCursorBoundPerCaller(t *testing.T) {
	h := newHarness(t, mcpserver.Options{CursorsPerCaller: 3}, nil)
	alice := httpauth.ContextWithIdentity(context.Background(), &httpauth.Identity{Issuer: "i", Subject: "alice"})
	bob := httpauth.ContextWithIdentity(context.Background(), &httpauth.Identity{Issuer: "i", Subject: "bob"})
	open := func(ctx context.Context) page {
		return h.page(t, ctx, "execute_query", map[string]any{"query": "SELECT id FROM " + trinotest.LargeTable, "limit": 5})
	}
	b := open(bob)
	var a []page
	for range 3 {
		a = append(a, open(alice))
	}
	// Using the first makes the second the least recently used.
	a[0] = h.page(t, alice, "fetch_more", map[string]any{"cursor": a[0].NextCursor})
	a = append(a, open(alice))
	ended(t, a[1].QueryID, "USER_CANCELED")
	h.notFound(t, alice, a[1].NextCursor)
	for _, p := range []page{a[0], a[2], a[3]} {
		if q, _ := trino.Query(p.QueryID); q.State == "FINISHED" || q.State == "FAILED" {
			t.Errorf("cursor %s was ended: %+v", p.QueryID, q)
		}
	}
	if q := h.page(t, bob, "fetch_more", map[string]any{"cursor": b.NextCursor}); q.RowCount != 5 {
		t.Errorf("bob's cursor: %+v", q)
	}
	h.tools.Close()
	for _, p := range []page{a[0], a[2], a[3], b} {
		ended(t, p.QueryID, "USER_CANCELED")
	}
}

// TestFormats: csv and markdown keep quotes, commas, line breaks, pipes
// and NULL apart; next_cursor stays in structuredContent.
func TestFormats(t *testing.T) {
	h := newHarness(t, mcpserver.Options{}, nil)
	ctx := context.Background()
	q := `SELECT * FROM (VALUES (1, 'say "hi"', 'a|b'), (2, 'line1` + "\n" + `line2', NULL), (3, 'x,y', '\|<b>')) AS t(n, "odd ""col""", "p|q") ORDER BY n`
	res := h.raw(t, ctx, "execute_query", map[string]any{"query": q, "format": "csv", "limit": 2})
	if res.IsError {
		t.Fatal(res.Content[0].(mcp.TextContent).Text)
	}
	text := res.Content[0].(mcp.TextContent).Text
	recs, err := csv.NewReader(strings.NewReader(text)).ReadAll()
	if err != nil {
		t.Fatalf("csv does not parse: %v\n%s", err, text)
	}
	want := [][]string{{"n", `odd "col"`, "p|q"}, {"1", `say "hi"`, "a|b"}, {"2", "line1\nline2", ""}}
	if fmt.Sprint(recs) != fmt.Sprint(want) {
		t.Errorf("csv = %q, want %q", recs, want)
	}
	b, _ := json.Marshal(res.StructuredContent)
	var p page
	json.Unmarshal(b, &p)
	if p.Format != "csv" || p.Data != text || p.NextCursor == "" || p.Rows != nil {
		t.Errorf("structuredContent %s", b)
	}
	if len(res.Content) != 2 || !strings.Contains(res.Content[1].(mcp.TextContent).Text, p.NextCursor) {
		t.Errorf("no note of the cursor: %+v", res.Content)
	}
	// The next page in markdown.
	md := h.page(t, ctx, "fetch_more", map[string]any{"cursor": p.NextCursor, "format": "markdown"})
	wantMD := "| n | odd \"col\" | p\\|q |\n| --- | --- | --- |\n| 3 | x,y | \\\\\\|&lt;b&gt; |\n"
	if md.Data != wantMD || md.NextCursor != "" {
		t.Errorf("markdown = %q, want %q", md.Data, wantMD)
	}
	// A line break and NULL in markdown.
	md = h.page(t, ctx, "execute_query", map[string]any{"query": q, "format": "markdown"})
	lines := strings.Split(strings.TrimSuffix(md.Data, "\n"), "\n")
	if len(lines) != 5 || lines[3] != "| 2 | line1<br>line2 | *NULL* |" || lines[2] != `| 1 | say "hi" | a\|b |` {
		t.Errorf("markdown table:\n%s", md.Data)
	}
}

// TestPagingHostileArguments: bad cursors, formats and limits are refused
// before any engine request and change nothing.
func TestPagingHostileArguments(t *testing.T) {
	h := newHarness(t, mcpserver.Options{}, nil)
	ctx := context.Background()
	p := h.page(t, ctx, "execute_query", map[string]any{"query": "SELECT id FROM warehouse.logs.events WHERE id <= 30 ORDER BY id", "limit": 10})
	cases := []struct {
		tool string
		args map[string]any
		want string
	}{
		{"fetch_more", map[string]any{}, `"cursor"`},
		{"fetch_more", map[string]any{"cursor": ""}, `"cursor"`},
		{"fetch_more", map[string]any{"cursor": "   "}, `"cursor"`},
		{"fetch_more", map[string]any{"cursor": "nope"}, "no open cursor"},
		{"fetch_more", map[string]any{"cursor": p.NextCursor + "x"}, "no open cursor"},
		{"fetch_more", map[string]any{"cursor": p.NextCursor[:len(p.NextCursor)-1]}, "no open cursor"},
		{"fetch_more", map[string]any{"cursor": strings.ToUpper(p.NextCursor)}, "no open cursor"},
		{"fetch_more", map[string]any{"cursor": "\x00\x1b[31m" + strings.Repeat("A", 5000)}, "no open cursor"},
		{"fetch_more", map[string]any{"cursor": "' OR 1=1 --"}, "no open cursor"},
		{"fetch_more", map[string]any{"cursor": "../" + p.NextCursor}, "no open cursor"},
		{"fetch_more", map[string]any{"cursor": p.NextCursor, "limit": 0}, `"limit"`},
		{"fetch_more", map[string]any{"cursor": p.NextCursor, "limit": -1}, `"limit"`},
		{"fetch_more", map[string]any{"cursor": p.NextCursor, "limit": 10001}, `"limit"`},
		{"fetch_more", map[string]any{"cursor": p.NextCursor, "limit": 1.5}, `"limit"`},
		{"fetch_more", map[string]any{"cursor": p.NextCursor, "format": "xml"}, `"format"`},
		{"fetch_more", map[string]any{"cursor": p.NextCursor, "format": "CSV"}, `"format"`},
		{"fetch_more", map[string]any{"cursor": p.NextCursor, "format": "csv\n"}, `"format"`},
		{"fetch_more", map[string]any{"cursor": p.NextCursor, "format": " json"}, `"format"`},
		{"fetch_more", map[string]any{"cursor": p.NextCursor, "format": ""}, `"format"`}, // omit it for the default
		{"execute_query", map[string]any{"query": "SELECT 1", "format": "html"}, `"format"`},
		{"execute_query", map[string]any{"query": "SELECT 1", "format": "markdown; DROP TABLE x"}, `"format"`},
		{"execute_query", map[string]any{"query": "SELECT 1", "format": "Json"}, `"format"`},
	}
	for _, tc := range cases {
		before := len(trino.Statements())
		res := h.raw(t, ctx, tc.tool, tc.args)
		text := res.Content[0].(mcp.TextContent).Text
		if !res.IsError || !strings.Contains(text, tc.want) {
			t.Errorf("%s %q: isError=%v %.200s", tc.tool, tc.args, res.IsError, text)
		}
		if strings.ContainsAny(text, "\x00\x1b") || len(text) > 2000 {
			t.Errorf("%s: the error echoes the hostile value: %q", tc.tool, text)
		}
		if n := len(trino.Statements()); n != before {
			t.Errorf("%s %q: %d requests reached the engine", tc.tool, tc.args, n-before)
		}
	}
	// The cursor survived every refusal.
	if q := h.page(t, ctx, "fetch_more", map[string]any{"cursor": p.NextCursor}); q.RowCount != 10 {
		t.Errorf("after the refusals: %+v", q)
	}
	t.Logf("%d hostile paging arguments", len(cases))
}
