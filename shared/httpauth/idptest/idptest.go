// Package idptest is an OpenID Connect identity provider served in-process
// for tests: discovery, a JWKS with RS256 and ES256 keys that can rotate,
// and authorize and token endpoints with PKCE. It signs tokens with real
// keys so that go-oidc and x/oauth2 can be driven against it unchanged, and
// it can forge the bad tokens a verifier must refuse.
//
// It is a small fake for what a real provider cannot show in a test: key
// rotation on demand, tokens with chosen claims, and deliberately broken
// signatures.
package idptest

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/hmac"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/subtle"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"math/big"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

var b64 = base64.RawURLEncoding

// Key ids of the keys published from the start.
const (
	RSAKeyID = "rsa-1"
	ECKeyID  = "ec-1"
)

// Options configure the provider.
type Options struct {
	// Issuer is the issuer the provider claims, e.g. https://accounts.google.com.
	// Requests for its host are routed to the in-process server by Client.
	// Empty means the server's own URL.
	Issuer string
	// DiscoveryIssuer, when set, is the issuer written in the discovery
	// document instead of Issuer (Azure's "{tenantid}" template).
	DiscoveryIssuer string
	// AccessAudience is the aud of access tokens from the token endpoint
	// (default: the client id).
	AccessAudience string
	// TokenTTL is the lifetime of issued tokens (default one hour).
	TokenTTL time.Duration
}

// Client is an OAuth client registered at the provider.
type Client struct {
	ID           string
	Secret       string
	RedirectURIs []string
}

type signingKey struct {
	kid string
	alg string
	rsa *rsa.PrivateKey
	ec  *ecdsa.PrivateKey
}

type codeGrant struct {
	client, redirect, challenge, nonce, scope string
	user                                      map[string]any
	exp                                       time.Time
}

// IdP is a running in-process identity provider.
type IdP struct {
	// Server is the HTTP server; URL is its base URL.
	Server *httptest.Server
	URL    string

	opts   Options
	issuer string

	mu          sync.Mutex
	keys        map[string]*signingKey
	published   []string // kids in the JWKS, in order
	current     string   // kid used by Sign
	clients     map[string]Client
	codes       map[string]*codeGrant
	refresh     map[string]*codeGrant
	user        map[string]any
	jwksFetches int
	tokenCalls  int
	exchange    exchangeState // RFC 8693 token exchange (exchange.go)
}

// keyPool holds keys generated once per test binary: RSA generation is slow
// under the race detector.
var keyPool struct {
	once sync.Once
	rsa  []*rsa.PrivateKey
	ec   []*ecdsa.PrivateKey
}

func pool() ([]*rsa.PrivateKey, []*ecdsa.PrivateKey) {
	keyPool.once.Do(func() {
		for range 4 {
			k, err := rsa.GenerateKey(rand.Reader, 2048)
			if err != nil {
				panic(err)
			}
			keyPool.rsa = append(keyPool.rsa, k)
		}
		for range 2 {
			k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
			if err != nil {
				panic(err)
			}
			keyPool.ec = append(keyPool.ec, k)
		}
	})
	return keyPool.rsa, keyPool.ec
}

// New starts a provider that is closed when the test ends. It publishes an
// RS256 key (RSAKeyID, used by Sign) and an ES256 key (ECKeyID), and logs
// in a default user (sub "user-1", preferred_username "alice").
func New(t testing.TB, opts Options) *IdP {
	t.Helper()
	if opts.TokenTTL == 0 {
		opts.TokenTTL = time.Hour
	}
	rk, ek := pool()
	p := &IdP{
		opts:    opts,
		keys:    map[string]*signingKey{},
		clients: map[string]Client{},
		codes:   map[string]*codeGrant{},
		refresh: map[string]*codeGrant{},
		user: map[string]any{
			"sub": "user-1", "preferred_username": "alice", "email": "alice@example.com",
			"email_verified": true, "name": "Alice Example",
		},
	}
	p.keys[RSAKeyID] = &signingKey{kid: RSAKeyID, alg: "RS256", rsa: rk[0]}
	p.keys[ECKeyID] = &signingKey{kid: ECKeyID, alg: "ES256", ec: ek[0]}
	// A key that is never published, for "unknown kid" tokens.
	p.keys["unpublished"] = &signingKey{kid: "unpublished", alg: "RS256", rsa: rk[3]}
	p.published = []string{RSAKeyID, ECKeyID}
	p.current = RSAKeyID

	mux := http.NewServeMux()
	mux.HandleFunc("/", p.route)
	p.Server = httptest.NewServer(mux)
	p.URL = p.Server.URL
	p.issuer = strings.TrimRight(opts.Issuer, "/")
	if p.issuer == "" {
		p.issuer = p.URL
	}
	t.Cleanup(p.Server.Close)
	return p
}

