package sqlguard

import (
	"errors"
	"strings"
	"testing"
)

// The read-only bypass corpus: every one must be refused by default.
var bypasses = []string{
	"INSERT INTO t VALUES (1)",
	"insert into t values (1)",
	"iNsErT INTO t VALUES (1)",
	"DELETE FROM t",
	"UPDATE t SET a = 1",
	"MERGE INTO t USING s ON t.a = s.a WHEN MATCHED THEN DELETE",
	"DROP TABLE t",
	"CREATE TABLE t (a int)",
	"CREATE TABLE t AS SELECT 1 a",
	"ALTER TABLE t ADD COLUMN b int",
	"TRUNCATE TABLE t",
	"GRANT SELECT ON t TO u",
	"REVOKE SELECT ON t FROM u",
	"CALL system.flush_metadata_cache()",
	"COMMENT ON TABLE t IS 'x'",
	"REFRESH MATERIALIZED VIEW v",
	// comments hiding statements
	"/* SELECT */ DELETE FROM t",
	"-- SELECT\nDELETE FROM t",
	"-- SELECT\rDELETE FROM t",
	"SELECT 1 /* ; */ ; DELETE FROM t",
	"SELECT 1; DELETE FROM t",
	"SELECT 1; DELETE FROM t;",
	"SELECT 1;; ",
	"SELECT 1 -- ;\n; DELETE FROM t",
	"SELECT '';DELETE FROM t",
	"SELECT 'it''s'; DELETE FROM t",
	"SELECT \"a\"\"\"; DELETE FROM t",
	// EXPLAIN ANALYZE executes its statement
	"EXPLAIN ANALYZE INSERT INTO t VALUES (1)",
	"explain analyze verbose DELETE FROM t",
	"EXPLAIN ANALYZE -- it's a note\nINSERT INTO t VALUES ('x')",
	"EXPLAIN ANALYZE /* ' */ INSERT INTO t VALUES (1) --'",
	"EXPLAIN ANALYZE (TYPE DISTRIBUTED) DELETE FROM t",
	"EXPLAIN EXPLAIN ANALYZE DELETE FROM t",
	"EXPLAIN ANALYZE SET SESSION a = 1",
	// pass-through table functions
	"SELECT * FROM TABLE(pg.system.query(query => 'DELETE FROM accounts RETURNING *'))",
	"SELECT * FROM TABLE(system.query(query => 'DROP TABLE x'))",
	"SELECT * FROM TABLE(query(query => 'DROP TABLE x'))",
	"SELECT * FROM TABLE(SYSTEM.QUERY(query => 'DROP TABLE x'))",
	"SELECT * FROM TABLE(system.\"query\"(query => 'DROP TABLE x'))",
	"SELECT * FROM TABLE(system.query /* c */ (query => 'x'))",
	"SELECT * FROM TABLE(es.system.raw_query(schema => 's', index => 'i', query => '{}'))",
	"EXPLAIN SELECT * FROM TABLE(system.query(query => 'DELETE FROM x'))",
	"WITH a AS (SELECT * FROM TABLE(system.query(query => 'x'))) SELECT * FROM a",
	// session and transaction statements
	"SET SESSION query_max_run_time = '1h'",
	"RESET SESSION query_max_run_time",
	"USE hive.s",
	"SET SESSION AUTHORIZATION admin",
	"SET ROLE admin",
	"SET PATH x",
	"SET TIME ZONE 'UTC'",
	"START TRANSACTION",
	"START TRANSACTION READ WRITE",
	"COMMIT",
	"ROLLBACK",
	"PREPARE p FROM DELETE FROM t",
	"EXECUTE p",
	"EXECUTE IMMEDIATE 'DELETE FROM t'",
	"DEALLOCATE PREPARE p",
	// unicode and lexical tricks
	"ＤＥＬＥＴＥ FROM t",
	"SELECT 1\u00a0; DELETE FROM t",
	"\u200bDELETE FROM t",
	"SELECT 1 FROM t WHERE a = 'x",
	"SELECT \"unterminated FROM t",
	"/* unterminated DELETE FROM t",
	"SELECT 1\x00; DELETE FROM t",
	"(DELETE FROM t)",
	"((INSERT INTO t VALUES 1))",
	"",
	"   ;",
	"-- only a comment",
	"'SELECT' DELETE FROM t",
	"\"SELECT\" FROM t",
}

