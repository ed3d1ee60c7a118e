package e2e

import (
	"net/http"
	"strings"
	"time"

	"github.com/mcpfleet/mcpfleet/shared/httpauth/idptest"
)

// OAuthToken returns a bearer token that a server started with OAuthEnv
// accepts for subject, valid for an hour.
func OAuthToken(subject string) string {
	var secret, aud string
	for _, kv := range OAuthEnv {
		k, v, _ := strings.Cut(kv, "=")
		switch k {
		case "JWT_SECRET":
			secret = v
		case "OIDC_AUDIENCE":
			aud = v
		}
	}
	return idptest.SignHS256(secret, map[string]any{"sub": subject, "aud": aud, "exp": time.Now().Add(time.Hour).Unix()})
}

// Bearer returns an HTTP client that sends token as its Authorization on
// every request (pass it to Connect).
func Bearer(token string) *http.Client {
	return &http.Client{Transport: bearer{token}}
}

type bearer struct{ token string }

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return http.DefaultTransport.RoundTrip(r)
}
