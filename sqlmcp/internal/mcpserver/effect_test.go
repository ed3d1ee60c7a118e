package mcpserver_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/mcpfleet/mcpfleet/shared/approval"
	"github.com/mcpfleet/mcpfleet/shared/toolcall"
)

// effectCase is a hostile statement and the class its effect gives it:
// "destructive" or "change" (a write: refused without
// SQLENGINE_ALLOW_WRITE_QUERIES, approved and audited with it), "refused"
// (refused in either mode) or "read" (a control: runs at once, in a
// read-only transaction when writes are off).
type effectCase struct{ sql, class string }

// effectAttacks builds the table: every DML kind behind WITH in many
// spellings, CTE bodies that write, EXPLAIN ANALYZE of them, pass-through
// table functions in every spelling and nesting, prepared-statement forms,
// unicode white space and very long inputs.
func effectAttacks() []effectCase {
	dml := []effectCase{
		{"DELETE FROM orders WHERE status = 'void'", "destructive"},
		{"DELETE FROM orders", "destructive"},
		{"UPDATE orders SET status = 'x' WHERE id = 1", "destructive"},
		{"INSERT INTO orders VALUES (9, 'new')", "change"},
		{"INSERT INTO orders SELECT id, note FROM old", "change"},
		{"MERGE INTO orders o USING old s ON o.id = s.id WHEN MATCHED THEN DELETE", "destructive"},
	}
	wrap := []func(string) string{
		func(d string) string { return "WITH c AS (SELECT 1 AS x) " + d },
		func(d string) string { return "with c as (select 1 x) " + strings.ToLower(d) },
		func(d string) string {
			return "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r WHERE n < 3) " + d
		},
		func(d string) string {
			return "WITH a AS (SELECT 1 x), b AS (WITH i AS (SELECT 2 y) SELECT * FROM i, a) " + d
		},
		func(d string) string { return "WITH/* c */c/* ' */AS/*\n*/(SELECT 1 x)--x\n" + d },
		func(d string) string { return `WITH "c" AS (SELECT 'a''b' AS "x""y", '--' AS "/*") ` + d },
		func(d string) string { return "EXPLAIN ANALYZE WITH c AS (SELECT 1 x) " + d },
		func(d string) string { return "explain analyze verbose WiTh c AS (SELECT 1 x)\t\r\n" + d },
		func(d string) string { return "EXPLAIN EXPLAIN ANALYZE WITH c AS (SELECT 1 x) " + d },
	}
	var out []effectCase
	for _, w := range wrap {
		for _, d := range dml {
			out = append(out, effectCase{w(d.sql), d.class})
		}
	}
	out = append(out,
		// A CTE body that writes, read by the query that follows.
		effectCase{"WITH c AS (DELETE FROM orders RETURNING *) SELECT * FROM c", "destructive"},
		effectCase{"WITH c AS (INSERT INTO orders VALUES (8, 'x') RETURNING *) SELECT * FROM c", "change"},
		effectCase{"WITH c AS (UPDATE orders SET status = 'y' RETURNING *) SELECT count(*) FROM c", "destructive"},
		effectCase{"SELECT * FROM (WITH c AS (SELECT 1 x) DELETE FROM orders RETURNING *)", "destructive"},
		effectCase{"(WITH c AS (SELECT 1 x) DELETE FROM orders)", "destructive"},
		effectCase{"WITH c AS (SELECT 1 x) SELECT * FROM c UNION ALL (DELETE FROM orders RETURNING id)", "destructive"},
		effectCase{"WITH c AS (SELECT 1 x) INSERT INTO orders SELECT 9, 'a' FROM c; ", "change"},
		effectCase{"WITH c AS (SELECT 1 x) TRUNCATE TABLE orders", "destructive"},
		effectCase{"WITH c AS (SELECT 1 x) UPDATE \"orders\" AS o SET status = 'z'", "destructive"},
	)
	// Pass-through table functions, however spelled or nested.
	for _, f := range []string{
		"TABLE(system.query(query => 'DELETE FROM orders'))",
		"TABLE(sales.system.query(query => 'DELETE FROM orders'))",
		"TABLE(SYSTEM.QUERY(QUERY => 'DELETE FROM orders'))",
		`TABLE("system"."query"(query => 'DELETE FROM orders'))`,
		`TABLE("sales" . "system" . "QUERY" (query => 'x'))`,
		"TABLE ( system . query /* ( */ ( query => 'x' ) )",
		"TABLE(\n\tsystem.query -- )\n(query => 'x'))",
		"TABLE(query(query => 'x'))",
		"TABLE(es.system.raw_query(schema => 's', index => 'i', query => '{}'))",
		"TABLE(system.procedure(query => 'EXECUTE dbo.purge'))",
		"TABLE(mssql.system.PROCEDURE(query => 'EXECUTE dbo.purge'))",
		"TABLE(system.query_passthrough(query => 'x'))",
		"TABLE(pg.system.unknown_fn(q => 'x'))",
		`TABLE("sequence "(start => 1, stop => 2))`,
	} {
		out = append(out, effectCase{"SELECT * FROM " + f, "destructive"})
	}
	pt := "TABLE(system.query(query => 'DELETE FROM orders'))"
	for _, q := range []string{
		"SELECT * FROM orders WHERE id IN (SELECT id FROM " + pt + ")",
		"WITH c AS (SELECT * FROM " + pt + ") SELECT * FROM c",
		"WITH a AS (WITH b AS (SELECT * FROM " + pt + ") SELECT * FROM b) SELECT * FROM a",
		"SELECT id FROM orders UNION SELECT 1 FROM " + pt,
		"SELECT * FROM orders o CROSS JOIN LATERAL (SELECT * FROM " + pt + ")",
		"SELECT * FROM orders o LEFT JOIN " + pt + " p ON true",
		"EXPLAIN ANALYZE SELECT * FROM " + pt,
		"(SELECT * FROM " + pt + ")",
		"VALUES (1) UNION ALL SELECT 1 FROM " + pt,
	} {
		out = append(out, effectCase{q, "destructive"})
	}
	long := "WITH "
	for i := range 400 {
		long += fmt.Sprintf("c%d AS (SELECT %d x), ", i, i)
	}
	out = append(out,
		// Prepared-statement forms: session statements, refused in any mode.
		effectCase{"PREPARE p FROM WITH c AS (SELECT 1 x) DELETE FROM orders", "refused"},
		effectCase{"EXECUTE IMMEDIATE 'WITH c AS (SELECT 1 x) DELETE FROM orders'", "refused"},
		effectCase{"EXECUTE p", "refused"},
		effectCase{"EXPLAIN ANALYZE EXECUTE IMMEDIATE 'DELETE FROM orders'", "refused"},
		// Unicode white space, fullwidth letters and control characters
		// between tokens: not Trino's white space.
		effectCase{"WITH c AS (SELECT 1 x)\u00a0DELETE FROM orders", "refused"},
		effectCase{"WITH c AS (SELECT 1 x)\u2028DELETE FROM orders", "refused"},
		effectCase{"WITH c AS (SELECT 1 x)\u3000DELETE FROM orders", "refused"},
		effectCase{"WITH c AS (SELECT 1 x) ＤＥＬＥＴＥ FROM orders", "refused"},
		effectCase{"WITH c AS (SELECT 1 x)\fDELETE FROM orders", "refused"},
		effectCase{"WITH c AS (SELECT 1 x)\vDELETE FROM orders", "refused"},
		// Very long inputs.
		effectCase{long + "z AS (SELECT 1 x) DELETE FROM orders", "destructive"},
		effectCase{"WITH c AS (SELECT 1 x) /*" + strings.Repeat("x' ", 70000) + "*/ DELETE FROM orders", "destructive"},
		effectCase{"WITH c AS (SELECT '" + strings.Repeat("''", 50000) + "' x) UPDATE orders SET status = 'q'", "destructive"},
		effectCase{strings.Repeat("(", 200) + "SELECT 1" + strings.Repeat(")", 200) + " UNION ALL (WITH c AS (SELECT 1 x) DELETE FROM orders)", "destructive"},
		// Controls: reads that name the verbs only as data or names.
		effectCase{"WITH c AS (SELECT 'DELETE FROM orders' AS q) SELECT * FROM c", "read"},
		effectCase{`WITH "delete" AS (SELECT 1 "update") SELECT "update" FROM "delete"`, "read"},
		effectCase{"WITH c AS (SELECT 1 x) SELECT x AS update FROM c -- DELETE FROM orders", "read"},
		effectCase{"SELECT count(*) AS delete_count FROM orders WHERE status <> 'DELETE' AND 'x' <> '$$'", "read"},
		effectCase{"EXPLAIN WITH c AS (SELECT 1 x) SELECT * FROM c /* INSERT INTO orders */", "read"},
	)
	return out
}

