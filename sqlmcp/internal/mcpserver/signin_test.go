package mcpserver_test

import (
	"context"
	"strings"
	"testing"

	"github.com/mcpfleet/mcpfleet/shared/httpauth"

	"github.com/mcpfleet/mcpfleet/sqlmcp/internal/engine"
	"github.com/mcpfleet/mcpfleet/sqlmcp/internal/mcpserver"
	"github.com/mcpfleet/mcpfleet/sqlmcp/internal/trinoauth"
	"github.com/mcpfleet/mcpfleet/sqlmcp/internal/trinotest"
)

// TestSignedInWithoutProviderToken: with a token per caller
// (SQLENGINE_AUTH=token-exchange), a caller who is signed in but whose
// sign-in holds no provider access token (OAuth proxy mode once the
// provider's token behind the MCP token expired unrenewed) is told to sign
// in again, on every tool, and nothing reaches the engine.
func TestSignedInWithoutProviderToken(t *testing.T) {
	eng := trinotest.Start(t, trinotest.WithTLS(), trinotest.WithLargeTableRows(-1))
	h := newHarness(t, mcpserver.Options{}, func(c *engine.Config) {
		c.Host, c.Port, c.SSL, c.RootCAs = eng.Host(), eng.Port(), true, eng.CertPool()
		// Never reached: the call is refused before any exchange.
		c.Token = &trinoauth.Exchanger{URL: "https://127.0.0.1:1/token", ClientID: "sqlmcp", ClientSecret: "x", Audience: "trino"}
		c.TokenPerCaller = true
	})
	ctx := httpauth.ContextWithIdentity(context.Background(), &httpauth.Identity{Subject: "sub-alice", Username: "alice"})
	before := len(eng.Requests())
	for _, call := range []struct {
		tool string
		args map[string]any
	}{
		{"execute_query", map[string]any{"query": "SELECT 1"}},
		{"list_catalogs", map[string]any{}},
		{"list_schemas", map[string]any{}},
		{"list_tables", map[string]any{}},
		{"get_table_schema", map[string]any{"table": "a"}},
		{"explain_query", map[string]any{"query": "SELECT 1"}},
	} {
		text, isErr := h.call(t, ctx, call.tool, call.args)
		if !isErr || !strings.Contains(text, "holds no access token of the identity provider") || !strings.Contains(text, "sign in again") {
			t.Errorf("%s: %s", call.tool, text)
		}
	}
	if n := len(eng.Requests()) - before; n != 0 {
		t.Errorf("%d requests reached the engine", n)
	}
}
