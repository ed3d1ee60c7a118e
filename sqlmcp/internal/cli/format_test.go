package cli

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcpfleet/mcpfleet/shared/syncbuf"
)

var update = flag.Bool("update", false, "rewrite golden files")

// golden compares got with testdata/name, rewriting it under -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("%s differs (run with -update to accept)\n--- got\n%s\n--- want\n%s", name, got, want)
	}
}

var sampleCols = []Column{
	{"id", "bigint"}, {"name", "varchar"}, {"price", "decimal(10,2)"}, {"ratio", "double"},
	{"tags", "array(varchar)"}, {"ok", "boolean"},
}

var sampleRows = [][]any{
	{int64(1), "apple", "1.50", 0.25, []any{"red", "green"}, true},
	{int64(22), "日本語の名前", nil, nil, []any{}, false},
	{int64(-3), "line one\nline two, \"quoted\"", "1234567.89", 1e21, nil, nil},
	{int64(4), nil, "0.00", "NaN", []any{"x"}, true},
}

func render(t *testing.T, format string, cols []Column, rows [][]any, sum Summary) []byte {
	t.Helper()
	var b bytes.Buffer
	p := newPrinter(format, &b, false)
	if err := p.Columns(cols); err != nil {
		t.Fatal(err)
	}
	for _, r := range rows {
		if err := p.Row(r); err != nil {
			t.Fatal(err)
		}
	}
	if err := p.End(sum); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func TestFormatsGolden(t *testing.T) {
	sum := Summary{RowCount: len(sampleRows), Limit: 0, QueryID: "20260101_000000_00001_abcde", ElapsedMS: 12}
	for _, f := range formatNames {
		t.Run(f, func(t *testing.T) {
			golden(t, "format_sample."+f+".golden", render(t, f, sampleCols, sampleRows, sum))
		})
	}
	t.Run("empty table", func(t *testing.T) {
		golden(t, "format_empty.table.golden", render(t, "table", []Column{{"a", "integer"}}, nil, Summary{}))
	})
	t.Run("empty json", func(t *testing.T) {
		golden(t, "format_empty.json.golden", render(t, "json", []Column{{"a", "integer"}}, nil, Summary{}))
	})
	t.Run("truncated table", func(t *testing.T) {
		golden(t, "format_truncated.table.golden", render(t, "table", []Column{{"n", "integer"}}, [][]any{{int64(1)}, {int64(2)}}, Summary{RowCount: 2, Truncated: true, Limit: 2}))
	})
}

func TestJSONFormatIsValidExecuteQueryShape(t *testing.T) {
	out := render(t, "json", sampleCols, sampleRows, Summary{RowCount: 4, QueryID: "q1", ElapsedMS: 5})
	var got struct {
		Columns   []Column `json:"columns"`
		Rows      [][]any  `json:"rows"`
		RowCount  int      `json:"row_count"`
		Truncated bool     `json:"truncated"`
		Limit     int      `json:"limit"`
		QueryID   string   `json:"query_id"`
		ElapsedMS int64    `json:"elapsed_ms"`
	}
	dec := json.NewDecoder(bytes.NewReader(out))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&got); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if len(got.Rows) != 4 || got.Rows[1][2] != nil || got.Columns[1].Name != "name" || got.QueryID != "q1" {
		t.Fatalf("got %+v", got)
	}
}

func TestCSVIsRFC4180(t *testing.T) {
	out := render(t, "csv", sampleCols, sampleRows, Summary{})
	recs, err := csv.NewReader(bytes.NewReader(out)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 5 || recs[0][0] != "id" || recs[3][1] != "line one\nline two, \"quoted\"" || recs[2][2] != "" {
		t.Fatalf("got %q", recs)
	}
}

func TestTableStreamsAfterFirstBatch(t *testing.T) {
	var b bytes.Buffer
	p := newPrinter("table", &b, false).(*tablePrinter)
	p.batch = 2
	p.Columns([]Column{{"v", "varchar"}})
	p.Row([]any{"ab"})
	if b.Len() != 0 {
		t.Fatal("printed before the first batch was complete")
	}
	p.Row([]any{"cd"})
	p.w.Flush()
	if !strings.Contains(b.String(), " cd") {
		t.Fatalf("first batch not printed: %q", b.String())
	}
	// A later, wider row is cut to keep the alignment.
	p.Row([]any{"a much wider value"})
	p.End(Summary{RowCount: 3})
	lines := strings.Split(b.String(), "\n")
	if lines[4] != " a…" {
		t.Fatalf("got %q", lines)
	}
}

func TestTableUnicodeWidth(t *testing.T) {
	out := string(render(t, "table", []Column{{"k", "varchar"}, {"v", "integer"}}, [][]any{{"日本", int64(1)}, {"abcd", int64(22)}}, Summary{RowCount: 2}))
	want := " k    | v\n------+----\n 日本 |  1\n abcd | 22\n(2 rows)\n"
	if out != want {
		t.Fatalf("got\n%s\nwant\n%s", out, want)
	}
}

// A slow stream is shown after a pause even when no further row arrives.
func TestPausedStreamIsShown(t *testing.T) {
	for _, f := range formatNames {
		t.Run(f, func(t *testing.T) {
			var b syncbuf.Buffer
			p := newPrinter(f, &b, false)
			if tp, ok := p.(*tablePrinter); ok {
				tp.wait = 50 * time.Millisecond
			}
			p.Columns([]Column{{"v", "varchar"}})
			p.Row([]any{"first-row"})
			deadline := time.Now().Add(5 * time.Second)
			for !strings.Contains(b.String(), "first-row") {
				if time.Now().After(deadline) {
					t.Fatalf("row not shown during the pause: %q", b.String())
				}
				time.Sleep(10 * time.Millisecond)
			}
			p.End(Summary{RowCount: 1})
		})
	}
}
