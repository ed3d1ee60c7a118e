package main

// Identity all the way to Trino, through the built server: real OAuth
// (native mode, tokens from the idptest provider, validated by the server),
// the caller's token exchanged (RFC 8693) at that provider, and the
// JWT-validating test engine enforcing per-user grants, a row filter and a
// column mask. idptest is the one fake: a real provider cannot forge
// refusals and short lifetimes on demand.

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpfleet/mcpfleet/shared/e2e"
	"github.com/mcpfleet/mcpfleet/shared/httpauth/idptest"
	"github.com/mcpfleet/mcpfleet/sqlmcp/internal/trinotest"
)

type identityFixture struct {
	idp *idptest.IdP
	eng *trinotest.Server
	srv *e2e.HTTPServer
}

// startIdentity starts the provider, the JWT-validating engine and sqlmcp
// with SQLENGINE_AUTH=token-exchange.
func startIdentity(t *testing.T, bin string, extra ...string) *identityFixture {
	t.Helper()
	return startIdentityWith(t, bin, idptest.Options{}, extra...)
}

// startIdentityWith is startIdentity with the provider's options.
func startIdentityWith(t *testing.T, bin string, opts idptest.Options, extra ...string) *identityFixture {
	t.Helper()
	id := trinotest.StartIdentity(t, opts)
	idp, eng := id.IdP, id.Engine
	ca := filepath.Join(t.TempDir(), "engine-ca.pem")
	if err := os.WriteFile(ca, eng.CACertPEM(), 0o600); err != nil {
		t.Fatal(err)
	}
	env := append([]string{
		"XDG_CONFIG_HOME=" + t.TempDir(),
		"SSL_CERT_FILE=" + ca, // the engine's CA, verified like any other
		"SQLENGINE_HOST=" + eng.Host(), "SQLENGINE_PORT=" + strconv.Itoa(eng.Port()), "SQLENGINE_SSL=true",
		"SQLENGINE_USER=svc", "SQLENGINE_CATALOG=sales", "SQLENGINE_SCHEMA=public",
		"OAUTH_ENABLED=true", "OAUTH_PROVIDER=oidc", "OIDC_ISSUER=" + idp.Issuer(), "OIDC_AUDIENCE=" + trinotest.MCPAudience,
		"SQLENGINE_AUTH=token-exchange",
		"SQLENGINE_TOKEN_EXCHANGE_URL=" + idp.URL + "/token",
		"SQLENGINE_TOKEN_EXCHANGE_CLIENT_ID=" + trinotest.ExchangeClient,
		"SQLENGINE_TOKEN_EXCHANGE_CLIENT_SECRET=" + trinotest.ExchangeSecret,
		"SQLENGINE_TOKEN_EXCHANGE_AUDIENCE=" + trinotest.TrinoAudience,
		"LOG_LEVEL=debug",
	}, extra...)
	return &identityFixture{idp: idp, eng: eng, srv: e2e.StartHTTP(t, bin, env)}
}

// mcpToken is a provider token for the MCP server's audience: what the
// client presents to sqlmcp.
func (f *identityFixture) mcpToken(user string) string {
	return (&trinotest.Identity{IdP: f.idp, Engine: f.eng}).MCPToken(user)
}

func (f *identityFixture) client(t *testing.T, token string) *mcp.ClientSession {
	t.Helper()
	return e2e.Connect(t, f.srv.MCPURL(), &http.Client{Transport: bearer{token, http.DefaultTransport}})
}

func rowsText(t *testing.T, m map[string]any) string {
	t.Helper()
	var b strings.Builder
	rows, _ := m["rows"].([]any)
	for _, r := range rows {
		for i, v := range r.([]any) {
			if i > 0 {
				b.WriteString("|")
			}
			if v == nil {
				b.WriteString("NULL")
			} else {
				b.WriteString(strings.TrimSpace(toText(v)))
			}
		}
		b.WriteString("\n")
	}
	return b.String()
}

