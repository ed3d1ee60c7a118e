package trinoauth_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpfleet/mcpfleet/shared/httpauth/idptest"
	"github.com/mcpfleet/mcpfleet/sqlmcp/internal/trinoauth"
	"github.com/mcpfleet/mcpfleet/sqlmcp/internal/trinotest"
)

type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time      { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) Add(d time.Duration) { c.mu.Lock(); c.t = c.t.Add(d); c.mu.Unlock() }

// The cache reuses a token until RefreshBefore ahead of its expiry and
// exchanges again after; one caller's token never serves another.
func TestExchangeCacheClock(t *testing.T) {
	idp := idptest.New(t, idptest.Options{})
	idp.AddClient(idptest.Client{ID: trinotest.ExchangeClient, Secret: trinotest.ExchangeSecret})
	idp.AllowExchange(trinotest.ExchangeClient, trinotest.TrinoAudience)
	idp.SetExchangeTTL(10 * time.Minute)
	clk := &clock{t: time.Now()}
	x := &trinoauth.Exchanger{URL: idp.URL + "/token", ClientID: trinotest.ExchangeClient, ClientSecret: trinotest.ExchangeSecret,
		Audience: trinotest.TrinoAudience, HTTPClient: idp.HTTPClient(), RefreshBefore: time.Minute, Now: clk.Now}
	sign := func(user string) string {
		c := idp.Claims(trinotest.MCPAudience)
		c["preferred_username"] = user
		return idp.Sign(c)
	}
	alice, bob := sign("alice"), sign("bob")
	ctx := trinoauth.WithSubjectToken(context.Background(), alice)

	// Concurrent first calls for one caller make one exchange.
	var wg sync.WaitGroup
	toks := make([]string, 8)
	for i := range toks {
		wg.Go(func() {
			var err error
			if toks[i], err = x.Token(ctx); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if n := idp.ExchangeCalls(); n != 1 {
		t.Fatalf("%d exchanges for concurrent calls, want 1", n)
	}
	first := toks[0]
	clk.Add(8*time.Minute + 59*time.Second)
	if tok, _ := x.Token(ctx); tok != first || idp.ExchangeCalls() != 1 {
		t.Fatal("re-exchanged before RefreshBefore ahead of expiry")
	}
	clk.Add(2 * time.Second) // 9m01s: within a minute of expiry
	if _, err := x.Token(ctx); err != nil || idp.ExchangeCalls() != 2 {
		t.Fatalf("not re-exchanged shortly before expiry: %v, %d calls", err, idp.ExchangeCalls())
	}
	btok, err := x.Token(trinoauth.WithSubjectToken(context.Background(), bob))
	if err != nil || btok == first || idp.ExchangeCalls() != 3 {
		t.Fatalf("bob got alice's token or no exchange: %v", err)
	}
	// A refusal empties the entry: the next call asks again.
	idp.RefuseExchanges("invalid_grant", "revoked")
	clk.Add(10 * time.Minute)
	if _, err := x.Token(ctx); err == nil {
		t.Fatal("expired cache entry used after a refusal")
	}
	idp.RefuseExchanges("", "")
	if _, err := x.Token(ctx); err != nil {
		t.Fatal(err)
	}
}

func TestExchangeCacheBounded(t *testing.T) {
	var calls atomic.Int32
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		json.NewEncoder(w).Encode(map[string]any{"access_token": "a.b.c", "token_type": "Bearer", "expires_in": 3600})
	}))
	defer ts.Close()
	x := &trinoauth.Exchanger{URL: ts.URL, Audience: "t", MaxEntries: 3}
	for i := range 10 {
		if _, err := x.TokenFor(context.Background(), strings.Repeat("s", i+1)); err != nil {
			t.Fatal(err)
		}
	}
	// All ten were exchanged; the first is no longer cached (bounded).
	if _, err := x.TokenFor(context.Background(), "s"); err != nil || calls.Load() != 11 {
		t.Fatalf("calls %d, want 11 (evicted entry exchanged again): %v", calls.Load(), err)
	}
}

// What a hostile or broken provider answers is refused with its answer
// named, and nothing it sends is taken for a token.
func TestExchangeHostileProvider(t *testing.T) {
	for name, tc := range map[string]struct {
		status int
		body   string
		want   string
	}{
		"html 500":        {500, "<html>oops</html>", "HTTP 500"},
		"no token":        {200, `{"token_type":"Bearer"}`, "no access_token"},
		"not a JWT":       {200, `{"access_token":"opaque-token","token_type":"Bearer"}`, "not a JWT"},
		"token with CRLF": {200, `{"access_token":"a.b.c\r\nX-Evil: 1","token_type":"Bearer"}`, "not a JWT"},
		"mac token type":  {200, `{"access_token":"a.b.c","token_type":"mac"}`, "not Bearer"},
		"refresh issued":  {200, `{"access_token":"a.b.c","issued_token_type":"urn:ietf:params:oauth:token-type:refresh_token"}`, "not an access token"},
		"oauth error":     {400, `{"error":"invalid_target","error_description":"audience trino\nnot allowed"}`, "invalid_target: audience trino not allowed"},
		"error in 200":    {200, `{"error":"access_denied"}`, "access_denied"},
	} {
		t.Run(name, func(t *testing.T) {
			ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.PostFormValue("grant_type") != trinoauth.GrantTokenExchange || r.PostFormValue("subject_token") != "subj.ect.tok" {
					t.Errorf("bad request form %v", r.PostForm)
				}
				if id, secret, ok := r.BasicAuth(); !ok || id != "c" || secret != "s" {
					t.Error("no client authentication")
				}
				w.WriteHeader(tc.status)
				w.Write([]byte(tc.body))
			}))
			defer ts.Close()
			x := &trinoauth.Exchanger{URL: ts.URL, ClientID: "c", ClientSecret: "s", Audience: "trino"}
			_, err := x.TokenFor(context.Background(), "subj.ect.tok")
			var xe *trinoauth.ExchangeError
			if !errors.As(err, &xe) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want an ExchangeError naming %q", err, tc.want)
			}
			if strings.Contains(err.Error(), "subj.ect.tok") || strings.Contains(err.Error(), "opaque-token") || strings.ContainsAny(err.Error(), "\r\n") {
				t.Errorf("error leaks a token or a line break: %q", err)
			}
		})
	}
	x := &trinoauth.Exchanger{URL: "ftp://idp/token"}
	if _, err := x.TokenFor(context.Background(), "s"); err == nil || !strings.Contains(err.Error(), "SQLENGINE_TOKEN_EXCHANGE_URL") {
		t.Errorf("bad URL: %v", err)
	}
}