// Issuer is the issuer the provider claims in tokens.
func (p *IdP) Issuer() string { return p.issuer }

// base is where the provider's endpoints live, under the issuer's origin.
func (p *IdP) base() string {
	u, _ := url.Parse(p.issuer)
	return u.Scheme + "://" + u.Host
}

// HTTPClient returns a client that reaches the provider, routing requests
// for the issuer's host (e.g. accounts.google.com) to the in-process server.
// Other hosts are reached normally. It does not follow redirects to hosts
// other than those two when noRedirect is used by callers.
func (p *IdP) HTTPClient() *http.Client {
	srv, _ := url.Parse(p.URL)
	iss, _ := url.Parse(p.issuer)
	return &http.Client{
		Timeout:   10 * time.Second,
		Transport: rerouter{from: iss.Host, to: srv.Host, next: p.Server.Client().Transport},
	}
}

type rerouter struct {
	from, to string
	next     http.RoundTripper
}

func (r rerouter) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.URL.Host == r.from && r.from != r.to {
		req = req.Clone(req.Context())
		req.URL.Scheme = "http"
		req.URL.Host = r.to
		req.Host = r.to
	}
	return r.next.RoundTrip(req)
}

// AddClient registers an OAuth client.
func (p *IdP) AddClient(c Client) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.clients[c.ID] = c
}

// SetUser replaces the claims of the user every authorisation logs in.
func (p *IdP) SetUser(claims map[string]any) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.user = claims
}

// Rotate publishes a new RS256 key, makes it the one Sign uses and removes
// the previous RS256 key from the JWKS. It returns the new key id.
func (p *IdP) Rotate() string {
	rk, _ := pool()
	p.mu.Lock()
	defer p.mu.Unlock()
	n := 0
	for _, k := range p.keys {
		if k.rsa != nil && k.kid != "unpublished" {
			n++
		}
	}
	kid := fmt.Sprintf("rsa-%d", n+1)
	p.keys[kid] = &signingKey{kid: kid, alg: "RS256", rsa: rk[n%3]}
	old := p.current
	p.published = slices.DeleteFunc(p.published, func(k string) bool { return k == old })
	p.published = append(p.published, kid)
	p.current = kid
	return kid
}

// RevokeSessions invalidates every refresh token issued so far, as when a
// user is disabled or signs out at the provider.
func (p *IdP) RevokeSessions() {
	p.mu.Lock()
	defer p.mu.Unlock()
	clear(p.refresh)
}

// TokenCalls is how many token requests the provider received.
func (p *IdP) TokenCalls() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.tokenCalls
}

// JWKSFetches is how many times the JWKS was fetched.
func (p *IdP) JWKSFetches() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.jwksFetches
}

// Claims returns valid claims for the default user with audience aud,
// issued now and expiring in an hour.
func (p *IdP) Claims(aud string) map[string]any {
	p.mu.Lock()
	defer p.mu.Unlock()
	now := time.Now()
	c := map[string]any{"iss": p.issuer, "aud": aud, "iat": now.Unix(), "exp": now.Add(time.Hour).Unix()}
	for k, v := range p.user {
		c[k] = v
	}
	return c
}

// Sign signs claims with the current RS256 key.
func (p *IdP) Sign(claims map[string]any) string {
	p.mu.Lock()
	kid := p.current
	p.mu.Unlock()
	return p.SignWith(kid, claims)
}

// SignWith signs claims with the key kid (RSAKeyID, ECKeyID, a rotated key,
// or "unpublished", a key never in the JWKS).
func (p *IdP) SignWith(kid string, claims map[string]any) string {
	return p.SignHeaderJSON(kid, "", claims)
}

// SignHeaderJSON signs claims with the key kid under a header whose JSON
// text is exactly header ("" means {"alg":...,"typ":"JWT","kid":kid}), so
// that tests can send headers with duplicate or escaped member names.
func (p *IdP) SignHeaderJSON(kid, header string, claims map[string]any) string {
	p.mu.Lock()
	k := p.keys[kid]
	p.mu.Unlock()
	if k == nil {
		panic("idptest: unknown key " + kid)
	}
	if header == "" {
		hb, _ := json.Marshal(map[string]any{"alg": k.alg, "typ": "JWT", "kid": k.kid})
		header = string(hb)
	}
	cb, _ := json.Marshal(claims)
	input := b64.EncodeToString([]byte(header)) + "." + b64.EncodeToString(cb)
	h := sha256.Sum256([]byte(input))
	var sig []byte
	if k.rsa != nil {
		var err error
		if sig, err = rsa.SignPKCS1v15(rand.Reader, k.rsa, crypto.SHA256, h[:]); err != nil {
			panic(err)
		}
	} else {
		r, s, err := ecdsa.Sign(rand.Reader, k.ec, h[:])
		if err != nil {
			panic(err)
		}
		sig = make([]byte, 64)
		r.FillBytes(sig[:32])
		s.FillBytes(sig[32:])
	}
	return input + "." + b64.EncodeToString(sig)
}

