package cli

import (
	"bufio"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/mattn/go-runewidth"
)

// Column is one result column as the printers see it.
type Column struct {
	Name string `json:"name"`
	Type string `json:"type"`
}

// Summary is what is known about a result once its rows end.
type Summary struct {
	RowCount    int
	Truncated   bool
	Limit       int
	QueryID     string
	ElapsedMS   int64
	UpdateCount int64
}

// printer renders one streamed result: columns first, then rows as they
// arrive, then the summary.
type printer interface {
	Columns(cols []Column) error
	Row(row []any) error
	End(sum Summary) error
	// Abort writes out what was received when the result ends in an error.
	Abort()
}

// formats accepted by --format and \format.
var formatNames = []string{"table", "json", "csv"}

// newPrinter returns a printer for format writing to w. footer adds the
// elapsed time to the table footer (the shell shows it; one-shot commands
// keep output reproducible).
func newPrinter(format string, w io.Writer, timing bool) printer {
	fw := &flushWriter{w: bufio.NewWriterSize(w, 64<<10), every: 200 * time.Millisecond}
	switch format {
	case "json":
		return &jsonPrinter{w: fw}
	case "csv":
		return &csvPrinter{fw: fw, w: csv.NewWriter(fw)}
	default:
		return &tablePrinter{w: fw, timing: timing, batch: tableBatch, wait: 500 * time.Millisecond}
	}
}

// flushWriter buffers output in large chunks and flushes what is pending
// at most one interval after it was written, so a large result is written
// efficiently while a stream that pauses still shows up on the terminal.
type flushWriter struct {
	mu        sync.Mutex
	w         *bufio.Writer
	every     time.Duration
	timer     *time.Timer
	scheduled bool
}

func (f *flushWriter) Write(p []byte) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	n, err := f.w.Write(p)
	if !f.scheduled && f.w.Buffered() > 0 {
		f.scheduled = true
		f.timer = time.AfterFunc(f.every, func() {
			f.mu.Lock()
			defer f.mu.Unlock()
			f.scheduled = false
			f.w.Flush()
		})
	}
	return n, err
}

// Flush writes out everything pending now.
func (f *flushWriter) Flush() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.scheduled {
		f.timer.Stop()
		f.scheduled = false
	}
	return f.w.Flush()
}

// ---- table ----

// tableBatch rows are collected before the column widths are fixed; later
// rows wider than their column are cut with "…" so the alignment holds while
// a long result streams.
const tableBatch = 1000

type tablePrinter struct {
	mu      sync.Mutex // Row and the first-batch timer
	timer   *time.Timer
	w       *flushWriter
	timing  bool
	batch   int
	wait    time.Duration
	cols    []Column
	right   []bool
	widths  []int
	pending [][]string
	fixed   bool
}

func (p *tablePrinter) Columns(cols []Column) error {
	p.cols = cols
	p.right = make([]bool, len(cols))
	for i, c := range cols {
		p.right[i] = numericType(c.Type)
	}
	return nil
}