func TestReadOnlyBypassesAreRefused(t *testing.T) {
	for _, sql := range bypasses {
		st, err := Check(sql, Options{})
		if err == nil {
			t.Errorf("Check(%q) accepted (%+v), want refusal", sql, st)
			continue
		}
		var r *Refusal
		if !errors.As(err, &r) {
			t.Errorf("Check(%q) error %T, want *Refusal", sql, err)
		}
	}
}

func TestLegitimateReadsPass(t *testing.T) {
	tests := []struct {
		sql, want, keyword string
	}{
		{"VALUES 1", "VALUES 1", "VALUES"},
		{"(SELECT 1)", "(SELECT 1)", "("},
		{"((SELECT 1) UNION (SELECT 2))", "((SELECT 1) UNION (SELECT 2))", "("},
		{"SELECT set FROM t", "SELECT set FROM t", "SELECT"},
		{"SELECT \"delete\", \"set\" FROM t", "SELECT \"delete\", \"set\" FROM t", "SELECT"},
		{"SELECT 'DELETE FROM t; DROP TABLE x' AS s", "SELECT 'DELETE FROM t; DROP TABLE x' AS s", "SELECT"},
		{"WITH a AS (SELECT 1 x) SELECT * FROM a", "WITH a AS (SELECT 1 x) SELECT * FROM a", "WITH"},
		{"WITH RECURSIVE a(n) AS (SELECT 1 UNION ALL SELECT n+1 FROM a WHERE n < 3) SELECT * FROM a", "", "WITH"},
		{"select 1;", "select 1", "SELECT"},
		{"SELECT 1 ; -- trailing comment", "SELECT 1", "SELECT"},
		{"SELECT 1 -- comment with ; inside\n", "SELECT 1", "SELECT"},
		{"/* lead */ SELECT 1", "SELECT 1", "SELECT"},
		{"TABLE t", "TABLE t", "TABLE"},
		{"SHOW CATALOGS", "SHOW CATALOGS", "SHOW"},
		{"SHOW CREATE TABLE t", "SHOW CREATE TABLE t", "SHOW"},
		{"DESCRIBE t", "DESCRIBE t", "DESCRIBE"},
		{"desc t", "desc t", "DESC"},
		{"EXPLAIN SELECT 1", "EXPLAIN SELECT 1", "EXPLAIN"},
		{"EXPLAIN (TYPE IO, FORMAT JSON) SELECT * FROM t", "", "EXPLAIN"},
		{"EXPLAIN INSERT INTO t VALUES (1)", "", "EXPLAIN"},
		{"EXPLAIN (SELECT 1)", "", "EXPLAIN"},
		{"EXPLAIN ANALYZE SELECT count(*) FROM t", "", "EXPLAIN"},
		{"SELECT U&'\\0041', X'ab', 'it''s' FROM t", "", "SELECT"},
		{"SELECT \"naïve\" FROM \"tâble\"", "", "SELECT"},
		{"SELECT 'naïve'", "", "SELECT"},
		{"SELECT * FROM TABLE(system.sequence(start => 1, stop => 3))", "", "SELECT"},
		{"SELECT query FROM runtime.queries", "", "SELECT"},
		{"SELECT a.query FROM t a", "", "SELECT"},
		{"SELECT 1e3, .5, 2.5E-3", "", "SELECT"},
	}
	for _, tt := range tests {
		st, err := Check(tt.sql, Options{})
		if err != nil {
			t.Errorf("Check(%q): %v", tt.sql, err)
			continue
		}
		if !st.ReadOnly || st.Keyword != tt.keyword {
			t.Errorf("Check(%q) = %+v, want read-only %s", tt.sql, st, tt.keyword)
		}
		if tt.want != "" && st.SQL != tt.want {
			t.Errorf("Check(%q).SQL = %q, want %q", tt.sql, st.SQL, tt.want)
		}
	}
}

