package haproxy

import (
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Object types of the CSV "type" column.
var objectTypes = [...]string{0: "frontend", 1: "backend", 2: "server", 3: "listener"}

// textColumns are never converted to numbers, even when a value looks
// numeric (a server may be called "1").
var textColumns = map[string]bool{
	"pxname": true, "svname": true, "status": true, "check_status": true, "last_chk": true,
	"last_agt": true, "agent_status": true, "check_desc": true, "agent_desc": true, "addr": true,
	"cookie": true, "mode": true, "algo": true, "tracked": true,
}

// statHeader is the column list of one CSV answer, shared by its rows.
type statHeader struct {
	names []string       // by position; "" for columns to skip ("-", trailing empty)
	index map[string]int // name → position
	text  []bool         // column is never numeric
	typ   int            // position of "type", -1 when absent
}

// StatRow is one CSV row of "show stat" / the stats page, addressed by
// header name; StatTable writes rows as JSON.
type StatRow struct {
	h *statHeader
	// text is the record's line, a substring of the one copy of the
	// answer; for a quoted record, its decoded cells joined by ",".
	text string
	// ends[i] is where cell i ends in text; it starts one byte (the comma)
	// after cell i-1 ends. Offsets rather than a []string per row: 4 bytes
	// a cell instead of 16, and nothing for the garbage collector to scan
	// (the string slab was most of a fleet show_stat's allocations).
	ends []uint32
}

// at returns cell i's text ("" when the row has fewer cells).
func (r StatRow) at(i int) string {
	if i >= len(r.ends) {
		return ""
	}
	start := 0
	if i > 0 {
		start = int(r.ends[i-1]) + 1
	}
	return r.text[start:r.ends[i]]
}

// ParseStatCSV parses HAProxy's CSV statistics by header name. It accepts
// quoted fields with commas and doubled quotes, the "-" separator column
// and later versions' extra columns.
func ParseStatCSV(data []byte) ([]StatRow, error) {
	data = bytes.TrimLeft(data, "\n")
	if !bytes.HasPrefix(data, []byte("# ")) {
		return nil, errNoStatHeader
	}
	// One copy of the answer; every row's text is a substring of it.
	return parseStat(string(data))
}

var errNoStatHeader = errors.New("statistics CSV: no \"# pxname,...\" header line")

// parseStat is ParseStatCSV on a string, the runtime API's answer as it
// arrived: no copy at all.
func parseStat(text string) ([]StatRow, error) {
	text = strings.TrimLeft(text, "\n")
	rest, ok := strings.CutPrefix(text, "# ")
	if !ok {
		return nil, errNoStatHeader
	}
	header, rest, err := nextRecord(rest)
	if err != nil {
		return nil, fmt.Errorf("statistics CSV header: %w", err)
	}
	h := &statHeader{names: make([]string, len(header)), index: make(map[string]int, len(header)), text: make([]bool, len(header)), typ: -1}
	for i, name := range header {
		if name == "" || name == "-" {
			continue
		}
		if _, dup := h.index[name]; dup {
			continue
		}
		h.names[i] = name
		h.index[name] = i
		h.text[i] = textColumns[name]
		if name == "type" {
			h.typ = i
		}
	}
	ncols := len(h.names)
	nrows := strings.Count(rest, "\n") + 1
	rows := make([]StatRow, 0, nrows)
	// Rows' offsets share arrays of up to 32 KiB, the largest small
	// allocation: one large one per answer would go back to the OS
	// between calls and fault in again on the next. No row has more
	// than ncols cells; a row that does not fit starts the next array.
	const block = 8 << 10
	var slab []uint32
	left := nrows * ncols // an upper bound on the offsets still to come
	for rest != "" {
		line, after, _ := strings.Cut(rest, "\n")
		line = strings.TrimSuffix(line, "\r")
		if line == "" {
			rest = after
			continue // empty line
		}
		if len(line) > maxStatRow {
			return nil, errHugeRow(len(line))
		}
		text := line
		if cap(slab)-len(slab) < ncols {
			slab = make([]uint32, 0, max(min(left, block), ncols))
		}
		start := len(slab)
		if strings.IndexByte(line, '"') < 0 {
			slab = splitCells(slab, line, ncols)
			rest = after
		} else {
			var rec []string
			if rec, rest, err = nextRecord(rest); err != nil {
				return nil, fmt.Errorf("statistics CSV: %w", err)
			}
			if len(rec) > ncols {
				rec = rec[:ncols]
			}
			text = strings.Join(rec, ",")
			if len(text) > maxStatRow { // a quoted row over several lines
				return nil, errHugeRow(len(text))
			}
			end := -1
			for _, c := range rec {
				end += 1 + len(c)
				slab = append(slab, uint32(end))
			}
		}
		// capped: an append to one row never writes into the next
		rows = append(rows, StatRow{h: h, text: text, ends: slab[start:len(slab):len(slab)]})
		left -= len(slab) - start
	}
	return rows, nil
}

// maxStatRow bounds one row of statistics: HAProxy's rows are a few KiB
// (about a hundred short cells and a check message), and cells are uint32
// offsets into their row.
const maxStatRow = 1 << 20

func errHugeRow(n int) error {
	return fmt.Errorf("statistics CSV: a row of %d bytes, over the %d proxymcp reads; HAProxy writes rows of a few KiB: check that the runtime API or stats URL is an HAProxy", n, maxStatRow)
}

// splitCells appends to ends where each of line's comma-separated cells
// ends, for at most max cells (a later version's extra columns are
// dropped), and returns ends.
func splitCells(ends []uint32, line string, max int) []uint32 {
	// A byte loop: cells average a few bytes, too short for IndexByte's
	// call to pay off.
	if max == 0 {
		return ends
	}
	n := 0
	for i := 0; i < len(line); i++ {
		if line[i] == ',' {
			if n++; n == max {
				return append(ends, uint32(i))
			}
			ends = append(ends, uint32(i))
		}
	}
	if n < max {
		ends = append(ends, uint32(len(line)))
	}
	return ends
}

// nextRecord splits the first CSV record off s. Lines without a quote (all
// but the rare health-check message quoted for its comma or quote) are split
// in place; the others go through encoding/csv. An empty line gives nil.
func nextRecord(s string) (rec []string, rest string, err error) {
	line, rest, _ := strings.Cut(s, "\n")
	line = strings.TrimSuffix(line, "\r")
	if !strings.Contains(line, `"`) {
		if line == "" {
			return nil, rest, nil
		}
		return strings.Split(line, ","), rest, nil
	}
	r := csv.NewReader(strings.NewReader(s))
	r.FieldsPerRecord = -1
	if rec, err = r.Read(); err != nil {
		return nil, "", err
	}
	return rec, s[r.InputOffset():], nil
}

// cell returns a column's raw text and whether it is set.
func (r StatRow) cell(name string) (string, bool) {
	if r.h == nil {
		return "", false
	}
	i, ok := r.h.index[name]
	if !ok {
		return "", false
	}
	v := r.at(i)
	return v, v != ""
}

// num reports a cell's integer value when its column is numeric.
func (r StatRow) num(i int) (int64, bool) {
	if r.h.text[i] {
		return 0, false
	}
	n, err := strconv.ParseInt(r.at(i), 10, 64)
	return n, err == nil
}

// Str returns a column as text ("" when absent).
func (r StatRow) Str(name string) string {
	v, _ := r.cell(name)
	return v
}

// Int returns a numeric column (0 when absent or not a number).
func (r StatRow) Int(name string) int64 {
	if _, ok := r.cell(name); !ok {
		return 0
	}
	n, _ := r.num(r.h.index[name])
	return n
}

// Type returns "frontend", "backend", "server" or "listener".
func (r StatRow) Type() string {
	if r.h == nil || r.h.typ < 0 {
		return ""
	}
	switch r.at(r.h.typ) {
	case "0":
		return objectTypes[0]
	case "1":
		return objectTypes[1]
	case "2":
		return objectTypes[2]
	case "3":
		return objectTypes[3]
	}
	return ""
}

// StatColumn reads one column from rows, looking its position up once per
// answer (rows of one answer share their header) instead of once per cell:
// for code that reads a few columns of every row. Not safe for concurrent
// use; make one per goroutine.
type StatColumn struct {
	name string
	h    *statHeader // the header i was looked up in
	i    int         // -1: that header has no such column
}

// Column returns a StatColumn for the column name.
func Column(name string) StatColumn { return StatColumn{name: name, i: -1} }

func (c *StatColumn) index(r StatRow) int {
	if r.h == nil {
		return -1
	}
	if r.h != c.h {
		c.h, c.i = r.h, -1
		if i, ok := r.h.index[c.name]; ok {
			c.i = i
		}
	}
	return c.i
}

// Str returns the column's text in r, as r.Str does.
func (c *StatColumn) Str(r StatRow) string {
	i := c.index(r)
	if i < 0 {
		return ""
	}
	return r.at(i)
}

// Int returns the column's number in r, as r.Int does.
func (c *StatColumn) Int(r StatRow) int64 {
	i := c.index(r)
	if i < 0 || r.at(i) == "" {
		return 0
	}
	n, _ := r.num(i)
	return n
}

// IntString is strconv.FormatInt(c.Int(r), 10) without formatting (or
// allocating) when the cell is already written that way, as it is in
// HAProxy's answers.
func (c *StatColumn) IntString(r StatRow) string {
	if i := c.index(r); i >= 0 && !r.h.text[i] {
		if v := r.at(i); isInt(v) && v != "-0" {
			return v
		}
	}
	return strconv.FormatInt(c.Int(r), 10)
}

const hexDigits = "0123456789abcdef"

// appendJSONString quotes s as encoding/json does (without HTML escaping):
// control characters escaped, invalid UTF-8 replaced by U+FFFD, U+2028 and
// U+2029 escaped.
func appendJSONString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xf])
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// StatTable is rows of one statistics answer and the columns to show.
type StatTable struct {
	Rows []StatRow
	h    *statHeader
	cols []int // header positions in the order to show; nil: every column
}