// NoneToken returns an unsigned token with "alg": "none".
func (p *IdP) NoneToken(claims map[string]any) string {
	return encode(map[string]any{"alg": "none", "typ": "JWT"}, claims) + "."
}

// HS256WithPublicKey returns a token "signed" with HS256 using the RS256
// public key (PEM) as the HMAC secret: the classic key-confusion attack.
func (p *IdP) HS256WithPublicKey(claims map[string]any) string {
	p.mu.Lock()
	k := p.keys[RSAKeyID]
	p.mu.Unlock()
	der, _ := x509.MarshalPKIXPublicKey(&k.rsa.PublicKey)
	secret := pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der})
	input := encode(map[string]any{"alg": "HS256", "typ": "JWT", "kid": RSAKeyID}, claims)
	mac := hmac.New(sha256.New, secret)
	mac.Write([]byte(input))
	return input + "." + b64.EncodeToString(mac.Sum(nil))
}

// SignHS256 returns an HS256 token signed with secret (OAUTH_PROVIDER=hmac).
func SignHS256(secret string, claims map[string]any) string {
	return SignHS256HeaderJSON(secret, `{"alg":"HS256","typ":"JWT"}`, claims)
}

// SignHS256HeaderJSON returns an HS256 token whose header JSON text is
// exactly header.
func SignHS256HeaderJSON(secret, header string, claims map[string]any) string {
	cb, _ := json.Marshal(claims)
	input := b64.EncodeToString([]byte(header)) + "." + b64.EncodeToString(cb)
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write([]byte(input))
	return input + "." + b64.EncodeToString(mac.Sum(nil))
}

// Tamper replaces the payload of a signed token with claims, keeping the
// original header and signature.
func Tamper(token string, claims map[string]any) string {
	parts := strings.Split(token, ".")
	cb, _ := json.Marshal(claims)
	return parts[0] + "." + b64.EncodeToString(cb) + "." + parts[2]
}

func encode(header, claims map[string]any) string {
	hb, _ := json.Marshal(header)
	cb, _ := json.Marshal(claims)
	return b64.EncodeToString(hb) + "." + b64.EncodeToString(cb)
}

func (p *IdP) route(w http.ResponseWriter, r *http.Request) {
	switch {
	case strings.HasSuffix(r.URL.Path, "/.well-known/openid-configuration"):
		p.discovery(w, r)
	case r.URL.Path == "/jwks":
		p.jwks(w)
	case r.URL.Path == "/authorize":
		p.authorize(w, r)
	case r.URL.Path == "/token":
		p.token(w, r)
	default:
		http.NotFound(w, r)
	}
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}

func (p *IdP) discovery(w http.ResponseWriter, r *http.Request) {
	iss := p.issuer
	if p.opts.DiscoveryIssuer != "" {
		iss = p.opts.DiscoveryIssuer
	}
	b := p.base()
	writeJSON(w, http.StatusOK, map[string]any{
		"issuer":                                iss,
		"authorization_endpoint":                b + "/authorize",
		"token_endpoint":                        b + "/token",
		"jwks_uri":                              b + "/jwks",
		"response_types_supported":              []string{"code"},
		"subject_types_supported":               []string{"public"},
		"id_token_signing_alg_values_supported": []string{"RS256", "ES256"},
		"code_challenge_methods_supported":      []string{"S256"},
		"grant_types_supported":                 []string{"authorization_code", "refresh_token"},
		"scopes_supported":                      []string{"openid", "profile", "email", "offline_access"},
		"token_endpoint_auth_methods_supported": []string{"client_secret_basic", "client_secret_post"},
	})
}

func (p *IdP) jwks(w http.ResponseWriter) {
	p.mu.Lock()
	p.jwksFetches++
	var keys []map[string]any
	for _, kid := range p.published {
		k := p.keys[kid]
		if k.rsa != nil {
			keys = append(keys, map[string]any{
				"kty": "RSA", "kid": kid, "use": "sig", "alg": "RS256",
				"n": b64.EncodeToString(k.rsa.N.Bytes()),
				"e": b64.EncodeToString(big.NewInt(int64(k.rsa.E)).Bytes()),
			})
		} else {
			keys = append(keys, map[string]any{
				"kty": "EC", "kid": kid, "use": "sig", "alg": "ES256", "crv": "P-256",
				"x": b64.EncodeToString(k.ec.X.FillBytes(make([]byte, 32))),
				"y": b64.EncodeToString(k.ec.Y.FillBytes(make([]byte, 32))),
			})
		}
	}
	p.mu.Unlock()
	writeJSON(w, http.StatusOK, map[string]any{"keys": keys})
}