func TestWritesNeedTheSetting(t *testing.T) {
	for _, sql := range []string{"INSERT INTO t VALUES (1)", "EXPLAIN ANALYZE DELETE FROM t", "SELECT * FROM TABLE(system.query(query => 'x'))", "CREATE TABLE t AS SELECT 1 a"} {
		_, err := Check(sql, Options{})
		if err == nil || !strings.Contains(err.Error(), SettingAllowWrites+"=true") {
			t.Errorf("Check(%q) = %v, want refusal naming %s", sql, err, SettingAllowWrites)
		}
		st, err := Check(sql, Options{AllowWrites: true})
		if err != nil {
			t.Errorf("Check(%q) with writes allowed: %v", sql, err)
			continue
		}
		if strings.HasPrefix(sql, "INSERT") && st.ReadOnly {
			t.Errorf("Check(%q).ReadOnly = true", sql)
		}
	}
	// Even with writes allowed, session statements and several statements are refused.
	for _, sql := range []string{"USE a.b", "SET SESSION x = 1", "START TRANSACTION", "COMMIT", "SELECT 1; SELECT 2", "EXPLAIN ANALYZE RESET SESSION x"} {
		if _, err := Check(sql, Options{AllowWrites: true}); err == nil {
			t.Errorf("Check(%q) with writes allowed: accepted", sql)
		}
	}
}

func TestExplainInner(t *testing.T) {
	tests := []struct{ sql, inner string }{
		{"EXPLAIN SELECT 1", "SELECT 1"},
		{"EXPLAIN (TYPE IO, FORMAT JSON) SELECT * FROM t;", "SELECT * FROM t"},
		{"EXPLAIN ANALYZE VERBOSE SELECT 2", "SELECT 2"},
		{"SELECT 3", "SELECT 3"},
		{"EXPLAIN (SELECT 1)", "(SELECT 1)"},
	}
	for _, tt := range tests {
		st, err := Check(tt.sql, Options{})
		if err != nil {
			t.Fatalf("Check(%q): %v", tt.sql, err)
		}
		if st.Inner != tt.inner {
			t.Errorf("Check(%q).Inner = %q, want %q", tt.sql, st.Inner, tt.inner)
		}
	}
}

func TestRefusalSaysWhatAndWhich(t *testing.T) {
	_, err := Check("DELETE FROM t", Options{})
	want := "refused DELETE: it may change data or the catalog, and only read-only statements (SELECT, WITH, VALUES, TABLE, SHOW, DESCRIBE and EXPLAIN) run. set SQLENGINE_ALLOW_WRITE_QUERIES=true to allow writes"
	if err == nil || err.Error() != want {
		t.Errorf("got %v\nwant %s", err, want)
	}
	_, err = Check("USE a.b", Options{})
	if err == nil || !strings.Contains(err.Error(), "catalog and schema arguments") {
		t.Errorf("USE refusal = %v", err)
	}
}

func TestBinaryLiteralEndsAtFirstQuote(t *testing.T) {
	// As in Trino, X'ab' ends at its first quote; what follows is a string.
	toks, err := Tokenize("SELECT X'ab''; DELETE FROM t; SELECT '")
	if err != nil {
		t.Fatal(err)
	}
	if len(toks) != 3 || toks[1].Value != "ab" || toks[2].Kind != String {
		t.Errorf("tokens = %+v", toks)
	}
}

func TestTokenize(t *testing.T) {
	toks, err := Tokenize(`SELECT "a""b", 'c''d', U&'e', X'0f' -- x
	/* y */ FROM t.u WHERE a<>1`)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, tk := range toks {
		got = append(got, tk.Value)
	}
	want := `SELECT|a"b|,|c'd|,|e|,|0f|FROM|T|.|U|WHERE|A|<>|1`
	if strings.Join(got, "|") != want {
		t.Errorf("tokens = %s\nwant     %s", strings.Join(got, "|"), want)
	}
}

