package main

import (
	"testing"

	"github.com/mcpfleet/mcpfleet/codermcp/internal/codertest"
	"github.com/mcpfleet/mcpfleet/codermcp/internal/codertest/harness"
	"github.com/mcpfleet/mcpfleet/shared/e2e"
	"github.com/mcpfleet/mcpfleet/shared/e2e/appstest"
)

// TestInspectorAppInfo: the MCP Inspector's CLI, advertising the MCP Apps
// extension, reports codermcp's change tools (coder, codex, codex-reply)
// with the change-preview resource, read back as text/html;profile=mcp-app
// with a CSP that names no domain, and no other tool with a view.
func TestInspectorAppInfo(t *testing.T) {
	t.Parallel()
	bin := e2e.Build(t, ".")
	srv := e2e.StartHTTP(t, bin, []string{"CODER_CLI_PATH=/nonexistent/codex"}) // listing needs no CLI
	want := map[string]string{}
	for _, tool := range []string{"coder", "codex", "codex-reply"} {
		want[tool] = "ui://codermcp/change-preview"
	}
	appstest.CheckViews(t, appstest.AppInfo(t, srv.MCPURL()), want, []string{"ui://codermcp/change-preview"})
}

// TestViewsInBrowser runs views/test/codermcp.test.mjs: the change-preview
// view in headless Debian chromium under the ext-apps SDK's AppBridge, its
// HTML read from this server's ui:// resource, fed this server's real
// results (a workspace-write dry run, a read-only reply) from the real Codex
// CLI against the codertest endpoint. Screenshots and the first-render
// median go to views/test/artifacts (or $VIEWS_ARTIFACTS).
func TestViewsInBrowser(t *testing.T) {
	browser := appstest.Browser(t)
	t.Parallel()
	h := harness.New(t)
	work := harness.GitRepo(t)
	bin := e2e.Build(t, ".")
	srv := e2e.StartHTTP(t, bin, append(append([]string(nil), h.Env...), "CODER_CLI_PATH="+h.CLI, "CODER_HOME="+h.Home,
		"CODER_WORKSPACE_ROOTS="+testRoots(), "CODER_MODELS="+codertest.Model, "CODER_DEFAULT_MODEL="+codertest.Model, "STRUCTURED_CONTENT_ENABLED=yes"))
	browser.Run(t, "codermcp.test.mjs", "CODERMCP_URL="+srv.MCPURL(), "CODERMCP_DIR="+work)
}
