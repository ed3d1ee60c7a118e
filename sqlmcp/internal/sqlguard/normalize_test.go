package sqlguard

import (
	"strings"
	"testing"
)

// The text checked is the text run: Statement.SQL carries no comment, so an
// engine whose comment rules differ from the guard's (DuckDB nests block
// comments, Trino does not) cannot read a different statement from it. Each
// input hides a second reading in comments; the normalised text must be the
// guard's reading only, and Inner must be a byte-for-byte suffix of SQL.
func TestStatementTextIsTheCheckedText(t *testing.T) {
	tests := []struct{ in, want, inner string }{
		{"/* lead */ SELECT 1", "SELECT 1", ""},
		{"-- lead\nSELECT 1", "SELECT 1", ""},
		{"SELECT 1 -- trail", "SELECT 1", ""},
		{"SELECT 1 /* trail */", "SELECT 1", ""},
		{"SELECT/**/1", "SELECT 1", ""},
		{"SELECT 1/*x*/+2", "SELECT 1 +2", ""},
		// nested block comment: a nesting engine would run "FROM x"
		{"/* /* */ SELECT 1 -- */ FROM sales.crm.contacts", "SELECT 1", ""},
		{"SELECT 1 /* /* */ , 2 /* */ */", "SELECT 1 , 2 */", ""},
		{"/* /* */ SELECT 1 /* */ FROM sales.crm.contacts */", "SELECT 1 FROM sales.crm.contacts */", ""},
		{"SELECT 1 --x\r\n, 2", "SELECT 1 , 2", ""},
		{"SELECT\t1\r\n FROM t", "SELECT\t1\r\n FROM t", ""},
		{"  SELECT 1  ;  -- done", "SELECT 1", ""},
		{"SELECT '/* not a comment */', \"-- nor this\"", "SELECT '/* not a comment */', \"-- nor this\"", ""},
		{"SELECT 'a\n-- b' -- c", "SELECT 'a\n-- b'", ""},
		{"EXPLAIN /* c */ SELECT 1", "EXPLAIN SELECT 1", "SELECT 1"},
		{"EXPLAIN (TYPE IO) -- c\nSELECT 1 /* d */", "EXPLAIN (TYPE IO) SELECT 1", "SELECT 1"},
		{"EXPLAIN ANALYZE /* c */ SELECT 1", "EXPLAIN ANALYZE SELECT 1", "SELECT 1"},
		{"EXPLAIN EXPLAIN /**/ SELECT 2", "EXPLAIN EXPLAIN SELECT 2", "SELECT 2"},
	}
	for _, tt := range tests {
		st, err := Check(tt.in, Options{})
		if err != nil {
			t.Errorf("Check(%q): %v", tt.in, err)
			continue
		}
		if st.SQL != tt.want {
			t.Errorf("Check(%q).SQL = %q, want %q", tt.in, st.SQL, tt.want)
		}
		inner := tt.inner
		if inner == "" {
			inner = tt.want
		}
		if st.Inner != inner || !strings.HasSuffix(st.SQL, st.Inner) {
			t.Errorf("Check(%q).Inner = %q, want %q, a suffix of SQL %q", tt.in, st.Inner, inner, st.SQL)
		}
		// Checking the normalised text again changes nothing.
		again, err := Check(st.SQL, Options{})
		if err != nil || again.SQL != st.SQL {
			t.Errorf("Check(Check(%q).SQL) = %v, %v; want it unchanged", tt.in, again, err)
		}
	}
}
