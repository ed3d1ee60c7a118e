package engine

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"syscall"

	"github.com/trinodb/trino-go-client/trino"

	"github.com/mcpfleet/mcpfleet/sqlmcp/internal/trinoauth"
)

// TrinoError is the engine's own account of a failed query, kept for
// callers that want its name (e.g. TABLE_NOT_FOUND) or position.
type TrinoError = trino.ErrTrino

// classify turns a driver error into a classified, actionable error.
func classify(err error, op string) error {
	if err == nil {
		return nil
	}
	var me *Error
	if errors.As(err, &me) {
		if me.Op == "run the query" || strings.HasPrefix(me.Op, "run the query on ") {
			// Say what the caller was doing rather than the generic step.
			return &Error{Kind: me.Kind, Op: op, Err: me.Err, Hint: me.Hint}
		}
		return err
	}
	var te *trino.ErrTrino
	if errors.As(err, &te) {
		msg := te.Message
		if te.ErrorName != "" {
			msg = te.ErrorName + ": " + msg
		}
		cause := errors.New(msg)
		switch te.ErrorName {
		case "TABLE_NOT_FOUND", "SCHEMA_NOT_FOUND", "CATALOG_NOT_FOUND", "COLUMN_NOT_FOUND", "MISSING_TABLE":
			return newError(NotFound, op, cause, "check the name with list_catalogs, list_schemas or list_tables")
		case "PERMISSION_DENIED", "ACCESS_DENIED":
			return newError(Permission, op, cause, "the engine user lacks the privilege; ask the Trino administrator")
		case "EXCEEDED_TIME_LIMIT", "ABANDONED_QUERY":
			return newError(Timeout, op, cause, "narrow the query, or raise SQLENGINE_QUERY_TIMEOUT")
		case "EXCEEDED_GLOBAL_MEMORY_LIMIT", "EXCEEDED_LOCAL_MEMORY_LIMIT", "EXCEEDED_SPILL_LIMIT":
			return newError(Unavailable, op, cause, "narrow the query (filter, aggregate, join fewer rows), or raise SQLENGINE_QUERY_MAX_MEMORY")
		case "USER_CANCELED", "USER_CANCELLED", "ADMINISTRATIVELY_KILLED":
			return newError(Canceled, op, cause, "")
		}
		switch te.ErrorType {
		case "USER_ERROR":
			return newError(Invalid, op, cause, "fix the SQL and try again")
		case "INSUFFICIENT_RESOURCES":
			return newError(Unavailable, op, cause, "retry later or narrow the query")
		}
		return newError(Internal, op, cause, "")
	}
	if errors.Is(err, trino.ErrQueryCancelled) {
		return newError(Canceled, op, err, "")
	}
	if e := authFailure(err); e != nil {
		return e
	}
	if kind, cause, hint, ok := transportFailure(err); ok {
		return newError(kind, op, cause, hint)
	}
	kind := KindOf(err)
	switch kind {
	case Unavailable, Timeout:
		return newError(kind, op, errors.New(innermost(err)), "check that Trino is running and reachable at SQLENGINE_HOST and SQLENGINE_PORT")
	}
	return &Error{Kind: KindOf(err), Op: op, Err: err}
}

// fatalTransportError is a failure no retry can heal (a host name that does
// not resolve, a certificate that is not trusted, TLS spoken to plain HTTP
// or the reverse). It deliberately does not unwrap, so the driver, which
// retries dial-phase network errors, sees something it does not retry.
type fatalTransportError struct{ err error }

func (e *fatalTransportError) Error() string { return e.err.Error() }

// healable reports whether a failed request may succeed when tried again
// shortly: only a refused or reset connection and timeouts (the coordinator
// is restarting), never a name that does not resolve or a TLS failure.
func healable(err error) bool {
	var xe *trinoauth.ExchangeError
	if errors.As(err, &xe) || errors.Is(err, trinoauth.ErrNoSubjectToken) || errors.As(err, new(*tokenRefused)) {
		return false // asking the provider again now gets the same answer
	}
	var dnsErr *net.DNSError
	if errors.As(err, &dnsErr) {
		return dnsErr.IsTimeout || dnsErr.IsTemporary && !dnsErr.IsNotFound
	}
	if tlsFailure(err) != "" {
		return false
	}
	return true
}

// tlsFailure names what went wrong with TLS in err, or "".
func tlsFailure(err error) string {
	var (
		unknownCA *x509.UnknownAuthorityError
		hostErr   x509.HostnameError
		certErr   x509.CertificateInvalidError
		verifyErr *tls.CertificateVerificationError
		recErr    tls.RecordHeaderError
	)
	switch {
	case errors.As(err, &unknownCA), errors.As(err, &hostErr), errors.As(err, &certErr), errors.As(err, &verifyErr):
		return "untrusted"
	case errors.As(err, &recErr), strings.Contains(err.Error(), "server gave HTTP response to HTTPS client"):
		return "not-tls"
	case strings.Contains(err.Error(), "malformed HTTP response"), strings.Contains(err.Error(), "Client sent an HTTP request to an HTTPS server"):
		return "tls-port"
	}
	return ""
}

