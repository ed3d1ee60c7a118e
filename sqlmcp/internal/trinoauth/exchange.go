package trinoauth

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"
	"unicode"
)

// RFC 8693 names.
const (
	GrantTokenExchange   = "urn:ietf:params:oauth:grant-type:token-exchange"
	TokenTypeAccessToken = "urn:ietf:params:oauth:token-type:access_token"
)

// Defaults of an Exchanger.
const (
	// DefaultRefreshBefore is how long before its expiry an exchanged token
	// stops being reused: long enough for a query started with it to fetch
	// its next page, short against the hour a provider typically grants.
	DefaultRefreshBefore = time.Minute
	// DefaultMaxEntries bounds the cache (one entry per caller token).
	DefaultMaxEntries = 10_000
	// defaultTTL is assumed when the provider sends no expires_in.
	defaultTTL = 5 * time.Minute
)

// Exchanger obtains a token for Trino per caller by OAuth 2.0 Token
// Exchange (RFC 8693) and reuses it until shortly before it expires
// (SQLENGINE_AUTH=token-exchange). It is a TokenSource: the caller's token
// comes from the context (WithSubjectToken). It is safe for concurrent use;
// concurrent calls for one caller make one exchange.
type Exchanger struct {
	// URL is the provider's token endpoint (SQLENGINE_TOKEN_EXCHANGE_URL).
	URL string
	// ClientID and ClientSecret authenticate sqlmcp at the provider
	// (HTTP basic, RFC 6749 2.3.1).
	ClientID, ClientSecret string
	// Audience is Trino's audience (SQLENGINE_TOKEN_EXCHANGE_AUDIENCE): the
	// aud Trino's http-server.authentication.jwt.required-audience expects.
	Audience string
	// Scope, when set, is sent as scope.
	Scope string
	// HTTPClient reaches the provider (default: a client with a 30 s timeout).
	HTTPClient *http.Client
	// RefreshBefore: a cached token is exchanged again this long before it
	// expires (default DefaultRefreshBefore; half the lifetime for tokens
	// shorter than twice that).
	RefreshBefore time.Duration
	// MaxEntries bounds the cache (default DefaultMaxEntries).
	MaxEntries int
	// Now is the clock (default time.Now).
	Now func() time.Time

	mu    sync.Mutex
	cache map[[32]byte]*entry
}

type entry struct {
	mu      sync.Mutex // held while exchanging
	token   string
	refresh time.Time // reuse until then
}

// ExchangeError is the provider refusing an exchange: its HTTP status and
// OAuth error. Its text names the provider's answer, never a token.
type ExchangeError struct {
	Provider    string // host of the token endpoint
	Status      int
	Code        string // OAuth error, e.g. invalid_grant
	Description string
}

func (e *ExchangeError) Error() string {
	msg := fmt.Sprintf("the identity provider %s refused to exchange the caller's token for one for Trino: HTTP %d", e.Provider, e.Status)
	if e.Code != "" {
		msg += ", " + e.Code
	}
	if e.Description != "" {
		msg += ": " + e.Description
	}
	return msg
}

// ErrNoSubjectToken is returned when the context carries no caller token:
// with token exchange a query never runs as the service user instead.
var ErrNoSubjectToken = errors.New("no signed-in caller: token exchange needs the caller's access token (enable OAuth on the MCP server)")

func (x *Exchanger) now() time.Time {
	if x.Now != nil {
		return x.Now()
	}
	return time.Now()
}

// Token implements TokenSource for the caller token in ctx.
func (x *Exchanger) Token(ctx context.Context) (string, error) {
	subject, ok := SubjectToken(ctx)
	if !ok {
		return "", ErrNoSubjectToken
	}
	return x.TokenFor(ctx, subject)
}

// TokenFor returns the Trino token for subject, exchanging it when there is
// no cached token still good for RefreshBefore.
func (x *Exchanger) TokenFor(ctx context.Context, subject string) (string, error) {
	key := sha256.Sum256([]byte(subject))
	x.mu.Lock()
	if x.cache == nil {
		x.cache = map[[32]byte]*entry{}
	}
	e := x.cache[key]
	if e == nil {
		x.evictLocked()
		e = &entry{}
		x.cache[key] = e
	}
	x.mu.Unlock()

	e.mu.Lock()
	defer e.mu.Unlock()
	if e.token != "" && x.now().Before(e.refresh) {
		return e.token, nil
	}
	tok, ttl, err := x.exchange(ctx, subject)
	if err != nil {
		e.token = ""
		return "", err
	}
	before := x.RefreshBefore
	if before <= 0 {
		before = DefaultRefreshBefore
	}
	if ttl < 2*before {
		before = ttl / 2
	}
	e.token, e.refresh = tok, x.now().Add(ttl-before)
	return tok, nil
}

