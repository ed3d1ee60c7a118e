package httpauth

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"mime"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
	"golang.org/x/oauth2"
)

// Proxy-mode endpoints.
const (
	registerPath  = "/oauth/register"
	authorizePath = "/oauth/authorize"
	callbackPath  = "/oauth/callback"
	tokenPath     = "/oauth/token"
)

// Lifetimes of what proxy mode issues.
const (
	stateTTL        = 10 * time.Minute // the user's login at the provider
	codeTTL         = time.Minute      // authorisation codes: single use
	accessTokenTTL  = time.Hour
	refreshTokenTTL = 24 * time.Hour     // each refresh token: single use, rotated
	sessionMaxAge   = 7 * 24 * time.Hour // after this a new login is needed
	maxRedirectURIs = 10
)

// proxyFlow is the authorisation server of proxy mode. It keeps no state
// beyond the set of used codes and refresh tokens: registrations, state,
// codes and refresh tokens are sealed with JWT_SECRET.
type proxyFlow struct {
	l     *Layer
	seal  *sealer
	used  usedSet
	cb    string // this server's callback at the provider
	fixed bool   // fixed mode: clients must redirect to loopback
}

func newProxyFlow(l *Layer) (*proxyFlow, error) {
	s, err := newSealer(l.secret)
	if err != nil {
		return nil, err
	}
	p := &proxyFlow{l: l, seal: s, cb: l.cfg.BaseURL + callbackPath, fixed: len(l.cfg.RedirectURIs) < 2}
	if len(l.cfg.RedirectURIs) == 1 {
		p.cb = l.cfg.RedirectURIs[0]
	}
	return p, nil
}

// clientReg is a registered client, sealed into its client_id.
type clientReg struct {
	RedirectURIs []string `json:"r"`
	Name         string   `json:"n,omitempty"`
	IssuedAt     int64    `json:"i"`
}

// flowState travels through the provider as the signed, expiring state.
type flowState struct {
	Client        string `json:"c"` // hash of the client id
	Redirect      string `json:"r"`
	RedirectGiven bool   `json:"rg,omitempty"`
	ClientState   string `json:"s,omitempty"`
	Challenge     string `json:"pc"`
	Scope         string `json:"sc,omitempty"`
	Verifier      string `json:"v"` // this server's PKCE verifier at the provider
	Nonce         string `json:"n"`
	Exp           int64  `json:"e"`
}

// grant is the content of an authorisation code or a refresh token.
type grant struct {
	ID            string         `json:"j"`
	Client        string         `json:"c"`
	Redirect      string         `json:"r,omitempty"`
	RedirectGiven bool           `json:"rg,omitempty"`
	Challenge     string         `json:"pc,omitempty"`
	Scope         string         `json:"sc,omitempty"`
	Claims        map[string]any `json:"cl"`
	AuthTime      int64          `json:"at"`
	Exp           int64          `json:"e"`
	// Upstream is the provider's refresh token, sealed with the rest.
	Upstream string `json:"u,omitempty"`
	// UpstreamAccess is the provider's access token and UpstreamExp its
	// expiry (Unix seconds, 0: not said), kept with Config.UpstreamAccess.
	UpstreamAccess string `json:"ua,omitempty"`
	UpstreamExp    int64  `json:"ue,omitempty"`
}

// upstreamClaim is the claim of an issued access token that holds the
// provider's access token, sealed for purposeUpstream.
const (
	upstreamClaim   = "upt"
	purposeUpstream = "upstream-access"
)

// upstreamToken is the sealed content of upstreamClaim.
type upstreamToken struct {
	Token string `json:"t"`
	Exp   int64  `json:"e,omitempty"`
}

// keepUpstream records the provider's access token of tok in g, when the
// server asked for it.
func (p *proxyFlow) keepUpstream(g *grant, tok *oauth2.Token) {
	if !p.l.cfg.UpstreamAccess || tok.AccessToken == "" {
		return
	}
	g.UpstreamAccess, g.UpstreamExp = tok.AccessToken, 0
	if !tok.Expiry.IsZero() {
		g.UpstreamExp = tok.Expiry.Unix()
	}
}

