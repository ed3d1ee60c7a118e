package trinoauth_test

// These tests drive the real protocols end to end: the engine client
// (trino-go-client under sqlmcp's engine package) against the trinotest
// coordinator validating JWTs like Trino's JWT authenticator and enforcing
// an access-control file, with tokens exchanged (RFC 8693) at the idptest
// provider. idptest is the one fake: a real identity provider cannot forge
// refusals and short lifetimes on demand in a test.

import (
	"context"
	"database/sql"
	"errors"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/trinodb/trino-go-client/trino"

	"github.com/mcpfleet/mcpfleet/shared/httpauth/idptest"
	"github.com/mcpfleet/mcpfleet/shared/syncbuf"
	"github.com/mcpfleet/mcpfleet/sqlmcp/internal/engine"
	"github.com/mcpfleet/mcpfleet/sqlmcp/internal/trinoauth"
	"github.com/mcpfleet/mcpfleet/sqlmcp/internal/trinotest"
)

type fixture struct {
	idp    *idptest.IdP
	srv    *trinotest.Server
	ex     *trinoauth.Exchanger
	client *engine.Client
}

func setup(t *testing.T) *fixture {
	t.Helper()
	id := trinotest.StartIdentity(t, idptest.Options{})
	idp, srv := id.IdP, id.Engine
	ex := &trinoauth.Exchanger{URL: idp.URL + "/token", ClientID: trinotest.ExchangeClient, ClientSecret: trinotest.ExchangeSecret,
		Audience: trinotest.TrinoAudience, HTTPClient: idp.HTTPClient()}
	return &fixture{idp: idp, srv: srv, ex: ex, client: newClient(t, srv, ex)}
}

