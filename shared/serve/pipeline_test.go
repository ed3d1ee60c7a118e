package serve

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcpfleet/mcpfleet/shared/metrics/promtest"
	"github.com/mcpfleet/mcpfleet/shared/toolcall"
)

// TestPipelineVariables: the approval and audit variables are in every
// server's --help, and bad values exit 2 naming each variable.
func TestPipelineVariables(t *testing.T) {
	p := Program{Name: "x", Version: "v0", Summary: "test"}
	var out, errb bytes.Buffer
	if _, _, status, ok := p.Configure([]string{"--help"}, func(string) string { return "" }, &out, &errb, nil); ok || status != ExitOK {
		t.Fatalf("--help: %d", status)
	}
	for _, v := range []string{"MCP_APPROVAL ", "MCP_APPROVAL_FALLBACK", "MCP_APPROVAL_TIMEOUT", "MCP_APPROVAL_SECRET", "MCP_AUDIT_LOG"} {
		if !strings.Contains(out.String(), v) {
			t.Errorf("--help lacks %s", v)
		}
	}
	bad := map[string]string{"MCP_APPROVAL": "sometimes", "MCP_APPROVAL_FALLBACK": "allow", "MCP_APPROVAL_TIMEOUT": "soon",
		"MCP_APPROVAL_SECRET": "tooshort", "MCP_AUDIT_LOG": "stdout"}
	out.Reset()
	_, _, status, ok := p.Configure(nil, func(k string) string { return bad[k] }, &out, &errb, nil)
	if ok || status != ExitUsage {
		t.Fatalf("bad values: status %d", status)
	}
	for k := range bad {
		if !strings.Contains(errb.String(), k) {
			t.Errorf("error does not name %s:\n%s", k, errb.String())
		}
	}
	if strings.Contains(errb.String(), "tooshort") {
		t.Error("the secret was echoed")
	}
	cfg, _, _, ok := p.Configure(nil, func(k string) string {
		return map[string]string{"MCP_AUDIT_LOG": "off", "MCP_APPROVAL": "none"}[k]
	}, &out, &errb, nil)
	if !ok || cfg.Calls.Audit.Dest != "off" || cfg.Calls.Approval.Policy != "none" {
		t.Fatalf("config %+v", cfg.Calls)
	}
	s := NewServer("x", "v0")
	calls, err := p.Pipeline(s, cfg, &errb, nil)
	if err != nil {
		t.Fatal(err)
	}
	calls.Close()
	cfg.Calls.Audit.Dest = t.TempDir() // a directory cannot be opened for append
	if _, err := p.Pipeline(s, cfg, &errb, nil); err == nil || !strings.Contains(err.Error(), "MCP_AUDIT_LOG") {
		t.Fatalf("unwritable audit log: %v", err)
	}
}

// TestPipelineCountsApprovals: the pipeline from Program.Pipeline records
// each approval decision in mcpfleet_approvals_total{tool,decision} (the
// decisions themselves: toolcall's TestEveryDecisionIsCounted).
func TestPipelineCountsApprovals(t *testing.T) {
	p := Program{Name: "x", Version: "v0", Summary: "test"}
	var errb bytes.Buffer
	cfg, _, _, ok := p.Configure(nil, func(k string) string {
		return map[string]string{"MCP_AUDIT_LOG": "off", "MCP_APPROVAL_FALLBACK": "refuse"}[k]
	}, &errb, &errb, nil)
	if !ok {
		t.Fatal(errb.String())
	}
	s := NewServer("x", "v0")
	calls, err := p.Pipeline(s, cfg, &errb, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer calls.Close()
	ran := 0
	for _, c := range []toolcall.Class{toolcall.Change, toolcall.Destructive} {
		calls.Change(mcp.NewTool(c.String()+"_it"), c, func(ctx context.Context, req mcp.CallToolRequest) (toolcall.Plan, error) {
			return toolcall.Plan{Class: c, Target: "t", Run: func(context.Context) (*mcp.CallToolResult, error) {
				ran++
				return mcp.NewToolResultText("done"), nil
			}}, nil
		})
	}
	for i, tool := range []string{"change_it", "change_it", "destructive_it"} {
		msg := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":%q,"arguments":{}}}`, i, tool)
		s.HandleMessage(context.Background(), []byte(msg))
	}
	got := promtest.Read(t, s.Metrics.Handler())
	for series, want := range map[string]float64{
		`mcpfleet_approvals_total{decision="policy",server="x",tool="change_it"}`:       2,
		`mcpfleet_approvals_total{decision="refused",server="x",tool="destructive_it"}`: 1,
	} {
		if got[series] != want {
			t.Errorf("%s = %v, want %v", series, got[series], want)
		}
	}
	if ran != 2 {
		t.Errorf("%d calls ran, want 2", ran)
	}
}
