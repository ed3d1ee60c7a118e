package mcpserver

import (
	"testing"

	"github.com/mcpfleet/mcpfleet/shared/toolcall"

	"github.com/mcpfleet/mcpfleet/sqlmcp/internal/sqlguard"
)

// TestClassify: the class of each statement the guard admits with writes
// allowed, read from the checked statement; anything not known to be a
// read or an undoable change is destructive.
func TestClassify(t *testing.T) {
	for _, tc := range []struct {
		sql    string
		class  toolcall.Class
		verb   string
		target string // "" when none is named
	}{
		{"SELECT * FROM orders", toolcall.Read, "SELECT", ""},
		{"WITH v AS (SELECT 1) SELECT * FROM v", toolcall.Read, "WITH", ""},
		{"VALUES 1", toolcall.Read, "VALUES", ""},
		{"(SELECT 1)", toolcall.Read, "(", ""},
		{"TABLE orders", toolcall.Read, "TABLE", ""},
		{"SHOW TABLES", toolcall.Read, "SHOW", ""},
		{"DESCRIBE orders", toolcall.Read, "DESCRIBE", ""},
		{"EXPLAIN DELETE FROM orders", toolcall.Read, "DELETE", ""},
		{"EXPLAIN ANALYZE SELECT 1", toolcall.Read, "SELECT", ""},
		{"INSERT INTO orders VALUES (1)", toolcall.Change, "INSERT", "c.s.orders"},
		{"insert into S2.Orders select * from x", toolcall.Change, "INSERT", "c.s2.orders"},
		{`INSERT INTO "Cat"."My Schema"."T" VALUES (1)`, toolcall.Change, "INSERT", "Cat.My Schema.T"},
		{"CREATE TABLE t (x INTEGER)", toolcall.Change, "CREATE", "c.s.t"},
		{"CREATE TABLE IF NOT EXISTS t AS SELECT 1 AS x", toolcall.Change, "CREATE", "c.s.t"},
		{"CREATE VIEW v AS SELECT 1 AS x", toolcall.Change, "CREATE", "c.s.v"},
		{"CREATE SCHEMA other.s9", toolcall.Change, "CREATE", "other.s9"},
		{"CREATE MATERIALIZED VIEW mv AS SELECT 1 AS x", toolcall.Change, "CREATE", "c.s.mv"},
		{"CREATE ROLE analyst", toolcall.Change, "CREATE", ""},
		{"CREATE OR REPLACE TABLE t AS SELECT 1 AS x", toolcall.Destructive, "CREATE", "c.s.t"},
		{"CREATE OR REPLACE VIEW v AS SELECT 1 AS x", toolcall.Destructive, "CREATE", "c.s.v"},
		{"DELETE FROM orders WHERE status = 'void'", toolcall.Destructive, "DELETE", "c.s.orders"},
		{"UPDATE orders SET x = 1", toolcall.Destructive, "UPDATE", "c.s.orders"},
		{"MERGE INTO orders o USING x ON o.id = x.id WHEN MATCHED THEN DELETE", toolcall.Destructive, "MERGE", "c.s.orders"},
		{"DROP TABLE IF EXISTS orders", toolcall.Destructive, "DROP", "c.s.orders"},
		{"DROP VIEW v", toolcall.Destructive, "DROP", "c.s.v"},
		{"DROP SCHEMA s CASCADE", toolcall.Destructive, "DROP", "c.s"},
		{"TRUNCATE TABLE orders", toolcall.Destructive, "TRUNCATE", "c.s.orders"},
		{"ALTER TABLE orders RENAME TO orders2", toolcall.Destructive, "ALTER", "c.s.orders"},
		{"EXPLAIN ANALYZE DELETE FROM orders", toolcall.Destructive, "DELETE", "c.s.orders"},
		{"CALL system.flush_metadata_cache()", toolcall.Destructive, "CALL", ""},
		{"GRANT SELECT ON orders TO alice", toolcall.Destructive, "GRANT", ""},
		{"REVOKE SELECT ON orders FROM alice", toolcall.Destructive, "REVOKE", ""},
		{"COMMENT ON TABLE orders IS 'x'", toolcall.Destructive, "COMMENT", ""},
		{"ANALYZE orders", toolcall.Destructive, "ANALYZE", ""},
		{"REFRESH MATERIALIZED VIEW mv", toolcall.Destructive, "REFRESH", ""},
		{"SELECT * FROM TABLE(system.query(query => 'DELETE FROM t'))", toolcall.Destructive, "PASS-THROUGH", ""},
		{"INSERT INTO orders SELECT * FROM TABLE(pg.system.raw_query(query => 'x'))", toolcall.Destructive, "PASS-THROUGH", ""},
	} {
		st, err := sqlguard.Check(tc.sql, sqlguard.Options{AllowWrites: true})
		if err != nil {
			t.Errorf("%s: guard refused: %v", tc.sql, err)
			continue
		}
		got := classify(st, "c", "s")
		target := ""
		if got.Target != nil {
			target = got.Target.String()
		}
		if got.Class != tc.class || got.Verb != tc.verb || target != tc.target {
			t.Errorf("%s: class %s verb %s target %q, want %s %s %q", tc.sql, got.Class, got.Verb, target, tc.class, tc.verb, tc.target)
		}
	}
}

// TestClassifyClauses: the condition, assignments and ALTER action are
// taken as written, outside parentheses only.
func TestClassifyClauses(t *testing.T) {
	st, _ := sqlguard.Check("UPDATE orders SET note = (SELECT max(n) FROM x WHERE y = 1) WHERE status = 'a' || 'b'", sqlguard.Options{AllowWrites: true})
	got := classify(st, "c", "s")
	if got.Set != "note = (SELECT max(n) FROM x WHERE y = 1)" || got.Where != "status = 'a' || 'b'" {
		t.Errorf("set %q where %q", got.Set, got.Where)
	}
	st, _ = sqlguard.Check("ALTER TABLE IF EXISTS orders DROP COLUMN note", sqlguard.Options{AllowWrites: true})
	if got := classify(st, "c", "s"); got.Rest != "DROP COLUMN note" || !got.IfGuard {
		t.Errorf("rest %q ifGuard %v", got.Rest, got.IfGuard)
	}
	// A one-part name with no session schema names nothing resolvable.
	st, _ = sqlguard.Check("DROP TABLE orders", sqlguard.Options{AllowWrites: true})
	if got := classify(st, "", ""); got.Target != nil || got.Class != toolcall.Destructive {
		t.Errorf("unresolvable: %+v", got)
	}
}

func TestThousands(t *testing.T) {
	for n, want := range map[int64]string{0: "0", 999: "999", 1000: "1,000", 12408: "12,408", 1234567: "1,234,567", -4500: "-4,500"} {
		if got := thousands(n); got != want {
			t.Errorf("%d: %s", n, got)
		}
	}
}