// upstreamOf returns the provider's access token sealed in token (an
// access token this server issued and Verify accepted), while it is valid.
func (p *proxyFlow) upstreamOf(token string) (string, bool) {
	_, claims, _, _, err := splitJWT(token)
	if err != nil {
		return "", false
	}
	sealed, _ := claims[upstreamClaim].(string)
	var up upstreamToken
	if sealed == "" || p.seal.open(purposeUpstream, sealed, &up) != nil || up.Token == "" {
		return "", false
	}
	if up.Exp != 0 && p.l.now().Unix() >= up.Exp {
		return "", false
	}
	return up.Token, true
}

func clientHash(clientID string) string {
	h := sha256.Sum256([]byte(clientID))
	return b64.EncodeToString(h[:16])
}

// redirectAllowed applies the OAUTH_REDIRECT_URI rule to a client's redirect
// URI: loopback only in fixed mode, an exact allowlist entry otherwise.
func (p *proxyFlow) redirectAllowed(uri string) bool {
	u, err := url.Parse(uri)
	if err != nil || u.Fragment != "" || u.User != nil {
		return false
	}
	if !p.fixed {
		return slices.Contains(p.l.cfg.RedirectURIs, uri)
	}
	return u.Scheme == "http" && isLoopbackHost(u.Hostname())
}

func (p *proxyFlow) redirectRule() string {
	if p.fixed {
		return "redirect URIs must be loopback (http://127.0.0.1:<port>/..., http://localhost:<port>/...) because OAUTH_REDIRECT_URI names a single callback"
	}
	return "redirect URIs must be one of those listed in OAUTH_REDIRECT_URI"
}

// ownResource reports whether an RFC 8707 resource names this server.
func (p *proxyFlow) ownResource(res string) bool {
	b := p.l.cfg.BaseURL
	return res == b || res == b+"/" || strings.HasPrefix(res, b+"/")
}

func (p *proxyFlow) oauthConfig(provider *oidc.Provider) *oauth2.Config {
	scopes := []string{oidc.ScopeOpenID, oidc.ScopeProfile, oidc.ScopeEmail}
	// A refresh token from the provider lets each refresh here ask the
	// provider whether the user still has access. Ask for offline_access
	// only where discovery lists it: some providers refuse unknown scopes.
	var doc struct {
		Scopes []string `json:"scopes_supported"`
	}
	if p.l.cfg.Provider != ProviderGoogle && provider.Claims(&doc) == nil && slices.Contains(doc.Scopes, oidc.ScopeOfflineAccess) {
		scopes = append(scopes, oidc.ScopeOfflineAccess)
	}
	return &oauth2.Config{
		ClientID:     p.l.cfg.ClientID,
		ClientSecret: p.l.cfg.ClientSecret,
		Endpoint:     provider.Endpoint(),
		RedirectURL:  p.cb,
		Scopes:       scopes,
	}
}

// authOptions are the provider-specific parameters of the login redirect.
func (p *proxyFlow) authOptions() []oauth2.AuthCodeOption {
	if p.l.cfg.Provider == ProviderGoogle {
		// Google has no offline_access scope; it issues refresh tokens for
		// access_type=offline.
		return []oauth2.AuthCodeOption{oauth2.AccessTypeOffline}
	}
	return nil
}

// oauthError is an RFC 6749 error response.
func oauthError(w http.ResponseWriter, status int, code, desc string) {
	writeJSON(w, status, map[string]string{"error": code, "error_description": desc})
}

