package httpauth_test

import (
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/mcpfleet/mcpfleet/shared/httpauth"
	"github.com/mcpfleet/mcpfleet/shared/httpauth/idptest"
)

// TestRequiredIdentity: with RequiredIdentity set (sqlmcp impersonation), a
// token lacking that field is refused with 401 invalid_token before any
// MCP message, on both verifier kinds; a token carrying it passes.
func TestRequiredIdentity(t *testing.T) {
	idp := idptest.New(t, idptest.Options{})
	const aud = "api://mcp"
	type variant struct {
		name   string
		mutate func(map[string]any)
	}
	// Ways a token can lack each field.
	lacking := map[string][]variant{
		httpauth.IdentityUsername: {
			{"absent", func(c map[string]any) { delete(c, "preferred_username") }},
			{"empty", func(c map[string]any) { c["preferred_username"] = "" }},
			{"blank", func(c map[string]any) { c["preferred_username"] = " \t" }},
			{"number", func(c map[string]any) { c["preferred_username"] = 7 }},
			{"null", func(c map[string]any) { c["preferred_username"] = nil }},
			{"other claim only", func(c map[string]any) { delete(c, "preferred_username"); c["username"] = "alice" }},
		},
		httpauth.IdentityEmail: {
			{"absent", func(c map[string]any) { delete(c, "email") }},
			{"empty", func(c map[string]any) { c["email"] = "" }},
			{"blank", func(c map[string]any) { c["email"] = "  " }},
			{"unverified", func(c map[string]any) { c["email_verified"] = false }},
			{"array", func(c map[string]any) { c["email"] = []string{"alice@example.com"} }},
			{"other claim only", func(c map[string]any) { delete(c, "email"); c["mail"] = "alice@example.com" }},
		},
		httpauth.IdentitySubject: {
			{"absent", func(c map[string]any) { delete(c, "sub") }},
			{"empty", func(c map[string]any) { c["sub"] = "" }},
		},
	}
	hclaims := func() map[string]any {
		return map[string]any{"sub": "svc", "aud": "x", "exp": time.Now().Add(time.Hour).Unix(),
			"preferred_username": "robot", "email": "robot@example.com"}
	}
	for field, variants := range lacking {
		t.Run(field, func(t *testing.T) {
			for _, suite := range []struct {
				name  string
				cfg   httpauth.Config
				token func(mutate func(map[string]any)) string
			}{
				{"oidc", httpauth.Config{Provider: "oidc", Issuer: idp.Issuer(), Audience: aud, HTTPClient: idp.HTTPClient(), RequiredIdentity: field},
					func(m func(map[string]any)) string { c := idp.Claims(aud); m(c); return idp.Sign(c) }},
				{"hmac", httpauth.Config{Provider: "hmac", JWTSecret: testSecret, Audience: "x", RequiredIdentity: field},
					func(m func(map[string]any)) string { c := hclaims(); m(c); return idptest.SignHS256(testSecret, c) }},
			} {
				t.Run(suite.name, func(t *testing.T) {
					h := newHarness(t, suite.cfg)
					for _, v := range variants {
						resp := h.rpc(t, "Bearer "+suite.token(v.mutate), "", initializeBody)
						h.wantChallenge(t, resp, true)
						if ch := resp.Header.Get("WWW-Authenticate"); !strings.Contains(ch, "sub") && !strings.Contains(ch, field) {
							t.Errorf("%s: challenge %q names neither %s nor sub", v.name, ch, field)
						}
					}
					good := suite.token(func(map[string]any) {})
					h.call(t, good, h.session(t, good))
					if n := h.calls.Load(); n != 1 {
						t.Errorf("tool ran %d times, want 1 (the good token only)", n)
					}
				})
			}
		})
	}
	// A bad field name is a configuration error.
	if _, err := httpauth.New(t.Context(), httpauth.Config{Enabled: true, Provider: "hmac", JWTSecret: testSecret, BaseURL: "http://127.0.0.1:1", RequiredIdentity: "name"}, nil); err == nil {
		t.Error("RequiredIdentity=name accepted")
	}
}

// internals are traces of process internals that must never reach a
// client or a log line: monotonic clock readings, goroutine dumps, file
// positions, Go type names, pointers, fmt's bad-verb marks and library
// package prefixes.
var internals = regexp.MustCompile(`m=[+-]\d|goroutine \d|panic|\.go:\d|\*?\b(errors|fmt|json|jose|oidc|http|url|strconv|time|rsa|ecdsa)\.[A-Za-z_]+[Ee]rror|errorString|0x[0-9a-f]{6,}|%!|go-jose|\boidc:|runtime\.`)

