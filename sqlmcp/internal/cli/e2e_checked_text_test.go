package cli_test

import (
	"strings"
	"testing"
)

// With SQLENGINE_ALLOWED_SCHEMAS the CLI plans a statement (EXPLAIN (TYPE
// IO)) before running it; what it then runs — query, explain and the shell
// — is byte for byte the statement planned, comments and all removed.
func TestE2ECheckedTextIsRunText(t *testing.T) {
	env := baseEnv(t)
	env["SQLENGINE_ALLOWED_SCHEMAS"] = "sales.public"
	const io = "EXPLAIN (TYPE IO, FORMAT JSON) "
	queries := []string{
		"/* lead */ SELECT count(*) AS n FROM sales.public.orders",
		"-- lead\nSELECT count(*) AS n FROM sales.public.orders",
		"/* /* */ SELECT count(*) AS n FROM sales.public.orders -- */ FROM warehouse.logs.events",
		"SELECT count(*) /* mid */ AS n FROM sales.public.orders -- trail",
		"SELECT/**/count(*)/**/AS n FROM sales.public.orders",
	}
	for _, q := range queries {
		for _, mode := range []string{"query", "explain", "shell"} {
			before := len(engineSrv.Statements())
			var r result
			switch mode {
			case "query":
				r = sqlmcp(t, env, "", "query", "--format", "csv", "--", q)
			case "explain":
				r = sqlmcp(t, env, "", "explain", "--", q)
			case "shell":
				r = sqlmcp(t, env, q+";\n", "-i", "--format", "csv")
			}
			if r.code != 0 {
				t.Errorf("%s %q: exit %d, stderr %q", mode, q, r.code, r.stderr)
				continue
			}
			var checked string
			var ran []string
			for _, st := range engineSrv.Statements()[before:] {
				switch {
				case strings.HasPrefix(st.Body, io) && checked == "":
					checked = strings.TrimPrefix(st.Body, io)
				case st.Body == "START TRANSACTION READ ONLY" || st.Body == "ROLLBACK" || st.Body == "COMMIT":
				default:
					ran = append(ran, st.Body)
				}
			}
			if checked == "" || len(ran) != 1 {
				t.Errorf("%s %q: checked %q, ran %q", mode, q, checked, ran)
				continue
			}
			if ran[0] != checked && !(strings.HasPrefix(ran[0], "EXPLAIN ") && strings.HasSuffix(ran[0], " "+checked)) {
				t.Errorf("%s %q: checked %q but ran %q", mode, q, checked, ran[0])
			}
			if strings.Contains(ran[0], "/*") || strings.Contains(ran[0], "--") {
				t.Errorf("%s %q: ran a comment: %q", mode, q, ran[0])
			}
		}
	}
}
