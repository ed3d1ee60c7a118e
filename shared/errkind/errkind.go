// Package errkind is the one vocabulary of error kinds: a failure
// classified by what the caller can do about it, with what was attempted
// and a hint. It knows nothing of MCP, so back-end packages (a Kafka, SQL
// or HAProxy client) return its errors and each server's mcpserver hands
// them to shared/mcperr, which maps a kind onto a tool result.
package errkind

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"strings"
	"syscall"
)

// Kind classifies a failure by what the user can do about it.
type Kind int

const (
	// Internal is a bug or an unexpected condition.
	Internal Kind = iota
	// Invalid means the caller's input was wrong; nothing was changed.
	Invalid
	// NotFound means the named thing does not exist.
	NotFound
	// Unavailable means the back end could not be reached or refused service.
	Unavailable
	// Timeout means the operation ran out of time.
	Timeout
	// Permission means authentication or authorisation failed.
	Permission
	// Conflict means the operation clashes with the current state.
	Conflict
	// Canceled means the caller cancelled the operation.
	Canceled
)

// Error is a classified error: what was attempted (Op), why it failed (Err),
// and what to do about it (Hint).
type Error struct {
	Kind Kind
	Op   string // what was being done, e.g. "read consumer offsets from broker 2"
	Err  error  // the cause; may be nil
	Hint string // what the user can do, e.g. "check STREAM_BROKERS"
}

// Error renders "op: cause. hint" on one line.
func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.Op)
	if e.Err != nil {
		if e.Op != "" {
			b.WriteString(": ")
		}
		b.WriteString(oneLine(e.Err.Error()))
	}
	if e.Hint != "" {
		b.WriteString(". ")
		b.WriteString(e.Hint)
	}
	return b.String()
}

func (e *Error) Unwrap() error { return e.Err }

// New returns a classified error.
func New(kind Kind, op string, err error, hint string) *Error {
	return &Error{Kind: kind, Op: op, Err: err, Hint: hint}
}

// Invalidf returns an Invalid error whose message is formatted.
func Invalidf(format string, args ...any) *Error {
	return &Error{Kind: Invalid, Op: fmt.Sprintf(format, args...)}
}

// NotFoundf returns a NotFound error whose message is formatted.
func NotFoundf(format string, args ...any) *Error {
	return &Error{Kind: NotFound, Op: fmt.Sprintf(format, args...)}
}

// KindOf classifies err. Classified errors keep their kind; context errors,
// network errors and permission errors are recognised; anything else is Internal.
func KindOf(err error) Kind {
	if err == nil {
		return Internal
	}
	var e *Error
	if errors.As(err, &e) {
		return e.Kind
	}
	switch {
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

// Wrap classifies err (keeping an existing kind) and adds what was being
// done and a hint. It returns nil for a nil err.
func Wrap(err error, op, hint string) error {
	if err == nil {
		return nil
	}
	return &Error{Kind: KindOf(err), Op: op, Err: err, Hint: hint}
}

// Message returns the one-line text a person reads for err, adding a
// generic hint by kind when the error carries none: the words of a tool
// error, and of a failure reported inside a result (a group or cluster
// that could not be read).
func Message(err error) string {
	if err == nil {
		return ""
	}
	msg := oneLine(err.Error())
	var e *Error
	if errors.As(err, &e) && e.Hint != "" {
		return msg
	}
	switch KindOf(err) {
	case Timeout:
		if !strings.Contains(msg, "timed out") && !strings.Contains(msg, "timeout") {
			msg += " (timed out)"
		}
		return msg + ". Retry, or raise the timeout if the back end is slow"
	case Unavailable:
		return msg + ". Check that the back end is running and reachable at the configured address"
	case Canceled:
		return msg + " (the request was cancelled)"
	case Permission:
		return msg + ". Check the credentials and permissions configured for this server"
	}
	return msg
}

// oneLine trims s and, when it spans lines, folds every run of white space
// (line breaks included) into one space.
func oneLine(s string) string {
	s = strings.TrimSpace(s)
	if !strings.ContainsAny(s, "\r\n") {
		return s
	}
	return strings.Join(strings.Fields(s), " ")
}
