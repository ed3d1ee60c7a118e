package main

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"golang.org/x/oauth2"

	"github.com/mcpfleet/mcpfleet/shared/e2e"
	"github.com/mcpfleet/mcpfleet/shared/httpauth/idptest"
	"github.com/mcpfleet/mcpfleet/sqlmcp/internal/trinotest"
)

// proxyRedirect is the MCP client's loopback redirect URI. Nothing listens
// there: the test's "browser" stops at the redirect and reads the code.
const proxyRedirect = "http://127.0.0.1:33419/callback"

// startProxyIdentity is startIdentity with sqlmcp fronting the provider
// (OAUTH_MODE=proxy): sqlmcp is the provider's client (the same client
// that may exchange for Trino's audience) and issues its own MCP tokens.
func startProxyIdentity(t *testing.T, bin string, opts idptest.Options, extra ...string) *identityFixture {
	t.Helper()
	f := startIdentityWith(t, bin, opts, append([]string{
		"OAUTH_MODE=proxy", "OIDC_AUDIENCE=", "OIDC_CLIENT_ID=" + trinotest.ExchangeClient, "OIDC_CLIENT_SECRET=" + trinotest.ExchangeSecret,
		"JWT_SECRET=" + jwtSecret,
	}, extra...)...)
	f.idp.AddClient(idptest.Client{ID: trinotest.ExchangeClient, Secret: trinotest.ExchangeSecret, RedirectURIs: []string{f.srv.Base + "/oauth/callback"}})
	return f
}

// proxyLogin logs user in through sqlmcp's proxy-mode flow with the
// official go-sdk client (dynamic registration, PKCE at both legs) and
// returns the session and the token source of the MCP token it holds.
func (f *identityFixture) proxyLogin(t *testing.T, user string) (*mcp.ClientSession, oauth2.TokenSource) {
	t.Helper()
	f.idp.SetUser(map[string]any{"sub": "sub-" + user, "preferred_username": user, "email": user + "@example.com"})
	fetch := func(ctx context.Context, args *auth.AuthorizationArgs) (*auth.AuthorizationResult, error) {
		browser := &http.Client{Timeout: 30 * time.Second, CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if strings.HasPrefix(req.URL.String(), proxyRedirect) {
				return http.ErrUseLastResponse
			}
			return nil
		}}
		resp, err := browser.Get(args.URL)
		if err != nil {
			return nil, err
		}
		resp.Body.Close()
		loc, err := url.Parse(resp.Header.Get("Location"))
		if err != nil || resp.StatusCode != http.StatusFound {
			t.Fatalf("login ended with HTTP %d at %q", resp.StatusCode, resp.Header.Get("Location"))
		}
		q := loc.Query()
		if q.Get("error") != "" {
			t.Fatalf("login failed: %s: %s", q.Get("error"), q.Get("error_description"))
		}
		return &auth.AuthorizationResult{Code: q.Get("code"), State: q.Get("state"), Iss: q.Get("iss")}, nil
	}
	handler, err := auth.NewAuthorizationCodeHandler(&auth.AuthorizationCodeHandlerConfig{
		DynamicClientRegistrationConfig: &auth.DynamicClientRegistrationConfig{Metadata: &oauthex.ClientRegistrationMetadata{
			RedirectURIs: []string{proxyRedirect}, ClientName: "sqlmcp e2e " + user,
			GrantTypes: []string{"authorization_code", "refresh_token"}, TokenEndpointAuthMethod: "none",
		}},
		RedirectURL:              proxyRedirect,
		AuthorizationCodeFetcher: fetch,
		RequestRefreshToken:      true,
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	c := mcp.NewClient(&mcp.Implementation{Name: "e2e-" + user, Version: "1"}, nil)
	cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: f.srv.MCPURL(), OAuthHandler: handler, DisableStandaloneSSE: true}, nil)
	if err != nil {
		t.Fatalf("connect as %s with OAuth (proxy mode): %v", user, err)
	}
	t.Cleanup(func() { cs.Close() })
	ts, err := handler.TokenSource(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return cs, ts
}

// TestQueryAsYourselfProxyMode: with sqlmcp fronting the identity provider
// (OAUTH_MODE=proxy) and SQLENGINE_AUTH=token-exchange, alice and bob log
// in through sqlmcp and get their own rows, masks and grants: the
// provider's access token behind each MCP token (sealed in it, never
// readable by the client) is what is exchanged; sqlmcp's own MCP token
// reaches neither the engine nor the provider's exchange, whose subject
// must be a token the provider signed. The MCP token lives no longer than
// the provider's token behind it.
func TestQueryAsYourselfProxyMode(t *testing.T) {
	bin := e2e.Build(t, ".")
	ttl := 10 * time.Minute
	f := startProxyIdentity(t, bin, idptest.Options{TokenTTL: ttl})
	q := map[string]any{"query": "SELECT name, email FROM customers ORDER BY id"}

	alice, aliceTS := f.proxyLogin(t, "alice")
	got := rowsText(t, structured(t, e2e.CallTool(t, alice, "execute_query", q)))
	if want := "Alice Martin|alice@example.com\nBob Stone|bob@example.com\nChloé Dubois|NULL\nDan O'Hara|dan@example.com\n山田 太郎|taro@example.jp\n"; got != want {
		t.Errorf("alice sees\n%s\nwant\n%s", got, want)
	}
	if p := f.eng.LastQuery(t, q["query"].(string)).Principal; p != "alice" {
		t.Errorf("the engine ran alice's query as %q", p)
	}
	bob, bobTS := f.proxyLogin(t, "bob")
	got = rowsText(t, structured(t, e2e.CallTool(t, bob, "execute_query", q)))
	if want := "Alice Martin|***\nChloé Dubois|NULL\n"; got != want { // row filter + mask
		t.Errorf("bob sees\n%s\nwant\n%s", got, want)
	}
	if p := f.eng.LastQuery(t, q["query"].(string)).Principal; p != "bob" {
		t.Errorf("the engine ran bob's query as %q", p)
	}
	res := e2e.CallTool(t, bob, "execute_query", map[string]any{"query": "SELECT count(*) FROM orders"})
	if !res.IsError || !strings.Contains(e2e.Text(res), "Access Denied") {
		t.Errorf("bob counted orders: %s", e2e.Text(res))
	}
	structured(t, e2e.CallTool(t, alice, "execute_query", map[string]any{"query": "SELECT count(*) FROM orders"}))

	var mcpTokens []string
	for user, ts := range map[string]oauth2.TokenSource{"alice": aliceTS, "bob": bobTS} {
		tok, err := ts.Token()
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(tok.AccessToken, ".") || tok.AccessToken == "" {
			t.Fatalf("%s holds no MCP token", user)
		}
		mcpTokens = append(mcpTokens, tok.AccessToken)
		if life := time.Until(tok.Expiry); life > ttl {
			t.Errorf("%s's MCP token lives %v, longer than the provider's token behind it (%v)", user, life, ttl)
		}
	}
	// sqlmcp's own tokens: never at the engine, nor the service user.
	f.onlyExchangedTokens(t, mcpTokens...)
	// The provider exchanged (it accepts only subject tokens it signed
	// itself, so an MCP token would have been refused): once per user.
	if n := f.idp.ExchangeCalls(); n != 2 {
		t.Errorf("%d exchanges, want 2 (one per user, then cached)", n)
	}
}
