package kafka

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"strings"
	"syscall"
)

// Kind classifies a failed Kafka operation by what the caller can do about
// it; the MCP surface maps each kind to its own error class.
type Kind int

const (
	// Internal is a bug or an unexpected condition.
	Internal Kind = iota
	// Invalid: the request was wrong; nothing was sent or changed.
	Invalid
	// NotFound: the topic, group, partition or broker named does not exist.
	NotFound
	// Unavailable: no broker answered, or the one that must did not.
	Unavailable
	// Timeout: the operation ran out of time.
	Timeout
	// Permission: authentication or authorisation failed.
	Permission
	// Conflict: the operation clashes with the cluster's state (a group
	// with members, a topic that exists).
	Conflict
	// Canceled: the caller cancelled the operation.
	Canceled
)

// Error is a failed Kafka operation: what was attempted (Op), why it failed
// (Err) and what to do about it (Hint).
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
		b.WriteString(oneLine(e.Err.Error()))
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

func invalidf(format string, args ...any) *Error {
	return &Error{Kind: Invalid, Op: fmt.Sprintf(format, args...)}
}

func notFoundf(format string, args ...any) *Error {
	return &Error{Kind: NotFound, Op: fmt.Sprintf(format, args...)}
}

// KindOf classifies err: an *Error keeps its kind; context, network and
// permission errors are recognised; anything else is Internal.
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

func wrap(err error, op, hint string) error {
	if err == nil {
		return nil
	}
	return &Error{Kind: KindOf(err), Op: op, Err: err, Hint: hint}
}

// ErrorText is the one-line text a person reads for err inside a report (a
// group or cluster that could not be read), with a generic hint by kind
// when err carries none: the same words a tool error has.
func ErrorText(err error) string {
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

func oneLine(s string) string {
	s = strings.TrimSpace(s)
	if !strings.ContainsAny(s, "\r\n") {
		return s
	}
	return strings.Join(strings.Fields(s), " ")
}
