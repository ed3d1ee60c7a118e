package serve

import (
	"bytes"
	"strings"
	"testing"
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
