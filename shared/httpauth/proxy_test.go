package httpauth_test

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"golang.org/x/oauth2"

	"github.com/mcpfleet/mcpfleet/shared/httpauth"
	"github.com/mcpfleet/mcpfleet/shared/httpauth/idptest"
)

// clientRedirect is the MCP client's loopback redirect URI. Nothing listens
// there: the test's "browser" stops at the redirect and reads the code.
const clientRedirect = "http://127.0.0.1:33418/callback"

// newProxy starts a proxy-mode server in front of an in-process provider.
func newProxy(t *testing.T, redirectURIs ...string) (*harness, *idptest.IdP) {
	t.Helper()
	idp := idptest.New(t, idptest.Options{})
	h := newHarness(t, httpauth.Config{
		Mode: "proxy", Provider: "oidc", Issuer: idp.Issuer(),
		ClientID: "mcp-server", ClientSecret: "server-secret", JWTSecret: testSecret,
		RedirectURIs: redirectURIs, HTTPClient: idp.HTTPClient(),
	})
	idp.AddClient(idptest.Client{ID: "mcp-server", Secret: "server-secret", RedirectURIs: []string{h.base + "/oauth/callback"}})
	return h, idp
}

// browser follows redirects like a user agent until one leaves for a URI
// with the given prefix, and returns that last response (or the first
// non-redirect answer).
func browser(stopAt string) *http.Client {
	return browserVia(nil, stopAt)
}

// browserVia is browser with a transport (nil: the default).
func browserVia(rt http.RoundTripper, stopAt string) *http.Client {
	return &http.Client{
		Transport: rt,
		Timeout:   10 * time.Second,
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if strings.HasPrefix(req.URL.String(), stopAt) {
				return http.ErrUseLastResponse
			}
			return nil
		},
	}
}

// TestProxyLoginEndToEnd: the official go-sdk MCP client meets a 401,
// discovers the metadata, registers itself, logs in through this server
// and the identity provider (PKCE at both legs), exchanges the code and
// calls a tool over streamable HTTP as the logged-in user.
func TestProxyLoginEndToEnd(t *testing.T) {
	h, idp := newProxy(t)
	idp.SetUser(map[string]any{"sub": "u-42", "preferred_username": "bob", "email": "bob@example.com", "groups": []string{"dba"}})
	var logins int
	fetch := func(ctx context.Context, args *auth.AuthorizationArgs) (*auth.AuthorizationResult, error) {
		logins++
		resp, err := browser(clientRedirect).Get(args.URL)
		if err != nil {
			return nil, err
		}
		resp.Body.Close()
		loc, err := url.Parse(resp.Header.Get("Location"))
		if err != nil || resp.StatusCode != http.StatusFound {
			t.Fatalf("login ended with HTTP %d at %q", resp.StatusCode, resp.Header.Get("Location"))
		}
		q := loc.Query()
		if q.Get("error") != "" {
			t.Fatalf("login failed: %s: %s", q.Get("error"), q.Get("error_description"))
		}
		return &auth.AuthorizationResult{Code: q.Get("code"), State: q.Get("state"), Iss: q.Get("iss")}, nil
	}
	handler, err := auth.NewAuthorizationCodeHandler(&auth.AuthorizationCodeHandlerConfig{
		DynamicClientRegistrationConfig: &auth.DynamicClientRegistrationConfig{Metadata: &oauthex.ClientRegistrationMetadata{
			RedirectURIs: []string{clientRedirect}, ClientName: "e2e client",
			GrantTypes: []string{"authorization_code", "refresh_token"}, TokenEndpointAuthMethod: "none",
		}},
		RedirectURL:              clientRedirect,
		AuthorizationCodeFetcher: fetch,
		RequestRefreshToken:      true,
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	client := mcp.NewClient(&mcp.Implementation{Name: "e2e", Version: "1"}, nil)
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{
		Endpoint: h.base + "/mcp", OAuthHandler: handler, DisableStandaloneSSE: true,
	}, nil)
	if err != nil {
		t.Fatalf("connect with OAuth: %v", err)
	}
	defer cs.Close()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "whoami", Arguments: map[string]any{}})
	if err != nil {
		t.Fatalf("tools/call: %v", err)
	}
	if res.IsError || len(res.Content) == 0 {
		t.Fatalf("tools/call result %+v", res)
	}
	if got := res.Content[0].(*mcp.TextContent).Text; got != "u-42|bob|bob@example.com" {
		t.Errorf("identity in the tool = %q", got)
	}
	if logins != 1 || h.calls.Load() != 1 {
		t.Errorf("logins %d, tool calls %d; want 1 and 1", logins, h.calls.Load())
	}
	// The token the client holds refreshes, and the refreshed token works.
	ts, err := handler.TokenSource(ctx)
	if err != nil {
		t.Fatal(err)
	}
	tok, err := ts.Token()
	if err != nil {
		t.Fatal(err)
	}
	if tok.RefreshToken == "" {
		t.Fatal("no refresh token issued")
	}
	for _, secret := range []string{"server-secret", testSecret, tok.AccessToken, tok.RefreshToken} {
		if strings.Contains(h.logText(), secret) {
			t.Errorf("a secret or token was logged: %.12s...", secret)
		}
	}
}