// register is RFC 7591 dynamic client registration for public clients.
func (p *proxyFlow) register(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		methodNotAllowed(w, "POST")
		return
	}
	var req struct {
		RedirectURIs            []string `json:"redirect_uris"`
		ClientName              string   `json:"client_name"`
		GrantTypes              []string `json:"grant_types"`
		ResponseTypes           []string `json:"response_types"`
		TokenEndpointAuthMethod string   `json:"token_endpoint_auth_method"`
		Scope                   string   `json:"scope"`
	}
	if err := json.NewDecoder(io.LimitReader(r.Body, 64<<10)).Decode(&req); err != nil {
		oauthError(w, http.StatusBadRequest, "invalid_client_metadata", "the body must be a JSON client registration (RFC 7591)")
		return
	}
	if len(req.RedirectURIs) == 0 || len(req.RedirectURIs) > maxRedirectURIs {
		oauthError(w, http.StatusBadRequest, "invalid_redirect_uri", fmt.Sprintf("send 1 to %d redirect_uris", maxRedirectURIs))
		return
	}
	for _, u := range req.RedirectURIs {
		if !p.redirectAllowed(u) {
			p.l.logger.Info("client registration refused: redirect URI not allowed", "redirect_uri", u)
			oauthError(w, http.StatusBadRequest, "invalid_redirect_uri", fmt.Sprintf("redirect URI %q is not allowed: %s", u, p.redirectRule()))
			return
		}
	}
	for _, g := range req.GrantTypes {
		if g != "authorization_code" && g != "refresh_token" {
			oauthError(w, http.StatusBadRequest, "invalid_client_metadata", fmt.Sprintf("grant type %q is not supported; use authorization_code and refresh_token", g))
			return
		}
	}
	for _, t := range req.ResponseTypes {
		if t != "code" {
			oauthError(w, http.StatusBadRequest, "invalid_client_metadata", fmt.Sprintf("response type %q is not supported; use code", t))
			return
		}
	}
	if len(req.ClientName) > 200 {
		req.ClientName = req.ClientName[:200]
	}
	now := p.l.now()
	id, err := p.seal.seal("client", clientReg{RedirectURIs: req.RedirectURIs, Name: req.ClientName, IssuedAt: now.Unix()})
	if err != nil {
		oauthError(w, http.StatusInternalServerError, "server_error", "cannot register the client")
		return
	}
	p.l.logger.Info("client registered", "client_name", req.ClientName, "redirect_uris", strings.Join(req.RedirectURIs, ","))
	// Every client is public (PKCE, no secret), whatever auth method it asked for.
	writeJSON(w, http.StatusCreated, map[string]any{
		"client_id":                  id,
		"client_id_issued_at":        now.Unix(),
		"client_name":                req.ClientName,
		"redirect_uris":              req.RedirectURIs,
		"grant_types":                []string{"authorization_code", "refresh_token"},
		"response_types":             []string{"code"},
		"token_endpoint_auth_method": "none",
	})
}

// errorPage answers an authorisation request that cannot be redirected back
// to the client (unknown client, bad redirect URI, forged state): sending
// the browser anywhere would make this an open redirect.
func errorPage(w http.ResponseWriter, code, desc string) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusBadRequest)
	fmt.Fprintf(w, "OAuth error (%s): %s\n", code, desc)
}

// redirectBack sends the browser to the client's (already validated)
// redirect URI with params, its state and this issuer (RFC 9207).
func (p *proxyFlow) redirectBack(w http.ResponseWriter, r *http.Request, redirect, state string, params url.Values) {
	u, err := url.Parse(redirect)
	if err != nil {
		errorPage(w, "server_error", "bad redirect URI")
		return
	}
	q := u.Query()
	for k, vs := range params {
		q[k] = vs
	}
	if state != "" {
		q.Set("state", state)
	}
	q.Set("iss", p.l.cfg.BaseURL)
	u.RawQuery = q.Encode()
	w.Header().Set("Cache-Control", "no-store")
	http.Redirect(w, r, u.String(), http.StatusFound)
}

