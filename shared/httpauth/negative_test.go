package httpauth_test

import (
	"strings"
	"testing"
	"time"

	"github.com/mcpfleet/mcpfleet/shared/httpauth"
	"github.com/mcpfleet/mcpfleet/shared/httpauth/idptest"
)

// TestNegativeCorpus sends every kind of bad credential to /mcp, /sse and
// /message, both to open a session and inside a session opened with a good
// token, and checks each is refused with 401 and the right challenge before
// any MCP message is processed: the tool handler never runs.
func TestNegativeCorpus(t *testing.T) {
	idp := idptest.New(t, idptest.Options{})
	const aud = "api://mcp"
	oidcCfg := httpauth.Config{Provider: "oidc", Issuer: idp.Issuer(), Audience: aud, HTTPClient: idp.HTTPClient()}
	hmacCfg := httpauth.Config{Provider: "hmac", JWTSecret: testSecret, Issuer: "https://issuer.example", Audience: "x"}
	now := time.Now()
	claims := func(mutate func(map[string]any)) map[string]any {
		c := idp.Claims(aud)
		mutate(c)
		return c
	}
	hclaims := func(mutate func(map[string]any)) map[string]any {
		c := map[string]any{"sub": "svc", "iss": "https://issuer.example", "aud": "x", "exp": now.Add(time.Hour).Unix()}
		mutate(c)
		return c
	}
	keep := func(map[string]any) {}
	type tc struct {
		name      string
		auth      string // the Authorization header ("" = none)
		presented bool   // a bearer token was presented: error="invalid_token"
		want      string // in error_description
	}
	oidcCases := []tc{
		{"no header", "", false, ""},
		{"wrong scheme", "Basic dXNlcjpwYXNz", false, ""},
		{"empty bearer", "Bearer ", true, "empty bearer token"},
		{"garbage", "Bearer garbage", true, "not a JWT"},
		{"bad characters", "Bearer a.b.c!", true, "malformed bearer token"},
		{"bad base64", "Bearer ###.###.###", true, "malformed"},
		{"expired", "Bearer " + idp.Sign(claims(func(c map[string]any) { c["exp"] = now.Add(-time.Hour).Unix() })), true, "expired"},
		{"no exp", "Bearer " + idp.Sign(claims(func(c map[string]any) { delete(c, "exp") })), true, "expired"},
		{"nbf in the future", "Bearer " + idp.Sign(claims(func(c map[string]any) { c["nbf"] = now.Add(time.Hour).Unix() })), true, "nbf"},
		{"wrong issuer", "Bearer " + idp.Sign(claims(func(c map[string]any) { c["iss"] = "https://evil.example" })), true, "different provider"},
		{"wrong audience", "Bearer " + idp.Sign(claims(func(c map[string]any) { c["aud"] = "api://other" })), true, "audience"},
		{"no audience", "Bearer " + idp.Sign(claims(func(c map[string]any) { delete(c, "aud") })), true, "audience"},
		{"alg none", "Bearer " + idp.NoneToken(claims(keep)), true, `'none'`},
		{"HS256 signed with the public key", "Bearer " + idp.HS256WithPublicKey(claims(keep)), true, `'HS256'`},
		{"tampered payload", "Bearer " + idptest.Tamper(idp.Sign(claims(keep)), claims(func(c map[string]any) { c["sub"] = "admin" })), true, "signature"},
		{"unknown kid", "Bearer " + idp.SignWith("unpublished", claims(keep)), true, "signature"},
		{"token of another issuer's key", "Bearer " + idptest.SignHS256(testSecret, claims(keep)), true, `'HS256'`},
	}
	hmacCases := []tc{
		{"no header", "", false, ""},
		{"garbage", "Bearer garbage", true, "not a JWT"},
		{"expired", "Bearer " + idptest.SignHS256(testSecret, hclaims(func(c map[string]any) { c["exp"] = now.Add(-time.Minute).Unix() })), true, "expired"},
		{"no exp", "Bearer " + idptest.SignHS256(testSecret, hclaims(func(c map[string]any) { delete(c, "exp") })), true, "no expiry"},
		{"nbf in the future", "Bearer " + idptest.SignHS256(testSecret, hclaims(func(c map[string]any) { c["nbf"] = now.Add(time.Hour).Unix() })), true, "not valid before"},
		{"wrong issuer", "Bearer " + idptest.SignHS256(testSecret, hclaims(func(c map[string]any) { c["iss"] = "https://evil.example" })), true, "issuer"},
		{"no issuer", "Bearer " + idptest.SignHS256(testSecret, hclaims(func(c map[string]any) { delete(c, "iss") })), true, "issuer"},
		{"wrong audience", "Bearer " + idptest.SignHS256(testSecret, hclaims(func(c map[string]any) { c["aud"] = "y" })), true, "audience"},
		{"wrong secret", "Bearer " + idptest.SignHS256(testSecret+"!", hclaims(keep)), true, "signature"},
		{"alg none", "Bearer " + idp.NoneToken(hclaims(keep)), true, `'none'`},
		{"RS256 token", "Bearer " + idp.Sign(hclaims(keep)), true, `'RS256'`},
		{"tampered payload", "Bearer " + idptest.Tamper(idptest.SignHS256(testSecret, hclaims(keep)), hclaims(func(c map[string]any) { c["sub"] = "admin" })), true, "signature"},
	}
	for _, suite := range []struct {
		name  string
		cfg   httpauth.Config
		good  string
		cases []tc
	}{
		{"oidc", oidcCfg, idp.Sign(claims(keep)), oidcCases},
		{"hmac", hmacCfg, idptest.SignHS256(testSecret, hclaims(keep)), hmacCases},
	} {
		t.Run(suite.name, func(t *testing.T) {
			h := newHarness(t, suite.cfg)
			sid := h.session(t, suite.good)
			for _, c := range suite.cases {
				t.Run(c.name, func(t *testing.T) {
					for _, body := range []string{initializeBody, listBody, callBody} {
						resp := h.rpc(t, c.auth, "", body)
						h.wantChallenge(t, resp, c.presented)
						if c.want != "" {
							if ch := resp.Header.Get("WWW-Authenticate"); !strings.Contains(ch, c.want) {
								t.Errorf("challenge %q does not mention %q", ch, c.want)
							}
						}
						// Inside a session opened with a good token.
						h.wantChallenge(t, h.rpc(t, c.auth, sid, body), c.presented)
					}
					for _, path := range []string{"/sse", "/message?sessionId=x"} {
						h.wantChallenge(t, h.get(t, c.auth, path), c.presented)
					}
				})
			}
			if n := h.calls.Load(); n != 0 {
				t.Fatalf("the tool handler ran %d times for refused requests", n)
			}
			// Control: the same session and a good token do reach the tool.
			h.call(t, suite.good, sid)
			if n := h.calls.Load(); n != 1 {
				t.Fatalf("tool handler ran %d times, want 1 for the good call", n)
			}
		})
	}
}
