package mcpserver

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"strings"

	"github.com/mcpfleet/mcpfleet/sqlmcp/internal/engine"
)

// The result formats of execute_query and fetch_more.
const (
	FormatJSON     = "json"
	FormatCSV      = "csv"
	FormatMarkdown = "markdown"
)

var formats = []string{FormatJSON, FormatCSV, FormatMarkdown}

// cellText is a value as text: strings as they are, NULL as empty (csv) or
// NULL (markdown), everything else (numbers, booleans, arrays, maps, rows)
// as its JSON.
func cellText(v any, null string) string {
	switch x := v.(type) {
	case nil:
		return null
	case string:
		return x
	default:
		b, _ := json.Marshal(x)
		return string(b)
	}
}

// renderCSV writes RFC 4180 CSV: a header of column names, then the rows;
// fields holding a comma, quote, CR or LF are quoted, quotes doubled.
// NULL is an empty field.
func renderCSV(cols []engine.Column, rows [][]any) string {
	var b bytes.Buffer
	w := csv.NewWriter(&b)
	rec := make([]string, len(cols))
	for i, c := range cols {
		rec[i] = c.Name
	}
	w.Write(rec)
	for _, r := range rows {
		for i, v := range r {
			rec[i] = cellText(v, "")
		}
		w.Write(rec)
	}
	w.Flush()
	return b.String()
}

// mdCell escapes a markdown table cell: a backslash and a pipe are escaped
// with a backslash, a line break becomes <br> (a table row is one line), and
// < > & are written as entities so that no text becomes markup.
var mdCell = strings.NewReplacer(`\`, `\\`, "|", `\|`, "\r\n", "<br>", "\n", "<br>", "\r", "<br>",
	"&", "&amp;", "<", "&lt;", ">", "&gt;", "`", "\\`")

// renderMarkdown writes a GitHub-flavoured markdown table; NULL is NULL in
// italics.
func renderMarkdown(cols []engine.Column, rows [][]any) string {
	var b strings.Builder
	b.WriteString("|")
	for _, c := range cols {
		b.WriteString(" " + mdCell.Replace(c.Name) + " |")
	}
	b.WriteString("\n|")
	for range cols {
		b.WriteString(" --- |")
	}
	b.WriteString("\n")
	for _, r := range rows {
		b.WriteString("|")
		for _, v := range r {
			s := "*NULL*"
			if v != nil {
				s = mdCell.Replace(cellText(v, ""))
			}
			b.WriteString(" " + s + " |")
		}
		b.WriteString("\n")
	}
	return b.String()
}
