package mcpserver_test

import (
	"context"
	"encoding/json"
	"strings"
	"sync/atomic"
	"testing"

	mcpgo "github.com/mark3labs/mcp-go/mcp"

	"github.com/mcpfleet/mcpfleet/codermcp/internal/cli"
	"github.com/mcpfleet/mcpfleet/codermcp/internal/codertest/harness"
	"github.com/mcpfleet/mcpfleet/shared/argschema/argschematest"
)

// TestWronglyTypedArguments calls every tool, through serve.NewServer and
// the streamable HTTP handler, with wrongly typed values for every
// argument, generated from each tool's input schema as the client lists it
// (a number or object for prompt, a string for a boolean, ...). Each call
// must be an isError naming the argument; no CLI process starts, the model
// endpoint hears nothing and no session is created.
func TestWronglyTypedArguments(t *testing.T) {
	t.Parallel()
	var started atomic.Int32
	e := newEnv(t, envOptions{client: func(c *cli.Client) { c.OnStart = func(int) { started.Add(1) } }})
	repo := harness.GitRepo(t)
	ctx := context.Background()
	list, err := e.cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	valid := map[string]map[string]any{
		"coder":  {"prompt": "p", "workingDirectory": repo},
		"review": {"workingDirectory": repo},
	}
	calls, covered := 0, 0
	for _, tool := range list.Tools {
		schema, err := json.Marshal(tool.InputSchema)
		if err != nil {
			t.Fatal(err)
		}
		cases := argschematest.Cases(mcpgo.NewToolWithRawSchema(tool.Name, "", schema), valid[tool.Name])
		args := map[string]bool{}
		for _, tc := range cases {
			args[tc.Arg] = true
			res := e.call(t, tool.Name, tc.Args)
			calls++
			if got := text(res); !res.IsError || !strings.Contains(got, `argument "`+tc.Arg+`"`) {
				t.Errorf("%s %s=%#v: isError=%v %.300s", tool.Name, tc.Arg, tc.Value, res.IsError, got)
			}
		}
		var s struct {
			Properties map[string]any `json:"properties"`
		}
		_ = json.Unmarshal(schema, &s)
		for arg := range s.Properties {
			if !args[arg] {
				t.Errorf("%s: no wrongly typed case for argument %q", tool.Name, arg)
			}
		}
		covered += len(args)
	}
	if n := started.Load(); n != 0 {
		t.Errorf("%d CLI runs started for wrongly typed arguments", n)
	}
	if n := len(e.h.Endpoint.Requests()); n != 0 {
		t.Errorf("the model endpoint got %d requests for wrongly typed arguments", n)
	}
	if n := len(e.sessions(t)); n != 0 {
		t.Errorf("%d sessions created for wrongly typed arguments", n)
	}
	if calls < 50 {
		t.Fatalf("only %d calls generated", calls)
	}
	t.Logf("%d wrongly typed calls over %d arguments of %d tools", calls, covered, len(list.Tools))
}
