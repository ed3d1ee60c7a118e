package httpauth

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"time"
)

// Verify checks a bearer token and returns the caller's identity. Tokens
// verified before are answered from a cache keyed by the token's hash until
// their expiry. The error text is safe to show the client (it never
// contains the token); errors wrapping errUnavailable mean the identity
// provider could not be reached.
func (l *Layer) Verify(ctx context.Context, token string) (*Identity, error) {
	key := sha256.Sum256([]byte(token))
	now := l.now()
	if id, ok := l.cache.get(key, now); ok {
		return id, nil
	}
	var (
		claims map[string]any
		exp    time.Time
		err    error
		own    bool
	)
	switch {
	case l.hmac != nil:
		claims, exp, err = l.hmac.verify(token)
	case l.ownToken(token):
		// Proxy mode: a token this server issued. Provider tokens are
		// accepted too when OIDC_AUDIENCE says which audience they carry.
		claims, exp, err = l.own.verify(token)
		own = true
	default:
		claims, exp, err = l.oidc.verify(ctx, token)
	}
	if err != nil {
		return nil, err
	}
	id := identityFromClaims(l.cfg.Provider, claims)
	if own {
		id = ownIdentity(l.cfg.Provider, claims)
	}
	if err := checkIdentity(id, l.cfg.RequiredIdentity); err != nil {
		return nil, err
	}
	l.cache.put(key, id, exp, now)
	return id, nil
}

// ownToken reports whether token is to be verified as one this server
// issued (proxy mode) rather than as the provider's.
func (l *Layer) ownToken(token string) bool {
	return l.hmac == nil && l.own != nil && (headerAlg(token) == "HS256" || len(l.oidc.audiences) == 0)
}

// errNoToken means the request carried no bearer credentials at all.
var errNoToken = errors.New("no bearer token")

// headerAlg returns the alg of a JWT's header, or "" when it has none.
func headerAlg(raw string) string {
	head, _, _ := strings.Cut(raw, ".")
	hb, err := b64.DecodeString(head)
	if err != nil {
		return ""
	}
	var h jwtHeader
	if json.Unmarshal(hb, &h) != nil {
		return ""
	}
	return h.Alg
}

// Protect wraps next so that every request needs a valid bearer token. The
// check happens before next reads the body, so no MCP message (initialize
// and tools/list included) is processed for an unauthenticated caller.
func (l *Layer) Protect(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		token, err := bearerToken(r)
		if err != nil {
			l.reject(w, r, err)
			return
		}
		id, err := l.Verify(r.Context(), token)
		if err != nil {
			l.reject(w, r, err)
			return
		}
		ctx := ContextWithIdentity(r.Context(), id)
		switch {
		case l.hmac != nil:
		case !l.ownToken(token):
			ctx = context.WithValue(ctx, accessTokenKey{}, token)
		case l.cfg.UpstreamAccess && l.proxy != nil:
			// This server's token: the provider's behind it, if any.
			if up, ok := l.proxy.upstreamOf(token); ok {
				ctx = context.WithValue(ctx, accessTokenKey{}, up)
			}
		}
		next.ServeHTTP(w, r.WithContext(ctx))
	})
}

// Verified reports whether r carries a valid bearer token, answering
// nothing and counting no failure: for endpoints open to everyone that
// tell a verified caller more (/readyz).
func (l *Layer) Verified(r *http.Request) bool {
	token, err := bearerToken(r)
	if err != nil {
		return false
	}
	_, err = l.Verify(r.Context(), token)
	return err == nil
}

// bearerToken extracts the token of an "Authorization: Bearer" header.
// errNoToken means no bearer credentials were presented at all.
func bearerToken(r *http.Request) (string, error) {
	hs := r.Header.Values("Authorization")
	if len(hs) == 0 {
		return "", errNoToken
	}
	if len(hs) > 1 {
		return "", invalid("several Authorization headers; send exactly one")
	}
	scheme, token, _ := strings.Cut(strings.TrimSpace(hs[0]), " ")
	if !strings.EqualFold(scheme, "Bearer") {
		return "", errNoToken // other schemes are not bearer credentials
	}
	token = strings.TrimSpace(token)
	if token == "" {
		return "", invalid("empty bearer token")
	}
	if !isB64Token(token) {
		return "", invalid("malformed bearer token")
	}
	return token, nil
}

