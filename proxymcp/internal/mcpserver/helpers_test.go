package mcpserver

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/mcpfleet/mcpfleet/proxymcp/internal/fleet"
	"github.com/mcpfleet/mcpfleet/proxymcp/internal/haproxy"
	"github.com/mcpfleet/mcpfleet/proxymcp/internal/haproxytest"
	"github.com/mcpfleet/mcpfleet/proxymcp/internal/runtimeapi"
	"github.com/mcpfleet/mcpfleet/proxymcp/internal/statspage"
	"github.com/mcpfleet/mcpfleet/proxymcp/internal/stattest"
	"github.com/mcpfleet/mcpfleet/shared/approval"
	"github.com/mcpfleet/mcpfleet/shared/audit"
	"github.com/mcpfleet/mcpfleet/shared/toolcall"
)

// env is one MCP server wired to a real HAProxy.
type env struct {
	h   *haproxytest.HAProxy
	srv *server.MCPServer
}

func statsClient(h *haproxytest.HAProxy) *statspage.Client {
	return &statspage.Client{URL: h.StatsURL, Username: haproxytest.StatsUser, Password: haproxytest.StatsPassword, Timeout: 5 * time.Second}
}

// newEnv registers the tools over the given back ends (nil: disabled).
func newEnv(t *testing.T, h *haproxytest.HAProxy, rt *runtimeapi.Client, st *statspage.Client, opts Options) *env {
	t.Helper()
	srv := server.NewMCPServer("proxymcp-test", "test")
	New(one(haproxy.New(rt, st)), opts).Register(noApproval(srv))
	return &env{h: h, srv: srv}
}

// noApproval is the pipeline for tests of what the tools do rather than of
// their approval: MCP_APPROVAL=none, MCP_AUDIT_LOG=off. The approval tests
// (approval_test.go) configure their own.
func noApproval(srv *server.MCPServer) *toolcall.Pipeline {
	p, err := toolcall.New(srv, toolcall.Config{Approval: approval.Config{Policy: approval.None}, Audit: audit.Config{Dest: "off"}},
		toolcall.Options{Server: "proxymcp", Version: "test"})
	if err != nil {
		panic(err)
	}
	return p
}

// newEnvB is newEnv for benchmarks.
func newEnvB(h *haproxytest.HAProxy, mode string) *env {
	srv := server.NewMCPServer("proxymcp-bench", "test")
	New(one(haproxy.New(h.Runtime(mode), nil)), Options{}).Register(noApproval(srv))
	return &env{h: h, srv: srv}
}

func (e *env) raw(t *testing.T, name string, args map[string]any) *mcp.CallToolResult {
	t.Helper()
	tool := e.srv.GetTool(name)
	if tool == nil {
		t.Fatalf("tool %s not registered", name)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var req mcp.CallToolRequest
	req.Params.Name = name
	if args != nil {
		req.Params.Arguments = args
	}
	res, err := tool.Handler(ctx, req)
	if err != nil {
		t.Fatalf("%s: protocol error %v", name, err)
	}
	return res
}

// call expects success and returns the structured result as generic JSON.
func (e *env) call(t *testing.T, name string, args map[string]any) map[string]any {
	t.Helper()
	res := e.raw(t, name, args)
	if res.IsError {
		t.Fatalf("%s(%v): tool error: %s", name, args, text(res))
	}
	out := structured(t, name, res)
	src, _ := out["source"].(string)
	if src != "runtime_api" && src != "stats_page" {
		t.Fatalf("%s: source = %q", name, out["source"])
	}
	return out
}

// structured returns a result's structuredContent as generic JSON, and
// checks that the text content carries the same JSON.
func structured(t *testing.T, name string, res *mcp.CallToolResult) map[string]any {
	t.Helper()
	b, err := json.Marshal(res.StructuredContent)
	if err != nil {
		t.Fatal(err)
	}
	var out map[string]any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatalf("%s: structuredContent is not an object: %s", name, b)
	}
	if txt := text(res); json.Valid([]byte(txt)) && txt != string(b) {
		t.Errorf("%s: text content differs from structuredContent", name)
	}
	return out
}

