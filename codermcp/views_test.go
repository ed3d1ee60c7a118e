package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpfleet/mcpfleet/shared/e2e"
)

// needTool fails (CI=true) or skips the test when a tool the views' tests
// need is missing.
func needTool(t *testing.T, what string) {
	t.Helper()
	if os.Getenv("CI") == "true" {
		t.Fatalf("%s; run scripts/install/inspector.sh", what)
	}
	t.Skipf("%s (scripts/install/inspector.sh installs it)", what)
}

// TestInspectorAppInfo: the MCP Inspector's CLI, advertising the MCP Apps
// extension, reports codermcp's change tools (coder, codex, codex-reply)
// with the change-preview resource, read back as text/html;profile=mcp-app
// with a CSP that names no domain, and no other tool with a view.
func TestInspectorAppInfo(t *testing.T) {
	t.Parallel()
	node, err := exec.LookPath("node")
	if err != nil {
		needTool(t, "node is not installed")
	}
	cmd := exec.Command("bash", filepath.Join("..", "scripts", "install", "inspector.sh"))
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		needTool(t, "inspector.sh failed: "+err.Error())
	}
	cli := strings.TrimSpace(string(out))
	bin := e2e.Build(t, ".")
	srv := e2e.StartHTTP(t, bin, []string{"CODER_CLI_PATH=/nonexistent/codex"}) // listing needs no CLI
	cmd = exec.Command(node, cli, "--advertise-apps", "--app-info", "--method", "tools/list", "--transport", "http", "--server-url", srv.MCPURL())
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err = cmd.Output()
	if err != nil {
		t.Fatalf("inspector --app-info: %v\n%s\n%s", err, out, stderr.String())
	}
	type appInfo struct {
		HasApp           bool                `json:"hasApp"`
		ToolName         string              `json:"toolName"`
		ResourceURI      string              `json:"resourceUri"`
		ResourceMimeType string              `json:"resourceMimeType"`
		ResourceError    string              `json:"resourceError"`
		CSP              map[string][]string `json:"csp"`
	}
	want := map[string]string{}
	for _, tool := range []string{"coder", "codex", "codex-reply"} {
		want[tool] = "ui://codermcp/change-preview"
	}
	got := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var a appInfo
		if err := json.Unmarshal(sc.Bytes(), &a); err != nil {
			t.Fatalf("inspector line %q: %v", sc.Text(), err)
		}
		if !a.HasApp {
			continue
		}
		got[a.ToolName] = a.ResourceURI
		if a.ResourceError != "" || a.ResourceMimeType != "text/html;profile=mcp-app" {
			t.Errorf("%s → %s: mimeType %q, resource error %q", a.ToolName, a.ResourceURI, a.ResourceMimeType, a.ResourceError)
		}
		for _, k := range []string{"connectDomains", "resourceDomains", "frameDomains", "baseUriDomains"} {
			if d, ok := a.CSP[k]; !ok || len(d) != 0 {
				t.Errorf("%s → %s: csp.%s = %v, want [] (no external domain)", a.ToolName, a.ResourceURI, k, d)
			}
		}
	}
	for tool, uri := range want {
		if got[tool] != uri {
			t.Errorf("inspector: %s has view %q, want %s", tool, got[tool], uri)
		}
	}
	for tool := range got {
		if want[tool] == "" {
			t.Errorf("inspector: %s has a view it should not (%s)", tool, got[tool])
		}
	}
}
