package httpauth_test

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/mcpfleet/mcpfleet/shared/httpauth"
	"github.com/mcpfleet/mcpfleet/shared/httpauth/idptest"
)

const testSecret = "0123456789abcdef0123456789abcdef-test-secret"

// TestNativeProviders logs in with a token of each provider kind, through
// the real transport, and checks the identity the tool handler sees.
func TestNativeProviders(t *testing.T) {
	const tid = "72f988bf-86f1-41af-91ab-2d7cd011db47"
	tests := []struct {
		name  string
		idp   *idptest.Options // nil: no identity provider (hmac)
		cfg   func(idp *idptest.IdP) httpauth.Config
		token func(idp *idptest.IdP) string
		want  string // sub|username|email
	}{
		{
			name: "hmac",
			cfg: func(*idptest.IdP) httpauth.Config {
				return httpauth.Config{Provider: "hmac", JWTSecret: testSecret, Audience: "x"}
			},
			token: func(*idptest.IdP) string {
				return idptest.SignHS256(testSecret, map[string]any{
					"sub": "svc-1", "aud": "x", "exp": time.Now().Add(time.Hour).Unix(),
					"preferred_username": "robot", "email": "robot@example.com",
				})
			},
			want: "svc-1|robot|robot@example.com",
		},
		{
			name: "hmac with issuer",
			cfg: func(*idptest.IdP) httpauth.Config {
				return httpauth.Config{Provider: "hmac", JWTSecret: testSecret, Issuer: "https://issuer.example", Audience: "x"}
			},
			token: func(*idptest.IdP) string {
				return idptest.SignHS256(testSecret, map[string]any{
					"sub": "svc-1", "iss": "https://issuer.example", "aud": []string{"y", "x"}, "exp": time.Now().Add(time.Hour).Unix(),
				})
			},
			want: "svc-1||",
		},
		{
			name: "oidc RS256",
			idp:  &idptest.Options{},
			cfg: func(idp *idptest.IdP) httpauth.Config {
				return httpauth.Config{Provider: "oidc", Issuer: idp.Issuer(), Audience: "api://mcp", HTTPClient: idp.HTTPClient()}
			},
			token: func(idp *idptest.IdP) string { return idp.SignWith(idptest.RSAKeyID, idp.Claims("api://mcp")) },
			want:  "user-1|alice|alice@example.com",
		},
		{
			name: "oidc ES256",
			idp:  &idptest.Options{},
			cfg: func(idp *idptest.IdP) httpauth.Config {
				return httpauth.Config{Provider: "oidc", Issuer: idp.Issuer(), Audience: "api://mcp", HTTPClient: idp.HTTPClient()}
			},
			token: func(idp *idptest.IdP) string { return idp.SignWith(idptest.ECKeyID, idp.Claims("api://mcp")) },
			want:  "user-1|alice|alice@example.com",
		},
		{
			// Okta custom authorisation server: access tokens carry the
			// login in sub and no preferred_username.
			name: "okta",
			idp:  &idptest.Options{Issuer: "https://dev-123.okta.com/oauth2/default"},
			cfg: func(idp *idptest.IdP) httpauth.Config {
				return httpauth.Config{Provider: "okta", Issuer: idp.Issuer(), Audience: "api://default", HTTPClient: idp.HTTPClient()}
			},
			token: func(idp *idptest.IdP) string {
				c := idp.Claims("api://default")
				c["sub"], c["uid"], c["cid"] = "alice@example.com", "00u1", "0oa1"
				delete(c, "preferred_username")
				delete(c, "email")
				return idp.Sign(c)
			},
			want: "alice@example.com|alice@example.com|",
		},
		{
			// Google ID tokens: aud is the client id, and iss is sometimes
			// "accounts.google.com" without the scheme.
			name: "google",
			idp:  &idptest.Options{Issuer: "https://accounts.google.com"},
			cfg: func(idp *idptest.IdP) httpauth.Config {
				return httpauth.Config{Provider: "google", ClientID: "123.apps.googleusercontent.com", HTTPClient: idp.HTTPClient()}
			},
			token: func(idp *idptest.IdP) string {
				c := idp.Claims("123.apps.googleusercontent.com")
				c["iss"] = "accounts.google.com"
				c["sub"] = "1099"
				delete(c, "preferred_username")
				return idp.Sign(c)
			},
			want: "1099||alice@example.com",
		},
		{
			// Azure multi-tenant: discovery publishes the issuer template
			// https://login.microsoftonline.com/{tenantid}/v2.0.
			name: "azure common v2",
			idp: &idptest.Options{Issuer: "https://login.microsoftonline.com/common/v2.0",
				DiscoveryIssuer: "https://login.microsoftonline.com/{tenantid}/v2.0"},
			cfg: func(idp *idptest.IdP) httpauth.Config {
				return httpauth.Config{Provider: "azure", Issuer: idp.Issuer(), Audience: "11111111-2222-3333-4444-555555555555", HTTPClient: idp.HTTPClient()}
			},
			token: func(idp *idptest.IdP) string {
				c := idp.Claims("api://11111111-2222-3333-4444-555555555555")
				c["iss"] = "https://login.microsoftonline.com/" + tid + "/v2.0"
				c["tid"] = tid
				return idp.Sign(c)
			},
			want: "user-1|alice|alice@example.com",
		},
		{
			// Azure tenant given by domain name: discovery publishes the
			// tenant's GUID issuer.
			name: "azure tenant by name",
			idp: &idptest.Options{Issuer: "https://login.microsoftonline.com/contoso.onmicrosoft.com/v2.0",
				DiscoveryIssuer: "https://login.microsoftonline.com/" + tid + "/v2.0"},
			cfg: func(idp *idptest.IdP) httpauth.Config {
				return httpauth.Config{Provider: "azure", Issuer: idp.Issuer(), Audience: "app", HTTPClient: idp.HTTPClient()}
			},
			token: func(idp *idptest.IdP) string {
				c := idp.Claims("app")
				c["iss"] = "https://login.microsoftonline.com/" + tid + "/v2.0"
				c["tid"] = tid
				return idp.Sign(c)
			},
			want: "user-1|alice|alice@example.com",
		},
		{
			// Azure v1 access token (sts.windows.net issuer, upn, bare app id).
			name: "azure v1 token",
			idp:  &idptest.Options{Issuer: "https://login.microsoftonline.com/" + tid + "/v2.0"},
			cfg: func(idp *idptest.IdP) httpauth.Config {
				return httpauth.Config{Provider: "azure", Issuer: idp.Issuer(), Audience: "api://11111111-2222-3333-4444-555555555555", HTTPClient: idp.HTTPClient()}
			},
			token: func(idp *idptest.IdP) string {
				c := idp.Claims("11111111-2222-3333-4444-555555555555")
				c["iss"] = "https://sts.windows.net/" + tid + "/"
				c["tid"] = tid
				c["upn"] = "alice@contoso.com"
				delete(c, "preferred_username")
				return idp.Sign(c)
			},
			want: "user-1|alice@contoso.com|alice@example.com",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var idp *idptest.IdP
			if tt.idp != nil {
				idp = idptest.New(t, *tt.idp)
			}
			h := newHarness(t, tt.cfg(idp))
			token := tt.token(idp)
			// Unauthenticated first: the challenge carries no error code.
			h.wantChallenge(t, h.rpc(t, "", "", initializeBody), false)
			sid := h.session(t, token)
			if got := h.call(t, token, sid); got != tt.want {
				t.Errorf("identity in the tool handler = %q, want %q", got, tt.want)
			}
			if strings.Contains(h.logText(), token) {
				t.Error("the token was logged")
			}
		})
	}
}

