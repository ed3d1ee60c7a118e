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

	"github.com/mcpfleet/mcpfleet/codermcp/internal/codertest"
	"github.com/mcpfleet/mcpfleet/codermcp/internal/codertest/harness"
	"github.com/mcpfleet/mcpfleet/shared/e2e"
)

// needTool fails (CI=true) or skips the test when a tool the views' tests
// need is missing.
func needTool(t *testing.T, what string) {
	t.Helper()
	if os.Getenv("CI") == "true" {
		t.Fatalf("%s; run scripts/install/views.sh and scripts/install/inspector.sh", what)
	}
	t.Skipf("%s (scripts/install/views.sh and scripts/install/inspector.sh install it)", what)
}

func install(t *testing.T, script string) string {
	t.Helper()
	cmd := exec.Command("bash", filepath.Join("..", "scripts", "install", script))
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		needTool(t, script+" failed: "+err.Error())
	}
	return strings.TrimSpace(string(out))
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
	cli := install(t, "inspector.sh")
	bin := e2e.Build(t, ".")
	srv := e2e.StartHTTP(t, bin, []string{"CODER_CLI_PATH=/nonexistent/codex"}) // listing needs no CLI
	cmd := exec.Command(node, cli, "--advertise-apps", "--app-info", "--method", "tools/list", "--transport", "http", "--server-url", srv.MCPURL())
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
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

// TestViewsInBrowser runs views/test/codermcp.test.mjs: the change-preview
// view in headless Debian chromium under the ext-apps SDK's AppBridge, its
// HTML read from this server's ui:// resource, fed this server's real
// results (a workspace-write dry run, a read-only reply) from the real Codex
// CLI against the codertest endpoint. Screenshots and the first-render
// median go to views/test/artifacts (or $VIEWS_ARTIFACTS).
func TestViewsInBrowser(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: the browser test takes about 30 s")
	}
	t.Parallel()
	node, err := exec.LookPath("node")
	if err != nil {
		needTool(t, "node is not installed")
	}
	if _, err := os.Stat(os.Getenv("CHROMIUM")); os.Getenv("CHROMIUM") == "" || err != nil {
		if _, err := exec.LookPath("chromium"); err != nil {
			needTool(t, "chromium is not installed")
		}
	}
	modules := install(t, "views.sh")
	h := harness.New(t)
	work := harness.GitRepo(t)
	bin := e2e.Build(t, ".")
	srv := e2e.StartHTTP(t, bin, append(append([]string(nil), h.Env...), "CODER_CLI_PATH="+h.CLI, "CODER_HOME="+h.Home,
		"CODER_WORKSPACE_ROOTS="+testRoots(), "CODER_MODELS="+codertest.Model, "CODER_DEFAULT_MODEL="+codertest.Model, "STRUCTURED_CONTENT_ENABLED=yes"))
	dir, err := filepath.Abs(filepath.Join("..", "views"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(node, "--test", "--test-reporter=spec", filepath.Join("test", "codermcp.test.mjs"))
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "VIEWS_NODE_MODULES="+modules, "CODERMCP_URL="+srv.MCPURL(), "CODERMCP_DIR="+work)
	if os.Getenv("VIEWS_ARTIFACTS") == "" {
		cmd.Env = append(cmd.Env, "VIEWS_ARTIFACTS="+filepath.Join(dir, "test", "artifacts"))
	}
	b, err := cmd.CombinedOutput()
	t.Logf("%s", b)
	if err != nil {
		t.Fatalf("codermcp views browser test: %v", err)
	}
	// node --test skips every test when CODERMCP_URL or chromium is
	// missing; here neither is, so a skip is a failure.
	if !bytes.Contains(b, []byte("skipped 0")) {
		t.Fatalf("codermcp views browser test skipped tests")
	}
}
