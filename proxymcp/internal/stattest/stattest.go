// Package stattest reads show_stat's "table" answer back as the rows of
// its "objects" answer. It is the one decoder of the table for the tests
// of every package that reads show_stat, so that they all hold the table
// to the same rule (haproxy.StatTable.AppendTableJSON's).
package stattest

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// Rows decodes a table ({"fields":[…],"layouts":[…],"rows":[…]}, alone or
// as members of a show_stat answer) into the objects form's rows, as a
// JSON array: per row, {fields[layout.fields[i]]: row[i+1]} for each
// non-null value, in the layout's order, then the layout's object_type.
// Values are copied as written. A malformed table is an error naming the
// row, never a guess.
func Rows(table []byte) ([]byte, error) {
	var t struct {
		Fields  []string `json:"fields"`
		Layouts []struct {
			ObjectType *string `json:"object_type"`
			Fields     []int   `json:"fields"`
		} `json:"layouts"`
		Rows *[][]json.RawMessage `json:"rows"`
	}
	if err := json.Unmarshal(table, &t); err != nil {
		return nil, fmt.Errorf("not a show_stat table: %w", err)
	}
	if t.Rows == nil || t.Fields == nil {
		return nil, fmt.Errorf("not a show_stat table (no fields or rows): %.200s", table)
	}
	b := []byte{'['}
	for n, r := range *t.Rows {
		var l int
		if len(r) == 0 || json.Unmarshal(r[0], &l) != nil || l < 0 || l >= len(t.Layouts) {
			return nil, fmt.Errorf("row %d: no layout of %d first: %s", n, len(t.Layouts), r)
		}
		lay := t.Layouts[l]
		if len(r)-1 > len(lay.Fields) {
			return nil, fmt.Errorf("row %d: %d values for layout %d of %d fields", n, len(r)-1, l, len(lay.Fields))
		}
		if n > 0 {
			b = append(b, ',')
		}
		b = append(b, '{')
		first := true
		member := func(k string, v []byte) {
			if !first {
				b = append(b, ',')
			}
			first = false
			key, _ := json.Marshal(k)
			b = append(append(append(b, key...), ':'), v...)
		}
		for i, v := range r[1:] {
			if bytes.Equal(v, []byte("null")) {
				continue
			}
			f := lay.Fields[i]
			if f < 0 || f >= len(t.Fields) {
				return nil, fmt.Errorf("row %d: layout %d names field %d of %d", n, l, f, len(t.Fields))
			}
			member(t.Fields[f], v)
		}
		if lay.ObjectType != nil {
			typ, _ := json.Marshal(*lay.ObjectType)
			member("object_type", typ)
		}
		b = append(b, '}')
	}
	return append(b, ']'), nil
}