func (p *tablePrinter) Row(row []any) error {
	cells := make([]string, len(row))
	for i, v := range row {
		cells[i] = tableCell(v)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.fixed {
		p.writeRow(cells)
		return nil
	}
	if len(p.pending) == 0 {
		// Rows that trickle in are shown after the wait even if no
		// further row comes to trigger it.
		p.timer = time.AfterFunc(p.wait, func() {
			p.mu.Lock()
			defer p.mu.Unlock()
			if !p.fixed && p.cols != nil {
				p.fix()
				p.w.Flush()
			}
		})
	}
	p.pending = append(p.pending, cells)
	if len(p.pending) >= p.batch {
		p.fix()
		return p.w.Flush()
	}
	return nil
}

// stopTimer stops the first-batch timer; callers hold p.mu.
func (p *tablePrinter) stopTimer() {
	if p.timer != nil {
		p.timer.Stop()
	}
}

// fix computes the column widths from the pending rows and prints them
// with the header.
func (p *tablePrinter) fix() {
	p.widths = make([]int, len(p.cols))
	for i, c := range p.cols {
		p.widths[i] = displayWidth(escapeControl(c.Name))
	}
	for _, r := range p.pending {
		for i, c := range r {
			if i < len(p.widths) {
				p.widths[i] = max(p.widths[i], displayWidth(c))
			}
		}
	}
	header := make([]string, len(p.cols))
	for i, c := range p.cols {
		header[i] = escapeControl(c.Name)
	}
	right := p.right
	p.right = make([]bool, len(p.cols)) // headers are left-aligned
	p.writeRow(header)
	p.right = right
	var b strings.Builder
	for i, w := range p.widths {
		if i > 0 {
			b.WriteString("+")
		}
		b.WriteString(strings.Repeat("-", w+2))
	}
	fmt.Fprintln(p.w, b.String())
	for _, r := range p.pending {
		p.writeRow(r)
	}
	p.pending = nil
	p.fixed = true
}

func (p *tablePrinter) writeRow(cells []string) {
	var b strings.Builder
	for i, w := range p.widths {
		c := ""
		if i < len(cells) {
			c = cells[i]
		}
		cw := displayWidth(c)
		if cw > w {
			c = truncate(c, cw, w)
			cw = displayWidth(c)
		}
		if i > 0 {
			b.WriteByte('|')
		}
		b.WriteByte(' ')
		if p.right[i] {
			pad(&b, w-cw)
			b.WriteString(c)
		} else {
			b.WriteString(c)
			pad(&b, w-cw)
		}
		b.WriteByte(' ')
	}
	line := strings.TrimRight(b.String(), " ")
	io.WriteString(p.w, line+"\n")
}

func pad(b *strings.Builder, n int) {
	for ; n > 0; n-- {
		b.WriteByte(' ')
	}
}

// truncate cuts s (of display width sw) to width w, ending in "…".
func truncate(s string, sw, w int) string {
	if sw == len(s) { // ASCII
		if w < 1 {
			return ""
		}
		return s[:w-1] + "…"
	}
	return runewidth.Truncate(s, w, "…")
}

// displayWidth is the terminal width of s: its length for ASCII (the common
// case, and much faster), else the East-Asian-aware width.
func displayWidth(s string) int {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return runewidth.StringWidth(s)
		}
	}
	return len(s)
}

func (p *tablePrinter) End(sum Summary) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.stopTimer()
	if len(p.cols) == 0 {
		// A statement without a result set (only possible when writes are allowed).
		if sum.UpdateCount > 0 {
			fmt.Fprintf(p.w, "OK (%d %s affected)\n", sum.UpdateCount, plural(int(sum.UpdateCount), "row", "rows"))
		} else {
			fmt.Fprintln(p.w, "OK")
		}
		return p.w.Flush()
	}
	if !p.fixed {
		p.fix()
	}
	footer := fmt.Sprintf("(%d %s", sum.RowCount, plural(sum.RowCount, "row", "rows"))
	if sum.Truncated {
		footer += fmt.Sprintf("; more rows exist, stopped at the limit of %d; raise --limit", sum.Limit)
		if sum.Limit == 0 {
			footer = fmt.Sprintf("(%d %s; result truncated", sum.RowCount, plural(sum.RowCount, "row", "rows"))
		}
	}
	if p.timing {
		footer += fmt.Sprintf(", %.2f s", float64(sum.ElapsedMS)/1000)
	}
	fmt.Fprintln(p.w, footer+")")
	return p.w.Flush()
}

func (p *tablePrinter) Abort() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.stopTimer()
	if !p.fixed && p.cols != nil {
		p.fix()
	}
	p.w.Flush()
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// numericType reports whether a Trino type is right-aligned in tables.
func numericType(t string) bool {
	for _, p := range []string{"tinyint", "smallint", "integer", "bigint", "real", "double", "decimal"} {
		if t == p || strings.HasPrefix(t, p+"(") {
			return true
		}
	}
	return false
}

