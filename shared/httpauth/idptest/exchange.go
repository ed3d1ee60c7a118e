package idptest

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/json"
	"math/big"
	"net/http"
	"slices"
	"strings"
	"time"
)

// OAuth 2.0 Token Exchange (RFC 8693) names.
const (
	GrantTokenExchange   = "urn:ietf:params:oauth:grant-type:token-exchange"
	TokenTypeAccessToken = "urn:ietf:params:oauth:token-type:access_token"
	TokenTypeJWT         = "urn:ietf:params:oauth:token-type:jwt"
)

type exchangeState struct {
	audiences map[string][]string // client id → audiences it may ask for
	ttl       time.Duration
	refuse    [2]string // error, error_description forced on every exchange
	calls     int
	requests  []ExchangeRequest
}

// ExchangeRequest is a token-exchange request the provider received
// (subject token left out).
type ExchangeRequest struct {
	Client, Audience, Resource, Scope, SubjectTokenType, RequestedTokenType string
}

// AllowExchange lets client exchange subject tokens the provider issued for
// tokens meant for audiences (RFC 8693, grant type GrantTokenExchange).
func (p *IdP) AllowExchange(client string, audiences ...string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.exchange.audiences == nil {
		p.exchange.audiences = map[string][]string{}
	}
	p.exchange.audiences[client] = append(p.exchange.audiences[client], audiences...)
}

// SetExchangeTTL sets the lifetime of exchanged tokens (default
// Options.TokenTTL).
func (p *IdP) SetExchangeTTL(d time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.exchange.ttl = d
}

// RefuseExchanges makes every exchange fail with the OAuth error code and
// description ("" restores normal answers).
func (p *IdP) RefuseExchanges(code, description string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.exchange.refuse = [2]string{code, description}
}

// ExchangeCalls returns how many token-exchange requests were received.
func (p *IdP) ExchangeCalls() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.exchange.calls
}

// ExchangeRequests returns the token-exchange requests received.
func (p *IdP) ExchangeRequests() []ExchangeRequest {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.exchange.requests)
}

// exchangeLocked answers a token-exchange request from the authenticated
// client; p.mu is held.
func (p *IdP) exchangeLocked(w http.ResponseWriter, r *http.Request, client string) {
	fail := func(status int, code, desc string) {
		writeJSON(w, status, map[string]string{"error": code, "error_description": desc})
	}
	f := r.PostForm
	p.exchange.calls++
	p.exchange.requests = append(p.exchange.requests, ExchangeRequest{
		Client: client, Audience: f.Get("audience"), Resource: f.Get("resource"), Scope: f.Get("scope"),
		SubjectTokenType: f.Get("subject_token_type"), RequestedTokenType: f.Get("requested_token_type"),
	})
	if code := p.exchange.refuse[0]; code != "" {
		fail(http.StatusBadRequest, code, p.exchange.refuse[1])
		return
	}
	allowed, ok := p.exchange.audiences[client]
	if !ok {
		fail(http.StatusBadRequest, "unauthorized_client", "the client may not exchange tokens")
		return
	}
	subject, stt := f.Get("subject_token"), f.Get("subject_token_type")
	if subject == "" || stt == "" {
		fail(http.StatusBadRequest, "invalid_request", "subject_token and subject_token_type are required")
		return
	}
	if stt != TokenTypeAccessToken && stt != TokenTypeJWT {
		fail(http.StatusBadRequest, "invalid_request", "unsupported subject_token_type")
		return
	}
	if rt := f.Get("requested_token_type"); rt != "" && rt != TokenTypeAccessToken && rt != TokenTypeJWT {
		fail(http.StatusBadRequest, "invalid_request", "unsupported requested_token_type")
		return
	}
	if f.Has("actor_token") {
		fail(http.StatusBadRequest, "invalid_request", "actor tokens are not supported")
		return
	}
	aud := f.Get("audience")
	if aud == "" || !slices.Contains(allowed, aud) || len(f["audience"]) > 1 {
		fail(http.StatusBadRequest, "invalid_target", "the audience is not one the client may ask for")
		return
	}
	claims, why := p.verifyOwnLocked(subject)
	if why != "" {
		fail(http.StatusBadRequest, "invalid_grant", "subject token "+why)
		return
	}
	ttl := p.exchange.ttl
	if ttl == 0 {
		ttl = p.opts.TokenTTL
	}
	now := time.Now()
	out := map[string]any{}
	for k, v := range claims {
		switch k {
		case "iss", "aud", "exp", "iat", "nbf", "jti", "azp", "nonce", "act":
		default:
			out[k] = v
		}
	}
	out["iss"], out["aud"], out["iat"], out["exp"] = p.issuer, aud, now.Unix(), now.Add(ttl).Unix()
	out["act"] = map[string]any{"sub": client}
	kid := p.current
	p.mu.Unlock()
	tok := p.SignWith(kid, out)
	p.mu.Lock()
	writeJSON(w, http.StatusOK, map[string]any{
		"access_token": tok, "issued_token_type": TokenTypeAccessToken,
		"token_type": "Bearer", "expires_in": int(ttl.Seconds()),
	})
}

// verifyOwnLocked checks that token was signed by a published key of the
// provider, for this issuer, and has not expired; it returns the claims or
// why not.
func (p *IdP) verifyOwnLocked(token string) (map[string]any, string) {
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		return nil, "is not a JWT"
	}
	var hdr struct{ Alg, Kid string }
	hb, err1 := b64.DecodeString(parts[0])
	sig, err2 := b64.DecodeString(parts[2])
	if err1 != nil || err2 != nil || json.Unmarshal(hb, &hdr) != nil {
		return nil, "is not a JWT"
	}
	k := p.keys[hdr.Kid]
	if k == nil || !slices.Contains(p.published, hdr.Kid) || hdr.Alg != k.alg {
		return nil, "is not signed by this provider"
	}
	sum := sha256.Sum256([]byte(parts[0] + "." + parts[1]))
	if k.rsa != nil {
		if rsa.VerifyPKCS1v15(&k.rsa.PublicKey, crypto.SHA256, sum[:], sig) != nil {
			return nil, "is not signed by this provider"
		}
	} else if len(sig) != 64 || !ecdsa.Verify(&k.ec.PublicKey, sum[:], new(big.Int).SetBytes(sig[:32]), new(big.Int).SetBytes(sig[32:])) {
		return nil, "is not signed by this provider"
	}
	var claims map[string]any
	cb, err := b64.DecodeString(parts[1])
	if err != nil || json.Unmarshal(cb, &claims) != nil {
		return nil, "has unreadable claims"
	}
	if iss, _ := claims["iss"].(string); iss != p.issuer {
		return nil, "was issued by another issuer"
	}
	exp, ok := claims["exp"].(float64)
	if !ok || !time.Now().Before(time.Unix(int64(exp), 0)) {
		return nil, "has expired"
	}
	return claims, ""
}