func newClient(t *testing.T, srv *trinotest.Server, src trinoauth.TokenSource) *engine.Client {
	t.Helper()
	c, err := engine.New(engine.Config{
		Host: srv.Host(), Port: srv.Port(), Scheme: "https", Catalog: "sales", Schema: "public",
		RetryTimeout: time.Second,
		Transport:    &trinoauth.Transport{Base: srv.HTTPClient().Transport, Source: src, ServiceUser: engine.DefaultUser},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// mcpToken is what the MCP server validated: a token for the MCP audience.
func (f *fixture) mcpToken(user string) string {
	return (&trinotest.Identity{IdP: f.idp, Engine: f.srv}).MCPToken(user)
}

func rowsOf(t *testing.T, res *engine.Result) string {
	t.Helper()
	var b strings.Builder
	for _, r := range res.Rows {
		for i, v := range r {
			if i > 0 {
				b.WriteString("|")
			}
			if v == nil {
				b.WriteString("NULL")
			} else {
				b.WriteString(strings.TrimSpace(strings.Trim(strings.ReplaceAll(toString(v), "\n", " "), `"`)))
			}
		}
		b.WriteString("\n")
	}
	return b.String()
}

func toString(v any) string {
	switch x := v.(type) {
	case string:
		return x
	default:
		b, _ := jsonMarshal(x)
		return string(b)
	}
}

func TestSameQueryDifferentPeople(t *testing.T) {
	f := setup(t)
	alice, bob := f.mcpToken("alice"), f.mcpToken("bob")
	q := engine.Query{SQL: "SELECT name, email FROM customers ORDER BY id"}

	res, err := f.client.Query(trinoauth.WithSubjectToken(context.Background(), alice), q)
	if err != nil {
		t.Fatalf("alice: %v", err)
	}
	if got, want := rowsOf(t, res), "Alice Martin|alice@example.com\nBob Stone|bob@example.com\nChloé Dubois|NULL\nDan O'Hara|dan@example.com\n山田 太郎|taro@example.jp\n"; got != want {
		t.Errorf("alice sees\n%s\nwant\n%s", got, want)
	}
	if p := f.srv.LastQuery(t, q.SQL).Principal; p != "alice" {
		t.Errorf("the engine ran alice's query as %q", p)
	}

	bctx := trinoauth.WithSubjectToken(context.Background(), bob)
	res, err = f.client.Query(bctx, q)
	if err != nil {
		t.Fatalf("bob: %v", err)
	}
	// Row filter (FR, or his own row through current_user), mask on email.
	if got, want := rowsOf(t, res), "Alice Martin|***\nChloé Dubois|NULL\n"; got != want {
		t.Errorf("bob sees\n%s\nwant\n%s", got, want)
	}
	// Joins and aliases keep the filter and mask.
	res, err = f.client.Query(bctx, engine.Query{SQL: "SELECT c.name, c.email FROM customers c JOIN customers d ON c.id = d.id ORDER BY c.id"})
	if err != nil || rowsOf(t, res) != "Alice Martin|***\nChloé Dubois|NULL\n" {
		t.Errorf("bob's aliased join: %v %v", err, res)
	}
	for _, denied := range []string{
		"SELECT count(*) FROM orders",                    // no grant
		"SELECT name, balance FROM customers",            // denied column
		"SELECT * FROM customers",                        // * includes it
		"SELECT count(*) FROM warehouse.inventory.stock", // catalog none
		"SELECT 1 FROM customers, orders",                // second relation of a FROM list
	} {
		_, err := f.client.Query(bctx, engine.Query{SQL: denied})
		if err == nil || !strings.Contains(err.Error(), "Access Denied") {
			t.Errorf("bob ran %q: %v", denied, err)
		}
	}
	if _, err := f.client.Query(trinoauth.WithSubjectToken(context.Background(), alice), engine.Query{SQL: "SELECT count(*) FROM orders"}); err != nil {
		t.Errorf("alice may read orders: %v", err)
	}

	// The MCP tokens never reached the engine: only exchanged tokens did.
	for _, r := range f.srv.Requests() {
		for name, vals := range r.Header {
			for _, v := range vals {
				if strings.Contains(v, alice) || strings.Contains(v, bob) {
					t.Fatalf("the MCP access token was sent to the engine in %s of %s %s", name, r.Method, r.Path)
				}
			}
		}
		if a := r.Header.Get("Authorization"); r.Path != "/v1/info" && !strings.HasPrefix(a, "Bearer ") {
			t.Errorf("%s %s without a Bearer token", r.Method, r.Path)
		}
	}
	reqs := f.idp.ExchangeRequests()
	if len(reqs) != 2 || reqs[0].Audience != trinotest.TrinoAudience || reqs[0].SubjectTokenType != trinoauth.TokenTypeAccessToken {
		t.Errorf("exchanges %+v, want one per person for audience %q", reqs, trinotest.TrinoAudience)
	}
}

func TestEngineRefusesTokensNotForIt(t *testing.T) {
	f := setup(t)
	mcp := f.mcpToken("alice")
	expired := f.idp.Claims(trinotest.TrinoAudience)
	expired["exp"] = time.Now().Add(-time.Minute).Unix()
	for name, tok := range map[string]string{
		"MCP audience": mcp,
		"expired":      f.idp.Sign(expired),
	} {
		t.Run(name, func(t *testing.T) {
			src, err := trinoauth.LoadJWT(tok, "")
			if err != nil {
				t.Fatal(err)
			}
			f.srv.ResetRequests()
			_, err = newClient(t, f.srv, src).Query(context.Background(), engine.Query{SQL: "SELECT 1"})
			if err == nil {
				t.Fatal("the engine accepted the token")
			}
			if strings.Contains(err.Error(), tok) {
				t.Error("the error quotes the token")
			}
			var saw401 bool
			for _, r := range f.srv.Requests() {
				saw401 = saw401 || r.Status == http.StatusUnauthorized
				if r.Status == http.StatusOK && r.Method == http.MethodPost {
					t.Errorf("a statement was accepted: %s", r.Path)
				}
			}
			if !saw401 {
				t.Error("no 401 from the engine")
			}
		})
	}
}

func TestProviderRefusesExchange(t *testing.T) {
	f := setup(t)
	f.idp.RefuseExchanges("invalid_grant", "the session of the user was revoked")
	f.srv.ResetRequests()
	sub := f.mcpToken("alice")
	_, err := f.client.Query(trinoauth.WithSubjectToken(context.Background(), sub), engine.Query{SQL: "SELECT 1"})
	if err == nil {
		t.Fatal("the query ran without an exchanged token")
	}
	for _, want := range []string{"invalid_grant", "the session of the user was revoked"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not name the provider's answer %q", err, want)
		}
	}
	if strings.Contains(err.Error(), sub) || strings.Contains(err.Error(), trinotest.ExchangeSecret) {
		t.Error("the error quotes a secret")
	}
	var xe *trinoauth.ExchangeError
	if _, err := f.ex.Token(trinoauth.WithSubjectToken(context.Background(), sub)); !errors.As(err, &xe) || xe.Code != "invalid_grant" {
		t.Errorf("Token: %v, want an *ExchangeError invalid_grant", err)
	}
	// Never a fallback to the service user: nothing reached the engine.
	if n := len(f.srv.Statements()); n != 0 {
		t.Errorf("%d statements reached the engine", n)
	}
	// No caller token at all: no query either.
	if _, err := f.client.Query(context.Background(), engine.Query{SQL: "SELECT 1"}); !errors.Is(err, trinoauth.ErrNoSubjectToken) && (err == nil || !strings.Contains(err.Error(), "no signed-in caller")) {
		t.Errorf("without a caller: %v", err)
	}
	if n := len(f.srv.Statements()); n != 0 {
		t.Errorf("%d statements reached the engine", n)
	}
}

// The exchanged token expires mid-session: the source exchanges again
// before it does, and the next query runs with the new token.
func TestExchangedTokenRenewedBeforeExpiry(t *testing.T) {
	f := setup(t)
	f.idp.SetExchangeTTL(3 * time.Second) // reused for half its life
	ctx := trinoauth.WithSubjectToken(context.Background(), f.mcpToken("alice"))
	for range 2 {
		if _, err := f.client.Query(ctx, engine.Query{SQL: "SELECT 1"}); err != nil {
			t.Fatal(err)
		}
	}
	if n := f.idp.ExchangeCalls(); n != 1 {
		t.Fatalf("%d exchanges for two quick queries, want 1", n)
	}
	time.Sleep(3500 * time.Millisecond) // the first exchanged token has expired
	if _, err := f.client.Query(ctx, engine.Query{SQL: "SELECT 1"}); err != nil {
		t.Fatalf("after expiry: %v", err)
	}
	if n := f.idp.ExchangeCalls(); n != 2 {
		t.Errorf("%d exchanges, want 2", n)
	}
}

func TestExternalAuthentication(t *testing.T) {
	idp := idptest.New(t, idptest.Options{})
	mint := func(user string) (string, error) {
		c := idp.Claims(trinotest.TrinoAudience)
		c["preferred_username"] = user
		return idp.Sign(c), nil
	}
	srv := trinotest.Start(t, trinotest.WithLargeTableRows(-1), trinotest.WithJWTAuth(&trinotest.JWTAuth{
		JWKSURL: idp.URL + "/jwks", Issuer: idp.Issuer(), Audience: trinotest.TrinoAudience,
		PrincipalField: "preferred_username", External: mint,
	}))
	dir := filepath.Join(t.TempDir(), "sqlmcp", "tokens")
	var out syncbuf.Buffer
	browser := 0
	var wg sync.WaitGroup
	t.Cleanup(wg.Wait)
	// The headless browser: the user signs in a little after the URL is
	// shown, while the client polls the token server.
	open := func(ctx context.Context, u *url.URL) error {
		browser++
		wg.Add(1)
		go func() {
			defer wg.Done()
			time.Sleep(700 * time.Millisecond)
			resp, err := srv.HTTPClient().Get(u.String() + "?user=carol")
			if err != nil {
				t.Errorf("browser: %v", err)
				return
			}
			resp.Body.Close()
		}()
		return nil
	}
	run := func() string {
		cache, err := trinoauth.NewFileTokenCache(dir, "prod")
		if err != nil {
			t.Fatal(err)
		}
		conn, err := trino.NewConnector(&trino.Config{
			ServerURI: srv.URL(), Catalog: "sales", Schema: "public", HTTPClient: srv.HTTPClient(),
			ExternalAuthentication: true, RedirectHandler: trinoauth.PrintRedirect(&out, open), TokenCache: cache,
		})
		if err != nil {
			t.Fatal(err)
		}
		db := sql.OpenDB(conn)
		defer db.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		var who string
		if err := db.QueryRowContext(ctx, "SELECT 'ok'").Scan(&who); err != nil {
			t.Fatalf("query: %v", err)
		}
		if err := cache.Err(); err != nil {
			t.Fatal(err)
		}
		return cache.Path()
	}
	path := run()
	if browser != 1 || !strings.Contains(out.String(), srv.URL()+"/oauth2/token/initiate/") {
		t.Fatalf("the sign-in URL was not shown (browser %d): %q", browser, out.String())
	}
	fi, err := os.Stat(path)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("token cache %s: %v %v, want mode 0600", path, fi, err)
	}
	if d, _ := os.Stat(filepath.Dir(path)); d.Mode().Perm() != 0o700 {
		t.Errorf("token directory mode %v, want 0700", d.Mode().Perm())
	}
	var polls int
	for _, r := range srv.Requests() {
		if r.Method == http.MethodGet && strings.HasPrefix(r.Path, "/oauth2/token/") && !strings.Contains(r.Path, "initiate") {
			polls++
		}
	}
	if polls < 2 {
		t.Errorf("%d token polls, want the client to poll until signed in", polls)
	}
	if p := srv.Queries()[len(srv.Queries())-1].Principal; p != "carol" {
		t.Errorf("query ran as %q, want carol", p)
	}
	// Next run, same profile: the cached token is reused, no browser.
	run()
	if browser != 1 {
		t.Errorf("signed in again (%d) instead of reusing the cached token", browser)
	}
	// A cache file others can read is not used.
	if err := os.Chmod(path, 0o644); err != nil {
		t.Fatal(err)
	}
	run()
	if browser != 2 {
		t.Errorf("a world-readable token file was used")
	}
}