func toText(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// TestQueryAsYourself: alice and bob ask the same question through one
// sqlmcp and get their own answers; the engine never sees the MCP token.
func TestQueryAsYourself(t *testing.T) {
	bin := e2e.Build(t, ".")
	f := startIdentity(t, bin)
	alice, bob := f.mcpToken("alice"), f.mcpToken("bob")
	q := map[string]any{"query": "SELECT name, email FROM customers ORDER BY id"}

	got := rowsText(t, structured(t, e2e.CallTool(t, f.client(t, alice), "execute_query", q)))
	if want := "Alice Martin|alice@example.com\nBob Stone|bob@example.com\nChloé Dubois|NULL\nDan O'Hara|dan@example.com\n山田 太郎|taro@example.jp\n"; got != want {
		t.Errorf("alice sees\n%s\nwant\n%s", got, want)
	}
	if p := f.eng.LastQuery(t, q["query"].(string)).Principal; p != "alice" {
		t.Errorf("the engine ran alice's query as %q", p)
	}
	bc := f.client(t, bob)
	got = rowsText(t, structured(t, e2e.CallTool(t, bc, "execute_query", q)))
	if want := "Alice Martin|***\nChloé Dubois|NULL\n"; got != want { // row filter + mask
		t.Errorf("bob sees\n%s\nwant\n%s", got, want)
	}
	if p := f.eng.LastQuery(t, q["query"].(string)).Principal; p != "bob" {
		t.Errorf("the engine ran bob's query as %q", p)
	}
	for _, denied := range []string{"SELECT count(*) FROM orders", "SELECT name, balance FROM customers"} {
		res := e2e.CallTool(t, bc, "execute_query", map[string]any{"query": denied})
		if !res.IsError || !strings.Contains(e2e.Text(res), "Access Denied") {
			t.Errorf("bob ran %q: %s", denied, e2e.Text(res))
		}
	}
	structured(t, e2e.CallTool(t, f.client(t, alice), "execute_query", map[string]any{"query": "SELECT count(*) FROM orders"}))

	f.onlyExchangedTokens(t, alice, bob)
}

// onlyExchangedTokens checks what the engine and the provider saw: none of
// the MCP tokens at the engine, a Bearer token on every engine request but
// /v1/info, no query as the service user, and every exchange by sqlmcp's
// client for Trino's audience.
func (f *identityFixture) onlyExchangedTokens(t *testing.T, mcpTokens ...string) {
	t.Helper()
	for _, r := range f.eng.Requests() {
		for name, vals := range r.Header {
			for _, v := range vals {
				for _, tok := range mcpTokens {
					if strings.Contains(v, tok) {
						t.Fatalf("an MCP access token was sent to the engine in %s of %s %s", name, r.Method, r.Path)
					}
				}
			}
		}
		if a := r.Header.Get("Authorization"); r.Path != "/v1/info" && !strings.HasPrefix(a, "Bearer ") {
			t.Errorf("%s %s without a Bearer token", r.Method, r.Path)
		}
	}
	for _, qi := range f.eng.Queries() {
		if qi.Principal == "svc" || qi.User == "svc" {
			t.Errorf("%q ran as the service user", qi.SQL)
		}
	}
	for _, r := range f.idp.ExchangeRequests() {
		if r.Audience != trinotest.TrinoAudience || r.Client != trinotest.ExchangeClient {
			t.Errorf("exchange %+v, want client %q audience %q", r, trinotest.ExchangeClient, trinotest.TrinoAudience)
		}
	}
}

// TestProviderRefusesTheExchange: a tool error naming the provider's
// answer, and nothing reaches the engine (no fallback to the service user).
func TestProviderRefusesTheExchange(t *testing.T) {
	bin := e2e.Build(t, ".")
	f := startIdentity(t, bin)
	f.idp.RefuseExchanges("invalid_grant", "the session of the user was revoked")
	f.eng.ResetRequests()
	tok := f.mcpToken("alice")
	cs := f.client(t, tok)
	for _, call := range []struct {
		tool string
		args map[string]any
	}{
		{"execute_query", map[string]any{"query": "SELECT 1"}},
		{"list_catalogs", nil},
		{"list_tables", map[string]any{"catalog": "sales", "schema": "public"}},
		{"get_table_schema", map[string]any{"table": "customers"}},
		{"explain_query", map[string]any{"query": "SELECT 1"}},
	} {
		res := e2e.CallTool(t, cs, call.tool, call.args)
		text := e2e.Text(res)
		if !res.IsError {
			t.Fatalf("%s ran without an exchanged token: %s", call.tool, text)
		}
		for _, want := range []string{"invalid_grant", "the session of the user was revoked", "127.0.0.1"} {
			if !strings.Contains(text, want) {
				t.Errorf("%s: %q does not name the provider's answer %q", call.tool, text, want)
			}
		}
		if strings.Contains(text, tok) || strings.Contains(text, trinotest.ExchangeSecret) {
			t.Errorf("%s: the error quotes a secret", call.tool)
		}
	}
	if n := len(f.eng.Statements()); n != 0 {
		t.Errorf("%d statements reached the engine", n)
	}
}

// TestEngineRefusesMCPAudience: the engine itself refuses a token meant
// for the MCP server (what a pass-through would send), and sqlmcp says so
// with the settings to check, quoting no token.
func TestEngineRefusesMCPAudience(t *testing.T) {
	bin := e2e.Build(t, ".")
	// A provider that hands back the subject's audience unchanged is
	// simulated by letting sqlmcp ask for the MCP audience.
	f2 := startIdentity(t, bin, "SQLENGINE_TOKEN_EXCHANGE_AUDIENCE="+trinotest.MCPAudience)
	f2.idp.AllowExchange(trinotest.ExchangeClient, trinotest.MCPAudience)
	tok := f2.mcpToken("alice")
	res := e2e.CallTool(t, f2.client(t, tok), "execute_query", map[string]any{"query": "SELECT 'wrong-audience'"})
	text := e2e.Text(res)
	if !res.IsError || !strings.Contains(text, "401") || !strings.Contains(text, "required-audience") {
		t.Errorf("a token for the MCP audience: %s", text)
	}
	if strings.Contains(text, tok) {
		t.Error("the error quotes the token")
	}
	for _, qi := range f2.eng.Queries() {
		if qi.SQL == "SELECT 'wrong-audience'" {
			t.Errorf("the engine ran it as %q", qi.Principal)
		}
	}
}

// TestExchangedTokenExpiresMidSession: one MCP session, the exchanged
// token's lifetime passes, and the next call exchanges again.
func TestExchangedTokenExpiresMidSession(t *testing.T) {
	bin := e2e.Build(t, ".")
	f := startIdentity(t, bin)
	f.idp.SetExchangeTTL(4 * time.Second) // reused for half its life
	cs := f.client(t, f.mcpToken("alice"))
	structured(t, e2e.CallTool(t, cs, "execute_query", map[string]any{"query": "SELECT 1"}))
	first := f.idp.ExchangeCalls()
	if first != 1 {
		t.Fatalf("%d exchanges for the first query, want 1", first)
	}
	// The lifetime itself is wall-clock time in the provider and the
	// engine: let it pass (not a synchronisation; nothing else is awaited).
	time.Sleep(4500 * time.Millisecond)
	structured(t, e2e.CallTool(t, cs, "execute_query", map[string]any{"query": "SELECT 2"}))
	if n := f.idp.ExchangeCalls(); n != 2 {
		t.Errorf("%d exchanges, want 2 (the expired token renewed)", n)
	}
	if p := f.eng.LastQuery(t, "SELECT 2").Principal; p != "alice" {
		t.Errorf("after renewal the query ran as %q", p)
	}
}
