package mcpserver_test

import (
	"context"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcpfleet/mcpfleet/shared/argschema/argschematest"
	"github.com/mcpfleet/mcpfleet/sqlmcp/internal/mcpserver"
)

// TestWronglyTypedArguments calls every tool, through serve.NewServer as
// sqlmcp's main builds it, with wrongly typed values for every argument,
// generated from each tool's own input schema (a number or object for the
// query, a string "8" for limit, ...). Each call must be an isError naming
// the argument, and the engine must record no query.
func TestWronglyTypedArguments(t *testing.T) {
	h := newHarness(t, mcpserver.Options{AllowWrites: true}, nil)
	ctx := context.Background()
	list, err := h.c.ListTools(ctx, mcp.ListToolsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	valid := map[string]map[string]any{
		"execute_query":    {"query": "SELECT 1"},
		"list_catalogs":    {},
		"list_schemas":     {"catalog": "sales"},
		"list_tables":      {"catalog": "sales", "schema": "mcpallowed"},
		"get_table_schema": {"catalog": "sales", "schema": "mcpallowed", "table": "a"},
		"explain_query":    {"query": "SELECT 1"},
		"fetch_more":       {"cursor": "no-such-cursor"},
	}
	before := len(trino.Queries())
	calls, covered := 0, 0
	for _, tool := range list.Tools {
		base, ok := valid[tool.Name]
		if !ok {
			t.Errorf("no valid arguments for tool %s: add them", tool.Name)
			continue
		}
		cases := argschematest.Cases(tool, base)
		args := map[string]bool{}
		for _, tc := range cases {
			args[tc.Arg] = true
			text, isErr := h.call(t, ctx, tool.Name, tc.Args)
			calls++
			if !isErr || !strings.Contains(text, `argument "`+tc.Arg+`"`) {
				t.Errorf("%s %s=%#v: isError=%v %.300s", tool.Name, tc.Arg, tc.Value, isErr, text)
			}
		}
		for arg := range tool.InputSchema.Properties {
			if !args[arg] {
				t.Errorf("%s: no wrongly typed case for argument %q", tool.Name, arg)
			}
		}
		covered += len(args)
	}
	if after := len(trino.Queries()); after != before {
		t.Errorf("%d queries reached the engine during %d wrongly typed calls", after-before, calls)
	}
	if calls < 50 {
		t.Fatalf("only %d calls generated", calls)
	}
	// The valid arguments do reach the engine, so the count above can move.
	if _, isErr := h.call(t, ctx, "execute_query", valid["execute_query"]); isErr || len(trino.Queries()) == before {
		t.Fatal("a valid call recorded no query: the check above proves nothing")
	}
	t.Logf("%d wrongly typed calls over %d arguments of %d tools", calls, covered, len(list.Tools))
}