// flow drives the proxy endpoints by hand with x/oauth2.
type flow struct {
	h         *harness
	clientID  string
	conf      *oauth2.Config
	transport http.RoundTripper // the browser's, nil for the default
}

func register(t *testing.T, h *harness, redirects ...string) (clientID string, resp *http.Response, body map[string]any) {
	t.Helper()
	b, _ := json.Marshal(map[string]any{"redirect_uris": redirects, "client_name": "t", "token_endpoint_auth_method": "none"})
	resp, err := http.Post(h.base+"/oauth/register", "application/json", strings.NewReader(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	json.NewDecoder(resp.Body).Decode(&body)
	id, _ := body["client_id"].(string)
	return id, resp, body
}

func newFlow(t *testing.T, h *harness, redirect string) *flow {
	t.Helper()
	id, resp, body := register(t, h, redirect)
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("register: HTTP %d %v", resp.StatusCode, body)
	}
	return &flow{h: h, clientID: id, conf: &oauth2.Config{
		ClientID:    id,
		Endpoint:    oauth2.Endpoint{AuthURL: h.base + "/oauth/authorize", TokenURL: h.base + "/oauth/token", AuthStyle: oauth2.AuthStyleInParams},
		RedirectURL: redirect,
		Scopes:      []string{"openid", "profile"},
	}}
}

// login runs the browser part and returns the redirect back to the client.
func (f *flow) login(t *testing.T, verifier string, opts ...oauth2.AuthCodeOption) *url.URL {
	t.Helper()
	opts = append(opts, oauth2.S256ChallengeOption(verifier))
	resp, err := browserVia(f.transport, f.conf.RedirectURL).Get(f.conf.AuthCodeURL("client-state", opts...))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusFound {
		t.Fatalf("login: HTTP %d", resp.StatusCode)
	}
	loc, _ := url.Parse(resp.Header.Get("Location"))
	if q := loc.Query(); q.Get("state") != "client-state" || q.Get("iss") != f.h.base {
		t.Fatalf("redirect back %s lacks the client's state or the issuer", loc)
	}
	return loc
}

func wantOAuthError(t *testing.T, err error, code, desc string) {
	t.Helper()
	var re *oauth2.RetrieveError
	if err == nil {
		t.Fatalf("accepted; want %s", code)
	}
	if !asRetrieve(err, &re) || re.ErrorCode != code || !strings.Contains(re.ErrorDescription, desc) {
		t.Fatalf("error %v; want %s mentioning %q", err, code, desc)
	}
	if re.Response.StatusCode != http.StatusBadRequest {
		t.Fatalf("status %d, want 400", re.Response.StatusCode)
	}
}

func asRetrieve(err error, re **oauth2.RetrieveError) bool {
	r, ok := err.(*oauth2.RetrieveError)
	if ok {
		*re = r
	}
	return ok
}

// TestProxyFlowNegative is the flow half of the negative corpus.
func TestProxyFlowNegative(t *testing.T) {
	h, idp := newProxy(t)
	ctx := context.Background()

	t.Run("reused code", func(t *testing.T) {
		f := newFlow(t, h, clientRedirect)
		v := oauth2.GenerateVerifier()
		code := f.login(t, v).Query().Get("code")
		tok, err := f.conf.Exchange(ctx, code, oauth2.VerifierOption(v))
		if err != nil {
			t.Fatalf("first exchange: %v", err)
		}
		if _, err := h.layer.Verify(ctx, tok.AccessToken); err != nil {
			t.Fatalf("issued access token refused: %v", err)
		}
		_, err = f.conf.Exchange(ctx, code, oauth2.VerifierOption(v))
		wantOAuthError(t, err, "invalid_grant", "already used")
	})
	t.Run("wrong PKCE verifier", func(t *testing.T) {
		f := newFlow(t, h, clientRedirect)
		code := f.login(t, oauth2.GenerateVerifier()).Query().Get("code")
		_, err := f.conf.Exchange(ctx, code, oauth2.VerifierOption(oauth2.GenerateVerifier()))
		wantOAuthError(t, err, "invalid_grant", "PKCE")
	})
	t.Run("no PKCE verifier", func(t *testing.T) {
		f := newFlow(t, h, clientRedirect)
		code := f.login(t, oauth2.GenerateVerifier()).Query().Get("code")
		_, err := f.conf.Exchange(ctx, code)
		wantOAuthError(t, err, "invalid_grant", "code_verifier")
	})
	t.Run("code of another client", func(t *testing.T) {
		f, g := newFlow(t, h, clientRedirect), newFlow(t, h, clientRedirect)
		v := oauth2.GenerateVerifier()
		code := f.login(t, v).Query().Get("code")
		_, err := g.conf.Exchange(ctx, code, oauth2.VerifierOption(v))
		wantOAuthError(t, err, "invalid_grant", "another client")
	})
	t.Run("forged code", func(t *testing.T) {
		f := newFlow(t, h, clientRedirect)
		_, err := f.conf.Exchange(ctx, "forged-code", oauth2.VerifierOption(oauth2.GenerateVerifier()))
		wantOAuthError(t, err, "invalid_grant", "invalid or expired")
	})
	t.Run("refresh rotation", func(t *testing.T) {
		f := newFlow(t, h, clientRedirect)
		v := oauth2.GenerateVerifier()
		tok, err := f.conf.Exchange(ctx, f.login(t, v).Query().Get("code"), oauth2.VerifierOption(v))
		if err != nil {
			t.Fatal(err)
		}
		old := tok.RefreshToken
		tok.Expiry = time.Now().Add(-time.Minute) // force a refresh
		calls := idp.TokenCalls()
		fresh, err := f.conf.TokenSource(ctx, tok).Token()
		if err != nil {
			t.Fatalf("refresh: %v", err)
		}
		if fresh.RefreshToken == old || fresh.AccessToken == tok.AccessToken {
			t.Fatal("refresh did not rotate the tokens")
		}
		if n := idp.TokenCalls(); n != calls+1 {
			t.Fatalf("the provider saw %d token requests; the refresh did not renew its session", n)
		}
		if id, err := h.layer.Verify(ctx, fresh.AccessToken); err != nil || id.Username != "alice" {
			t.Fatalf("refreshed token: %v %+v", err, id)
		}
		tok.AccessToken, tok.RefreshToken = "", old
		_, err = f.conf.TokenSource(ctx, tok).Token()
		wantOAuthError(t, err, "invalid_grant", "already used")
	})
	t.Run("refresh after the provider revoked the session", func(t *testing.T) {
		f := newFlow(t, h, clientRedirect)
		v := oauth2.GenerateVerifier()
		tok, err := f.conf.Exchange(ctx, f.login(t, v).Query().Get("code"), oauth2.VerifierOption(v))
		if err != nil {
			t.Fatal(err)
		}
		idp.RevokeSessions()
		tok.Expiry = time.Now().Add(-time.Minute)
		_, err = f.conf.TokenSource(ctx, tok).Token()
		wantOAuthError(t, err, "invalid_grant", "refused to renew")
	})
	t.Run("forged state", func(t *testing.T) {
		for name, state := range map[string]string{
			"garbage":         "forged",
			"empty":           "",
			"other secret":    otherServerState(t),
			"tampered sealed": tamperedState(t, h),
		} {
			resp := noRedirectGet(t, h.base+"/oauth/callback?code=x&state="+url.QueryEscape(state))
			if resp.StatusCode != http.StatusBadRequest || resp.Header.Get("Location") != "" {
				t.Errorf("%s state: HTTP %d Location %q; want 400 and no redirect", name, resp.StatusCode, resp.Header.Get("Location"))
			}
		}
	})
	t.Run("PKCE required", func(t *testing.T) {
		f := newFlow(t, h, clientRedirect)
		for name, extra := range map[string]string{
			"no challenge":    "",
			"plain method":    "&code_challenge=" + strings.Repeat("a", 43) + "&code_challenge_method=plain",
			"no method":       "&code_challenge=" + strings.Repeat("a", 43),
			"short challenge": "&code_challenge=abc&code_challenge_method=S256",
		} {
			resp := noRedirectGet(t, h.base+"/oauth/authorize?response_type=code&state=s&client_id="+url.QueryEscape(f.clientID)+
				"&redirect_uri="+url.QueryEscape(clientRedirect)+extra)
			loc, _ := url.Parse(resp.Header.Get("Location"))
			if resp.StatusCode != http.StatusFound || !strings.HasPrefix(loc.String(), clientRedirect) || loc.Query().Get("error") != "invalid_request" {
				t.Errorf("%s: HTTP %d to %q; want an invalid_request redirect to the client", name, resp.StatusCode, loc)
			}
		}
	})
	t.Run("unknown client", func(t *testing.T) {
		resp := noRedirectGet(t, h.base+"/oauth/authorize?response_type=code&client_id=nobody&redirect_uri="+url.QueryEscape("https://evil.example/cb"))
		if resp.StatusCode != http.StatusBadRequest || resp.Header.Get("Location") != "" {
			t.Errorf("HTTP %d Location %q; want 400 and no redirect", resp.StatusCode, resp.Header.Get("Location"))
		}
	})
	t.Run("fixed mode refuses non-loopback redirects", func(t *testing.T) {
		for _, u := range []string{"https://evil.example/cb", "http://10.0.0.1/cb", "myapp://cb", "http://127.0.0.1.evil.example/cb"} {
			_, resp, body := register(t, h, u)
			if resp.StatusCode != http.StatusBadRequest || body["error"] != "invalid_redirect_uri" {
				t.Errorf("register %s: HTTP %d %v; want 400 invalid_redirect_uri", u, resp.StatusCode, body)
			}
		}
		// A client registered with a loopback URI cannot switch to another.
		f := newFlow(t, h, clientRedirect)
		resp := noRedirectGet(t, h.base+"/oauth/authorize?response_type=code&code_challenge_method=S256&code_challenge="+strings.Repeat("a", 43)+
			"&client_id="+url.QueryEscape(f.clientID)+"&redirect_uri="+url.QueryEscape("https://evil.example/cb"))
		if resp.StatusCode != http.StatusBadRequest || resp.Header.Get("Location") != "" {
			t.Errorf("HTTP %d Location %q; want 400 and no redirect", resp.StatusCode, resp.Header.Get("Location"))
		}
	})
	if n := h.calls.Load(); n != 0 {
		t.Fatalf("tool handler ran %d times", n)
	}
}

// TestProxyAllowlist: with several OAUTH_REDIRECT_URI entries a client's
// redirect URI must match one exactly.
func TestProxyAllowlist(t *testing.T) {
	allowed := []string{"https://app.example/oauth/cb", "cursor://anysphere.cursor-retrieval/oauth/callback"}
	h, _ := newProxy(t, allowed...)
	for _, u := range allowed {
		if _, resp, body := register(t, h, u); resp.StatusCode != http.StatusCreated {
			t.Errorf("register %s: HTTP %d %v", u, resp.StatusCode, body)
		}
	}
	for _, u := range []string{"https://app.example/oauth/cb/extra", "https://app.example/oauth/cb?x=1", "http://127.0.0.1:33418/callback", "https://evil.example/cb"} {
		if _, resp, body := register(t, h, u); resp.StatusCode != http.StatusBadRequest || body["error"] != "invalid_redirect_uri" {
			t.Errorf("register %s: HTTP %d %v; want 400 invalid_redirect_uri", u, resp.StatusCode, body)
		}
	}
	// The provider is asked for a refresh token: its discovery lists offline_access.
	if loc, _ := url.Parse(noRedirectGet(t, authorizeURLFor(t, h, allowed[0])).Header.Get("Location")); !strings.Contains(loc.Query().Get("scope"), "offline_access") {
		t.Errorf("login request %s does not ask for offline_access", loc)
	}
	// The whole flow works with an allowlisted URI.
	f := newFlow(t, h, allowed[0])
	v := oauth2.GenerateVerifier()
	loc := f.login(t, v)
	if !strings.HasPrefix(loc.String(), allowed[0]+"?") {
		t.Fatalf("redirected to %s", loc)
	}
	tok, err := f.conf.Exchange(context.Background(), loc.Query().Get("code"), oauth2.VerifierOption(v))
	if err != nil {
		t.Fatal(err)
	}
	sid := h.session(t, tok.AccessToken)
	if got := h.call(t, tok.AccessToken, sid); got != "user-1|alice|alice@example.com" {
		t.Errorf("identity %q", got)
	}
	// A token from another deployment (different JWT_SECRET) is refused.
	other, _ := newProxy(t)
	other.wantChallenge(t, other.rpc(t, "Bearer "+tok.AccessToken, "", initializeBody), true)
}

func noRedirectGet(t *testing.T, u string) *http.Response {
	t.Helper()
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := c.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp
}

// otherServerState is a genuine state from a server with another JWT_SECRET.
func otherServerState(t *testing.T) string {
	idp := idptest.New(t, idptest.Options{})
	h := newHarness(t, httpauth.Config{
		Mode: "proxy", Provider: "oidc", Issuer: idp.Issuer(), ClientID: "c", ClientSecret: "s",
		JWTSecret: strings.Repeat("z", 40), HTTPClient: idp.HTTPClient(),
	})
	return stateFrom(t, h)
}

// tamperedState flips one character of a genuine state.
func tamperedState(t *testing.T, h *harness) string {
	s := []byte(stateFrom(t, h))
	i := len(s) / 2
	if s[i] == 'A' {
		s[i] = 'B'
	} else {
		s[i] = 'A'
	}
	return string(s)
}

// stateFrom starts an authorisation at h and returns the state it sends to the provider.
func stateFrom(t *testing.T, h *harness) string {
	t.Helper()
	resp := noRedirectGet(t, authorizeURL(t, h))
	loc, err := url.Parse(resp.Header.Get("Location"))
	if err != nil || loc.Query().Get("state") == "" {
		t.Fatalf("authorize did not redirect to the provider: HTTP %d %q", resp.StatusCode, resp.Header.Get("Location"))
	}
	return loc.Query().Get("state")
}

// TestProxyGoogle: proxy mode in front of "Google" (the in-process provider
// claiming https://accounts.google.com): refresh tokens are asked for with
// access_type=offline, not the offline_access scope Google refuses.
func TestProxyGoogle(t *testing.T) {
	idp := idptest.New(t, idptest.Options{Issuer: "https://accounts.google.com"})
	h := newHarness(t, httpauth.Config{
		Mode: "proxy", Provider: "google", ClientID: "123.apps.googleusercontent.com", ClientSecret: "server-secret",
		JWTSecret: testSecret, HTTPClient: idp.HTTPClient(),
	})
	idp.AddClient(idptest.Client{ID: "123.apps.googleusercontent.com", Secret: "server-secret", RedirectURIs: []string{h.base + "/oauth/callback"}})
	loc, err := url.Parse(noRedirectGet(t, authorizeURL(t, h)).Header.Get("Location"))
	if err != nil || loc.Host != "accounts.google.com" {
		t.Fatalf("authorize redirected to %v (%v)", loc, err)
	}
	if q := loc.Query(); q.Get("access_type") != "offline" || strings.Contains(q.Get("scope"), "offline_access") {
		t.Errorf("login request %s: want access_type=offline and no offline_access scope", loc)
	}
	f := newFlow(t, h, clientRedirect)
	f.transport = idp.HTTPClient().Transport
	v := oauth2.GenerateVerifier()
	tok, err := f.conf.Exchange(context.Background(), f.login(t, v).Query().Get("code"), oauth2.VerifierOption(v))
	if err != nil {
		t.Fatal(err)
	}
	sid := h.session(t, tok.AccessToken)
	if got := h.call(t, tok.AccessToken, sid); got != "user-1|alice|alice@example.com" {
		t.Errorf("identity %q", got)
	}
}

// authorizeURL is a valid authorisation request of a freshly registered client.
func authorizeURL(t *testing.T, h *harness) string {
	t.Helper()
	return authorizeURLFor(t, h, clientRedirect)
}

func authorizeURLFor(t *testing.T, h *harness, redirect string) string {
	t.Helper()
	f := newFlow(t, h, redirect)
	sum := sha256.Sum256([]byte(oauth2.GenerateVerifier()))
	return h.base + "/oauth/authorize?response_type=code&code_challenge_method=S256&code_challenge=" +
		base64.RawURLEncoding.EncodeToString(sum[:]) + "&client_id=" + url.QueryEscape(f.clientID) + "&redirect_uri=" + url.QueryEscape(redirect)
}
