package haproxy

import (
	"encoding/csv"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// statCases are answers of every shape the offset parser has a path for;
// each is checked against encoding/csv's reading of the same text.
var statCases = []struct{ name, in string }{
	{"empty answer", ""},
	{"header only", "# pxname,svname,status\n"},
	{"header only, no newline", "# pxname,svname,status"},
	{"header and an empty line", "# pxname,svname,status\n\n"},
	{"leading newlines", "\n\n# pxname,svname\nbe,s1\n"},
	{"plain rows", "# pxname,svname,status,weight,type,-,\nbe,s1,UP,1,2,,\nbe,s2,DOWN,2,2,,\n"},
	{"trailing commas", "# pxname,svname,status,\nbe,s1,,,\n,,,\n"},
	{"one empty cell", "# pxname\n,\n"},
	{"CRLF", "# pxname,svname,status\r\nbe,s1,UP\r\nbe,s2,\r\n\r\n"},
	{"CR kept inside a cell", "# pxname,svname,status\nbe,s\r1,UP\r\r\n"},
	{"lone CR at the end", "# pxname,svname,status\nbe,s1,UP\r"},
	{"missing columns", "# pxname,svname,status,weight\nbe\nbe,s1\nbe,s1,UP\n"},
	{"extra columns", "# pxname,svname\nbe,s1,UP,1,2,3\nbe,s2,\n"},
	{"no header columns", "# \nbe,s1\n"},
	{"quoted comma and quotes", "# pxname,svname,last_chk,weight\nbe,s1,\"Busy, try \"\"later\"\"\",7\n"},
	{"quoted newline", "# pxname,svname,last_chk,weight\nbe,s1,\"two\nlines\",7\nbe,s2,ok,8\n"},
	{"quoted CRLF", "# pxname,svname,last_chk,weight\r\nbe,s1,\"a\r\nb\",7\r\n"},
	{"quoted empty and quoted key", "# pxname,svname,last_chk\nbe,\"s,1\",\"\"\n\"be\",s2,x\n"},
	{"quoted, more cells than header", "# pxname,svname\nbe,\"s,1\",x,y\n"},
	{"quoted last cell, no newline", "# pxname,svname\nbe,\"s1\""},
	{"quoted header", "# pxname,\"sv,name\",status\nbe,s1,UP\n"},
	{"duplicate and separator columns", "# pxname,-,pxname,,svname\nbe,x,other,y,s1\n"},
	{"non-ASCII and invalid UTF-8", "# pxname,svname\nbé,\"ü ✓ \xff\"\n\xfe,s\n"},
	{"spaces kept", "# pxname,svname\n be , s1 \n \n"},
	{"huge rows", "# pxname,svname,status\n" + "be," + strings.Repeat("x", 200<<10) + ",UP\n" +
		strings.Repeat("c,", 5000) + "\nbe,\"" + strings.Repeat("q,", 3000) + "\",UP\n"},
}

// csvReference reads in as encoding/csv does: the header's names and the
// rows, each cut to the header's width as ParseStatCSV cuts them. ok is
// false when in has no header line to compare against.
func csvReference(in string) (header []string, rows [][]string, err error, ok bool) {
	rest, found := strings.CutPrefix(strings.TrimLeft(in, "\n"), "# ")
	if !found {
		return nil, nil, nil, false
	}
	// ParseStatCSV reads an empty header line as no columns; encoding/csv
	// skips it and takes the next line for the header.
	if first, _, _ := strings.Cut(rest, "\n"); strings.TrimSuffix(first, "\r") == "" {
		return nil, nil, nil, false
	}
	r := csv.NewReader(strings.NewReader(rest))
	r.FieldsPerRecord = -1
	all, err := r.ReadAll()
	if err != nil {
		return nil, nil, err, true
	}
	if len(all) == 0 {
		return nil, nil, nil, false
	}
	header = all[0]
	for _, rec := range all[1:] {
		rows = append(rows, rec[:min(len(rec), len(header))])
	}
	return header, rows, nil, true
}

// checkParse compares parseStat and ParseStatCSV on in with encoding/csv:
// the same records, cell by cell and through the by-name accessors.
func checkParse(t *testing.T, in string) {
	t.Helper()
	got, err := parseStat(in)
	gotB, errB := ParseStatCSV([]byte(in))
	if (err == nil) != (errB == nil) || len(got) != len(gotB) {
		t.Fatalf("parseStat and ParseStatCSV disagree: %d rows, %v; %d rows, %v", len(got), err, len(gotB), errB)
	}
	for i := range got {
		if !slices.Equal(got[i].record(), gotB[i].record()) {
			t.Fatalf("row %d: parseStat %q, ParseStatCSV %q", i, got[i].record(), gotB[i].record())
		}
	}
	header, want, werr, ok := csvReference(in)
	if !ok {
		return
	}
	if werr != nil {
		if err == nil {
			t.Fatalf("encoding/csv fails (%v), the parser accepted %d rows", werr, len(got))
		}
		return
	}
	if err != nil {
		t.Fatalf("encoding/csv reads it, the parser fails: %v", err)
	}
	if len(got) != len(want) {
		t.Fatalf("%d rows, encoding/csv reads %d", len(got), len(want))
	}
	for i, w := range want {
		if rec := got[i].record(); !slices.Equal(rec, w) {
			t.Fatalf("row %d: %q, encoding/csv reads %q", i, rec, w)
		}
		seen := map[string]bool{}
		for c, name := range header {
			if name == "" || name == "-" || seen[name] {
				continue
			}
			seen[name] = true
			cell := ""
			if c < len(w) {
				cell = w[c]
			}
			v, set := got[i].cell(name)
			if v != cell || set != (cell != "") || got[i].Str(name) != cell {
				t.Fatalf("row %d column %q: %q (set %v), encoding/csv reads %q", i, name, v, set, cell)
			}
		}
	}
}

func TestParseStatOffsetsMatchEncodingCSV(t *testing.T) {
	for _, tc := range statCases {
		t.Run(tc.name, func(t *testing.T) { checkParse(t, tc.in) })
	}
	// The bad ones fail as encoding/csv fails on them.
	for _, bad := range []string{"# pxname,svname\nbe,s\"1\n", "# pxname,svname\nbe,\"unterminated\n", "# pxname,\"svname\n"} {
		if _, err := parseStat(bad); err == nil {
			t.Errorf("%q: want an error", bad)
		}
		checkParse(t, bad)
	}
}

// FuzzParseStatCSV checks the offset parser against encoding/csv on any
// text with a header line.
//
//	go test -run XXX -fuzz FuzzParseStatCSV -fuzztime 60s ./proxymcp/internal/haproxy/
func FuzzParseStatCSV(f *testing.F) {
	for _, tc := range statCases {
		if len(tc.in) < 4096 {
			f.Add(tc.in)
		}
	}
	f.Fuzz(func(t *testing.T, in string) { checkParse(t, in) })
}

// TestStatColumnMatchesRow: a StatColumn reads what the row's by-name
// methods read, across answers with different headers, and IntString is
// strconv.FormatInt of Int whatever the cell holds.
func TestStatColumnMatchesRow(t *testing.T) {
	var rows []StatRow
	for _, in := range []string{
		"# pxname,weight,slim,status,type\nbe,100,0,UP,2\nbe,007,+5,1,2\nbe,-0,-12,,2\nbe,abc,99999999999999999999,x,2\nbe,,,,\nbe\n",
		// another header: the positions move, "status" is gone
		"# type,slim,pxname,weight\n0,9974,fe,-9223372036854775808\n2,1,be,9223372036854775807\n",
	} {
		r, err := parseStat(in)
		if err != nil {
			t.Fatal(err)
		}
		rows = append(rows, r...)
	}
	rows = append(rows, StatRow{}) // the zero row has no columns
	cols := map[string]StatColumn{}
	for _, n := range []string{"pxname", "weight", "slim", "status", "type", "nosuch"} {
		cols[n] = Column(n)
	}
	for i, r := range rows {
		for name, c := range cols {
			if got, want := c.Str(r), r.Str(name); got != want {
				t.Errorf("row %d %s: Str %q, row says %q", i, name, got, want)
			}
			if got, want := c.Int(r), r.Int(name); got != want {
				t.Errorf("row %d %s: Int %d, row says %d", i, name, got, want)
			}
			if got, want := c.IntString(r), strconv.FormatInt(r.Int(name), 10); got != want {
				t.Errorf("row %d %s: IntString %q, want %q", i, name, got, want)
			}
			cols[name] = c
		}
	}
	// "status" is a text column: a numeric-looking status is no number.
	st := Column("status")
	if got := st.IntString(rows[1]); got != "0" || rows[1].Str("status") != "1" {
		t.Errorf("text column read as a number: %q", got)
	}
}

// A row longer than maxStatRow (quoted or not, first or later) is refused
// with an error naming its size; one at the bound is read.
func TestParseStatRefusesHugeRows(t *testing.T) {
	header := "# pxname,svname,status,check_desc\n"
	at := strings.Repeat("x", maxStatRow-len("be,s1,UP,"))
	tests := []struct {
		name, csv string
		wantErr   bool
	}{
		{"at the bound", header + "be,s1,UP," + at + "\n", false},
		{"one byte over", header + "be,s1,UP," + at + "y\n", true},
		{"over, quoted", header + `be,s1,UP,"` + at + `,y"` + "\n", true},
		{"over, after a good row", header + "be,s0,UP,ok\nbe,s1,UP," + at + "yy\n", true},
		{"over, CRLF", header + "be,s1,UP," + at + "y\r\n", true},
		{"over, quoted across lines", header + `be,s1,UP,"` + at[:maxStatRow/2] + "\n" + at[:maxStatRow/2] + `"` + "\n", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rows, err := ParseStatCSV([]byte(tt.csv))
			if tt.wantErr {
				if err == nil || !strings.Contains(err.Error(), "bytes, over the") {
					t.Fatalf("err = %v, want the row refused with its size", err)
				}
				return
			}
			if err != nil || len(rows) != 1 || len(rows[0].Str("check_desc")) != len(at) {
				t.Fatalf("rows %d, err %v: the row at the bound must be read whole", len(rows), err)
			}
		})
	}
}