// TestClassIsTheEffect runs every hostile statement through execute_query
// twice, on sqlmcp over the Trino-protocol engine: writes off (each must
// be refused before anything reaches the engine, or run as a read in a
// read-only transaction), and writes on with approval for every write
// (each must ask for approval with its class, leave exactly one pending
// audit record, and, approved, run only as the engine allows: Trino
// cannot parse a query that writes, and the test engine refuses it as
// Trino does). DuckDB's rows are compared before and after each call.
func TestClassIsTheEffect(t *testing.T) {
	cases := effectAttacks()
	if len(cases) < 60 {
		t.Fatalf("only %d cases", len(cases))
	}
	ro := newApEnv(t, apOptions{readOnly: true})
	rw := newApEnv(t, apOptions{calls: toolcall.Config{Approval: approval.Config{Policy: approval.Change}}})
	counts := map[string]int{}
	for i, tc := range cases {
		counts[tc.class]++
		name := fmt.Sprintf("%02d", i)
		t.Run(name, func(t *testing.T) {
			short := tc.sql
			if len(short) > 120 {
				short = short[:120] + "…"
			}
			t.Logf("%s: %q", tc.class, short)

			// Writes off.
			before, n, nrec := ro.dump(), len(ro.srv.Statements()), len(ro.records())
			res := ro.exec(tc.sql)
			switch tc.class {
			case "read":
				if res.IsError {
					t.Errorf("read-only server refused a read: %s", resText(res))
				}
				inTx := false
				for _, r := range ro.srv.Statements()[n:] {
					switch id := r.Header.Get("X-Trino-Transaction-Id"); {
					case r.Header.Get("X-Trino-Source") != ro.source || r.Body == "ROLLBACK":
					case r.Body == "START TRANSACTION READ ONLY":
						inTx = true
					case !inTx || id == "" || id == "NONE":
						t.Errorf("%q ran outside the read-only transaction", r.Body)
					}
				}
				if !inTx {
					t.Errorf("no read-only transaction was started")
				}
			default:
				if !res.IsError || !strings.Contains(resText(res), "refused") {
					t.Errorf("read-only server: isError=%v %s", res.IsError, resText(res))
				}
				for _, r := range ro.srv.Statements()[n:] {
					if r.Header.Get("X-Trino-Source") == ro.source {
						t.Errorf("a refused statement reached the engine: %q", r.Body)
					}
				}
			}
			if after := ro.dump(); after != before {
				t.Errorf("read-only server changed rows:\n%s\n→\n%s", before, after)
			}
			if recs := ro.records()[nrec:]; len(recs) != 0 {
				t.Errorf("read-only server audited %v", recs)
			}

			// Writes on, approval for every write.
			before, nrec = rw.dump(), len(rw.records())
			res = rw.exec(tc.sql)
			switch tc.class {
			case "read":
				if res.IsError || strings.Contains(resText(res), "Approval") {
					t.Errorf("a read asked or failed: %s", resText(res))
				}
				if recs := rw.records()[nrec:]; len(recs) != 0 {
					t.Errorf("a read was audited: %v", recs)
				}
			case "refused":
				if !res.IsError || !strings.Contains(resText(res), "refused") {
					t.Errorf("isError=%v %s", res.IsError, resText(res))
				}
			default:
				code := confirmCode(t, res)
				if pr := preview(t, res); pr.Class != tc.class {
					t.Errorf("class %s, want %s", pr.Class, tc.class)
				}
				recs := rw.records()[nrec:]
				if approvals(recs) != "outcome:pending" || recs[0]["class"] != tc.class {
					t.Errorf("audit %v", recs)
				}
				if after := rw.dump(); after != before {
					t.Fatalf("asking for approval changed rows:\n%s\n→\n%s", before, after)
				}
				// Approved, the checked statement is what runs; the engine
				// refuses what Trino cannot parse or does not have.
				nrec = len(rw.records())
				done := rw.exec(tc.sql, "confirm", code)
				// The engine answers EXPLAIN of an EXPLAIN itself, running
				// nothing (the rows are compared below).
				if !done.IsError && !strings.HasPrefix(tc.sql, "EXPLAIN EXPLAIN") {
					t.Errorf("approved: the engine ran it: %s", resText(done))
				}
				recs = rw.records()[nrec:]
				if len(recs) != 2 || recs[0]["event"] != "intent" || recs[0]["class"] != tc.class || recs[1]["event"] != "outcome" {
					t.Errorf("audit after approval %v", recs)
				}
			}
			if after := rw.dump(); after != before {
				t.Errorf("rows changed:\n%s\n→\n%s", before, after)
			}
		})
	}
	t.Logf("%d statements: %v", len(cases), counts)
}
