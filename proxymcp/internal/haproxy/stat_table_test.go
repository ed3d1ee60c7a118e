package haproxy

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/mcpfleet/mcpfleet/proxymcp/internal/stattest"
)

// TestTableFormatIsTheSameData: show_stat's "table" representation
// (AppendTableJSON) decodes (stattest.Rows, the decoder every show_stat
// test uses) to exactly the rows of the objects one
// (AppendJSON): same columns, same values and JSON types, same empty cells
// left out, same object_type, same order — for every answer shape the
// parser has a path for (statCases), HAProxy's own answers, and column
// selections (all, a subset in another order, one column).
func TestTableFormatIsTheSameData(t *testing.T) {
	type input struct{ name, text string }
	var inputs []input
	for _, c := range statCases {
		inputs = append(inputs, input{c.name, c.in})
	}
	files, _ := filepath.Glob(filepath.Join("testdata", "*", "show_stat*.txt"))
	files = append(files, filepath.Join("testdata", "show_stat.txt"))
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		inputs = append(inputs, input{f, string(b)})
	}
	inputs = append(inputs,
		input{"a column empty in every row", "# pxname,svname,slim,type\nfe,FRONTEND,,0\nbe,s1,,2\n"},
		input{"numeric-looking text and huge numbers", "# pxname,svname,addr,stot,type\nbe,007,1.2.3.4:80,99999999999999999999,2\nbe,-1,,-5,2\n"},
		input{"rows without a type column", "# pxname,svname\nbe,s1\nbe,\n"},
		input{"unknown type value", "# pxname,svname,type\nbe,s1,9\nbe,s2,2\n"},
	)
	selections := [][]string{nil, {"svname", "pxname"}, {"status"}, {"type", "stot", "addr"}}
	checked := 0
	for _, in := range inputs {
		rows, err := ParseStatCSV([]byte(in.text))
		if err != nil || len(rows) == 0 {
			continue
		}
		for _, sel := range selections {
			tab, err := StatTable{Rows: rows, h: rows[0].h}.Columns(sel)
			if err != nil {
				continue // a column this answer lacks
			}
			want := decodeNumbers(t, tab.AppendJSON(nil))
			body := append(tab.AppendTableJSON([]byte{'{'}), '}')
			decoded, err := stattest.Rows(body)
			if err != nil {
				t.Fatalf("%s %v: %v", in.name, sel, err)
			}
			got := decodeNumbers(t, decoded)
			if !reflect.DeepEqual(got, want) {
				t.Errorf("%s %v:\n table %s\n gives %v\n objects %v", in.name, sel, body, got, want)
			}
			checked++
		}
	}
	t.Logf("%d answers × selections compared", checked)
	if checked < 30 {
		t.Fatalf("only %d answers compared", checked)
	}
}

func decodeNumbers(t *testing.T, b []byte) any {
	t.Helper()
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		t.Fatalf("%v: %s", err, b)
	}
	return v
}