// TestErrorsCarryNoInternals sends every kind of rejected token to both
// verifier kinds and scans the challenge, the body and the layer's log for
// process internals (issue 12 item 11: a time error printed Go's monotonic
// clock reading). Times are RFC 3339 UTC.
func TestErrorsCarryNoInternals(t *testing.T) {
	if internals.MatchString("token is not valid before 2026-11-24T17:51:50Z") {
		t.Fatal("the scanner flags a clean message")
	}
	for _, dirty := range []string{"current time 2026-11-24 16:51:50.1 +0000 UTC m=+0.0123 before", "*errors.errorString", "goroutine 7 [running]", "0xc000123456", "go-jose/go-jose: unsupported critical header", "oidc: malformed jwt"} {
		if !internals.MatchString(dirty) {
			t.Fatalf("the scanner misses %q", dirty)
		}
	}
	idp := idptest.New(t, idptest.Options{})
	const aud = "api://mcp"
	now := time.Now()
	times := []claimVariant{
		{"nbf in an hour", func(c map[string]any) { c["nbf"] = float64(now.Add(time.Hour).Unix()) + 0.25 }},
		{"nbf far future", func(c map[string]any) { c["nbf"] = 4e10 }},
		{"expired", func(c map[string]any) { c["exp"] = float64(now.Add(-time.Hour).Unix()) + 0.5 }},
		{"exp zero", func(c map[string]any) { c["exp"] = 0 }},
		{"exp negative", func(c map[string]any) { c["exp"] = -1e12 }},
		{"exp huge", func(c map[string]any) { c["exp"] = 1e300 }},
		{"exp string", func(c map[string]any) { c["exp"] = "tomorrow" }},
		{"nbf string", func(c map[string]any) { c["nbf"] = "later" }},
		{"iat string", func(c map[string]any) { c["iat"] = "now" }},
		{"iss number", func(c map[string]any) { c["iss"] = 1 }},
		{"aud number", func(c map[string]any) { c["aud"] = 1 }},
		{"wrong issuer", func(c map[string]any) { c["iss"] = "https://evil.example" }},
		{"wrong audience", func(c map[string]any) { c["aud"] = "other" }},
	}
	times = append(times, subjectVariants()...)
	type token struct{ name, raw string }
	var oidcTokens, hmacTokens []token
	for _, v := range times {
		c := idp.Claims(aud)
		v.mutate(c)
		oidcTokens = append(oidcTokens, token{v.name, idp.Sign(c)})
		hc := map[string]any{"sub": "svc", "iss": "https://issuer.example", "aud": "x", "exp": now.Add(time.Hour).Unix()}
		v.mutate(hc)
		hmacTokens = append(hmacTokens, token{v.name, idptest.SignHS256(testSecret, hc)})
	}
	for _, v := range critHeaders() {
		oidcTokens = append(oidcTokens, token{v.name, idp.SignHeaderJSON(idptest.RSAKeyID, `{"alg":"RS256","kid":"`+idptest.RSAKeyID+`",`+v.fields+`}`, idp.Claims(aud))})
		hmacTokens = append(hmacTokens, token{v.name, idptest.SignHS256HeaderJSON(testSecret, `{"alg":"HS256",`+v.fields+`}`, map[string]any{"sub": "s", "exp": now.Add(time.Hour).Unix()})})
	}
	good := idp.Sign(idp.Claims(aud))
	shapes := []token{
		{"unknown kid", idp.SignWith("unpublished", idp.Claims(aud))},
		{"tampered", idptest.Tamper(good, map[string]any{"sub": "admin"})},
		{"signature cut", good[:len(good)-10]},
		{"signature of another token", good[:strings.LastIndex(good, ".")] + idp.Sign(idp.Claims("x"))[strings.LastIndex(idp.Sign(idp.Claims("x")), "."):]},
		{"header not an object", "WyJhIl0.e30.c2ln"},
		{"header null", "bnVsbA.e30.c2ln"},
		{"claims not an object", "eyJhbGciOiJSUzI1NiJ9.WzFd.c2ln"},
		{"alg mismatch with key", idp.SignHeaderJSON(idptest.RSAKeyID, `{"alg":"ES256","kid":"`+idptest.RSAKeyID+`"}`, idp.Claims(aud))},
		{"four parts", good + ".x"},
		{"alg none", idp.NoneToken(idp.Claims(aud))},
	}
	oidcTokens = append(oidcTokens, shapes...)
	hmacTokens = append(hmacTokens, shapes...)
	n := 0
	for _, suite := range []struct {
		name   string
		cfg    httpauth.Config
		tokens []token
	}{
		{"oidc", httpauth.Config{Provider: "oidc", Issuer: idp.Issuer(), Audience: aud, HTTPClient: idp.HTTPClient()}, oidcTokens},
		{"hmac", httpauth.Config{Provider: "hmac", JWTSecret: testSecret, Issuer: "https://issuer.example", Audience: "x"}, hmacTokens},
	} {
		t.Run(suite.name, func(t *testing.T) {
			h := newHarness(t, suite.cfg)
			for _, tok := range suite.tokens {
				resp := h.rpc(t, "Bearer "+tok.raw, "", initializeBody)
				body, _ := io.ReadAll(resp.Body)
				if resp.StatusCode != http.StatusUnauthorized {
					t.Errorf("%s: HTTP %d, want 401", tok.name, resp.StatusCode)
				}
				n++
				for what, text := range map[string]string{"challenge": resp.Header.Get("WWW-Authenticate"), "body": string(body)} {
					if m := internals.FindString(text); m != "" {
						t.Errorf("%s: %s carries %q: %s", tok.name, what, m, text)
					}
				}
			}
			if m := internals.FindString(h.logText()); m != "" {
				t.Errorf("log carries %q:\n%s", m, h.logText())
			}
			if c := h.calls.Load(); c != 0 {
				t.Errorf("tool ran %d times for refused tokens", c)
			}
		})
	}
	t.Logf("%d rejected tokens scanned", n)
}