// authorize validates the client's request and sends the browser to the
// identity provider with this server's own PKCE and a sealed state.
func (p *proxyFlow) authorize(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodPost {
		methodNotAllowed(w, "GET, POST")
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, 64<<10)
	if err := r.ParseForm(); err != nil {
		errorPage(w, "invalid_request", "cannot parse the request")
		return
	}
	q := r.Form
	clientID := q.Get("client_id")
	var reg clientReg
	if err := p.seal.open("client", clientID, &reg); err != nil {
		errorPage(w, "invalid_client", "unknown client_id; register the client at "+p.l.cfg.BaseURL+registerPath+" first")
		return
	}
	redirect := q.Get("redirect_uri")
	given := redirect != ""
	if !given {
		if len(reg.RedirectURIs) != 1 {
			errorPage(w, "invalid_request", "redirect_uri is required when the client registered several")
			return
		}
		redirect = reg.RedirectURIs[0]
	}
	if !slices.Contains(reg.RedirectURIs, redirect) || !p.redirectAllowed(redirect) {
		p.l.logger.Info("authorization refused: redirect URI not allowed", "redirect_uri", redirect)
		errorPage(w, "invalid_request", fmt.Sprintf("redirect_uri %q is not registered for this client or not allowed: %s", redirect, p.redirectRule()))
		return
	}
	// From here on errors go back to the client, whose redirect URI is known good.
	state := q.Get("state")
	fail := func(code, desc string) {
		p.redirectBack(w, r, redirect, state, url.Values{"error": {code}, "error_description": {desc}})
	}
	switch {
	case q.Get("response_type") != "code":
		fail("unsupported_response_type", "response_type must be code")
		return
	case q.Get("code_challenge") == "":
		fail("invalid_request", "PKCE is required: send code_challenge with code_challenge_method=S256")
		return
	case q.Get("code_challenge_method") != "S256":
		fail("invalid_request", "code_challenge_method must be S256")
		return
	case !validPKCE(q.Get("code_challenge"), 43, 43):
		fail("invalid_request", "code_challenge must be the 43-character base64url SHA-256 of the code verifier")
		return
	case len(state) > 2048 || len(q.Get("scope")) > 2048:
		fail("invalid_request", "state or scope is too long")
		return
	}
	if res := q.Get("resource"); res != "" && !p.ownResource(res) {
		fail("invalid_target", "resource must be this server ("+p.l.cfg.BaseURL+")")
		return
	}
	provider, err := p.l.oidc.endpoint(r.Context())
	if err != nil {
		p.l.logger.Warn("authorization failed: identity provider unavailable", "error", err.Error())
		fail("temporarily_unavailable", "the identity provider cannot be reached; retry later")
		return
	}
	verifier := oauth2.GenerateVerifier()
	st := flowState{
		Client: clientHash(clientID), Redirect: redirect, RedirectGiven: given, ClientState: state,
		Challenge: q.Get("code_challenge"), Scope: q.Get("scope"), Verifier: verifier,
		Nonce: randomString(16), Exp: p.l.now().Add(stateTTL).Unix(),
	}
	sealed, err := p.seal.seal("state", st)
	if err != nil {
		fail("server_error", "cannot start the login")
		return
	}
	w.Header().Set("Cache-Control", "no-store")
	opts := append(p.authOptions(), oauth2.S256ChallengeOption(verifier), oidc.Nonce(st.Nonce))
	http.Redirect(w, r, p.oauthConfig(provider).AuthCodeURL(sealed, opts...), http.StatusFound)
}