// TestAzureIssuerMustMatchTenant: with a multi-tenant issuer, a token's iss
// must be the template filled with the token's own tid.
func TestAzureIssuerMustMatchTenant(t *testing.T) {
	idp := idptest.New(t, idptest.Options{Issuer: "https://login.microsoftonline.com/organizations/v2.0",
		DiscoveryIssuer: "https://login.microsoftonline.com/{tenantid}/v2.0"})
	h := newHarness(t, httpauth.Config{Provider: "azure", Issuer: idp.Issuer(), Audience: "app", HTTPClient: idp.HTTPClient()})
	for name, mutate := range map[string]func(map[string]any){
		"tid differs from iss": func(c map[string]any) {
			c["iss"] = "https://login.microsoftonline.com/tenant-a/v2.0"
			c["tid"] = "tenant-b"
		},
		"no tid": func(c map[string]any) { c["iss"] = "https://login.microsoftonline.com/tenant-a/v2.0" },
		"foreign issuer": func(c map[string]any) {
			c["iss"] = "https://evil.example/tenant-a/v2.0"
			c["tid"] = "tenant-a"
		},
	} {
		t.Run(name, func(t *testing.T) {
			c := idp.Claims("app")
			mutate(c)
			h.wantChallenge(t, h.rpc(t, "Bearer "+idp.Sign(c), "", initializeBody), true)
		})
	}
	if n := h.calls.Load(); n != 0 {
		t.Fatalf("tool handler ran %d times", n)
	}
}

// TestJWKSUnavailable: discovery succeeded but the JWKS cannot be fetched
// for a new key: 503, not 401.
func TestJWKSUnavailable(t *testing.T) {
	idp := idptest.New(t, idptest.Options{})
	h := newHarness(t, httpauth.Config{Provider: "oidc", Issuer: idp.Issuer(), Audience: "api://mcp", HTTPClient: idp.HTTPClient()})
	token := idp.Sign(idp.Claims("api://mcp"))
	idp.Server.Close()
	resp := h.rpc(t, "Bearer "+token, "", initializeBody)
	if resp.StatusCode != http.StatusServiceUnavailable {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("status %d (%s), want 503", resp.StatusCode, b)
	}
}

