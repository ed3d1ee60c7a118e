package toolcall_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/mcpfleet/mcpfleet/shared/approval"
	"github.com/mcpfleet/mcpfleet/shared/argschema"
	"github.com/mcpfleet/mcpfleet/shared/audit"
	"github.com/mcpfleet/mcpfleet/shared/toolcall"
)

// call sends one tools/call through the server as a client would and
// returns the result's text and whether it is an error.
func call(t testing.TB, srv *server.MCPServer, name, args string) (string, bool) {
	t.Helper()
	msg := fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":%q,"arguments":%s}}`, name, args)
	if args == "" {
		msg = fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":%q}}`, name)
	}
	out := srv.HandleMessage(context.Background(), []byte(msg))
	b, _ := json.Marshal(out)
	var resp struct {
		Result struct {
			IsError bool `json:"isError"`
			Content []struct {
				Text string `json:"text"`
			} `json:"content"`
		} `json:"result"`
		Error *struct{ Message string } `json:"error"`
	}
	if err := json.Unmarshal(b, &resp); err != nil {
		t.Fatal(err)
	}
	if resp.Error != nil {
		t.Fatalf("JSON-RPC error: %s", resp.Error.Message)
	}
	var texts []string
	for _, c := range resp.Result.Content {
		texts = append(texts, c.Text)
	}
	return strings.Join(texts, " "), resp.Result.IsError
}