// callback receives the provider's code, exchanges it, verifies the ID token
// and redirects to the client with this server's own single-use code.
func (p *proxyFlow) callback(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet {
		methodNotAllowed(w, "GET")
		return
	}
	q := r.URL.Query()
	var st flowState
	if err := p.seal.open("state", q.Get("state"), &st); err != nil || p.l.now().Unix() >= st.Exp {
		p.l.logger.Info("callback refused: invalid, forged or expired state", "remote", r.RemoteAddr)
		errorPage(w, "invalid_request", "invalid, forged or expired state; start the login again from your MCP client")
		return
	}
	back := func(params url.Values) { p.redirectBack(w, r, st.Redirect, st.ClientState, params) }
	if e := q.Get("error"); e != "" {
		p.l.logger.Info("identity provider refused the login", "error", e, "description", q.Get("error_description"))
		code := "access_denied"
		if e == "temporarily_unavailable" || e == "server_error" {
			code = e
		}
		back(url.Values{"error": {code}, "error_description": {"the identity provider refused the login: " + e}})
		return
	}
	provider, err := p.l.oidc.endpoint(r.Context())
	if err != nil {
		back(url.Values{"error": {"temporarily_unavailable"}, "error_description": {"the identity provider cannot be reached; retry later"}})
		return
	}
	ctx := oidc.ClientContext(r.Context(), p.l.cfg.HTTPClient)
	tok, err := p.oauthConfig(provider).Exchange(ctx, q.Get("code"), oauth2.VerifierOption(st.Verifier))
	if err != nil {
		p.l.logger.Warn("exchanging the identity provider's code failed", "error", err.Error())
		back(url.Values{"error": {"access_denied"}, "error_description": {"exchanging the identity provider's code failed"}})
		return
	}
	rawID, _ := tok.Extra("id_token").(string)
	if rawID == "" {
		back(url.Values{"error": {"server_error"}, "error_description": {"the identity provider returned no ID token; request the openid scope"}})
		return
	}
	claims, err := p.l.oidc.verifyIDToken(ctx, rawID)
	if err == nil && str(claims, "nonce") != st.Nonce {
		err = errors.New("nonce mismatch")
	}
	if err != nil {
		p.l.logger.Warn("the identity provider's ID token was refused", "error", err.Error())
		back(url.Values{"error": {"access_denied"}, "error_description": {"the identity provider's ID token was refused"}})
		return
	}
	now := p.l.now()
	cg := grant{
		ID: randomString(16), Client: st.Client, Redirect: st.Redirect, RedirectGiven: st.RedirectGiven,
		Challenge: st.Challenge, Scope: st.Scope, Claims: claims, AuthTime: now.Unix(), Exp: now.Add(codeTTL).Unix(),
		Upstream: tok.RefreshToken,
	}
	p.keepUpstream(&cg, tok)
	code, err := p.seal.seal("code", cg)
	if err != nil {
		back(url.Values{"error": {"server_error"}, "error_description": {"cannot issue the code"}})
		return
	}
	p.l.logger.Info("login completed at the identity provider", "subject", str(claims, "sub"))
	back(url.Values{"code": {code}})
}