// UnknownColumnsError names requested columns the answer does not have.
type UnknownColumnsError struct {
	Names []string
}

func (e *UnknownColumnsError) Error() string {
	return fmt.Sprintf("this HAProxy's statistics have no column %q", e.Names)
}

// Columns returns t showing only the named columns, in that order
// ("object_type" is always shown); nil names means every column.
func (t StatTable) Columns(names []string) (StatTable, error) {
	if names == nil || t.h == nil {
		t.cols = nil
		return t, nil
	}
	cols := make([]int, 0, len(names))
	var unknown []string
	seen := make(map[int]bool, len(names))
	for _, n := range names {
		if n == "object_type" {
			continue
		}
		i, ok := t.h.index[n]
		if !ok {
			unknown = append(unknown, n)
			continue
		}
		if !seen[i] {
			seen[i] = true
			cols = append(cols, i)
		}
	}
	if unknown != nil {
		return t, &UnknownColumnsError{Names: unknown}
	}
	t.cols = cols
	return t, nil
}

// Names lists the columns shown, in order (without object_type).
func (t StatTable) Names() []string {
	if t.h == nil {
		return []string{}
	}
	if t.cols == nil {
		out := make([]string, 0, len(t.h.names))
		for _, n := range t.h.names {
			if n != "" {
				out = append(out, n)
			}
		}
		return out
	}
	out := make([]string, len(t.cols))
	for i, c := range t.cols {
		out[i] = t.h.names[c]
	}
	return out
}

