package main

import (
	"testing"

	"github.com/mcpfleet/mcpfleet/shared/e2e"
	"github.com/mcpfleet/mcpfleet/shared/e2e/appstest"
)

// TestSurfaceAppsClient: a client that declares the MCP Apps extension
// sees execute_query pointing to ui://sqlmcp/query-result and the views as
// resources (read-only and writes allowed); with MCP_APPS=off it sees
// exactly today's surface, which a client without the extension always
// sees (TestSurfaceOverStdioAndHTTP).
func TestSurfaceAppsClient(t *testing.T) {
	bin := e2e.Build(t, ".")
	t.Run("apps client", func(t *testing.T) {
		e2e.Golden(t, "testdata/surface-apps.golden.json", e2e.List(t, appstest.Stdio(t, bin, engineEnv(t))))
	})
	t.Run("apps client, writes allowed", func(t *testing.T) {
		e2e.Golden(t, "testdata/surface-apps-writes.golden.json", e2e.List(t, appstest.Stdio(t, bin, engineEnv(t, "SQLENGINE_ALLOW_WRITE_QUERIES=true"))))
	})
	t.Run("apps client, MCP_APPS=off", func(t *testing.T) {
		e2e.Golden(t, "testdata/surface.golden.json", e2e.List(t, appstest.Stdio(t, bin, engineEnv(t, "MCP_APPS=off"))))
	})
	t.Run("apps client, writes allowed, MCP_APPS=off", func(t *testing.T) {
		e2e.Golden(t, "testdata/surface_writes.golden.json", e2e.List(t, appstest.Stdio(t, bin, engineEnv(t, "SQLENGINE_ALLOW_WRITE_QUERIES=true", "MCP_APPS=off"))))
	})
}
