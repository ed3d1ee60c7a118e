package sqlguard

import (
	"strings"
	"testing"
)

func TestParseScope(t *testing.T) {
	s, err := ParseScope([]string{"Sales.Public", `"my.cat"."s p"`, "sales.public"})
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Schemas()) != 2 || !s.AllowsSchema("sales", "public") || !s.AllowsSchema("SALES", "PUBLIC") || !s.AllowsSchema("my.cat", "s p") {
		t.Errorf("scope = %+v", s.Schemas())
	}
	if s.AllowsSchema("sales", "private") || s.AllowsCatalog("hr") || !s.AllowsCatalog("sales") {
		t.Error("scope allows too much")
	}
	for _, bad := range []string{"sales", "a.b.c", "a.", ".b", "a b.c", "'a'.b", `"a.b`} {
		if _, err := ParseScope([]string{bad}); err == nil {
			t.Errorf("ParseScope(%q) accepted", bad)
		}
	}
	var none *Scope
	if none.Enabled() || !none.AllowsSchema("x", "y") {
		t.Error("nil scope must allow everything")
	}
}

func TestCheckTables(t *testing.T) {
	s, _ := ParseScope([]string{"sales.public"})
	read, _ := Check("SELECT 1", Options{})
	write, _ := Check("INSERT INTO t SELECT 1", Options{AllowWrites: true})
	fn, _ := Check("SELECT * FROM TABLE(system.sequence(start => 1, stop => 2))", Options{})
	ok := TableName{"sales", "public", "orders"}
	other := TableName{"sales", "private", "salaries"}
	info := TableName{"sales", "information_schema", "tables"}
	tests := []struct {
		name   string
		st     *Statement
		in     []TableName
		out    *TableName
		refuse string
	}{
		{"allowed read", read, []TableName{ok}, nil, ""},
		{"no tables", read, nil, nil, ""},
		{"other schema", read, []TableName{ok, other}, nil, "reads sales.private.salaries"},
		{"information_schema", read, []TableName{info}, nil, "reads sales.information_schema.tables"},
		{"write outside", write, []TableName{ok}, &other, "writes sales.private.salaries"},
		{"write inside", write, []TableName{ok}, &ok, ""},
		{"write without target", write, nil, nil, "cannot be determined"},
		{"table function", fn, nil, nil, "table functions are refused"},
		{"information_schema by name", mustCheck(t, `SELECT * FROM "INFORMATION_SCHEMA".tables`), nil, nil, "information_schema is refused"},
		{"SHOW", mustCheck(t, "SHOW TABLES"), nil, nil, "metadata statements are refused"},
		{"EXPLAIN DESCRIBE", mustCheck(t, "EXPLAIN DESCRIBE t"), nil, nil, "metadata statements are refused"},
	}
	for _, tt := range tests {
		err := s.CheckTables(tt.st, tt.in, tt.out)
		switch {
		case tt.refuse == "" && err != nil:
			t.Errorf("%s: %v", tt.name, err)
		case tt.refuse != "" && (err == nil || !strings.Contains(err.Error(), tt.refuse)):
			t.Errorf("%s: got %v, want %q", tt.name, err, tt.refuse)
		}
	}
}

func mustCheck(t *testing.T, sql string) *Statement {
	t.Helper()
	st, err := Check(sql, Options{})
	if err != nil {
		t.Fatal(err)
	}
	return st
}