// TestGoogleOpaqueAccessToken explains why a Google access token is refused.
func TestGoogleOpaqueAccessToken(t *testing.T) {
	idp := idptest.New(t, idptest.Options{Issuer: "https://accounts.google.com"})
	h := newHarness(t, httpauth.Config{Provider: "google", ClientID: "123.apps.googleusercontent.com", HTTPClient: idp.HTTPClient()})
	resp := h.rpc(t, "Bearer ya29.a0AfH6SMBopaque", "", initializeBody)
	h.wantChallenge(t, resp, true)
	if ch := resp.Header.Get("WWW-Authenticate"); !strings.Contains(ch, "send the Google ID token") {
		t.Errorf("challenge %q does not explain that Google access tokens are opaque", ch)
	}
}

// TestKeyRotation: a token signed with a key published after the JWKS was
// cached is accepted (go-oidc refetches on an unknown kid), and a token of
// the retired key is refused once the JWKS no longer lists it.
func TestKeyRotation(t *testing.T) {
	idp := idptest.New(t, idptest.Options{})
	h := newHarness(t, httpauth.Config{Provider: "oidc", Issuer: idp.Issuer(), Audience: "api://mcp", HTTPClient: idp.HTTPClient()})
	ctx := context.Background()
	claims := func(sub string) map[string]any {
		c := idp.Claims("api://mcp")
		c["sub"] = sub
		return c
	}
	if _, err := h.layer.Verify(ctx, idp.Sign(claims("before"))); err != nil {
		t.Fatalf("token of the first key: %v", err)
	}
	// go-oidc stores fetched keys and clears its in-flight fetch just after
	// answering from it; a rotation within that instant sees the old set.
	time.Sleep(50 * time.Millisecond)
	fetches := idp.JWKSFetches()
	kid := idp.Rotate()
	id, err := h.layer.Verify(ctx, idp.SignWith(kid, claims("after")))
	if err != nil {
		t.Fatalf("token of the rotated key %s: %v", kid, err)
	}
	if id.Subject != "after" {
		t.Errorf("subject %q", id.Subject)
	}
	if idp.JWKSFetches() <= fetches {
		t.Error("the JWKS was not refetched for the new key")
	}
	time.Sleep(50 * time.Millisecond) // go-oidc stores the refetched keys just after answering
	if _, err := h.layer.Verify(ctx, idp.SignWith(idptest.ECKeyID, claims("ec"))); err != nil {
		t.Fatalf("token of the ES256 key after rotation: %v", err)
	}
	if _, err := h.layer.Verify(ctx, idp.SignWith(idptest.RSAKeyID, claims("retired"))); err == nil {
		t.Fatal("token of the retired key accepted")
	}
}

// TestProviderUnavailable: when discovery fails the server still starts,
// answers 503 (not 401: the token is not at fault) and recovers later.
func TestProviderUnavailable(t *testing.T) {
	idp := idptest.New(t, idptest.Options{})
	idp.Server.Close()
	h := newHarness(t, httpauth.Config{Provider: "oidc", Issuer: idp.Issuer(), Audience: "api://mcp", HTTPClient: idp.HTTPClient()})
	resp := h.rpc(t, "Bearer "+idp.Sign(idp.Claims("api://mcp")), "", initializeBody)
	if resp.StatusCode != http.StatusServiceUnavailable {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("status %d (%s), want 503", resp.StatusCode, b)
	}
	if resp.Header.Get("Retry-After") == "" {
		t.Error("no Retry-After")
	}
	if n := h.calls.Load(); n != 0 {
		t.Fatalf("tool handler ran %d times", n)
	}
}

// TestAzureForeignDiscoveryIssuer: Azure's published issuer is trusted only
// on the configured host; another host fails discovery.
func TestAzureForeignDiscoveryIssuer(t *testing.T) {
	idp := idptest.New(t, idptest.Options{Issuer: "https://login.microsoftonline.com/contoso.onmicrosoft.com/v2.0",
		DiscoveryIssuer: "https://evil.example/contoso/v2.0"})
	h := newHarness(t, httpauth.Config{Provider: "azure", Issuer: idp.Issuer(), Audience: "app", HTTPClient: idp.HTTPClient()})
	c := idp.Claims("app")
	c["iss"] = "https://evil.example/contoso/v2.0"
	resp := h.rpc(t, "Bearer "+idp.Sign(c), "", initializeBody)
	if resp.StatusCode != http.StatusServiceUnavailable {
		t.Fatalf("status %d, want 503 (discovery refused)", resp.StatusCode)
	}
	if !strings.Contains(h.logText(), "discovery failed") {
		t.Errorf("discovery failure not logged:\n%s", h.logText())
	}
}