// evictLocked keeps the cache within MaxEntries: stale entries first, then
// any.
func (x *Exchanger) evictLocked() {
	max := x.MaxEntries
	if max <= 0 {
		max = DefaultMaxEntries
	}
	if len(x.cache) < max {
		return
	}
	now := x.now()
	for k, e := range x.cache {
		if e.mu.TryLock() {
			stale := !now.Before(e.refresh)
			e.mu.Unlock()
			if stale {
				delete(x.cache, k)
			}
		}
	}
	for k := range x.cache {
		if len(x.cache) < max {
			break
		}
		delete(x.cache, k)
	}
}

// Forget drops the cached token of subject (e.g. after Trino refused it).
func (x *Exchanger) Forget(subject string) {
	key := sha256.Sum256([]byte(subject))
	x.mu.Lock()
	delete(x.cache, key)
	x.mu.Unlock()
}

func (x *Exchanger) exchange(ctx context.Context, subject string) (string, time.Duration, error) {
	u, err := url.Parse(x.URL)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return "", 0, errors.New("SQLENGINE_TOKEN_EXCHANGE_URL is not an http(s) URL")
	}
	form := url.Values{
		"grant_type":           {GrantTokenExchange},
		"subject_token":        {subject},
		"subject_token_type":   {TokenTypeAccessToken},
		"requested_token_type": {TokenTypeAccessToken},
		"audience":             {x.Audience},
	}
	if x.Scope != "" {
		form.Set("scope", x.Scope)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, x.URL, strings.NewReader(form.Encode()))
	if err != nil {
		return "", 0, fmt.Errorf("exchange the caller's token at %s: %w", u.Host, err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/json")
	req.SetBasicAuth(url.QueryEscape(x.ClientID), url.QueryEscape(x.ClientSecret))
	hc := x.HTTPClient
	if hc == nil {
		hc = &http.Client{Timeout: 30 * time.Second}
	}
	resp, err := hc.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // the URL is named below; its query could hold secrets
		}
		return "", 0, fmt.Errorf("exchange the caller's token at %s: %w", u.Host, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return "", 0, fmt.Errorf("exchange the caller's token at %s: read the answer: %w", u.Host, err)
	}
	var ans struct {
		AccessToken     string          `json:"access_token"`
		IssuedTokenType string          `json:"issued_token_type"`
		TokenType       string          `json:"token_type"`
		ExpiresIn       json.RawMessage `json:"expires_in"`
		Error           string          `json:"error"`
		Description     string          `json:"error_description"`
	}
	jerr := json.Unmarshal(body, &ans)
	if resp.StatusCode != http.StatusOK || ans.Error != "" {
		return "", 0, &ExchangeError{Provider: u.Host, Status: resp.StatusCode, Code: clean(ans.Error, 64), Description: clean(ans.Description, 300)}
	}
	if jerr != nil || ans.AccessToken == "" {
		return "", 0, &ExchangeError{Provider: u.Host, Status: resp.StatusCode, Description: "the answer has no access_token"}
	}
	if ans.IssuedTokenType != "" && ans.IssuedTokenType != TokenTypeAccessToken && ans.IssuedTokenType != "urn:ietf:params:oauth:token-type:jwt" {
		return "", 0, &ExchangeError{Provider: u.Host, Status: resp.StatusCode, Description: "issued_token_type " + clean(ans.IssuedTokenType, 100) + " is not an access token"}
	}
	if tt := strings.ToLower(ans.TokenType); tt != "" && tt != "bearer" && tt != "n_a" {
		return "", 0, &ExchangeError{Provider: u.Host, Status: resp.StatusCode, Description: "token_type " + clean(ans.TokenType, 40) + " is not Bearer"}
	}
	if checkJWTShape(ans.AccessToken) != nil {
		return "", 0, &ExchangeError{Provider: u.Host, Status: resp.StatusCode, Description: "the issued token is not a JWT (Trino's JWT authenticator needs one)"}
	}
	ttl := defaultTTL
	if len(ans.ExpiresIn) > 0 {
		var n json.Number
		if json.Unmarshal(ans.ExpiresIn, &n) == nil {
			if f, err := n.Float64(); err == nil && f > 0 && f < 1e9 {
				ttl = time.Duration(f) * time.Second
			}
		}
	}
	return ans.AccessToken, ttl, nil
}

// clean keeps provider text printable and short.
func clean(s string, n int) string {
	s = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return ' '
		}
		return r
	}, s)
	if len(s) > n {
		s = s[:n] + "…"
	}
	return s
}
