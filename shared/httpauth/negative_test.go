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
		{"nbf in the future", "Bearer " + idp.Sign(claims(func(c map[string]any) { c["nbf"] = now.Add(time.Hour).Unix() })), true, "not valid before"},
		{"wrong issuer", "Bearer " + idp.Sign(claims(func(c map[string]any) { c["iss"] = "https://evil.example" })), true, "issuer"},
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
	// Issue 12 item 8: a token must name its subject, and a JWS with
	// critical extensions is refused (RFC 7515 §4.1.11).
	for _, v := range subjectVariants() {
		oidcCases = append(oidcCases, tc{"sub: " + v.name, "Bearer " + idp.Sign(claims(v.mutate)), true, "sub"})
		hmacCases = append(hmacCases, tc{"sub: " + v.name, "Bearer " + idptest.SignHS256(testSecret, hclaims(v.mutate)), true, "sub"})
	}
	for _, v := range critHeaders() {
		rs := `{"alg":"RS256","typ":"JWT","kid":"` + idptest.RSAKeyID + `",` + v.fields + `}`
		es := `{"alg":"ES256","typ":"JWT","kid":"` + idptest.ECKeyID + `",` + v.fields + `}`
		hs := `{"alg":"HS256","typ":"JWT",` + v.fields + `}`
		oidcCases = append(oidcCases,
			tc{"RS256 " + v.name, "Bearer " + idp.SignHeaderJSON(idptest.RSAKeyID, rs, claims(keep)), true, v.want},
			tc{"ES256 " + v.name, "Bearer " + idp.SignHeaderJSON(idptest.ECKeyID, es, claims(keep)), true, v.want})
		hmacCases = append(hmacCases, tc{v.name, "Bearer " + idptest.SignHS256HeaderJSON(testSecret, hs, hclaims(keep)), true, v.want})
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

type claimVariant struct {
	name   string
	mutate func(map[string]any)
}

// subjectVariants are claim sets whose sub names nobody.
func subjectVariants() []claimVariant {
	set := func(v any) func(map[string]any) { return func(c map[string]any) { c["sub"] = v } }
	return []claimVariant{
		{"absent", func(c map[string]any) { delete(c, "sub") }},
		{"empty", set("")},
		{"blank", set("   ")},
		{"tab and newline", set("\t\n")},
		{"null", set(nil)},
		{"number", set(42)},
		{"zero", set(0)},
		{"true", set(true)},
		{"array", set([]string{"alice"})},
		{"object", set(map[string]any{"id": "alice"})},
		{"only in another case", func(c map[string]any) { delete(c, "sub"); c["Sub"] = "alice" }},
		{"only as subject", func(c map[string]any) { delete(c, "sub"); c["subject"] = "alice" }},
	}
}

type headerVariant struct{ name, fields, want string }

// critHeaders are JOSE header members (after alg, typ, kid) that mark
// extensions critical, in the spellings and shapes a verifier must refuse.
func critHeaders() []headerVariant {
	const want = "crit"
	return []headerVariant{
		{"crit naming an unknown extension", `"crit":["http://example.com/ext"],"http://example.com/ext":true`, want},
		{"crit naming a registered claim", `"crit":["exp"],"exp":1`, want},
		{"crit b64 false (RFC 7797, go-jose understands it)", `"crit":["b64"],"b64":false`, want},
		{"crit b64 true", `"crit":["b64"],"b64":true`, want},
		{"crit empty list", `"crit":[]`, want},
		{"crit null", `"crit":null`, want},
		{"crit string", `"crit":"exp"`, want},
		{"crit object", `"crit":{"exp":true}`, want},
		{"crit naming a missing member", `"crit":["nope"]`, want},
		{"crit with an escaped name", `"\u0063rit":["nope"]`, want},
		{"crit twice, the last empty", `"crit":["nope"],"crit":[]`, want},
		{"crit twice, the last null", `"crit":["nope"],"crit":null`, want},
	}
}
