package engine

import (
	"context"
	"errors"
	"net"
	"os"
	"strings"
	"syscall"
)

// Kind classifies a failure by what the caller can do about it. The MCP
// server maps each kind onto its tool errors; the command-line client
// prints the error's text.
type Kind int

const (
	// Internal is a bug or an answer the client does not understand.
	Internal Kind = iota
	// Invalid: the caller's SQL, name or setting is wrong; nothing ran.
	Invalid
	// NotFound: the named catalog, schema, table or column does not exist.
	NotFound
	// Unavailable: the engine could not be reached or refused service.
	Unavailable
	// Timeout: the query ran out of time.
	Timeout
	// Permission: authentication or authorisation failed.
	Permission
	// Canceled: the caller cancelled the query.
	Canceled
)

// Error is a classified failure: what was attempted (Op), why it failed
// (Err, may be nil) and what to do about it (Hint).
type Error struct {
	Kind Kind
	Op   string
	Err  error
	Hint string
}

// Error renders "op: cause. hint" on one line.
func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.Op)
	if e.Err != nil {
		if e.Op != "" {
			b.WriteString(": ")
		}
		b.WriteString(strings.Join(strings.Fields(e.Err.Error()), " "))
	}
	if e.Hint != "" {
		b.WriteString(". ")
		b.WriteString(e.Hint)
	}
	return b.String()
}

func (e *Error) Unwrap() error { return e.Err }

func newError(kind Kind, op string, err error, hint string) *Error {
	return &Error{Kind: kind, Op: op, Err: err, Hint: hint}
}

// KindOf classifies err: an *Error keeps its kind; context, network and
// permission errors are recognised; anything else is Internal.
func KindOf(err error) Kind {
	var e *Error
	switch {
	case err == nil:
		return Internal
	case errors.As(err, &e):
		return e.Kind
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, os.ErrDeadlineExceeded):
		return Timeout
	case errors.Is(err, context.Canceled):
		return Canceled
	case errors.Is(err, os.ErrPermission):
		return Permission
	case errors.Is(err, os.ErrNotExist):
		return NotFound
	case errors.Is(err, syscall.ECONNREFUSED), errors.Is(err, syscall.ECONNRESET),
		errors.Is(err, syscall.EHOSTUNREACH), errors.Is(err, syscall.ENETUNREACH),
		errors.Is(err, syscall.EPIPE):
		return Unavailable
	}
	var netErr net.Error
	if errors.As(err, &netErr) {
		if netErr.Timeout() {
			return Timeout
		}
		return Unavailable
	}
	var dnsErr *net.DNSError
	if errors.As(err, &dnsErr) {
		return Unavailable
	}
	return Internal
}
