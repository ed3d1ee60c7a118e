package trinotest_test

import (
	"database/sql"
	"strings"
	"testing"

	"github.com/mcpfleet/mcpfleet/sqlmcp/internal/trinotest"
)

// The engine refuses, as Trino does, what Trino cannot parse but DuckDB
// would run: queries that write (WITH ... DML, CTE bodies that write) and
// quoting Trino does not have, which would let DuckDB read other tokens
// than the SQL guard and Trino read. Nothing changes in DuckDB, and no
// column of the hidden table comes back.
func TestTrinoRefusalsBeforeDuckDB(t *testing.T) {
	t.Parallel()
	srv := trinotest.Start(t, trinotest.WithLargeTableRows(-1))
	db := open(t, srv, "alice", "")
	const hidden = "sales.crm.contacts"
	cases := map[string]string{
		// Queries that write.
		"WITH c AS (SELECT 1 x) DELETE FROM " + hidden:                                                      "SYNTAX_ERROR",
		"with c as (select 1 x) delete from " + hidden + " where id > 0":                                    "SYNTAX_ERROR",
		"WITH c AS (SELECT 1 x) UPDATE " + hidden + " SET notes = 'x'":                                      "SYNTAX_ERROR",
		"WITH c AS (SELECT 1 x) INSERT INTO " + hidden + " SELECT 9, 'a', 'b', 'c' FROM c":                  "SYNTAX_ERROR",
		"WITH c AS (SELECT 1 x) MERGE INTO " + hidden + " t USING c ON t.id = c.x WHEN MATCHED THEN DELETE": "SYNTAX_ERROR",
		"WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r WHERE n < 3) DELETE FROM " + hidden: "SYNTAX_ERROR",
		"WITH/**/c/* ' */AS(SELECT 1 x)--\nDELETE FROM " + hidden:                                           "SYNTAX_ERROR",
		"WITH c AS (DELETE FROM " + hidden + " RETURNING *) SELECT * FROM c":                                "SYNTAX_ERROR",
		"(WITH c AS (SELECT 1 x) DELETE FROM " + hidden + ")":                                               "SYNTAX_ERROR",
		"EXPLAIN ANALYZE WITH c AS (SELECT 1 x) DELETE FROM " + hidden:                                      "SYNTAX_ERROR",
		"EXPLAIN WITH c AS (SELECT 1 x) DELETE FROM " + hidden:                                              "SYNTAX_ERROR",
		"EXECUTE IMMEDIATE 'WITH c AS (SELECT 1 x) DELETE FROM " + hidden + "'":                             "SYNTAX_ERROR",
		// Quoting and comments Trino does not have: each would hide the
		// table from a reader with Trino's rules.
		"SELECT $$'$$ AS a, h.* FROM " + hidden + " h WHERE 1 = 0 --'":                  "SYNTAX_ERROR",
		"SELECT $t$'$t$ AS a, h.* FROM " + hidden + " h WHERE 1 = 0 --'":                "SYNTAX_ERROR",
		"SELECT E'\\'' AS a, h.* FROM " + hidden + " h WHERE 1 = 0 --'":                 "SYNTAX_ERROR",
		"SELECT e'\\'' AS a, h.* FROM " + hidden + " h WHERE 1 = 0 --'":                 "SYNTAX_ERROR",
		"SELECT X'00'' AS a, h.* FROM " + hidden + " h WHERE 1 = 0 --'":                 "SYNTAX_ERROR",
		"SELECT 1 AS a # ' \n, h.* FROM " + hidden + " h WHERE 1 = 0 --'":               "SYNTAX_ERROR",
		"SELECT 1 AS a \\' , h.* FROM " + hidden + " h WHERE 1 = 0 --'":                 "SYNTAX_ERROR",
		"SELECT `a'` , h.* FROM " + hidden + " h WHERE 1 = 0 --'":                       "SYNTAX_ERROR",
		"SELECT 1::VARCHAR AS a FROM " + hidden:                                         "SYNTAX_ERROR",
		"SELECT 1e AS a FROM " + hidden:                                                 "SYNTAX_ERROR",
		"SELECT 1 AS a\f, h.* FROM " + hidden + " h":                                    "SYNTAX_ERROR",
		"SELECT 1 AS a\u00a0, h.* FROM " + hidden + " h":                                "SYNTAX_ERROR",
		"SELECT {'a': 1} AS a FROM " + hidden:                                           "SYNTAX_ERROR",
		"SELECT 1 AS a, /* /* */ ' */ , h.* FROM " + hidden + " h WHERE 1 = 0 --' AS b": "",
	}
	before, err := srv.Dump(ctxT(t), "sales", "crm")
	if err != nil {
		t.Fatal(err)
	}
	for q, want := range cases {
		rows, err := db.QueryContext(ctxT(t), q)
		var cols []string
		if err == nil {
			cols, _ = rows.Columns()
			for rows.Next() {
			}
			err = rows.Err()
			rows.Close()
		}
		if strings.Contains(strings.Join(cols, ","), "full_name") {
			t.Errorf("%q: the hidden table's columns came back: %v", q, cols)
		}
		if want == "" {
			// Nested comments: Trino ends the comment at the first */, so
			// the rest is one string; DuckDB must read it so too.
			if err != nil || len(cols) != 2 {
				t.Errorf("%q: %v %v, want Trino's reading: columns a and b", q, cols, err)
			}
			continue
		}
		if name := trinoErrorName(err); name != want {
			t.Errorf("%q: error %q (%v), want %s", q, name, err, want)
		}
	}
	if after, _ := srv.Dump(ctxT(t), "sales", "crm"); after != before {
		t.Errorf("rows changed:\n%s\n→\n%s", before, after)
	}
}

// EXPLAIN ANALYZE runs its statement: in a read-only transaction a write
// is refused and changes nothing.
func TestExplainAnalyzeWriteInReadOnlyTransaction(t *testing.T) {
	t.Parallel()
	srv := trinotest.Start(t, trinotest.WithLargeTableRows(-1))
	db := open(t, srv, "alice", "")
	before, _ := srv.Dump(ctxT(t), "sales", "crm")
	tx, err := db.BeginTx(ctxT(t), &sqlTxReadOnly)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	for _, q := range []string{"EXPLAIN ANALYZE DELETE FROM sales.crm.contacts", "EXPLAIN ANALYZE VERBOSE INSERT INTO sales.crm.contacts VALUES (9, 'a', 'b', 'c')"} {
		rows, err := tx.QueryContext(ctxT(t), q)
		if err == nil {
			for rows.Next() {
			}
			err = rows.Err()
			rows.Close()
		}
		if name := trinoErrorName(err); name != "READ_ONLY_VIOLATION" {
			t.Errorf("%s: %q (%v), want READ_ONLY_VIOLATION", q, name, err)
		}
	}
	if after, _ := srv.Dump(ctxT(t), "sales", "crm"); after != before {
		t.Errorf("rows changed:\n%s\n→\n%s", before, after)
	}
}

var sqlTxReadOnly = sql.TxOptions{ReadOnly: true}