// The typed path validates against the bound schema and says exactly what
// argschema says for the same schema and arguments, then decodes once:
// every case is sent to a typed tool and checked against argschema's own
// Check of the registered tool.
func TestTypedValidationAndDecoding(t *testing.T) {
	p, srv := newPipeline(t)
	var mu sync.Mutex
	var got []any
	keep := func(v any) {
		mu.Lock()
		got = append(got, v)
		mu.Unlock()
	}
	toolcall.AddRead(p, toolcall.Tool{Name: "show_table", Effect: toolcall.Effect{Most: toolcall.Read}},
		func(_ context.Context, in showTableIn) (*mcp.CallToolResult, error) {
			keep(in)
			return mcp.NewToolResultText("ok"), nil
		})
	toolcall.AddRead(p, toolcall.Tool{Name: "add_server", Effect: toolcall.Effect{Most: toolcall.Read}},
		func(_ context.Context, in addServerIn) (*mcp.CallToolResult, error) {
			keep(in)
			return mcp.NewToolResultText("ok"), nil
		})
	toolcall.AddRead(p, toolcall.Tool{Name: "produce", Effect: toolcall.Effect{Most: toolcall.Read}, Schema: clusters("prod", "dev")},
		func(_ context.Context, in produceIn) (*mcp.CallToolResult, error) {
			keep(in)
			return mcp.NewToolResultText("ok"), nil
		})
	toolcall.AddRead(p, toolcall.Tool{Name: "explain", Effect: toolcall.Effect{Most: toolcall.Read}},
		func(_ context.Context, in explainQueryIn) (*mcp.CallToolResult, error) {
			keep(in)
			return mcp.NewToolResultText("ok"), nil
		})

	i32 := func(n int32) *int32 { return &n }
	str := func(s string) *string { return &s }
	w := func(s string) *weight { x := weight(s); return &x }
	n := func(v int) *int { return &v }
	for _, tc := range []struct {
		name, tool, args string
		want             any    // the decoded input, when valid
		err              string // a part of the error, when invalid
	}{
		{"nested objects and arrays", "show_table", `{"table":"t1","filters":[{"data":"conn_cur","op":"gt","value":0},{"data":"gpc0","op":"eq","value":9007199254740993}]}`,
			showTableIn{Table: "t1", Filters: []tableFilter{{"conn_cur", "gt", 0}, {"gpc0", "eq", 9007199254740993}}}, ""},
		{"an integer written 8080.0 or 8.08e3", "add_server", `{"backend":"b","server":"s","address":"10.0.0.1","port":8.08e3,"maxconn":0.0}`,
			addServerIn{Backend: "b", Server: "s", Address: "10.0.0.1", Port: 8080, Maxconn: n(0)}, ""},
		{"oneOf type decodes itself: number", "add_server", `{"backend":"b","server":"s","address":"a","port":1,"weight":10}`,
			addServerIn{Backend: "b", Server: "s", Address: "a", Port: 1, Weight: w("10")}, ""},
		{"oneOf type decodes itself: percentage", "add_server", `{"backend":"b","server":"s","address":"a","port":1,"weight":"50%"}`,
			addServerIn{Backend: "b", Server: "s", Address: "a", Port: 1, Weight: w("50%")}, ""},
		{"optional pointers, maps, embedded argument", "produce", `{"cluster":"dev","topic":"t","value":"v","key":"","partition":0,"headers":{"a":"1"}}`,
			produceIn{clusterArg: clusterArg{"dev"}, Topic: "t", Value: "v", Key: str(""), Partition: i32(0), Headers: map[string]string{"a": "1"}}, ""},
		{"omitted optionals stay nil", "produce", `{"topic":"t","value":"v"}`, produceIn{Topic: "t", Value: "v"}, ""},
		{"no arguments at all", "explain", ``, nil, `missing required argument "query"`},
		{"null arguments", "explain", `null`, nil, `missing required argument "query"`},
		{"missing required", "add_server", `{"backend":"b","server":"s","address":"a"}`, nil, `missing required argument "port"`},
		{"unknown argument refused", "explain", `{"query":"q","fromat":"JSON"}`, nil, `unknown argument "fromat" (not in the tool's input schema)`},
		{"unknown field in a nested object", "show_table", `{"table":"t","filters":[{"data":"d","op":"eq","value":1,"x":1}]}`, nil, `argument "filters[0]" has unknown field "x"`},
		{"wrong type", "add_server", `{"backend":"b","server":"s","address":"a","port":"80"}`, nil, `argument "port" must be an integer, got the string "80"`},
		{"null for a pointer field", "produce", `{"topic":"t","value":"v","partition":null}`, nil, `argument "partition" must be an integer, got null`},
		{"fraction for integer", "add_server", `{"backend":"b","server":"s","address":"a","port":80.5}`, nil, `argument "port" must be an integer, got the number 80.5`},
		{"above maximum", "add_server", `{"backend":"b","server":"s","address":"a","port":65536}`, nil, `argument "port" must be at most 65535, got the number 65536`},
		{"below minimum", "produce", `{"topic":"t","value":"v","partition":-1}`, nil, `argument "partition" must be at least 0, got the number -1`},
		{"enum", "explain", `{"query":"q","type":"logical"}`, nil, `argument "type" must be one of "LOGICAL", "DISTRIBUTED", "VALIDATE", "IO", got the string "logical"`},
		{"runtime enum (Schema)", "produce", `{"cluster":"qa","topic":"t","value":"v"}`, nil, `argument "cluster" must be one of "prod", "dev", got the string "qa"`},
		{"pattern", "add_server", `{"backend":"b\nshutdown","server":"s","address":"a","port":1}`, nil, `argument "backend" must match ^[A-Za-z0-9_.:-]{1,128}$`},
		{"minLength", "explain", `{"query":""}`, nil, `argument "query" must be at least 1 characters long`},
		{"maxItems", "show_table", `{"table":"t","filters":[` + strings.Repeat(`{"data":"d","op":"eq","value":1},`, 4) + `{"data":"d","op":"eq","value":1}]}`, nil, `argument "filters": maxItems: got 5, want 4`},
		{"map value type", "produce", `{"topic":"t","value":"v","headers":{"a":1}}`, nil, `argument "headers.a" must be a string, got the number 1`},
		{"oneOf: neither form", "add_server", `{"backend":"b","server":"s","address":"a","port":1,"weight":"10x"}`, nil,
			`argument "weight" must be an integer, or a string matching ^([0-9]{1,5}%|[0-9]{1,3})$, got the string "10x"`},
		{"beyond the Go type's range", "produce", `{"topic":"t","value":"v","partition":3000000000}`, nil, `argument "partition" must be at most 2147483647, got the number 3000000000`},
		{"beyond int64 in a nested field", "show_table", `{"table":"t","filters":[{"data":"d","op":"eq","value":1e30}]}`, nil, `argument "filters[0].value" must be at most 9223372036854775807, got the number 1e30`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mu.Lock()
			got = nil
			mu.Unlock()
			text, isErr := call(t, srv, tc.tool, tc.args)
			if tc.err == "" {
				if isErr {
					t.Fatalf("refused: %s", text)
				}
				if len(got) != 1 || !reflect.DeepEqual(got[0], tc.want) {
					t.Fatalf("decoded %#v\nwant %#v", got, tc.want)
				}
				return
			}
			if !isErr || len(got) != 0 {
				t.Fatalf("accepted (handler got %v): %s", got, text)
			}
			if !strings.Contains(text, tc.err) || !strings.Contains(text, "nothing was run") || !strings.HasPrefix(text, "invalid arguments for tool "+tc.tool+": ") {
				t.Fatalf("error %q\nlacks %q", text, tc.err)
			}
			// Same words as argschema's per-call path for the same tool,
			// unless the error is the Go type's range (a check argschema
			// cannot make: the schema admits the value).
			if strings.HasPrefix(tc.name, "beyond") {
				return
			}
			tool, _ := p.Tool(tc.tool)
			var args any
			if tc.args != "" {
				args = json.RawMessage(tc.args)
			}
			c, err := argschema.Compile(tool)
			if err != nil {
				t.Fatal(err)
			}
			_, want := c.Parse(args)
			if want == nil || !strings.Contains(text, want.Error()) {
				t.Fatalf("typed error %q\nargschema %v", text, want)
			}
		})
	}
}

