package cli_test

import (
	"strings"
	"testing"
)

// describe with the catalog, schema and table as three arguments takes
// each as one name; a name with a control character fails as bad input
// naming it, and bad --catalog/--schema values never reach the engine.
func TestE2ENamesGivenAlone(t *testing.T) {
	env := baseEnv(t)
	for _, table := range []string{`quote"d`, `dotted.name`, `Mixed Case Table`} {
		r := sqlmcp(t, env, "", "describe", "--format", "csv", "sales", "Odd Schema", table)
		if r.code != 0 || !strings.HasPrefix(r.stdout, "name,type,nullable,comment,extra\n") {
			t.Errorf("describe sales 'Odd Schema' %q: exit %d, stdout %q, stderr %q", table, r.code, r.stdout, r.stderr)
		}
	}
	for _, bad := range []string{"sales\n", "sales\r\nX: y", "sa\x01les", "sales\u200b"} {
		before := len(engineSrv.Requests())
		for _, args := range [][]string{
			{"describe", bad, "public", "orders"},
			{"describe", "sales", bad, "orders"},
			{"describe", "sales", "public", bad},
			{"tables", bad, "public"},
			{"tables", "sales", bad},
			{"schemas", bad},
			{"query", "--catalog", bad, "SELECT 1"},
			{"query", "--catalog", "sales", "--schema", bad, "SELECT 1"},
		} {
			r := sqlmcp(t, env, "", args...)
			if r.code == 0 || !strings.Contains(r.stderr, "not a valid name") || strings.Contains(r.stderr, "Trino is running") {
				t.Errorf("%q: exit %d, stderr %q; want a bad-name error", args, r.code, r.stderr)
			}
		}
		if n := len(engineSrv.Requests()) - before; n != 0 {
			t.Errorf("bad name %q: %d requests reached the engine", bad, n)
		}
	}
}
