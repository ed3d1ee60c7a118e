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

// viewsServer is a built sqlmcp over streamable HTTP on the test engine,
// writes allowed (so a DELETE's dry run is a preview the view shows).
func viewsServer(t *testing.T) *e2e.HTTPServer {
	t.Helper()
	return e2e.StartHTTP(t, e2e.Build(t, "."), engineEnv(t, "SQLENGINE_ALLOW_WRITE_QUERIES=true"))
}

// viewsTool fails (CI=true) or skips the test when a tool the views'
// tests need is missing; install runs one of scripts/install and returns
// what it prints.
func viewsTool(t *testing.T, what string) {
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
		viewsTool(t, script+" failed: "+err.Error())
	}
	return strings.TrimSpace(string(out))
}

// TestInspectorAppInfo: the MCP Inspector's CLI, advertising the MCP Apps
// extension, reports execute_query with ui://sqlmcp/query-result, read
// back as text/html;profile=mcp-app, a CSP naming no domain, and no
// resource error; no other tool has a view.
func TestInspectorAppInfo(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		viewsTool(t, "node is not installed")
	}
	cli := install(t, "inspector.sh")
	srv := viewsServer(t)
	cmd := exec.Command(node, cli, "--advertise-apps", "--app-info", "--method", "tools/list", "--transport", "http", "--server-url", srv.MCPURL())
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("inspector --app-info: %v\n%s\n%s", err, out, stderr.String())
	}
	got := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var a struct {
			HasApp           bool                `json:"hasApp"`
			ToolName         string              `json:"toolName"`
			ResourceURI      string              `json:"resourceUri"`
			ResourceMimeType string              `json:"resourceMimeType"`
			ResourceError    string              `json:"resourceError"`
			CSP              map[string][]string `json:"csp"`
		}
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
	if len(got) != 1 || got["execute_query"] != "ui://sqlmcp/query-result" {
		t.Errorf("inspector: tools with a view %v, want only execute_query → ui://sqlmcp/query-result", got)
	}
}

// TestViewsInBrowser runs views/test/sqlmcp.test.mjs: the query-result
// view in headless Debian chromium under the ext-apps SDK's AppBridge, its
// HTML read from this server's ui:// resource, fed this server's real
// results, its fetch more answered by this server (fetch_more) through a
// real MCP client. Screenshots and the first-render median go to
// views/test/artifacts (or $VIEWS_ARTIFACTS). Afterwards the engine shows
// that the paged query was started once: fetch more continued it.
func TestViewsInBrowser(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: the browser test takes about 30 s")
	}
	node, err := exec.LookPath("node")
	if err != nil {
		viewsTool(t, "node is not installed")
	}
	if _, err := os.Stat(os.Getenv("CHROMIUM")); os.Getenv("CHROMIUM") == "" || err != nil {
		if _, err := exec.LookPath("chromium"); err != nil {
			viewsTool(t, "chromium is not installed")
		}
	}
	modules := install(t, "views.sh")
	srv := viewsServer(t)
	dir, err := filepath.Abs(filepath.Join("..", "views"))
	if err != nil {
		t.Fatal(err)
	}
	tag := "views-paging-" + strings.ReplaceAll(t.Name(), "/", "-")
	cmd := exec.Command(node, "--test", "--test-reporter=spec", filepath.Join("test", "sqlmcp.test.mjs"))
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "VIEWS_NODE_MODULES="+modules, "SQLMCP_URL="+srv.MCPURL(), "SQLMCP_PAGING_TAG="+tag)
	if os.Getenv("VIEWS_ARTIFACTS") == "" {
		cmd.Env = append(cmd.Env, "VIEWS_ARTIFACTS="+filepath.Join(dir, "test", "artifacts"))
	}
	b, err := cmd.CombinedOutput()
	t.Logf("%s", b)
	if err != nil {
		t.Fatalf("sqlmcp views browser test: %v", err)
	}
	// node --test skips every test when SQLMCP_URL or chromium is missing;
	// here neither is, so a skip is a failure.
	if !bytes.Contains(b, []byte("skipped 0")) {
		t.Fatalf("sqlmcp views browser test skipped tests")
	}
	// Three pages through the view, one engine query: fetch more is never a
	// re-run.
	var started int
	for _, r := range trino.Statements() {
		if strings.Contains(r.Body, tag) {
			started++
		}
	}
	if started != 1 {
		t.Errorf("the paged query was sent to the engine %d times, want 1 (fetch_more continues it)", started)
	}
}
