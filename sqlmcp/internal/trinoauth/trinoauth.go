// Package trinoauth obtains the credentials sqlmcp presents to Trino when it
// does not use a password: a static JWT for a service account, a token
// obtained per caller by OAuth 2.0 Token Exchange (RFC 8693), or a token from
// Trino's external (browser) authentication for the SQL shell. It also
// carries the token to the coordinator as Authorization: Bearer.
//
// It never forwards the caller's MCP access token: that token is only ever
// the subject of an exchange at the identity provider, and what reaches
// Trino is the token issued for Trino's audience.
//
// It does not import the engine or an MCP SDK: the engine uses Transport
// under its own round tripper, and the MCP server puts the caller's
// validated token in the context with WithSubjectToken.
package trinoauth

import (
	"context"
	"errors"
	"net/http"
)

// Mode is how sqlmcp authenticates to Trino (SQLENGINE_AUTH).
type Mode string

// Modes of SQLENGINE_AUTH.
const (
	ModePassword      Mode = "password"       // HTTP basic, the default
	ModeJWT           Mode = "jwt"            // a static JWT (service account)
	ModeTokenExchange Mode = "token-exchange" // per caller, RFC 8693
	ModeExternal      Mode = "external"       // browser login, CLI only
)

// ParseMode reads SQLENGINE_AUTH ("" is password).
func ParseMode(s string) (Mode, error) {
	switch m := Mode(s); m {
	case "":
		return ModePassword, nil
	case ModePassword, ModeJWT, ModeTokenExchange, ModeExternal:
		return m, nil
	}
	return "", errors.New("SQLENGINE_AUTH must be password, jwt, token-exchange or external")
}

// TokenSource returns the token to present to Trino for the caller in ctx.
type TokenSource interface {
	Token(ctx context.Context) (string, error)
}

type subjectKey struct{}

// WithSubjectToken returns ctx carrying the caller's validated access token
// (the MCP server's, or the provider's in proxy mode): the subject of a
// token exchange. It is never sent to Trino.
func WithSubjectToken(ctx context.Context, token string) context.Context {
	return context.WithValue(ctx, subjectKey{}, token)
}

// SubjectToken returns the token carried by ctx, if any.
func SubjectToken(ctx context.Context) (string, bool) {
	t, ok := ctx.Value(subjectKey{}).(string)
	return t, ok && t != ""
}

// Transport sends every request with Authorization: Bearer <token from
// Source for the request's context>. Put it under the engine's own round
// tripper (engine.Config.Transport), so that the submit, every page and the
// cancelling DELETE of a query carry the caller's token, renewed by the
// source when it nears expiry even in the middle of a long query.
type Transport struct {
	Base   http.RoundTripper // default http.DefaultTransport
	Source TokenSource
	// ServiceUser is the engine's configured user (SQLENGINE_USER). An
	// X-Trino-User equal to it is removed, so that Trino takes the user from
	// the token's principal; any other X-Trino-User (impersonation) is kept
	// for Trino's access control to allow or refuse.
	ServiceUser string
}

// RoundTrip implements http.RoundTripper. A source failure fails the request
// with that error (an *ExchangeError for a refused exchange), never sending
// it without a token.
func (t *Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	tok, err := t.Source.Token(req.Context())
	if err != nil {
		if req.Body != nil {
			req.Body.Close()
		}
		return nil, err
	}
	req = req.Clone(req.Context())
	req.Header.Set("Authorization", "Bearer "+tok)
	if u := req.Header.Get("X-Trino-User"); u != "" && u == t.ServiceUser {
		req.Header.Del("X-Trino-User")
	}
	base := t.Base
	if base == nil {
		base = http.DefaultTransport
	}
	return base.RoundTrip(req)
}