// transportFailure explains err when the request did not get a usable
// answer: one plain sentence of what failed and what to check, without the
// driver's internals (attempt counts, retry settings, its own prefix).
func transportFailure(err error) (kind Kind, cause error, hint string, ok bool) {
	var fatal *fatalTransportError
	if errors.As(err, &fatal) {
		err = fatal.err
	}
	var qf *trino.ErrQueryFailed
	status := 0
	if errors.As(err, &qf) {
		status = qf.StatusCode
	}
	var dnsErr *net.DNSError
	switch {
	case errors.As(err, &dnsErr):
		return Unavailable, fmt.Errorf("the host name %q does not resolve (%s)", dnsErr.Name, dnsErr.Err), "check SQLENGINE_HOST", true
	case tlsFailure(err) == "untrusted":
		return Unavailable, fmt.Errorf("the coordinator's TLS certificate is not trusted (%s)", innermost(err)),
			"install its CA, or set SQLENGINE_SSL_INSECURE=true (testing only)", true
	case tlsFailure(err) == "not-tls":
		return Unavailable, errors.New("the coordinator does not speak TLS on this port"), "check SQLENGINE_SSL and SQLENGINE_PORT", true
	case tlsFailure(err) == "tls-port":
		return Unavailable, errors.New("the coordinator speaks TLS on this port but the connection was plain HTTP"), "set SQLENGINE_SSL=true", true
	case errors.Is(err, syscall.ECONNREFUSED):
		where := "there"
		var opErr *net.OpError
		if errors.As(err, &opErr) && opErr.Addr != nil {
			where = "at " + opErr.Addr.String()
		}
		return Unavailable, errors.New("nothing accepts connections " + where + " (connection refused), also after retrying"),
			"check that Trino is running and that SQLENGINE_HOST and SQLENGINE_PORT point at it", true
	case status == http.StatusUnauthorized:
		return Permission, errors.New("the engine refused the credentials (401)"), "check SQLENGINE_USER and SQLENGINE_PASSWORD", true
	case status == http.StatusForbidden:
		return Permission, errors.New("the engine refused access (403)"), "check the engine user's permissions", true
	case status == http.StatusServiceUnavailable, status == http.StatusBadGateway, status == http.StatusGatewayTimeout, status == http.StatusTooManyRequests:
		return Unavailable, fmt.Errorf("the coordinator answered %d %s, also after retrying (it is starting, overloaded or behind a failing proxy)", status, http.StatusText(status)),
			"wait until it has started, or check its health", true
	case status != 0:
		return Unavailable, fmt.Errorf("the coordinator answered %d %s", status, http.StatusText(status)), "check SQLENGINE_HOST, SQLENGINE_PORT and SQLENGINE_SSL point at a Trino coordinator", true
	case qf != nil:
		return Unavailable, errors.New(innermost(err)), "check that Trino is running and reachable at SQLENGINE_HOST and SQLENGINE_PORT", true
	}
	return 0, nil, "", false
}

// authFailure is the error of a bearer token that could not be obtained
// (SQLENGINE_AUTH=token-exchange), or nil. No request was sent to Trino.
func authFailure(err error) error {
	var fatal *fatalTransportError
	if errors.As(err, &fatal) {
		err = fatal.err
	}
	const op = "exchange the caller's token for a Trino token"
	var xe *trinoauth.ExchangeError
	switch {
	case errors.As(err, &xe):
		kind := Permission
		hint := "sign in again, or allow sqlmcp's client (SQLENGINE_TOKEN_EXCHANGE_CLIENT_ID) to exchange tokens for Trino's audience (SQLENGINE_TOKEN_EXCHANGE_AUDIENCE) at the provider"
		if xe.Status >= 500 || xe.Status == 0 {
			kind = Unavailable
			hint = "the identity provider is failing; retry later or check SQLENGINE_TOKEN_EXCHANGE_URL"
		}
		return newError(kind, op, xe, hint)
	case errors.As(err, new(*tokenRefused)):
		var tr *tokenRefused
		errors.As(err, &tr)
		return newError(Permission, "authenticate to Trino with a bearer token", tr,
			"Trino's http-server.authentication.jwt settings (key-file, required-issuer, required-audience, principal-field) must match the provider, SQLENGINE_TOKEN_EXCHANGE_AUDIENCE or the token of SQLENGINE_JWT; sign in again if the token expired")
	case errors.Is(err, trinoauth.ErrNoSubjectToken):
		return newError(Permission, op, trinoauth.ErrNoSubjectToken, "sign in (OAuth) first; no query runs as the service user instead")
	}
	return nil
}

// innermost is the text of the deepest error in err's chain, on one line:
// the cause itself, without the wrappers' request lines and prefixes.
func innermost(err error) string {
	for {
		var next error
		switch x := err.(type) {
		case interface{ Unwrap() error }:
			next = x.Unwrap()
		case interface{ Unwrap() []error }:
			if u := x.Unwrap(); len(u) > 0 {
				next = u[0]
			}
		}
		if next == nil {
			break
		}
		err = next
	}
	return strings.Join(strings.Fields(err.Error()), " ")
}
