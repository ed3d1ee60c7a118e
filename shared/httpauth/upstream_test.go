package httpauth_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"golang.org/x/oauth2"

	"github.com/mcpfleet/mcpfleet/shared/httpauth"
	"github.com/mcpfleet/mcpfleet/shared/httpauth/idptest"
)

// payload decodes a JWT's claims without verifying them.
func payload(t *testing.T, jwt string) map[string]any {
	t.Helper()
	parts := strings.Split(jwt, ".")
	if len(parts) != 3 {
		t.Fatalf("not a JWT: %.20q", jwt)
	}
	b, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// upstreamSeen is what a handler behind Protect gets from
// AccessTokenFromContext for bearer.
func upstreamSeen(t *testing.T, h *harness, bearer string) (string, bool) {
	t.Helper()
	var got string
	var ok bool
	srv := h.layer.Protect(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got, ok = httpauth.AccessTokenFromContext(r.Context())
	}))
	rec := httptest.NewRecorder()
	req := httptest.NewRequest(http.MethodPost, h.base+"/mcp", nil)
	req.Header.Set("Authorization", "Bearer "+bearer)
	srv.ServeHTTP(rec, req)
	if rec.Code != http.StatusOK {
		t.Fatalf("Protect answered %d", rec.Code)
	}
	return got, ok
}

// TestProxyUpstreamAccess: with Config.UpstreamAccess, a token issued in
// proxy mode carries the provider's access token sealed (the client cannot
// read it), lives no longer than it, and a handler behind Protect gets the
// provider's token (never this server's) from AccessTokenFromContext; a
// refresh renews it. Without the option nothing changes: no sealed claim,
// the full lifetime, no access token in the context.
func TestProxyUpstreamAccess(t *testing.T) {
	for _, keep := range []bool{true, false} {
		t.Run(map[bool]string{true: "kept", false: "off"}[keep], func(t *testing.T) {
			idp := idptest.New(t, idptest.Options{TokenTTL: 2 * time.Minute})
			h := newHarness(t, httpauth.Config{
				Mode: "proxy", Provider: "oidc", Issuer: idp.Issuer(),
				ClientID: "mcp-server", ClientSecret: "server-secret", JWTSecret: testSecret,
				HTTPClient: idp.HTTPClient(), UpstreamAccess: keep,
			})
			idp.AddClient(idptest.Client{ID: "mcp-server", Secret: "server-secret", RedirectURIs: []string{h.base + "/oauth/callback"}})
			f := newFlow(t, h, clientRedirect)
			v := oauth2.GenerateVerifier()
			tok, err := f.conf.Exchange(context.Background(), f.login(t, v).Query().Get("code"), oauth2.VerifierOption(v))
			if err != nil {
				t.Fatal(err)
			}
			check := func(tok *oauth2.Token) {
				t.Helper()
				claims := payload(t, tok.AccessToken)
				sealed, has := claims["upt"].(string)
				up, ok := upstreamSeen(t, h, tok.AccessToken)
				life := time.Until(tok.Expiry)
				if !keep {
					if has || ok || life < 50*time.Minute {
						t.Errorf("off: sealed claim %v, access token in context %v, life %v", has, ok, life)
					}
					return
				}
				if !has || strings.Count(sealed, ".") > 0 || strings.Contains(sealed, "eyJ") {
					t.Errorf("the provider's token is not sealed in the MCP token: %.40q", sealed)
				}
				if life > 2*time.Minute {
					t.Errorf("the MCP token lives %v, longer than the provider's (2m)", life)
				}
				if !ok || up == tok.AccessToken {
					t.Fatalf("the context holds no provider token (%v), or this server's own", ok)
				}
				if pc := payload(t, up); pc["iss"] != idp.Issuer() || pc["aud"] != "mcp-server" || pc["preferred_username"] != "alice" {
					t.Errorf("the token in the context is not the provider's for alice: %v", pc)
				}
			}
			check(tok)
			// A refresh (the provider's session renewed) carries a fresh one.
			tok.Expiry = time.Now().Add(-time.Second)
			refreshed, err := f.conf.TokenSource(context.Background(), tok).Token()
			if err != nil {
				t.Fatal(err)
			}
			if refreshed.AccessToken == tok.AccessToken {
				t.Fatal("not refreshed")
			}
			check(refreshed)
			for _, secret := range []string{"server-secret", testSecret, tok.AccessToken, refreshed.AccessToken} {
				if strings.Contains(h.logText(), secret) {
					t.Errorf("a secret or token was logged: %.12s...", secret)
				}
			}
		})
	}
}
