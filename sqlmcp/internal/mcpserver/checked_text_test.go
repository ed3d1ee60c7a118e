package mcpserver_test

import (
	"strings"
	"testing"

	"github.com/mcpfleet/mcpfleet/sqlmcp/internal/mcpserver"
	"github.com/mcpfleet/mcpfleet/sqlmcp/internal/sqlguard"
	"github.com/mcpfleet/mcpfleet/sqlmcp/internal/trinotest"
)

// hiddenText are statements whose comments, white space or nesting could
// make an engine read something other than what the guard read (DuckDB,
// under trinotest, nests block comments; Trino does not).
var hiddenText = []string{
	"/* lead */ SELECT x FROM a",
	"-- lead\nSELECT x FROM a",
	"SELECT x FROM a -- trail",
	"SELECT x FROM a /* trail */",
	"SELECT x /* mid */ FROM a",
	"/* /* */ SELECT x FROM a -- */ FROM sales.mcpsecret.s",
	"/* /* */ SELECT x FROM a /* */ , sales.mcpsecret.s */",
	"SELECT x FROM a --x\r\nWHERE x > 0",
	"\t SELECT x\r\nFROM a ; -- done",
	"SELECT/**/x/**/FROM/**/a",
	"SELECT '/* not a comment */' AS c, x FROM a",
	"EXPLAIN /* c */ SELECT x FROM a",
}

// What the allowed-schemas check plans (EXPLAIN (TYPE IO)) is byte for byte
// what execute_query and explain_query then send: the engine's recorded
// statements show it.
func TestCheckedTextIsRunText(t *testing.T) {
	scope, err := sqlguard.ParseScope([]string{"sales.mcpallowed"})
	if err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, mcpserver.Options{Scope: scope}, nil)
	for _, tool := range []string{"execute_query", "explain_query"} {
		for _, q := range hiddenText {
			if tool == "explain_query" && strings.HasPrefix(q, "EXPLAIN") {
				continue
			}
			before := len(trino.Statements())
			text, isErr := h.call(t, t.Context(), tool, map[string]any{"query": q})
			checkRanChecked(t, tool, q, text, isErr, trino.Statements()[before:])
		}
	}
}

// checkRanChecked finds the scope check's plan request and the statement
// that ran among recorded, and fails unless the statement run is the
// statement planned (possibly under EXPLAIN).
func checkRanChecked(t *testing.T, tool, q, text string, isErr bool, recorded []trinotest.Request) {
	t.Helper()
	const io = "EXPLAIN (TYPE IO, FORMAT JSON) "
	var checked string
	var ran []string
	for _, st := range recorded {
		switch {
		case strings.HasPrefix(st.Body, io) && checked == "":
			checked = strings.TrimPrefix(st.Body, io)
		case st.Body == "START TRANSACTION READ ONLY" || st.Body == "ROLLBACK" || st.Body == "COMMIT":
		default:
			ran = append(ran, st.Body)
		}
	}
	if checked == "" && isErr && len(ran) == 0 {
		return // refused before the engine was asked anything
	}
	if checked == "" {
		t.Errorf("%s(%q): no allowed-schemas plan was asked for (result %q)", tool, q, text)
		return
	}
	if isErr && len(ran) == 0 {
		return // refused (the engine could not plan it): nothing ran
	}
	if isErr || len(ran) != 1 {
		t.Errorf("%s(%q) = %q (error %v); ran %q", tool, q, text, isErr, ran)
		return
	}
	run := ran[0]
	if run != checked && !(strings.HasPrefix(run, "EXPLAIN ") && strings.HasSuffix(run, " "+checked)) {
		t.Errorf("%s(%q): checked %q but ran %q", tool, q, checked, run)
	}
	if !strings.Contains(q, "'/*") && (strings.Contains(run, "/*") || strings.Contains(run, "--")) {
		t.Errorf("%s(%q): the statement run still has a comment: %q", tool, q, run)
	}
}