// authorize logs the configured user in without a page and redirects back.
func (p *IdP) authorize(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	p.mu.Lock()
	c, ok := p.clients[q.Get("client_id")]
	p.mu.Unlock()
	if !ok {
		http.Error(w, "unknown client_id", http.StatusBadRequest)
		return
	}
	redirect := q.Get("redirect_uri")
	if !slices.Contains(c.RedirectURIs, redirect) {
		http.Error(w, "redirect_uri not registered", http.StatusBadRequest)
		return
	}
	back := func(v url.Values) {
		v.Set("state", q.Get("state"))
		http.Redirect(w, r, redirect+"?"+v.Encode(), http.StatusFound)
	}
	if q.Get("response_type") != "code" {
		back(url.Values{"error": {"unsupported_response_type"}})
		return
	}
	if q.Get("code_challenge") == "" || q.Get("code_challenge_method") != "S256" {
		back(url.Values{"error": {"invalid_request"}, "error_description": {"PKCE S256 required"}})
		return
	}
	code := rand.Text()
	p.mu.Lock()
	p.codes[code] = &codeGrant{
		client: c.ID, redirect: redirect, challenge: q.Get("code_challenge"), nonce: q.Get("nonce"),
		scope: q.Get("scope"), user: p.user, exp: time.Now().Add(time.Minute),
	}
	p.mu.Unlock()
	back(url.Values{"code": {code}})
}

func (p *IdP) token(w http.ResponseWriter, r *http.Request) {
	fail := func(status int, code, desc string) {
		writeJSON(w, status, map[string]string{"error": code, "error_description": desc})
	}
	if r.Method != http.MethodPost || r.ParseForm() != nil {
		fail(http.StatusBadRequest, "invalid_request", "POST a form")
		return
	}
	id, secret, ok := r.BasicAuth()
	if ok {
		id, _ = url.QueryUnescape(id)
		secret, _ = url.QueryUnescape(secret)
	} else {
		id, secret = r.PostForm.Get("client_id"), r.PostForm.Get("client_secret")
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.tokenCalls++
	c, ok := p.clients[id]
	if !ok || subtle.ConstantTimeCompare([]byte(c.Secret), []byte(secret)) != 1 {
		fail(http.StatusUnauthorized, "invalid_client", "bad client credentials")
		return
	}
	var g *codeGrant
	switch r.PostForm.Get("grant_type") {
	case "authorization_code":
		g = p.codes[r.PostForm.Get("code")]
		delete(p.codes, r.PostForm.Get("code"))
		if g == nil || time.Now().After(g.exp) || g.client != id || g.redirect != r.PostForm.Get("redirect_uri") {
			fail(http.StatusBadRequest, "invalid_grant", "bad code")
			return
		}
		sum := sha256.Sum256([]byte(r.PostForm.Get("code_verifier")))
		if b64.EncodeToString(sum[:]) != g.challenge {
			fail(http.StatusBadRequest, "invalid_grant", "PKCE verification failed")
			return
		}
	case "refresh_token":
		g = p.refresh[r.PostForm.Get("refresh_token")]
		delete(p.refresh, r.PostForm.Get("refresh_token"))
		if g == nil || g.client != id {
			fail(http.StatusBadRequest, "invalid_grant", "bad refresh token")
			return
		}
	case GrantTokenExchange:
		p.exchangeLocked(w, r, id)
		return
	default:
		fail(http.StatusBadRequest, "unsupported_grant_type", "")
		return
	}
	now := time.Now()
	claims := func(aud string) map[string]any {
		c := map[string]any{"iss": p.issuer, "aud": aud, "iat": now.Unix(), "exp": now.Add(p.opts.TokenTTL).Unix()}
		for k, v := range g.user {
			c[k] = v
		}
		return c
	}
	idc := claims(id)
	if g.nonce != "" {
		idc["nonce"] = g.nonce
	}
	aud := p.opts.AccessAudience
	if aud == "" {
		aud = id
	}
	kid := p.current
	p.mu.Unlock()
	access := p.SignWith(kid, claims(aud))
	idToken := p.SignWith(kid, idc)
	p.mu.Lock()
	rt := rand.Text()
	p.refresh[rt] = &codeGrant{client: id, user: g.user}
	writeJSON(w, http.StatusOK, map[string]any{
		"access_token": access, "id_token": idToken, "refresh_token": rt,
		"token_type": "Bearer", "expires_in": int(p.opts.TokenTTL.Seconds()),
	})
}