// A query that contains a write is that write, however it is spelled; a
// table function is a read only when it is known to be one.
func TestTheEffectDecides(t *testing.T) {
	for _, tc := range []struct{ sql, write string }{
		{"WITH c AS (SELECT 1 x) DELETE FROM t", "DELETE FROM t"},
		{"with c as (select 1) update t set a = 1", "update t set a = 1"},
		{"WITH c AS (SELECT 1) MERGE INTO t USING c ON true WHEN MATCHED THEN DELETE", "MERGE INTO t USING c ON true WHEN MATCHED THEN DELETE"},
		{"WITH c AS (SELECT 1) INSERT INTO t SELECT * FROM c", "INSERT INTO t SELECT * FROM c"},
		{"WITH c AS (INSERT INTO t VALUES 1 RETURNING *), d AS (DELETE FROM u RETURNING *) SELECT 1", "DELETE FROM u RETURNING *) SELECT 1"},
		{"EXPLAIN ANALYZE WITH/**/c AS (SELECT 1)--\nDELETE FROM t", "DELETE FROM t"},
		{"((WITH c AS (SELECT 1) DELETE FROM t))", "DELETE FROM t))"},
		{`WITH c AS (SELECT 1) UPDATE "t" AS x SET a = 1`, `UPDATE "t" AS x SET a = 1`},
	} {
		if _, err := Check(tc.sql, Options{}); err == nil || !strings.Contains(err.Error(), SettingAllowWrites+"=true") {
			t.Errorf("Check(%q) = %v, want a write refusal", tc.sql, err)
		}
		st, err := Check(tc.sql, Options{AllowWrites: true})
		if err != nil || st.ReadOnly || st.Write != tc.write {
			t.Errorf("Check(%q) with writes = %+v, %v; want the write %q", tc.sql, st, err, tc.write)
		}
	}
	for _, sql := range []string{
		"SELECT * FROM TABLE(system.procedure(query => 'EXECUTE p'))",
		"SELECT * FROM TABLE(my.system.whatever(x => 1))",
		`SELECT * FROM TABLE("sequence "(start => 1))`,
		"SELECT * FROM TABLE((system.query(query => 'x')))",
	} {
		if _, err := Check(sql, Options{}); err == nil {
			t.Errorf("Check(%q) accepted", sql)
		}
		if st, err := Check(sql, Options{AllowWrites: true}); err != nil || !st.PassThrough {
			t.Errorf("Check(%q) with writes = %+v, %v; want pass-through", sql, st, err)
		}
	}
	for _, sql := range []string{
		"SELECT update FROM t",
		"SELECT x AS update, merge FROM t",
		"WITH update AS (SELECT 1 x) SELECT * FROM update",
		"SELECT * FROM TABLE(exclude_columns(input => TABLE(t), columns => DESCRIPTOR(a)))",
		"SELECT * FROM TABLE(system.sequence(start => 1, stop => 3))",
		"SHOW CREATE TABLE t",
	} {
		if st, err := Check(sql, Options{}); err != nil || !st.ReadOnly {
			t.Errorf("Check(%q) = %+v, %v; want a read", sql, st, err)
		}
	}
}

// Numbers and identifiers end where Trino's longest-match lexer ends them.
func TestTokenizeNumbers(t *testing.T) {
	toks, err := Tokenize("1e5 1e5x 1e 0x1F 0x1G 1_000 1__0 1.5e 1.5 .5e3 1. 123abc")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, tk := range toks {
		k := "N"
		if tk.Kind == Word {
			k = "W"
		}
		got = append(got, k+":"+tk.Text)
	}
	want := "N:1e5 W:1e5x W:1e N:0x1F W:0x1G N:1_000 W:1__0 N:1.5 W:e N:1.5 N:.5e3 N:1. W:123abc"
	if strings.Join(got, " ") != want {
		t.Errorf("tokens %s\nwant   %s", strings.Join(got, " "), want)
	}
}