// A change tool's planner gets the decoded input without dryRun and
// confirm; an invalid call is refused with an audit record and never
// planned; the registered schema carries dryRun and confirm and the class
// note.
func TestTypedChange(t *testing.T) {
	log := filepath.Join(t.TempDir(), "audit.log")
	srv := server.NewMCPServer("t", "v", server.WithHooks(&server.Hooks{}))
	p, err := toolcall.New(srv, toolcall.Config{Audit: audit.Config{Dest: log}, Approval: approval.Config{Policy: approval.None}}, toolcall.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	var planned []setServerWeightIn
	var sawRequest bool
	toolcall.AddChange(p, toolcall.Tool{Name: "set_server_weight", Description: "Set a weight.",
		Effect: toolcall.Effect{Title: "Set server weight", Most: toolcall.Change, Idempotent: true}},
		func(ctx context.Context, in setServerWeightIn) (toolcall.Plan, error) {
			planned = append(planned, in)
			req, ok := toolcall.CallRequest(ctx)
			_, hasDry := req.GetArguments()["dryRun"]
			sawRequest = ok && req.Params.Name == "set_server_weight" && !hasDry
			return toolcall.Plan{Class: toolcall.Change, Target: "lb1", Commands: []string{"set weight " + in.Backend + "/" + in.Server + " " + string(in.Weight)},
				Run: func(context.Context) (*mcp.CallToolResult, error) { return mcp.NewToolResultText("done"), nil }}, nil
		})

	if text, isErr := call(t, srv, "set_server_weight", `{"backend":"be","server":"s1","weight":"50%","dryRun":true}`); isErr || !strings.Contains(text, "set weight be/s1 50%") {
		t.Fatalf("dry run: %v %s", isErr, text)
	}
	if text, isErr := call(t, srv, "set_server_weight", `{"backend":"be","server":"s1","weight":7}`); isErr || text != "done" {
		t.Fatalf("run: %v %s", isErr, text)
	}
	if !sawRequest || len(planned) != 2 || planned[1] != (setServerWeightIn{"be", "s1", "7"}) {
		t.Fatalf("planned %+v, request seen %v", planned, sawRequest)
	}
	text, isErr := call(t, srv, "set_server_weight", `{"backend":"be","server":"s1","weight":"10x"}`)
	if !isErr || !strings.Contains(text, `argument "weight" must be an integer, or a string matching`) || len(planned) != 2 {
		t.Fatalf("invalid call: %v %s (planned %d)", isErr, text, len(planned))
	}
	// confirm must be a string: the augmented schema says so, as before.
	if text, isErr := call(t, srv, "set_server_weight", `{"backend":"be","server":"s1","weight":1,"confirm":true}`); !isErr || !strings.Contains(text, `argument "confirm" must be a string, got the boolean true`) {
		t.Fatalf("confirm true: %s", text)
	}
	b, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	var last struct{ Event, Approval, Outcome, Error, Class string }
	_ = json.Unmarshal([]byte(lines[len(lines)-2]), &last)
	if last.Event != "outcome" || last.Approval != "refused" || last.Outcome != "error" || !strings.Contains(last.Error, `argument "weight"`) || last.Class != "change" {
		t.Fatalf("no refusal record for the invalid call: %s", lines[len(lines)-2])
	}
	tool, _ := p.Tool("set_server_weight")
	var s struct {
		Properties map[string]any
		Required   []string
	}
	_ = json.Unmarshal(tool.RawInputSchema, &s)
	if s.Properties["dryRun"] == nil || s.Properties["confirm"] == nil || !strings.Contains(tool.Description, "Risk class: change") || *tool.Annotations.ReadOnlyHint {
		t.Fatalf("registered tool %+v", tool)
	}
}

// A declaration that cannot be right fails when the tool is added, naming
// the tool and what is wrong: never a schema that silently lost a keyword.
func TestBadDeclarationsPanicAtRegistration(t *testing.T) {
	type misspelt struct {
		Name string `json:"name" maxlength:"10"`
	}
	type badBound struct {
		N int `json:"n" maximum:"ten"`
	}
	type ownArg struct {
		DryRun bool `json:"dryRun"`
	}
	type badDefault struct {
		N int `json:"n,omitempty" default:"x"`
	}
	type chanArg struct {
		C chan int `json:"c"`
	}
	for _, tc := range []struct {
		name string
		add  func(p *toolcall.Pipeline)
		want string
	}{
		{"misspelt keyword", func(p *toolcall.Pipeline) {
			toolcall.AddRead(p, toolcall.Tool{Name: "x", Effect: toolcall.Effect{Most: toolcall.Read}}, noRead[misspelt])
		}, `unknown tag "maxlength"`},
		{"bound not a number", func(p *toolcall.Pipeline) {
			toolcall.AddRead(p, toolcall.Tool{Name: "x", Effect: toolcall.Effect{Most: toolcall.Read}}, noRead[badBound])
		}, `maximum:"ten" is not a number`},
		{"default of the wrong type", func(p *toolcall.Pipeline) {
			toolcall.AddRead(p, toolcall.Tool{Name: "x", Effect: toolcall.Effect{Most: toolcall.Read}}, noRead[badDefault])
		}, `default "x"`},
		{"the pipeline's own argument", func(p *toolcall.Pipeline) {
			toolcall.AddChange(p, toolcall.Tool{Name: "x", Effect: toolcall.Effect{Most: toolcall.Change}}, noPlan[ownArg])
		}, `"dryRun" is the pipeline's own`},
		{"not a struct", func(p *toolcall.Pipeline) {
			toolcall.AddRead(p, toolcall.Tool{Name: "x", Effect: toolcall.Effect{Most: toolcall.Read}}, noRead[string])
		}, "not a struct"},
		{"type with no JSON form", func(p *toolcall.Pipeline) {
			toolcall.AddRead(p, toolcall.Tool{Name: "x", Effect: toolcall.Effect{Most: toolcall.Read}}, noRead[chanArg])
		}, "chan"},
		{"change tool added as read", func(p *toolcall.Pipeline) {
			toolcall.AddRead(p, toolcall.Tool{Name: "x", Effect: toolcall.Effect{Most: toolcall.Change}}, noRead[struct{}])
		}, "added with AddChange"},
		{"read tool added as change", func(p *toolcall.Pipeline) {
			toolcall.AddChange(p, toolcall.Tool{Name: "x", Effect: toolcall.Effect{Most: toolcall.Read}}, noPlan[struct{}])
		}, "added with AddRead"},
		{"destructive read", func(p *toolcall.Pipeline) {
			toolcall.AddRead(p, toolcall.Tool{Name: "x", Effect: toolcall.Effect{Most: toolcall.Read, Destructive: true}}, noRead[struct{}])
		}, "cannot be destructive"},
		{"schema that does not compile", func(p *toolcall.Pipeline) {
			toolcall.AddRead(p, toolcall.Tool{Name: "x", Effect: toolcall.Effect{Most: toolcall.Read},
				Schema: func(s *jsonschema.Schema) { s.Properties["query"].Pattern = "(" }}, noRead[explainQueryIn])
		}, "compile input schema of x"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, _ := newPipeline(t)
			defer func() {
				r := recover()
				if r == nil || !strings.Contains(fmt.Sprint(r), tc.want) || !strings.Contains(fmt.Sprint(r), "x") {
					t.Fatalf("panic %v, want %q", r, tc.want)
				}
			}()
			tc.add(p)
		})
	}
}