// AppendJSON appends the rows as a JSON array of objects: the chosen columns
// in order, numbers as numbers written as HAProxy sent them, empty cells
// left out, and "object_type". Keys are quoted once per answer, not per row.
func (t StatTable) AppendJSON(b []byte) []byte { return t.AppendJSONWith(b, nil) }

// AppendJSONWith is AppendJSON with lead written first in every row object:
// one or more `"key":value` members without a trailing comma (a fleet's
// "instance"), nil for none.
func (t StatTable) AppendJSONWith(b, lead []byte) []byte {
	if t.h == nil || len(t.Rows) == 0 {
		return append(b, "[]"...)
	}
	cols := t.cols
	if cols == nil {
		cols = make([]int, 0, len(t.h.names))
		for i, n := range t.h.names {
			if n != "" {
				cols = append(cols, i)
			}
		}
	}
	keys := make([][]byte, len(cols))
	for k, i := range cols {
		keys[k] = append(appendJSONString(nil, t.h.names[i]), ':')
	}
	b = append(b, '[')
	for n, r := range t.Rows {
		if n > 0 {
			b = append(b, ',')
		}
		b = append(b, '{')
		b = append(b, lead...)
		first := len(lead) == 0
		for k, i := range cols {
			v := r.at(i)
			if v == "" {
				continue
			}
			if !first {
				b = append(b, ',')
			}
			first = false
			b = append(b, keys[k]...)
			if !t.h.text[i] && isInt(v) {
				b = append(b, v...) // already a JSON number: no parse, no re-format
			} else {
				b = appendJSONString(b, v)
			}
		}
		if typ := r.Type(); typ != "" {
			if !first {
				b = append(b, ',')
			}
			b = append(b, `"object_type":"`...)
			b = append(b, typ...)
			b = append(b, '"')
		}
		b = append(b, '}')
	}
	return append(b, ']')
}

