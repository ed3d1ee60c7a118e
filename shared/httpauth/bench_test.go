package httpauth

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/mcpfleet/mcpfleet/shared/httpauth/idptest"
)

// BenchmarkVerify measures token validation, the per-request hot path: with
// the cache (the steady state of a client reusing its token) and without.
func BenchmarkVerify(b *testing.B) {
	const secret = "0123456789abcdef0123456789abcdef"
	idp := idptest.New(b, idptest.Options{})
	hm := func() *Layer {
		l, err := New(context.Background(), Config{Enabled: true, Provider: ProviderHMAC, JWTSecret: secret, Audience: "x", BaseURL: "http://127.0.0.1:1"}, nil)
		if err != nil {
			b.Fatal(err)
		}
		return l
	}
	oi := func() *Layer {
		l, err := New(context.Background(), Config{Enabled: true, Provider: ProviderOIDC, Issuer: idp.Issuer(), Audience: "x",
			BaseURL: "http://127.0.0.1:1", HTTPClient: idp.HTTPClient()}, nil)
		if err != nil {
			b.Fatal(err)
		}
		return l
	}
	hmacTok := idptest.SignHS256(secret, map[string]any{"sub": "s", "aud": "x", "exp": time.Now().Add(time.Hour).Unix()})
	rsTok := idp.SignWith(idptest.RSAKeyID, idp.Claims("x"))
	esTok := idp.SignWith(idptest.ECKeyID, idp.Claims("x"))
	for _, bc := range []struct {
		name   string
		layer  *Layer
		token  string
		cached bool
	}{
		{"hmac/cached", hm(), hmacTok, true},
		{"hmac/uncached", hm(), hmacTok, false},
		{"RS256/cached", oi(), rsTok, true},
		{"RS256/uncached", oi(), rsTok, false},
		{"ES256/cached", oi(), esTok, true},
		{"ES256/uncached", oi(), esTok, false},
	} {
		b.Run(bc.name, func(b *testing.B) {
			if !bc.cached {
				bc.layer.cache = newTokenCache(0)
			}
			ctx := context.Background()
			if _, err := bc.layer.Verify(ctx, bc.token); err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				if _, err := bc.layer.Verify(ctx, bc.token); err != nil {
					b.Fatal(fmt.Sprint(err))
				}
			}
		})
	}
}