// token is the token endpoint: authorization_code with PKCE, and refresh_token.
func (p *proxyFlow) token(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		methodNotAllowed(w, "POST")
		return
	}
	if mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); mt != "application/x-www-form-urlencoded" {
		oauthError(w, http.StatusBadRequest, "invalid_request", "send the token request as application/x-www-form-urlencoded")
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, 64<<10)
	if err := r.ParseForm(); err != nil {
		oauthError(w, http.StatusBadRequest, "invalid_request", "cannot parse the token request")
		return
	}
	f := r.PostForm
	clientID := f.Get("client_id")
	if u, _, ok := r.BasicAuth(); ok && clientID == "" {
		clientID, _ = url.QueryUnescape(u)
	}
	var reg clientReg
	if err := p.seal.open("client", clientID, &reg); err != nil {
		oauthError(w, http.StatusUnauthorized, "invalid_client", "unknown client_id; register the client first")
		return
	}
	if res := f.Get("resource"); res != "" && !p.ownResource(res) {
		oauthError(w, http.StatusBadRequest, "invalid_target", "resource must be this server ("+p.l.cfg.BaseURL+")")
		return
	}
	now := p.l.now()
	var g grant
	switch f.Get("grant_type") {
	case "authorization_code":
		if err := p.seal.open("code", f.Get("code"), &g); err != nil || now.Unix() >= g.Exp {
			oauthError(w, http.StatusBadRequest, "invalid_grant", "the authorization code is invalid or expired")
			return
		}
		if g.Client != clientHash(clientID) {
			oauthError(w, http.StatusBadRequest, "invalid_grant", "the authorization code was issued to another client")
			return
		}
		if red := f.Get("redirect_uri"); (red != "" || g.RedirectGiven) && red != g.Redirect {
			oauthError(w, http.StatusBadRequest, "invalid_grant", "redirect_uri does not match the authorization request")
			return
		}
		if !p.used.claim("code:"+g.ID, time.Unix(g.Exp, 0), now) {
			p.l.logger.Warn("authorization code reused", "subject", str(g.Claims, "sub"))
			oauthError(w, http.StatusBadRequest, "invalid_grant", "the authorization code was already used")
			return
		}
		v := f.Get("code_verifier")
		if !validPKCE(v, 43, 128) {
			oauthError(w, http.StatusBadRequest, "invalid_grant", "code_verifier is missing or malformed (43-128 unreserved characters)")
			return
		}
		sum := sha256.Sum256([]byte(v))
		if subtle.ConstantTimeCompare([]byte(b64.EncodeToString(sum[:])), []byte(g.Challenge)) != 1 {
			oauthError(w, http.StatusBadRequest, "invalid_grant", "PKCE verification failed: code_verifier does not match code_challenge")
			return
		}
	case "refresh_token":
		if err := p.seal.open("refresh", f.Get("refresh_token"), &g); err != nil || now.Unix() >= g.Exp {
			oauthError(w, http.StatusBadRequest, "invalid_grant", "the refresh token is invalid or expired; log in again")
			return
		}
		if g.Client != clientHash(clientID) {
			oauthError(w, http.StatusBadRequest, "invalid_grant", "the refresh token was issued to another client")
			return
		}
		if !p.used.claim("refresh:"+g.ID, time.Unix(g.Exp, 0), now) {
			p.l.logger.Warn("refresh token reused", "subject", str(g.Claims, "sub"))
			oauthError(w, http.StatusBadRequest, "invalid_grant", "the refresh token was already used; log in again")
			return
		}
		if g.Upstream != "" && !p.renewUpstream(w, r, &g) {
			return
		}
	case "":
		oauthError(w, http.StatusBadRequest, "invalid_request", "grant_type is required")
		return
	default:
		oauthError(w, http.StatusBadRequest, "unsupported_grant_type", "use authorization_code or refresh_token")
		return
	}
	p.issue(w, clientID, g, now)
}

// issue answers a token request with a new access token and a rotated
// refresh token.
func (p *proxyFlow) issue(w http.ResponseWriter, clientID string, g grant, now time.Time) {
	at := p.l.own
	claims := map[string]any{
		"iss": at.issuer, "aud": p.l.cfg.BaseURL, "sub": str(g.Claims, "sub"),
		"iat": now.Unix(), "exp": now.Add(accessTokenTTL).Unix(), "jti": randomString(12),
		"client_id": clientHash(clientID), "idp": g.Claims,
	}
	if g.Scope != "" {
		claims["scope"] = g.Scope
	}
	ttl := accessTokenTTL
	if g.UpstreamAccess != "" && (g.UpstreamExp == 0 || g.UpstreamExp > now.Unix()) {
		sealed, err := p.seal.seal(purposeUpstream, upstreamToken{Token: g.UpstreamAccess, Exp: g.UpstreamExp})
		if err != nil {
			oauthError(w, http.StatusInternalServerError, "server_error", "cannot issue the token")
			return
		}
		claims[upstreamClaim] = sealed
		if g.UpstreamExp != 0 {
			// Valid no longer than the provider's token behind it: the
			// client refreshes, and the refresh renews that token.
			ttl = min(ttl, time.Unix(g.UpstreamExp, 0).Sub(now))
			claims["exp"] = now.Add(ttl).Unix()
		}
	}
	access, err := signHS256(at.key, accessTokenType, claims)
	if err != nil {
		oauthError(w, http.StatusInternalServerError, "server_error", "cannot issue the token")
		return
	}
	resp := map[string]any{"access_token": access, "token_type": "Bearer", "expires_in": int(ttl.Seconds())}
	if g.Scope != "" {
		resp["scope"] = g.Scope
	}
	end := time.Unix(g.AuthTime, 0).Add(sessionMaxAge)
	if exp := now.Add(refreshTokenTTL); exp.Before(end) {
		end = exp
	}
	if now.Before(end) {
		rg := grant{ID: randomString(16), Client: g.Client, Scope: g.Scope, Claims: g.Claims, AuthTime: g.AuthTime, Exp: end.Unix(), Upstream: g.Upstream,
			UpstreamAccess: g.UpstreamAccess, UpstreamExp: g.UpstreamExp}
		if rt, err := p.seal.seal("refresh", rg); err == nil {
			resp["refresh_token"] = rt
		}
	}
	w.Header().Set("Pragma", "no-cache")
	writeJSON(w, http.StatusOK, resp)
}