// isB64Token reports whether s matches RFC 6750's b64token syntax.
func isB64Token(s string) bool {
	end := len(s)
	for end > 0 && s[end-1] == '=' {
		end--
	}
	if end == 0 {
		return false
	}
	for i := 0; i < end; i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case c == '-', c == '.', c == '_', c == '~', c == '+', c == '/':
		default:
			return false
		}
	}
	return true
}

// reject answers 401 with the RFC 6750 / RFC 9728 challenge, or 503 when the
// identity provider could not be reached.
func (l *Layer) reject(w http.ResponseWriter, r *http.Request, err error) {
	if l.onFailure != nil {
		l.onFailure(FailureReason(err))
	}
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Content-Type", "application/json")
	if errors.Is(err, errUnavailable) {
		l.logger.Warn("cannot verify bearer token: identity provider unavailable", "path", r.URL.Path, "error", err.Error())
		w.Header().Set("Retry-After", "5")
		w.WriteHeader(http.StatusServiceUnavailable)
		json.NewEncoder(w).Encode(map[string]string{
			"error":             "temporarily_unavailable",
			"error_description": "the identity provider cannot be reached to verify the token; retry later",
		})
		return
	}
	challenge := `Bearer resource_metadata="` + l.metaURL + `"`
	body := map[string]string{
		"error":             "unauthorized",
		"error_description": "this endpoint requires an OAuth bearer token (Authorization: Bearer <token>); see " + l.metaURL,
	}
	if errors.Is(err, errNoToken) {
		l.logger.Debug("request without bearer token refused", "path", r.URL.Path, "remote", r.RemoteAddr)
	} else {
		desc := quotable(err.Error())
		challenge += `, error="invalid_token", error_description="` + desc + `"`
		body = map[string]string{"error": "invalid_token", "error_description": desc}
		l.logger.Info("bearer token refused", "path", r.URL.Path, "remote", r.RemoteAddr, "reason", desc)
	}
	w.Header().Set("WWW-Authenticate", challenge)
	w.WriteHeader(http.StatusUnauthorized)
	json.NewEncoder(w).Encode(body)
}

// quotable makes s safe inside an RFC 6750 quoted string (%x20-21 / %x23-5B / %x5D-7E).
func quotable(s string) string {
	var b strings.Builder
	for _, c := range []byte(s) {
		switch {
		case c == '"' || c == '\\':
			b.WriteByte('\'')
		case c < 0x20 || c > 0x7e:
			b.WriteByte('?')
		default:
			b.WriteByte(c)
		}
	}
	if b.Len() > 300 {
		return b.String()[:300]
	}
	return b.String()
}

// FailureReason classifies a refusal into a closed set, for metrics:
// missing, unavailable, expired, not_yet_valid, audience, issuer,
// signature, algorithm, subject, identity, critical, malformed, invalid.
func FailureReason(err error) string {
	if errors.Is(err, errNoToken) {
		return "missing"
	}
	if errors.Is(err, errUnavailable) {
		return "unavailable"
	}
	msg := err.Error()
	for _, c := range []struct{ substr, reason string }{
		{"expired", "expired"}, {"no expiry", "expired"},
		{"not valid before", "not_yet_valid"}, {"not valid yet", "not_yet_valid"},
		{"audience", "audience"}, {"issuer", "issuer"}, {"tenant", "issuer"},
		{"signature", "signature"}, {"algorithm", "algorithm"},
		{"no subject", "subject"}, {"act as the caller", "identity"},
		{"critical", "critical"}, {"malformed", "malformed"}, {"empty bearer", "malformed"},
	} {
		if strings.Contains(msg, c.substr) {
			return c.reason
		}
	}
	return "invalid"
}
