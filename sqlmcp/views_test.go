package main

import (
	"strings"
	"testing"

	"github.com/mcpfleet/mcpfleet/shared/e2e"
	"github.com/mcpfleet/mcpfleet/shared/e2e/appstest"
)

// viewsServer is a built sqlmcp over streamable HTTP on the test engine,
// writes allowed (so a DELETE's dry run is a preview the view shows).
func viewsServer(t *testing.T) *e2e.HTTPServer {
	t.Helper()
	return e2e.StartHTTP(t, e2e.Build(t, "."), engineEnv(t, "SQLENGINE_ALLOW_WRITE_QUERIES=true"))
}

// TestInspectorAppInfo: the MCP Inspector's CLI, advertising the MCP Apps
// extension, reports execute_query with ui://sqlmcp/query-result, read
// back as text/html;profile=mcp-app, a CSP naming no domain, and no
// resource error; no other tool has a view.
func TestInspectorAppInfo(t *testing.T) {
	got := appstest.AppInfo(t, viewsServer(t).MCPURL())
	want := map[string]string{"execute_query": "ui://sqlmcp/query-result"}
	appstest.CheckViews(t, got, want, []string{"ui://sqlmcp/query-result"})
}

// TestViewsInBrowser runs views/test/sqlmcp.test.mjs: the query-result
// view in headless Debian chromium under the ext-apps SDK's AppBridge, its
// HTML read from this server's ui:// resource, fed this server's real
// results, its fetch more answered by this server (fetch_more) through a
// real MCP client. Screenshots and the first-render median go to
// views/test/artifacts (or $VIEWS_ARTIFACTS). Afterwards the engine shows
// that the paged query was started once: fetch more continued it.
func TestViewsInBrowser(t *testing.T) {
	browser := appstest.Browser(t)
	srv := viewsServer(t)
	tag := "views-paging-" + strings.ReplaceAll(t.Name(), "/", "-")
	browser.Run(t, "sqlmcp.test.mjs", "SQLMCP_URL="+srv.MCPURL(), "SQLMCP_PAGING_TAG="+tag)
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