// fail expects a tool error whose text contains every want.
func (e *env) fail(t *testing.T, name string, args map[string]any, want ...string) string {
	t.Helper()
	res := e.raw(t, name, args)
	msg := text(res)
	if !res.IsError {
		t.Fatalf("%s(%v): succeeded, want error containing %q: %s", name, args, want, msg)
	}
	for _, w := range want {
		if !strings.Contains(msg, w) {
			t.Errorf("%s(%v): error %q lacks %q", name, args, msg, w)
		}
	}
	return msg
}

func text(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

// list returns out[key] as a list of objects.
func list(t *testing.T, out map[string]any, key string) []map[string]any {
	t.Helper()
	raw, ok := out[key].([]any)
	if !ok {
		t.Fatalf("%s is %T, want a list: %v", key, out[key], out)
	}
	res := make([]map[string]any, 0, len(raw))
	for _, r := range raw {
		res = append(res, r.(map[string]any))
	}
	return res
}

// tableRows returns the rows of show_stat's default answer, the table
// format (or of a fleet's instance entry, its table under "table"), as the
// objects format's rows: decoded by stattest.Rows, the one decoder of the
// table every show_stat test uses.
func tableRows(t *testing.T, out map[string]any) []map[string]any {
	t.Helper()
	if out["format"] != "table" {
		t.Fatalf("show_stat answer is not a table: format %v", out["format"])
	}
	var table any = out
	if in, ok := out["table"]; ok {
		table = in
	}
	b, err := json.Marshal(table)
	if err != nil {
		t.Fatal(err)
	}
	b, err = stattest.Rows(b)
	if err != nil {
		t.Fatal(err)
	}
	var rows []map[string]any
	if err := json.Unmarshal(b, &rows); err != nil {
		t.Fatalf("decoded rows: %v: %.200s", err, b)
	}
	return rows
}

func find(items []map[string]any, field, value string) map[string]any {
	for _, it := range items {
		if it[field] == value {
			return it
		}
	}
	return nil
}

// serverStatus reads one server's CSV status straight from HAProxy.
func serverStatus(t *testing.T, h *haproxytest.HAProxy, backend, srv string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	out, err := h.Exec(ctx, "show stat")
	if err != nil {
		t.Fatal(err)
	}
	rows, err := haproxy.ParseStatCSV([]byte(out))
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rows {
		if r.Str("pxname") == backend && r.Str("svname") == srv {
			return r.Str("status")
		}
	}
	return ""
}

func exec(t *testing.T, h *haproxytest.HAProxy, cmd string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	out, err := h.Exec(ctx, cmd)
	if err != nil {
		t.Fatalf("%s: %v", cmd, err)
	}
	return out
}

func waitStatus(t *testing.T, h *haproxytest.HAProxy, backend, srv, prefix string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := h.WaitServerStatus(ctx, backend, srv, prefix); err != nil {
		t.Fatal(err)
	}
}

// pipelineClient is proxymcp's server behind a tool-call pipeline
// configured by cfg (a local server), its tools added by register, and an
// initialized in-process mcp-go client (clientInfo name clientName, none
// if empty; protocol mcp.LATEST_PROTOCOL_VERSION).
func pipelineClient(t *testing.T, cfg toolcall.Config, clientName string, register func(*toolcall.Pipeline), copts ...client.ClientOption) (*server.MCPServer, *client.Client) {
	t.Helper()
	srv := server.NewMCPServer("proxymcp", "test", server.WithHooks(&server.Hooks{}))
	p, err := toolcall.New(srv, cfg, toolcall.Options{Server: "proxymcp", Version: "test", Local: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	register(p)
	c, err := client.NewInProcessClientWithOptions(srv, copts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	if err := c.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	init := mcp.InitializeRequest{}
	if clientName != "" {
		init.Params.ClientInfo = mcp.Implementation{Name: clientName, Version: "1.0"}
	}
	init.Params.ProtocolVersion = mcp.LATEST_PROTOCOL_VERSION
	if _, err := c.Initialize(t.Context(), init); err != nil {
		t.Fatal(err)
	}
	return srv, c
}

// one is the fleet of one HAProxy, as configured without PROXY_INSTANCES.
func one(hp *haproxy.Client) *fleet.Fleet { return fleet.One(fleet.Member{Client: hp}) }

// classes returns the risk class of every tool that can change HAProxy
// (read tools are not listed).
func classes() map[string]toolcall.Class {
	return register(nil, "default", haproxy.New(nil, nil), Options{}, nil).classes
}