// tableCell renders a value for the table format: NULL for null, control
// characters escaped so a value never breaks a line.
func tableCell(v any) string {
	if v == nil {
		return "NULL"
	}
	return escapeControl(textValue(v))
}

// textValue renders a non-null value as text (tables and CSV).
func textValue(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case bool:
		return strconv.FormatBool(x)
	case int64:
		return strconv.FormatInt(x, 10)
	case int:
		return strconv.Itoa(x)
	case int32:
		return strconv.FormatInt(int64(x), 10)
	case float64:
		if math.IsNaN(x) {
			return "NaN"
		}
		if math.IsInf(x, 0) {
			if x > 0 {
				return "Infinity"
			}
			return "-Infinity"
		}
		return strconv.FormatFloat(x, 'g', -1, 64)
	case json.Number:
		return x.String()
	case json.RawMessage:
		return string(x)
	case fmt.Stringer:
		return x.String()
	default:
		b, err := json.Marshal(x)
		if err != nil {
			return fmt.Sprint(x)
		}
		return string(b)
	}
}

func escapeControl(s string) string {
	if !strings.ContainsFunc(s, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		switch {
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\x%02x`, r)
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// ---- csv ----

type csvPrinter struct {
	fw *flushWriter
	w  *csv.Writer
	n  int
}

func (p *csvPrinter) Columns(cols []Column) error {
	p.n = len(cols)
	if len(cols) == 0 {
		return nil
	}
	rec := make([]string, len(cols))
	for i, c := range cols {
		rec[i] = c.Name
	}
	return p.w.Write(rec)
}

func (p *csvPrinter) Row(row []any) error {
	rec := make([]string, len(row))
	for i, v := range row {
		if v != nil { // NULL is an empty field
			rec[i] = textValue(v)
		}
	}
	if err := p.w.Write(rec); err != nil {
		return err
	}
	// encoding/csv buffers too; hand each record to the flushWriter.
	p.w.Flush()
	return p.w.Error()
}

func (p *csvPrinter) Abort() {
	p.w.Flush()
	p.fw.Flush()
}

func (p *csvPrinter) End(Summary) error {
	p.w.Flush()
	if err := p.w.Error(); err != nil {
		return err
	}
	return p.fw.Flush()
}

// ---- json ----

// jsonPrinter streams the execute_query result shape: columns, rows (one per
// line), row_count, truncated, limit, query_id, elapsed_ms.
type jsonPrinter struct {
	w    *flushWriter
	rows int
	buf  strings.Builder
}

func (p *jsonPrinter) marshal(v any) (string, error) {
	p.buf.Reset()
	enc := json.NewEncoder(&p.buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return "", err
	}
	return strings.TrimSuffix(p.buf.String(), "\n"), nil
}

func (p *jsonPrinter) Columns(cols []Column) error {
	if cols == nil {
		cols = []Column{}
	}
	s, err := p.marshal(cols)
	if err != nil {
		return err
	}
	fmt.Fprintf(p.w, "{\n  \"columns\": %s,\n  \"rows\": [", s)
	return nil
}

func (p *jsonPrinter) Row(row []any) error {
	s, err := p.marshal(row)
	if err != nil {
		return fmt.Errorf("encode a row as JSON: %w", err)
	}
	sep := ",\n    "
	if p.rows == 0 {
		sep = "\n    "
	}
	p.rows++
	_, err = io.WriteString(p.w, sep+s)
	return err
}

func (p *jsonPrinter) Abort() {
	io.WriteString(p.w, "\n")
	p.w.Flush()
}

func (p *jsonPrinter) End(sum Summary) error {
	if p.rows > 0 {
		io.WriteString(p.w, "\n  ")
	}
	qid, _ := p.marshal(sum.QueryID)
	fmt.Fprintf(p.w, "],\n  \"row_count\": %d,\n  \"truncated\": %t,\n  \"limit\": %d,\n  \"query_id\": %s,\n  \"elapsed_ms\": %d\n}\n",
		sum.RowCount, sum.Truncated, sum.Limit, qid, sum.ElapsedMS)
	return p.w.Flush()
}