func TestTransportKeepsImpersonationOnly(t *testing.T) {
	var got http.Header
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { got = r.Header.Clone() }))
	defer ts.Close()
	src, _ := trinoauth.LoadJWT("aGVhZA.Ym9keQ.c2ln", "")
	hc := &http.Client{Transport: &trinoauth.Transport{Source: src, ServiceUser: "sqlmcp"}}
	for user, want := range map[string]string{"sqlmcp": "", "dana": "dana"} {
		req, _ := http.NewRequest(http.MethodGet, ts.URL, nil)
		req.Header.Set("X-Trino-User", user)
		req.Header.Set("Authorization", "Basic c3FsbWNwOnB3")
		resp, err := hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if got.Get("Authorization") != "Bearer aGVhZA.Ym9keQ.c2ln" || got.Get("X-Trino-User") != want {
			t.Errorf("user %s: sent %v", user, got)
		}
	}
}

func TestLoadJWT(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "jwt")
	os.WriteFile(good, []byte("aGVhZA.Ym9keQ.c2ln\n"), 0o600)
	open := filepath.Join(dir, "open")
	os.WriteFile(open, []byte("aGVhZA.Ym9keQ.c2ln"), 0o644)
	big := filepath.Join(dir, "big")
	os.WriteFile(big, []byte(strings.Repeat("a", 70<<10)), 0o600)
	if s, err := trinoauth.LoadJWT("", good); err != nil {
		t.Fatal(err)
	} else if tok, _ := s.Token(context.Background()); tok != "aGVhZA.Ym9keQ.c2ln" {
		t.Errorf("token %q", tok)
	}
	for name, tc := range map[string][2]string{
		"both":         {"aGVhZA.Ym9keQ.c2ln", good},
		"neither":      {"", ""},
		"world file":   {"", open},
		"missing file": {"", filepath.Join(dir, "nope")},
		"huge file":    {"", big},
		"two parts":    {"aGVhZA.Ym9keQ", ""},
		"CRLF inside":  {"aGVhZA.Ym9k\r\neQ.c2ln", ""},
		"spaces":       {"aGVh ZA.Ym9keQ.c2ln", ""},
	} {
		if _, err := trinoauth.LoadJWT(tc[0], tc[1]); err == nil {
			t.Errorf("%s: accepted", name)
		} else if strings.Contains(err.Error(), "Ym9k") {
			t.Errorf("%s: error quotes the token: %v", name, err)
		}
	}
}

func TestParseMode(t *testing.T) {
	for in, want := range map[string]trinoauth.Mode{"": "password", "password": "password", "jwt": "jwt", "token-exchange": "token-exchange", "external": "external"} {
		if m, err := trinoauth.ParseMode(in); err != nil || m != want {
			t.Errorf("%q: %v %v", in, m, err)
		}
	}
	for _, bad := range []string{"JWT", "oauth", "token_exchange", " jwt"} {
		if _, err := trinoauth.ParseMode(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

func TestFileTokenCache(t *testing.T) {
	dir := t.TempDir()
	for _, bad := range []string{"", "../x", ".hidden", "a/b", "a b", strings.Repeat("p", 65)} {
		if _, err := trinoauth.NewFileTokenCache(dir, bad); err == nil {
			t.Errorf("profile %q accepted", bad)
		}
	}
	c, err := trinoauth.NewFileTokenCache(dir, "dev")
	if err != nil {
		t.Fatal(err)
	}
	if c.Token() != "" {
		t.Error("token before any was saved")
	}
	enc := func(claims string) string {
		return "eyJhbGciOiJSUzI1NiJ9." + strings.TrimRight(b64(claims), "=") + ".c2ln"
	}
	live := enc(`{"exp":` + jsonNum(time.Now().Add(time.Hour).Unix()) + `}`)
	c.SetToken(live)
	if c.Token() != live || c.Err() != nil {
		t.Fatalf("saved token not read back: %v", c.Err())
	}
	c.SetToken(enc(`{"exp":1}`))
	if c.Token() != "" {
		t.Error("an expired cached token is used")
	}
	c.SetToken("")
	if _, err := os.Stat(c.Path()); !os.IsNotExist(err) {
		t.Error("SetToken(\"\") kept the file")
	}
	// A symlink planted at the cache path is not followed for reading.
	os.WriteFile(filepath.Join(dir, "elsewhere"), []byte(live), 0o600)
	os.Symlink(filepath.Join(dir, "elsewhere"), c.Path())
	if c.Token() != "" {
		t.Error("read a token through a symlink")
	}
}