// renewUpstream refreshes the provider's session behind g, so that a user
// disabled or signed out at the provider cannot keep refreshing here. It
// updates g's claims and upstream token, or answers the error and returns false.
func (p *proxyFlow) renewUpstream(w http.ResponseWriter, r *http.Request, g *grant) bool {
	provider, err := p.l.oidc.endpoint(r.Context())
	if err != nil {
		oauthError(w, http.StatusServiceUnavailable, "temporarily_unavailable", "the identity provider cannot be reached; retry later")
		return false
	}
	ctx := oidc.ClientContext(r.Context(), p.l.cfg.HTTPClient)
	tok, err := p.oauthConfig(provider).TokenSource(ctx, &oauth2.Token{RefreshToken: g.Upstream}).Token()
	if err != nil {
		var re *oauth2.RetrieveError
		if errors.As(err, &re) && re.Response != nil && re.Response.StatusCode < 500 {
			p.l.logger.Info("the identity provider refused to renew a session", "subject", str(g.Claims, "sub"), "error", re.ErrorCode)
			oauthError(w, http.StatusBadRequest, "invalid_grant", "the identity provider refused to renew the session; log in again")
			return false
		}
		p.l.logger.Warn("renewing a session at the identity provider failed", "error", err.Error())
		oauthError(w, http.StatusServiceUnavailable, "temporarily_unavailable", "the identity provider cannot be reached; retry later")
		return false
	}
	if tok.RefreshToken != "" {
		g.Upstream = tok.RefreshToken
	}
	p.keepUpstream(g, tok)
	if rawID, _ := tok.Extra("id_token").(string); rawID != "" {
		claims, err := p.l.oidc.verifyIDToken(ctx, rawID)
		if err != nil {
			p.l.logger.Warn("the identity provider's renewed ID token was refused", "error", err.Error())
			oauthError(w, http.StatusBadRequest, "invalid_grant", "the identity provider's renewed ID token was refused; log in again")
			return false
		}
		if str(claims, "sub") != str(g.Claims, "sub") {
			oauthError(w, http.StatusBadRequest, "invalid_grant", "the identity provider renewed the session for another user; log in again")
			return false
		}
		g.Claims = claims
	}
	return true
}

// ownIdentity reads the identity from an access token this server issued:
// the identity provider's ID token claims travel in its "idp" claim.
func ownIdentity(provider string, claims map[string]any) *Identity {
	idp, ok := claims["idp"].(map[string]any)
	if !ok {
		idp = maps.Clone(claims)
	}
	return identityFromClaims(provider, idp)
}

// validPKCE checks RFC 7636 syntax: min..max unreserved characters.
func validPKCE(s string, min, max int) bool {
	if len(s) < min || len(s) > max {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '.' || c == '_' || c == '~') {
			return false
		}
	}
	return true
}
