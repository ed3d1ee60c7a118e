package trinotest

import (
	"math/big"
	"testing"

	"github.com/duckdb/duckdb-go/v2"
)

func TestTrinoTypeOf(t *testing.T) {
	tests := []struct{ duck, trino string }{
		{"BOOLEAN", "boolean"},
		{"TINYINT", "tinyint"},
		{"UTINYINT", "smallint"},
		{"INTEGER", "integer"},
		{"BIGINT", "bigint"},
		{"UBIGINT", "decimal(20,0)"},
		{"HUGEINT", "decimal(38,0)"},
		{"FLOAT", "real"},
		{"DOUBLE", "double"},
		{"DECIMAL(10,2)", "decimal(10,2)"},
		{"VARCHAR", "varchar"},
		{"ENUM", "varchar"},
		{"BLOB", "varbinary"},
		{"DATE", "date"},
		{"TIME", "time(6)"},
		{"TIMESTAMP", "timestamp(6)"},
		{"TIMESTAMP_MS", "timestamp(3)"},
		{"TIMESTAMP_S", "timestamp(0)"},
		{"TIMESTAMP_NS", "timestamp(9)"},
		{"TIMESTAMPTZ", "timestamp(6) with time zone"},
		{"TIMESTAMP WITH TIME ZONE", "timestamp(6) with time zone"},
		{"INTERVAL", "interval day to second"},
		{"UUID", "uuid"},
		{"JSON", "json"},
		{"INTEGER[]", "array(integer)"},
		{"VARCHAR[][]", "array(array(varchar))"},
		{"INTEGER[3]", "array(integer)"},
		{"MAP(VARCHAR, BIGINT)", "map(varchar, bigint)"},
		{`STRUCT("a" INTEGER, "b c" VARCHAR)`, `row(a integer, "b c" varchar)`},
		{"STRUCT(a INTEGER, b DECIMAL(5,1)[])", "row(a integer, b array(decimal(5,1)))"},
		{`STRUCT("x""y" MAP(VARCHAR, INTEGER[]))`, `row("x""y" map(varchar, array(integer)))`},
		{"UNION(a INTEGER, b VARCHAR)", "varchar"},
		{"SOMETHING_NEW", "varchar"},
	}
	for _, tt := range tests {
		if got := trinoTypeOf(tt.duck).String(); got != tt.trino {
			t.Errorf("trinoTypeOf(%q) = %q, want %q", tt.duck, got, tt.trino)
		}
	}
}

func TestEncodeScalars(t *testing.T) {
	dec := func(v int64, scale uint8) duckdb.Decimal {
		return duckdb.Decimal{Width: 10, Scale: scale, Value: big.NewInt(v)}
	}
	tests := []struct {
		typ  string
		in   any
		want any
	}{
		{"DECIMAL(10,2)", dec(1230, 2), "12.30"},
		{"DECIMAL(10,2)", dec(-1, 2), "-0.01"},
		{"DECIMAL(10,0)", dec(7, 0), "7"},
		{"DECIMAL(10,3)", dec(5, 3), "0.005"},
		{"HUGEINT", big.NewInt(-42), "-42"},
		{"UBIGINT", uint64(18446744073709551615), "18446744073709551615"},
		{"INTERVAL", duckdb.Interval{Days: 1, Micros: 2*3600e6 + 3*60e6 + 4e6 + 5e3}, "1 02:03:04.005"},
		{"INTERVAL", duckdb.Interval{Micros: -1e6}, "-0 00:00:01.000"},
		{"BLOB", []byte("hi"), "aGk="},
		{"VARCHAR", "x", "x"},
		{"INTEGER", nil, nil},
	}
	for _, tt := range tests {
		if got := encodeValue(trinoTypeOf(tt.typ), tt.in); got != tt.want {
			t.Errorf("encodeValue(%s, %v) = %#v, want %#v", tt.typ, tt.in, got, tt.want)
		}
	}
}

func TestSingleStatement(t *testing.T) {
	tests := []struct {
		sql string
		ok  bool
	}{
		{"SELECT 1", true},
		{"SELECT ';'", true},
		{`SELECT 1 AS ";"`, true},
		{"SELECT 1 -- ; comment", true},
		{"SELECT /* ; */ 1", true},
		{"SELECT 'it''s;'", true},
		{"SELECT 1;", false},
		{"SELECT 1; DROP TABLE t", false},
		{"SELECT 1 /* x */; SELECT 2", false},
		{"", false},
		{"-- only a comment", false},
	}
	for _, tt := range tests {
		err := singleStatement(tt.sql, lex(tt.sql))
		if (err == nil) != tt.ok {
			t.Errorf("singleStatement(%q) = %v, want ok=%v", tt.sql, err, tt.ok)
		}
	}
}

func TestToDuck(t *testing.T) {
	tests := []struct{ in, catalog, want string }{
		{"VALUES 1", "", "VALUES (1)"},
		{"VALUES 1, 2", "", "VALUES (1), (2)"},
		{"VALUES (1, 'a'), (2, 'b')", "", "VALUES (1, 'a'), (2, 'b')"},
		{"VALUES (1) + 2, 3", "", "VALUES ((1) + 2), (3)"},
		{"VALUES 1, 2 ORDER BY 1", "", "VALUES (1), (2) ORDER BY 1"},
		{"SELECT * FROM information_schema.tables", "sales", `SELECT * FROM "trinotest_information_schema".tables`},
		{"SELECT * FROM information_schema.tables", "", "SELECT * FROM information_schema.tables"},
		{`SELECT * FROM warehouse."information_schema".columns`, "", `SELECT * FROM warehouse."trinotest_information_schema".columns`},
		{"SELECT 'information_schema.tables'", "sales", "SELECT 'information_schema.tables'"},
	}
	for _, tt := range tests {
		if got, _ := toDuck(tt.in, lex(tt.in), tt.catalog); got != tt.want {
			t.Errorf("toDuck(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestExpandExecute(t *testing.T) {
	sess := session{prepared: map[string]string{"_trino_go": "SELECT * FROM t WHERE a = ? AND b = '?' AND c IN (?)"}}
	in := "EXECUTE _trino_go USING 'o''hara', ARRAY[1, 2]"
	got, e := expandExecute(in, lex(in), sess)
	if e != nil {
		t.Fatal(e)
	}
	if want := "SELECT * FROM t WHERE a = 'o''hara' AND b = '?' AND c IN (ARRAY[1, 2])"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	in = "EXECUTE _trino_go USING 1"
	if _, e := expandExecute(in, lex(in), sess); e == nil {
		t.Error("too few parameters accepted")
	}
	in = "EXECUTE nope"
	if _, e := expandExecute(in, lex(in), sess); e == nil || e.ErrorName != "NOT_FOUND" {
		t.Errorf("unknown statement: %v", e)
	}
	in = "EXECUTE IMMEDIATE 'SELECT ?' USING 5"
	if got, e := expandExecute(in, lex(in), sess); e != nil || got != "SELECT 5" {
		t.Errorf("immediate: %q %v", got, e)
	}
}

func TestDuckLocation(t *testing.T) {
	msg := "Parser Error: syntax error at or near \"FROM\"\n\nLINE 2: SELECT x FROM\n                 ^"
	line, col := duckLocation("SELECT 1\nSELECT x FROM", msg)
	if line != 2 || col != 10 {
		t.Errorf("location = %d:%d, want 2:10", line, col)
	}
}