// Effect is the one place annotations come from.
func TestEffectAnnotations(t *testing.T) {
	p, _ := newPipeline(t)
	toolcall.AddRead(p, toolcall.Tool{Name: "r", Effect: toolcall.Effect{Title: "R", Most: toolcall.Read, Idempotent: true, OpenWorld: true, TitleAnnotation: true}}, noRead[struct{}])
	toolcall.AddChange(p, toolcall.Tool{Name: "c", Effect: toolcall.Effect{Title: "C", Most: toolcall.Change}}, noPlan[struct{}])
	toolcall.AddChange(p, toolcall.Tool{Name: "cd", Effect: toolcall.Effect{Title: "CD", Most: toolcall.Change, Destructive: true}}, noPlan[struct{}])
	toolcall.AddChange(p, toolcall.Tool{Name: "d", Effect: toolcall.Effect{Title: "D", Most: toolcall.Destructive, Idempotent: true}}, noPlan[struct{}])
	for _, tc := range []struct {
		name, title, annTitle             string
		readOnly, destructive, idem, open bool
	}{
		{"r", "R", "R", true, false, true, true},
		{"c", "C", "", false, false, false, false},
		{"cd", "CD", "", false, true, false, false},
		{"d", "D", "", false, true, true, false},
	} {
		tool, _ := p.Tool(tc.name)
		a := tool.Annotations
		if tool.Title != tc.title || a.Title != tc.annTitle || *a.ReadOnlyHint != tc.readOnly || *a.DestructiveHint != tc.destructive ||
			*a.IdempotentHint != tc.idem || *a.OpenWorldHint != tc.open {
			t.Errorf("%s: title %q annotations %+v", tc.name, tool.Title, a)
		}
	}
}
