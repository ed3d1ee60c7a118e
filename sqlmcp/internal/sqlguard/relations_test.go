package sqlguard

import (
	"strings"
	"testing"
)

// Statements naming a relation outside sales.mcpallowed, in every place a
// relation can be named, with filters and limits that let an optimizer
// prune the scan. Session: catalog sales, schema mcpallowed.
var namedOutside = []string{
	"SELECT * FROM sales.mcpsecret.s WHERE false",
	"SELECT * FROM sales.mcpsecret.s LIMIT 0",
	"SELECT * FROM mcpsecret.s WHERE 1 = 0",
	`SELECT * FROM "sales"."mcpsecret"."s" WHERE false`,
	`SELECT * FROM SALES.MCPSECRET.S WHERE false`,
	`SELECT * FROM "mcpsecret".s WHERE false`,
	"SELECT * FROM sales . mcpsecret . s WHERE false",
	"SELECT * FROM sales/**/.mcpsecret.s WHERE false",
	"SELECT * FROM warehouse.logs.events WHERE false",
	"SELECT * FROM system.runtime.queries WHERE false",
	"SELECT * FROM a JOIN mcpsecret.s ON false",
	"SELECT * FROM a, mcpsecret.s WHERE false",
	"SELECT * FROM a x, mcpsecret.s y WHERE false",
	"SELECT * FROM a AS x (c1, c2, c3), mcpsecret.s",
	"SELECT * FROM a TABLESAMPLE BERNOULLI (0), mcpsecret.s",
	"SELECT * FROM a LEFT OUTER JOIN mcpsecret.s ON false",
	"SELECT * FROM a CROSS JOIN mcpsecret.s LIMIT 0",
	"SELECT * FROM a NATURAL JOIN mcpsecret.s",
	"SELECT * FROM a JOIN mcpsecret.s USING (x) WHERE false",
	"SELECT * FROM a JOIN a b ON a.x = b.x, mcpsecret.s",
	"SELECT * FROM ((a JOIN mcpsecret.s ON false))",
	"SELECT (SELECT count(*) FROM mcpsecret.s WHERE false)",
	"SELECT * FROM a WHERE EXISTS (SELECT * FROM mcpsecret.s WHERE false)",
	"SELECT * FROM a WHERE x IN (SELECT x FROM mcpsecret.s WHERE false)",
	"SELECT * FROM a WHERE x = ANY (SELECT x FROM mcpsecret.s)",
	"SELECT * FROM (SELECT * FROM mcpsecret.s) t WHERE false",
	"SELECT * FROM a, LATERAL (SELECT * FROM mcpsecret.s WHERE false)",
	"SELECT * FROM a CROSS JOIN UNNEST((SELECT array_agg(x) FROM mcpsecret.s WHERE false))",
	"SELECT EXTRACT(YEAR FROM (SELECT max(d) FROM mcpsecret.s))",
	"SELECT * FROM a WHERE x IS DISTINCT FROM 1 UNION SELECT * FROM mcpsecret.s",
	"TABLE mcpsecret.s",
	"SELECT 1 UNION ALL TABLE mcpsecret.s",
	"SELECT * FROM a UNION SELECT * FROM mcpsecret.s WHERE false",
	"SELECT * FROM a INTERSECT SELECT * FROM mcpsecret.s",
	"SELECT * FROM a EXCEPT (SELECT * FROM mcpsecret.s LIMIT 0)",
	"(SELECT * FROM mcpsecret.s LIMIT 0)",
	"WITH x AS (SELECT * FROM mcpsecret.s) SELECT * FROM a",
	"WITH s AS (SELECT * FROM mcpsecret.s WHERE false) SELECT * FROM s",
	"WITH a AS (SELECT 1 x), b AS (SELECT * FROM mcpsecret.s) SELECT * FROM a",
	"WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r, mcpsecret.s) SELECT * FROM r",
	"SELECT * FROM a ORDER BY (SELECT max(x) FROM mcpsecret.s)",
	"SELECT * FROM a GROUP BY x HAVING x > (SELECT 0 FROM mcpsecret.s)",
	"SELECT count(*) FILTER (WHERE x IN (SELECT x FROM mcpsecret.s)) FROM a",
	"EXPLAIN SELECT * FROM mcpsecret.s WHERE false",
	"EXPLAIN (TYPE IO) SELECT * FROM mcpsecret.s",
	"INSERT INTO mcpsecret.s SELECT * FROM a WHERE false",
	"INSERT INTO a SELECT * FROM mcpsecret.s WHERE false",
	"INSERT INTO a (x) SELECT x FROM mcpsecret.s WHERE false",
	"MERGE INTO a USING mcpsecret.s ON false WHEN MATCHED THEN DELETE",
	"MERGE INTO a USING (SELECT * FROM mcpsecret.s) t ON false WHEN MATCHED THEN DELETE",
	"UPDATE mcpsecret.s SET x = 1 WHERE false",
	"UPDATE a SET x = (SELECT max(x) FROM mcpsecret.s) WHERE false",
	"DELETE FROM mcpsecret.s WHERE false",
	"DELETE FROM a WHERE x IN (SELECT x FROM mcpsecret.s)",
	"CREATE TABLE mcpsecret.t AS SELECT 1 x",
	"CREATE TABLE a2 AS SELECT * FROM mcpsecret.s WITH NO DATA",
	"DROP TABLE mcpsecret.s",
}

