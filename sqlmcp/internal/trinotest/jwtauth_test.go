package trinotest_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/trinodb/trino-go-client/trino"

	"github.com/mcpfleet/mcpfleet/shared/httpauth/idptest"
	"github.com/mcpfleet/mcpfleet/sqlmcp/internal/trinotest"
)

// bearerClient sends every request with Authorization: Bearer tok.
type bearer struct {
	tok  string
	next http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.tok)
	return b.next.RoundTrip(r)
}

func TestJWTAuthHostileTokens(t *testing.T) {
	idp := idptest.New(t, idptest.Options{})
	auth := &trinotest.JWTAuth{JWKSURL: idp.URL + "/jwks", Issuer: idp.Issuer(), Audience: "trino", PrincipalField: "preferred_username"}
	srv := trinotest.Start(t, trinotest.WithLargeTableRows(-1), trinotest.WithJWTAuth(auth))
	claims := func(edit func(map[string]any)) map[string]any {
		c := idp.Claims("trino")
		if edit != nil {
			edit(c)
		}
		return c
	}
	good := idp.Sign(claims(nil))
	ok := map[string]string{
		"RS256":          good,
		"ES256":          idp.SignWith(idptest.ECKeyID, claims(nil)),
		"aud array":      idp.Sign(claims(func(c map[string]any) { c["aud"] = []string{"other", "trino"} })),
		"no exp (Trino)": idp.Sign(claims(func(c map[string]any) { delete(c, "exp") })),
	}
	bad := map[string]string{
		"alg none":          idp.NoneToken(claims(nil)),
		"HS256 public key":  idp.HS256WithPublicKey(claims(nil)),
		"unpublished key":   idp.SignWith("unpublished", claims(nil)),
		"tampered":          idptest.Tamper(good, claims(func(c map[string]any) { c["preferred_username"] = "admin" })),
		"wrong issuer":      idp.Sign(claims(func(c map[string]any) { c["iss"] = "https://evil.example" })),
		"wrong audience":    idp.Sign(claims(func(c map[string]any) { c["aud"] = "mcp" })),
		"no audience":       idp.Sign(claims(func(c map[string]any) { delete(c, "aud") })),
		"expired":           idp.Sign(claims(func(c map[string]any) { c["exp"] = time.Now().Add(-time.Second).Unix() })),
		"exp as string":     idp.Sign(claims(func(c map[string]any) { c["exp"] = "9999999999" })),
		"not yet valid":     idp.Sign(claims(func(c map[string]any) { c["nbf"] = time.Now().Add(time.Hour).Unix() })),
		"no principal":      idp.Sign(claims(func(c map[string]any) { delete(c, "preferred_username") })),
		"principal number":  idp.Sign(claims(func(c map[string]any) { c["preferred_username"] = 42 })),
		"blank principal":   idp.Sign(claims(func(c map[string]any) { c["preferred_username"] = "  " })),
		"oversized":         idp.Sign(claims(func(c map[string]any) { c["pad"] = strings.Repeat("x", 9000) })),
		"alg swapped to ES": idp.SignHeaderJSON(idptest.RSAKeyID, `{"alg":"ES256","kid":"rsa-1"}`, claims(nil)),
		"crit header":       idp.SignHeaderJSON(idptest.RSAKeyID, `{"alg":"RS256","kid":"rsa-1","crit":["exp"]}`, claims(nil)),
		"two parts":         strings.Join(strings.Split(good, ".")[:2], "."),
		"garbage":           "not-a-jwt",
	}
	run := func(tok string) error {
		db := sql.OpenDB(connector(t, srv, tok))
		defer db.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		var s string
		return db.QueryRowContext(ctx, "SELECT current_user").Scan(&s)
	}
	for name, tok := range ok {
		if err := run(tok); err != nil {
			t.Errorf("%s refused: %v", name, err)
		}
	}
	for name, tok := range bad {
		srv.ResetRequests()
		err := run(tok)
		if err == nil {
			t.Errorf("%s accepted", name)
			continue
		}
		reqs := srv.Requests()
		if len(reqs) == 0 || reqs[0].Status != http.StatusUnauthorized {
			t.Errorf("%s: not answered 401", name)
		}
		if len(tok) > 20 && strings.Contains(err.Error(), tok[len(tok)-20:]) {
			t.Errorf("%s: the error quotes the token", name)
		}
	}
	if _, err := auth.Validate(good); err != nil {
		t.Error(err)
	}
	// Without credentials: Bearer challenge, no external authentication.
	resp, err := srv.HTTPClient().Post(srv.URL()+"/v1/statement", "text/plain", strings.NewReader("SELECT 1"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 401 || resp.Header.Get("WWW-Authenticate") != `Bearer realm="Trino"` {
		t.Errorf("no credentials: %d %q", resp.StatusCode, resp.Header.Get("WWW-Authenticate"))
	}
	// The key set is fetched again for a rotated key.
	kid := idp.Rotate()
	if err := run(idp.SignWith(kid, claims(nil))); err != nil {
		t.Errorf("rotated key: %v", err)
	}
}

func TestExternalAuthChallenge(t *testing.T) {
	idp := idptest.New(t, idptest.Options{})
	srv := trinotest.Start(t, trinotest.WithLargeTableRows(-1), trinotest.WithJWTAuth(&trinotest.JWTAuth{
		JWKSURL: idp.URL + "/jwks", Audience: "trino",
		External: func(user string) (string, error) {
			c := idp.Claims("trino")
			c["sub"] = user
			return idp.Sign(c), nil
		},
	}))
	hc := srv.HTTPClient()
	resp, err := hc.Post(srv.URL()+"/v1/statement", "text/plain", strings.NewReader("SELECT 1"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	h := resp.Header.Get("WWW-Authenticate")
	var redirect, token string
	for _, part := range strings.Split(strings.TrimPrefix(h, "Bearer "), ", ") {
		k, v, _ := strings.Cut(part, "=")
		v = strings.Trim(v, `"`)
		switch k {
		case "x_redirect_server":
			redirect = v
		case "x_token_server":
			token = v
		}
	}
	if resp.StatusCode != 401 || !strings.HasPrefix(redirect, srv.URL()+"/oauth2/token/initiate/") || !strings.HasPrefix(token, srv.URL()+"/oauth2/token/") {
		t.Fatalf("challenge %d %q", resp.StatusCode, h)
	}
	poll := func() map[string]string {
		r, err := hc.Get(token)
		if err != nil {
			t.Fatal(err)
		}
		defer r.Body.Close()
		var m map[string]string
		decodeJSON(t, r, &m)
		return m
	}
	if m := poll(); m["nextUri"] != token || m["token"] != "" {
		t.Fatalf("pending poll: %v", m)
	}
	// A browser step without a user fails the login, and says so.
	r, _ := hc.Get(redirect)
	r.Body.Close()
	if m := poll(); m["error"] == "" {
		t.Errorf("failed login: %v", m)
	}
	// Unknown ids: 404.
	r, _ = hc.Get(srv.URL() + "/oauth2/token/nope")
	r.Body.Close()
	if r.StatusCode != 404 {
		t.Errorf("unknown id: %d", r.StatusCode)
	}
}

func connector(t *testing.T, srv *trinotest.Server, tok string) *trinoConnector {
	t.Helper()
	c, err := trino.NewConnector(&trino.Config{
		ServerURI: srv.URL(), Catalog: trinotest.DefaultCatalog, Schema: trinotest.DefaultSchema,
		HTTPClient: &http.Client{Transport: bearer{tok: tok, next: srv.HTTPClient().Transport}},
	})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

type trinoConnector = trino.Connector

func decodeJSON(t *testing.T, r *http.Response, v any) {
	t.Helper()
	if err := json.NewDecoder(r.Body).Decode(v); err != nil {
		t.Fatal(err)
	}
}

func connectorURI(t *testing.T, srv *trinotest.Server, tok, uri string) *trino.Connector {
	t.Helper()
	c, err := trino.NewConnector(&trino.Config{
		ServerURI: uri, Catalog: trinotest.DefaultCatalog, Schema: trinotest.DefaultSchema,
		HTTPClient: &http.Client{Transport: bearer{tok: tok, next: srv.HTTPClient().Transport}},
	})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func anyString(v any) string {
	switch x := v.(type) {
	case nil:
		return "NULL"
	case string:
		return x
	case []byte:
		return string(x)
	}
	b, _ := json.Marshal(v)
	return string(b)
}
