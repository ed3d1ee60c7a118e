package haproxy

import (
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"strconv"
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
// header name. It marshals to a JSON object in HAProxy's column order with
// numbers as numbers, empty cells left out, and "object_type" added
// ("frontend", "backend", "server" or "listener").
type StatRow struct {
	h     *statHeader
	cells []string // the CSV record as read; numbers are parsed on access
}

// StatRows marshals a list of rows into one buffer.
type StatRows []StatRow

// MarshalJSON writes the rows as a JSON array.
func (rs StatRows) MarshalJSON() ([]byte, error) {
	n := 2
	for _, r := range rs {
		n += 48 // braces, object_type
		for i, v := range r.cells {
			if v != "" {
				n += len(r.h.names[i]) + len(v) + 6
			}
		}
	}
	b := make([]byte, 0, n)
	b = append(b, '[')
	for i, r := range rs {
		if i > 0 {
			b = append(b, ',')
		}
		b = r.AppendJSON(b)
	}
	return append(b, ']'), nil
}

// ParseStatCSV parses HAProxy's CSV statistics by header name. It accepts
// quoted fields with commas and doubled quotes, the "-" separator column
// and later versions' extra columns.
func ParseStatCSV(data []byte) ([]StatRow, error) {
	data = bytes.TrimLeft(data, "\n")
	if !bytes.HasPrefix(data, []byte("# ")) {
		return nil, errors.New("statistics CSV: no \"# pxname,...\" header line")
	}
	r := csv.NewReader(bytes.NewReader(data[2:]))
	r.FieldsPerRecord = -1
	r.ReuseRecord = false // each row keeps its record
	header, err := r.Read()
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
	rows := make([]StatRow, 0, bytes.Count(data, []byte("\n")))
	for {
		rec, err := r.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("statistics CSV: %w", err)
		}
		if len(rec) > len(h.names) {
			rec = rec[:len(h.names)]
		}
		rows = append(rows, StatRow{h: h, cells: rec})
	}
	return rows, nil
}

// cell returns a column's raw text and whether it is set.
func (r StatRow) cell(name string) (string, bool) {
	if r.h == nil {
		return "", false
	}
	i, ok := r.h.index[name]
	if !ok || i >= len(r.cells) || r.cells[i] == "" {
		return "", false
	}
	return r.cells[i], true
}

// num reports a cell's integer value when its column is numeric.
func (r StatRow) num(i int) (int64, bool) {
	if r.h.text[i] {
		return 0, false
	}
	n, err := strconv.ParseInt(r.cells[i], 10, 64)
	return n, err == nil
}

// Get returns a column's value (int64 or string) and whether it is set.
func (r StatRow) Get(name string) (any, bool) {
	if name == "object_type" {
		t := r.Type()
		return t, t != ""
	}
	v, ok := r.cell(name)
	if !ok {
		return nil, false
	}
	if n, isNum := r.num(r.h.index[name]); isNum {
		return n, true
	}
	return v, true
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
	if r.h == nil || r.h.typ < 0 || r.h.typ >= len(r.cells) {
		return ""
	}
	switch r.cells[r.h.typ] {
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

// MarshalJSON writes the row as an object in column order.
func (r StatRow) MarshalJSON() ([]byte, error) {
	return r.AppendJSON(make([]byte, 0, 1024)), nil
}

// AppendJSON appends the row's JSON object to b.
func (r StatRow) AppendJSON(b []byte) []byte {
	b = append(b, '{')
	first := true
	if r.h != nil {
		for i, v := range r.cells {
			if v == "" || r.h.names[i] == "" {
				continue
			}
			if !first {
				b = append(b, ',')
			}
			first = false
			b = appendJSONString(b, r.h.names[i])
			b = append(b, ':')
			if n, ok := r.num(i); ok {
				b = strconv.AppendInt(b, n, 10)
			} else {
				b = appendJSONString(b, v)
			}
		}
	}
	if t := r.Type(); t != "" {
		if !first {
			b = append(b, ',')
		}
		b = append(b, `"object_type":`...)
		b = appendJSONString(b, t)
	}
	return append(b, '}')
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
