package engine

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"net/http"
	"strings"

	"github.com/trinodb/trino-go-client/trino"

	"github.com/mcpfleet/mcpfleet/shared/mcperr"
)

// TrinoError is the engine's own account of a failed query, kept for
// callers that want its name (e.g. TABLE_NOT_FOUND) or position.
type TrinoError = trino.ErrTrino

// classify turns a driver error into a classified, actionable error.
func classify(err error, op string) error {
	if err == nil {
		return nil
	}
	var me *mcperr.Error
	if errors.As(err, &me) {
		if me.Op == "run the query" || strings.HasPrefix(me.Op, "run the query on ") {
			// Say what the caller was doing rather than the generic step.
			return &mcperr.Error{Kind: me.Kind, Op: op, Err: me.Err, Hint: me.Hint}
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
			return mcperr.New(mcperr.NotFound, op, cause, "check the name with list_catalogs, list_schemas or list_tables")
		case "PERMISSION_DENIED", "ACCESS_DENIED":
			return mcperr.New(mcperr.Permission, op, cause, "the engine user lacks the privilege; ask the Trino administrator")
		case "EXCEEDED_TIME_LIMIT", "ABANDONED_QUERY":
			return mcperr.New(mcperr.Timeout, op, cause, "narrow the query, or raise the engine's time limit")
		case "USER_CANCELED", "USER_CANCELLED", "ADMINISTRATIVELY_KILLED":
			return mcperr.New(mcperr.Canceled, op, cause, "")
		}
		switch te.ErrorType {
		case "USER_ERROR":
			return mcperr.New(mcperr.Invalid, op, cause, "fix the SQL and try again")
		case "INSUFFICIENT_RESOURCES":
			return mcperr.New(mcperr.Unavailable, op, cause, "retry later or narrow the query")
		}
		return mcperr.New(mcperr.Internal, op, cause, "")
	}
	if errors.Is(err, trino.ErrQueryCancelled) {
		return mcperr.New(mcperr.Canceled, op, err, "")
	}
	var qf *trino.ErrQueryFailed
	if errors.As(err, &qf) {
		switch qf.StatusCode {
		case http.StatusUnauthorized:
			return mcperr.New(mcperr.Permission, op, errors.New("the engine refused the credentials (401)"), "check SQLENGINE_USER and SQLENGINE_PASSWORD")
		case http.StatusForbidden:
			return mcperr.New(mcperr.Permission, op, errors.New("the engine refused access (403)"), "check the engine user's permissions")
		case http.StatusServiceUnavailable, http.StatusBadGateway, http.StatusGatewayTimeout, http.StatusTooManyRequests:
			return mcperr.New(mcperr.Unavailable, op, err, "the engine is busy or starting; retry shortly")
		}
	}
	var (
		unknownCA *x509.UnknownAuthorityError
		hostErr   x509.HostnameError
		certErr   x509.CertificateInvalidError
		verifyErr *tls.CertificateVerificationError
		recErr    tls.RecordHeaderError
	)
	switch {
	case errors.As(err, &unknownCA), errors.As(err, &hostErr), errors.As(err, &certErr), errors.As(err, &verifyErr):
		return mcperr.New(mcperr.Unavailable, op, err,
			"the engine's TLS certificate is not trusted; install its CA, or set SQLENGINE_SSL_INSECURE=true (testing only)")
	case errors.As(err, &recErr), strings.Contains(err.Error(), "server gave HTTP response to HTTPS client"):
		return mcperr.New(mcperr.Unavailable, op, err, "the engine does not speak TLS on this port; check SQLENGINE_SSL and SQLENGINE_PORT")
	case strings.Contains(err.Error(), "malformed HTTP response"):
		return mcperr.New(mcperr.Unavailable, op, err, "the engine speaks TLS on this port; set SQLENGINE_SSL=true")
	}
	kind := mcperr.KindOf(err)
	switch kind {
	case mcperr.Unavailable, mcperr.Timeout:
		return mcperr.New(kind, op, err, "check that Trino is running and reachable at SQLENGINE_HOST and SQLENGINE_PORT")
	}
	return mcperr.Wrap(err, op, "")
}
