package main

import (
	"context"
	"io"
	"net/http"
	"regexp"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpfleet/mcpfleet/codermcp/internal/codertest"
	"github.com/mcpfleet/mcpfleet/codermcp/internal/codertest/harness"
	"github.com/mcpfleet/mcpfleet/shared/e2e"
)

// An app-server turn (approvalPolicy other than never) is a back-end call
// like an exec run: mcpfleet_backend_requests_total{operation="app-server"}
// counts it with its exit class. The built binary over HTTP, the newest
// real CLI, a client that declares elicitation.
func TestAppServerTurnIsMeasured(t *testing.T) {
	t.Parallel()
	h := harness.NewFor(t, codertest.CLIVersion(t, codertest.NewestVersion))
	srv := e2e.StartHTTP(t, e2e.Build(t, "."), append(append([]string(nil), h.Env...), "CODER_CLI_PATH="+h.CLI, "CODER_HOME="+h.Home,
		"CODER_WORKSPACE_ROOTS="+testRoots(), "CODER_MODELS="+codertest.Model, "CODER_DEFAULT_MODEL="+codertest.Model))
	c := mcp.NewClient(&mcp.Implementation{Name: "codermcp-metrics", Version: "test"}, &mcp.ClientOptions{
		ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			return &mcp.ElicitResult{Action: "accept"}, nil
		}})
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: srv.MCPURL(), MaxRetries: -1}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "coder", Arguments: map[string]any{"prompt": "[[reply:measured]]", "approvalPolicy": "untrusted", "workingDirectory": t.TempDir()}})
	if err != nil || res.IsError {
		t.Fatalf("coder: %v %+v", err, res)
	}
	resp, err := http.Get(srv.Base + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	re := regexp.MustCompile(`(?m)^mcpfleet_backend_requests_total\{[^}]*operation="app-server"[^}]*outcome="ok"[^}]*\} 1$`)
	if !re.Match(b) {
		t.Errorf("no app-server turn counted in /metrics:\n%s", regexp.MustCompile(`(?m)^mcpfleet_backend_requests_total.*$`).FindAll(b, -1))
	}
}