func TestNamedRelationsOutsideScopeAreRefused(t *testing.T) {
	scope, _ := ParseScope([]string{"sales.mcpallowed"})
	for _, sql := range namedOutside {
		st, err := Check(sql, Options{AllowWrites: true})
		if err != nil {
			t.Errorf("Check(%q): %v", sql, err)
			continue
		}
		err = scope.CheckNamed(st, "sales", "mcpallowed")
		if err == nil || !strings.Contains(err.Error(), SettingAllowedSchemas) {
			t.Errorf("CheckNamed(%q) = %v, want a refusal", sql, err)
		}
	}
	t.Logf("%d statements naming relations outside the scope", len(namedOutside))
}

// Statements the guard cannot follow are refused, not guessed.
func TestUnfollowableStatementsAreRefused(t *testing.T) {
	scope, _ := ParseScope([]string{"sales.mcpallowed"})
	for _, sql := range []string{
		"SELECT * FROM range(10)",
		"SELECT * FROM a, read_csv('x.csv')",
		"SELECT * FROM sales.mcpallowed.duckdb_tables()",
		"SELECT * FROM 'file.csv'",
		"SELECT * FROM sales.mcpallowed.a.b",
		"SELECT * FROM sales.",
		"SELECT * FROM a JOIN",
		"SELECT * FROM (a",
		"SELECT * FROM a)",
		"WITH AS (SELECT 1) SELECT 1",
		"WITH x (SELECT 1) SELECT 1",
		"WITH x AS SELECT 1",
		"SELECT * FROM TABLE(system.sequence(start => 1, stop => 2))",
	} {
		st, err := Check(sql, Options{AllowWrites: true})
		if err != nil {
			continue // refused already
		}
		if err := scope.CheckNamed(st, "sales", "mcpallowed"); err == nil {
			t.Errorf("CheckNamed(%q) accepted it", sql)
		}
	}
}

// Name resolution follows the session and Trino's rules; CTE names shadow
// tables only where they are in scope.
func TestNamedRelationsResolution(t *testing.T) {
	scope, _ := ParseScope([]string{"sales.mcpallowed"})
	tests := []struct {
		sql, catalog, schema string
		ok                   bool
	}{
		{"SELECT * FROM a WHERE false", "sales", "mcpallowed", true},
		{"SELECT * FROM sales.mcpallowed.a", "", "", true},
		{"SELECT * FROM mcpallowed.a", "sales", "", true},
		{`SELECT * FROM "MCPALLOWED"."A"`, "sales", "", true},
		{"SELECT * FROM Sales.McpAllowed.A", "", "", true},
		{"SELECT * FROM a", "sales", "mcpsecret", false},
		{"SELECT * FROM a", "", "", false},
		{"SELECT * FROM mcpallowed.a", "", "", false},
		{"SELECT * FROM mcpallowed.a", "warehouse", "", false},
		{"WITH s AS (SELECT 1 x) SELECT * FROM s", "sales", "mcpsecret", true},
		{"WITH s AS (SELECT 1 x) SELECT * FROM s, s s2", "sales", "mcpsecret", true},
		{"WITH s AS (SELECT 1 x) SELECT * FROM S", "sales", "mcpsecret", true},
		{`WITH "s" AS (SELECT 1 x) SELECT * FROM "s"`, "sales", "mcpsecret", true},
		{`WITH "S" AS (SELECT 1 x) SELECT * FROM s`, "sales", "mcpsecret", false},
		{"WITH s AS (SELECT * FROM s) SELECT * FROM s", "sales", "mcpsecret", false},
		{"WITH RECURSIVE s(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM s WHERE n < 3) SELECT * FROM s", "sales", "mcpsecret", true},
		{"SELECT * FROM (WITH s AS (SELECT 1 x) SELECT * FROM s) t, s", "sales", "mcpsecret", false},
		{"SELECT * FROM (WITH s AS (SELECT 1 x) SELECT * FROM s) t", "sales", "mcpsecret", true},
		{"WITH s AS (SELECT 1 x) SELECT * FROM mcpsecret.s", "sales", "mcpallowed", false},
		{"SELECT EXTRACT(YEAR FROM current_date)", "", "", true},
		{"SELECT substring('abc' FROM 2), trim(BOTH 'x' FROM 'xax')", "", "", true},
		{"SELECT x FROM a WHERE x IS DISTINCT FROM 2", "sales", "mcpallowed", true},
		{"VALUES 1", "", "", true},
		{"SELECT * FROM UNNEST(ARRAY[1, 2]) AS t(v)", "", "", true},
		{"SELECT * FROM a, UNNEST(ARRAY[1]) u(v) CROSS JOIN LATERAL (SELECT 1)", "sales", "mcpallowed", true},
		{"SELECT * FROM (VALUES (1, 2)) t(a, b)", "", "", true},
		{"SELECT a.x, b.x FROM a JOIN a b ON a.x = b.x", "sales", "mcpallowed", true},
	}
	for _, tt := range tests {
		st, err := Check(tt.sql, Options{})
		if err != nil {
			t.Errorf("Check(%q): %v", tt.sql, err)
			continue
		}
		err = scope.CheckNamed(st, tt.catalog, tt.schema)
		if (err == nil) != tt.ok {
			t.Errorf("CheckNamed(%q) in %s.%s = %v, want ok %v", tt.sql, tt.catalog, tt.schema, err, tt.ok)
		}
	}
}
