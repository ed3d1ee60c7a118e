package serve

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	mcpclient "github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcpfleet/mcpfleet/shared/approval"
	"github.com/mcpfleet/mcpfleet/shared/argschema"
	"github.com/mcpfleet/mcpfleet/shared/argschema/argschematest"
	"github.com/mcpfleet/mcpfleet/shared/audit"
	"github.com/mcpfleet/mcpfleet/shared/toolcall"
)

// TestArgumentsValidated: a tool added directly with AddTool (not through
// the pipeline) and bound with argschema.Bind is validated against its
// schema, compiled once, before its handler.
func TestArgumentsValidated(t *testing.T) {
	s := NewServer("x", "v0")
	var ran atomic.Int32
	tool := mcp.NewTool("set_port", mcp.WithString("name", mcp.Required()),
		mcp.WithNumber("port", mcp.Required(), mcp.Min(1), mcp.Max(65535)), mcp.WithBoolean("force"))
	s.AddTool(tool, argschema.Bind(tool, func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		ran.Add(1)
		return mcp.NewToolResultText("ok"), nil
	}))
	c := connectInProcess(t, s)
	ctx := context.Background()
	call := func(args map[string]any) *mcp.CallToolResult {
		req := mcp.CallToolRequest{}
		req.Params.Name = "set_port"
		req.Params.Arguments = args
		res, err := c.CallTool(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	valid := map[string]any{"name": "a", "port": 8080}
	cases := argschematest.Cases(tool, valid)
	for _, tc := range cases {
		res := call(tc.Args)
		txt := res.Content[0].(mcp.TextContent).Text
		if !res.IsError || !strings.Contains(txt, `argument "`+tc.Arg+`"`) {
			t.Errorf("%s=%#v: isError=%v %s", tc.Arg, tc.Value, res.IsError, txt)
		}
	}
	if n := ran.Load(); n != 0 {
		t.Fatalf("the handler ran %d times on wrongly typed arguments", n)
	}
	if res := call(valid); res.IsError || ran.Load() != 1 {
		t.Fatalf("valid call: isError=%v ran=%d", res.IsError, ran.Load())
	}
	if len(cases) < 30 {
		t.Fatalf("only %d cases", len(cases))
	}
}

// TestChangeToolRefusalsAudited: the pipeline refuses a change tool's
// invalid arguments itself and writes the refusal's audit record (issue
// 13: refusals, validation included, are audited). Read tools are checked
// against their bound schema and never audited.
func TestChangeToolRefusalsAudited(t *testing.T) {
	s := NewServer("x", "v0")
	log := filepath.Join(t.TempDir(), "audit.log")
	cfg := Config{Transport: "stdio", Calls: toolcall.Config{Audit: audit.Config{Dest: log}, Approval: approval.Config{Policy: approval.None}}}
	calls, err := Program{Name: "x", Version: "v0"}.Pipeline(s, cfg, io.Discard, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer calls.Close()
	var ran atomic.Int32
	calls.Change(mcp.NewTool("set_port", mcp.WithString("name", mcp.Required()),
		mcp.WithNumber("port", mcp.Required(), mcp.Min(1), mcp.Max(65535))),
		toolcall.Change, func(ctx context.Context, req mcp.CallToolRequest) (toolcall.Plan, error) {
			return toolcall.Plan{Class: toolcall.Change, Target: "mem://x", Commands: []string{"SET"},
				Run: func(context.Context) (*mcp.CallToolResult, error) {
					ran.Add(1)
					return mcp.NewToolResultText("ok"), nil
				}}, nil
		})
	calls.Read(mcp.NewTool("get_port", mcp.WithString("name", mcp.Required())),
		func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			ran.Add(1)
			return mcp.NewToolResultText("ok"), nil
		})
	c := connectInProcess(t, s)
	ctx := context.Background()
	bad := []struct {
		tool string
		args map[string]any
		want string
	}{
		{"set_port", map[string]any{"name": "a", "port": "80"}, `argument "port" must be a number`},
		{"set_port", map[string]any{"name": "a", "port": 0}, `argument "port"`},
		{"set_port", map[string]any{"port": 80}, `missing required argument "name"`},
		{"set_port", map[string]any{"name": "a", "port": 80, "confirm": true}, `argument "confirm" must be a string`},
		{"set_port", map[string]any{"name": "a", "port": 80, "dryRun": "yes"}, `argument "dryRun" must be a boolean`},
		{"get_port", map[string]any{"name": 7}, `argument "name" must be a string`},
	}
	for _, tc := range bad {
		req := mcp.CallToolRequest{}
		req.Params.Name, req.Params.Arguments = tc.tool, tc.args
		res, err := c.CallTool(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		if txt := res.Content[0].(mcp.TextContent).Text; !res.IsError || !strings.Contains(txt, tc.want) {
			t.Errorf("%s %v: isError=%v %s", tc.tool, tc.args, res.IsError, txt)
		}
	}
	if n := ran.Load(); n != 0 {
		t.Fatalf("a handler ran %d times on invalid arguments", n)
	}
	b, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) != len(bad)-1 {
		t.Fatalf("%d audit records, want %d (one per refused set_port call, none for the read tool):\n%s", len(lines), len(bad)-1, b)
	}
	for _, l := range lines {
		var r map[string]any
		if err := json.Unmarshal([]byte(l), &r); err != nil {
			t.Fatal(err)
		}
		if r["tool"] != "set_port" || r["approval"] != "refused" || r["outcome"] != "error" || !strings.Contains(fmt.Sprint(r["error"]), "invalid arguments") {
			t.Errorf("record %s", l)
		}
	}
}

// connectInProcess returns an initialised in-process mcp-go client of s,
// closed when the test ends.
func connectInProcess(t *testing.T, s *Server) *mcpclient.Client {
	t.Helper()
	c, err := mcpclient.NewInProcessClient(s.MCPServer)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	if err := c.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	init := mcp.InitializeRequest{}
	init.Params.ProtocolVersion = mcp.LATEST_PROTOCOL_VERSION
	if _, err := c.Initialize(context.Background(), init); err != nil {
		t.Fatal(err)
	}
	return c
}
