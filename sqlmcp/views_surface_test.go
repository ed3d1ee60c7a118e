package main

import (
	"context"
	"os"
	"os/exec"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpfleet/mcpfleet/shared/e2e"
)

// TestSurfaceAppsClient: a client that declares the MCP Apps extension
// sees execute_query pointing to ui://sqlmcp/query-result and the views as
// resources (read-only and writes allowed); with MCP_APPS=off it sees
// exactly today's surface, which a client without the extension always
// sees (TestSurfaceOverStdioAndHTTP).
func TestSurfaceAppsClient(t *testing.T) {
	bin := e2e.Build(t, ".")
	t.Run("apps client", func(t *testing.T) {
		e2e.Golden(t, "testdata/surface-apps.golden.json", e2e.List(t, appsStdio(t, bin, engineEnv(t))))
	})
	t.Run("apps client, writes allowed", func(t *testing.T) {
		e2e.Golden(t, "testdata/surface-apps-writes.golden.json", e2e.List(t, appsStdio(t, bin, engineEnv(t, "SQLENGINE_ALLOW_WRITE_QUERIES=true"))))
	})
	t.Run("apps client, MCP_APPS=off", func(t *testing.T) {
		e2e.Golden(t, "testdata/surface.golden.json", e2e.List(t, appsStdio(t, bin, engineEnv(t, "MCP_APPS=off"))))
	})
	t.Run("apps client, writes allowed, MCP_APPS=off", func(t *testing.T) {
		e2e.Golden(t, "testdata/surface_writes.golden.json", e2e.List(t, appsStdio(t, bin, engineEnv(t, "SQLENGINE_ALLOW_WRITE_QUERIES=true", "MCP_APPS=off"))))
	})
}

// appsStdio connects over stdio as a client that declares the MCP Apps
// extension (io.modelcontextprotocol/ui with the HTML view mimeType), as
// streammcp's test does.
func appsStdio(t *testing.T, bin string, env []string) *mcp.ClientSession {
	t.Helper()
	caps := &mcp.ClientCapabilities{}
	caps.AddExtension("io.modelcontextprotocol/ui", map[string]any{"mimeTypes": []any{"text/html;profile=mcp-app"}})
	c := mcp.NewClient(&mcp.Implementation{Name: "mcpfleet-apps-e2e", Version: "test"}, &mcp.ClientOptions{Capabilities: caps})
	cmd := exec.Command(bin)
	cmd.Env = append(os.Environ(), env...)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	cs, err := c.Connect(ctx, &mcp.CommandTransport{Command: cmd}, &mcp.ClientSessionOptions{ProtocolVersion: e2e.Legacy})
	if err != nil {
		t.Fatalf("connect over stdio to %s: %v", bin, err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}
