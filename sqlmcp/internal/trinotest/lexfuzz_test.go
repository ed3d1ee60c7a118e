package trinotest

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/mcpfleet/mcpfleet/sqlmcp/internal/sqlguard"
)

// FuzzGuardAndEngineAgree: whatever the SQL guard and the engine read from
// a statement, at quote and comment boundaries above all, they read the
// same tokens, and DuckDB, given the text the engine hands it, names no
// table, column, alias or function and holds no string the guard did not
// see as such a token. A name only DuckDB sees is a table the guard's
// allowed-schemas check could miss. The seed corpus is in
// testdata/fuzz/FuzzGuardAndEngineAgree.
func FuzzGuardAndEngineAgree(f *testing.F) {
	db, err := openEngine()
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { db.Close() })
	f.Fuzz(func(t *testing.T, sqlText string) {
		if !utf8.ValidString(sqlText) {
			return // a statement reaches Trino as UTF-8 text
		}
		gt, gerr := sqlguard.Tokenize(sqlText)
		text, toks, e := trinoText(sqlText)
		if gerr != nil {
			if e == nil {
				t.Fatalf("the guard cannot read %q (%v); the engine can", sqlText, gerr)
			}
			return
		}
		if e != nil {
			if e.ErrorName != "SYNTAX_ERROR" {
				t.Fatalf("%q: %v, want a SYNTAX_ERROR", sqlText, e)
			}
			return
		}
		if len(gt) != len(toks) {
			t.Fatalf("%q: the guard reads %d tokens, the engine %d", sqlText, len(gt), len(toks))
		}
		names := map[string]bool{}
		strs := map[string]bool{}
		for i, g := range gt {
			if g.Pos != toks[i].start || g.Pos+len(g.Text) != toks[i].end {
				t.Fatalf("%q: token %d at %d..%d for the guard, %d..%d for the engine", sqlText, i, g.Pos, g.Pos+len(g.Text), toks[i].start, toks[i].end)
			}
			switch g.Kind {
			case sqlguard.Word, sqlguard.QuotedIdent:
				names[strings.ToLower(g.Value)] = true
			case sqlguard.String:
				strs[g.Value] = true
				if strings.HasPrefix(strings.ToUpper(g.Text), "U&") {
					return // DuckDB decodes Unicode escapes the guard keeps
				}
			}
		}
		var raw string
		if err := db.QueryRowContext(context.Background(), "SELECT CAST(json_serialize_sql(CAST(? AS VARCHAR)) AS VARCHAR)", text).Scan(&raw); err != nil {
			t.Fatal(err)
		}
		var tree any
		if err := json.Unmarshal([]byte(raw), &tree); err != nil {
			t.Fatal(err)
		}
		if m, ok := tree.(map[string]any); !ok || m["error"] == true {
			return // DuckDB cannot parse it: nothing would run
		}
		walkDuckTree(tree, func(kind, v string) {
			switch {
			case kind == "string" && !strs[v]:
				t.Fatalf("%q: DuckDB reads the string %q, which the guard does not (engine text %q)", sqlText, v, text)
			case kind == "name" && v != "" && !names[strings.ToLower(v)] && !duckSyntaxNames[v] && !isOperator(v):
				t.Fatalf("%q: DuckDB reads the name %q, which the guard does not (engine text %q)", sqlText, v, text)
			}
		})
	})
}

// duckSyntaxNames are the functions DuckDB's parser itself names for
// syntax ([1, 2], x[1], a[1:2]); operators are named by their symbols.
var duckSyntaxNames = map[string]bool{"list_value": true, "array_extract": true, "array_slice": true, "count_star": true}

// isOperator reports DuckDB's name for an operator: its symbols, for a
// postfix or prefix use with a suffix.
func isOperator(name string) bool {
	name = strings.TrimSuffix(strings.TrimSuffix(name, "__postfix"), "__prefix")
	return strings.Trim(name, "+-*/%|<>=!~&^@#[]") == ""
}

// walkDuckTree reports the names (tables, schemas, catalogs, columns,
// aliases, functions) and string constants of a json_serialize_sql tree.
func walkDuckTree(n any, see func(kind, v string)) {
	switch x := n.(type) {
	case []any:
		for _, c := range x {
			walkDuckTree(c, see)
		}
	case map[string]any:
		for _, k := range []string{"table_name", "schema_name", "catalog_name", "relation_name", "alias", "function_name"} {
			if s, ok := x[k].(string); ok {
				see("name", s)
			}
		}
		if cols, ok := x["column_names"].([]any); ok {
			for _, c := range cols {
				if s, ok := c.(string); ok {
					see("name", s)
				}
			}
		}
		if x["class"] == "CONSTANT" {
			if v, ok := x["value"].(map[string]any); ok {
				if ty, ok := v["type"].(map[string]any); ok && ty["id"] == "VARCHAR" && v["is_null"] != true {
					if s, ok := v["value"].(string); ok {
						see("string", s)
					}
				}
			}
		}
		for _, c := range x {
			walkDuckTree(c, see)
		}
	}
}
