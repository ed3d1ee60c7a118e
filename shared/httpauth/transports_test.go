package httpauth_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"golang.org/x/oauth2"

	"github.com/mcpfleet/mcpfleet/shared/httpauth"
	"github.com/mcpfleet/mcpfleet/shared/httpauth/idptest"
)

// bearerClient adds a static bearer token to every request.
func bearerClient(token string) *http.Client {
	return oauth2.NewClient(context.Background(), oauth2.StaticTokenSource(&oauth2.Token{AccessToken: token}))
}

// TestBothTransportsCarryIdentity: the go-sdk client with a bearer token
// reaches the tool, with the caller's identity, over streamable HTTP and
// over the legacy SSE transport.
func TestBothTransportsCarryIdentity(t *testing.T) {
	idp := idptest.New(t, idptest.Options{})
	h := newHarness(t, httpauth.Config{Provider: "oidc", Issuer: idp.Issuer(), Audience: "api://mcp", HTTPClient: idp.HTTPClient()})
	token := idp.Sign(idp.Claims("api://mcp"))
	for name, transport := range map[string]mcp.Transport{
		"streamable": &mcp.StreamableClientTransport{Endpoint: h.base + "/mcp", HTTPClient: bearerClient(token), DisableStandaloneSSE: true},
		"sse":        &mcp.SSEClientTransport{Endpoint: h.base + "/sse", HTTPClient: bearerClient(token)},
	} {
		t.Run(name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			cs, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil).Connect(ctx, transport, nil)
			if err != nil {
				t.Fatalf("connect: %v", err)
			}
			defer cs.Close()
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "whoami", Arguments: map[string]any{}})
			if err != nil {
				t.Fatal(err)
			}
			if got := res.Content[0].(*mcp.TextContent).Text; got != "user-1|alice|alice@example.com" {
				t.Errorf("identity %q", got)
			}
		})
	}
	// Without a token neither transport connects.
	for name, transport := range map[string]mcp.Transport{
		"streamable": &mcp.StreamableClientTransport{Endpoint: h.base + "/mcp", MaxRetries: -1},
		"sse":        &mcp.SSEClientTransport{Endpoint: h.base + "/sse"},
	} {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		_, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil).Connect(ctx, transport, nil)
		cancel()
		if err == nil {
			t.Errorf("%s: connected without a token", name)
		}
	}
}

// TestRandomSecretWhenUnset: proxy mode without JWT_SECRET works with a
// per-process secret and says so in the log, without printing it.
func TestRandomSecretWhenUnset(t *testing.T) {
	idp := idptest.New(t, idptest.Options{})
	h := newHarness(t, httpauth.Config{
		Mode: "proxy", Provider: "oidc", Issuer: idp.Issuer(), ClientID: "mcp-server", ClientSecret: "server-secret",
		HTTPClient: idp.HTTPClient(),
	})
	idp.AddClient(idptest.Client{ID: "mcp-server", Secret: "server-secret", RedirectURIs: []string{h.base + "/oauth/callback"}})
	if !strings.Contains(h.logText(), "JWT_SECRET is not set: using a random secret for this process only") {
		t.Errorf("the random secret is not announced:\n%s", h.logText())
	}
	f := newFlow(t, h, clientRedirect)
	v := oauth2.GenerateVerifier()
	tok, err := f.conf.Exchange(context.Background(), f.login(t, v).Query().Get("code"), oauth2.VerifierOption(v))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.layer.Verify(context.Background(), tok.AccessToken); err != nil {
		t.Fatal(err)
	}
}

// TestProxyAcceptsProviderTokensWithAudience: in proxy mode, a provider
// token (e.g. a service's client-credentials token) is accepted when
// OIDC_AUDIENCE says which audience it must carry, and refused otherwise.
func TestProxyAcceptsProviderTokensWithAudience(t *testing.T) {
	idp := idptest.New(t, idptest.Options{})
	cfg := httpauth.Config{Mode: "proxy", Provider: "oidc", Issuer: idp.Issuer(), ClientID: "c", ClientSecret: "s",
		JWTSecret: testSecret, HTTPClient: idp.HTTPClient()}
	without := newHarness(t, cfg)
	cfg.Audience = "api://mcp"
	with := newHarness(t, cfg)
	token := idp.Sign(idp.Claims("api://mcp"))
	without.wantChallenge(t, without.rpc(t, "Bearer "+token, "", initializeBody), true)
	sid := with.session(t, token)
	if got := with.call(t, token, sid); got != "user-1|alice|alice@example.com" {
		t.Errorf("identity %q", got)
	}
	other := idp.Sign(idp.Claims("api://other"))
	with.wantChallenge(t, with.rpc(t, "Bearer "+other, "", initializeBody), true)
}