// isInt reports whether s is a base-10 integer JSON can carry as written:
// an optional minus, then digits without a leading zero, fitting in int64
// (what num accepts, minus "+1" and "007", which JSON does not allow).
func isInt(s string) bool {
	d := s
	if len(d) > 0 && d[0] == '-' {
		d = d[1:]
	}
	if len(d) == 0 || len(d) > 19 || (len(d) > 1 && d[0] == '0') {
		return false
	}
	for i := 0; i < len(d); i++ {
		if d[i] < '0' || d[i] > '9' {
			return false
		}
	}
	if len(d) == 19 {
		_, err := strconv.ParseInt(s, 10, 64)
		return err == nil
	}
	return true
}

// shown is the positions of the columns shown, in order.
func (t StatTable) shown() []int {
	if t.cols != nil {
		return t.cols
	}
	cols := make([]int, 0, len(t.h.names))
	for i, n := range t.h.names {
		if n != "" {
			cols = append(cols, i)
		}
	}
	return cols
}

// AppendTableJSON appends the rows in the compact "table" representation,
// as the members `"fields":[…],"layouts":[…],"rows":[…]`:
//
//   - fields names the columns shown, in order;
//   - layouts has one entry per object type present, in order of first
//     appearance: {"object_type":"server","fields":[0,1,2,…]}, the positions
//     in fields of the columns that type's rows have a value in (a column
//     empty in every row of a type is left out of its layout);
//   - each row is an array: its layout's position, then its value for each
//     of the layout's fields in order — numbers as numbers written as HAProxy
//     sent them, text as strings, null for an empty cell, trailing empty
//     cells left out.
//
// It is the same data as AppendJSON (a row's object is {fields[layout.fields[i]]:
// row[i+1]} for every non-null value, plus object_type), without each
// row repeating every column name: about the size of HAProxy's CSV.
func (t StatTable) AppendTableJSON(b []byte) []byte {
	b = append(b, `"fields":[`...)
	if t.h == nil {
		return append(b, `],"layouts":[],"rows":[]`...)
	}
	cols := t.shown()
	for k, i := range cols {
		if k > 0 {
			b = append(b, ',')
		}
		b = appendJSONString(b, t.h.names[i])
	}
	b = append(b, `],"layouts":[`...)
	// One layout per object type: the shown columns set in any of its rows.
	var types []string
	var used [][]bool
	rowLayout := make([]int, len(t.Rows))
	for n, r := range t.Rows {
		typ := r.Type()
		l := slices.Index(types, typ)
		if l < 0 {
			l = len(types)
			types = append(types, typ)
			used = append(used, make([]bool, len(cols)))
		}
		rowLayout[n] = l
		u := used[l]
		for k, i := range cols {
			if !u[k] && r.at(i) != "" {
				u[k] = true
			}
		}
	}
	layouts := make([][]int, len(types))
	for l, typ := range types {
		if l > 0 {
			b = append(b, ',')
		}
		b = append(b, '{')
		if typ != "" {
			b = append(b, `"object_type":`...)
			b = appendJSONString(b, typ)
			b = append(b, ',')
		}
		b = append(b, `"fields":[`...)
		for k, u := range used[l] {
			if u {
				if len(layouts[l]) > 0 {
					b = append(b, ',')
				}
				layouts[l] = append(layouts[l], k)
				b = strconv.AppendInt(b, int64(k), 10)
			}
		}
		b = append(b, "]}"...)
	}
	b = append(b, `],"rows":[`...)
	for n, r := range t.Rows {
		if n > 0 {
			b = append(b, ',')
		}
		l := rowLayout[n]
		b = append(b, '[')
		b = strconv.AppendInt(b, int64(l), 10)
		fields := layouts[l]
		last := len(fields) - 1
		for last >= 0 && r.at(cols[fields[last]]) == "" {
			last--
		}
		for _, k := range fields[:last+1] {
			b = append(b, ',')
			i := cols[k]
			switch v := r.at(i); {
			case v == "":
				b = append(b, "null"...)
			case !t.h.text[i] && isInt(v):
				b = append(b, v...)
			default:
				b = appendJSONString(b, v)
			}
		}
		b = append(b, ']')
	}
	return append(b, ']')
}
