// Package runtimeapi talks to HAProxy's runtime API (the "stats socket") over
// a Unix socket or a TCP port: one connection per command, severity-output
// numbering switched on so that refusals are recognisable, and every answer
// read until HAProxy closes the connection.
package runtimeapi

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// Client sends commands to one runtime API endpoint. It is safe for
// concurrent use: each command uses its own connection.
type Client struct {
	Network string        // "tcp4" or "unix"
	Address string        // host:port or socket path
	Timeout time.Duration // per command, on top of the caller's context
}

// Endpoint describes the address for messages, e.g. "unix /run/admin.sock".
func (c *Client) Endpoint() string { return c.Network + " " + c.Address }

// ConnError means HAProxy could not be reached or the exchange broke off;
// HAProxy did not answer the command.
type ConnError struct {
	Endpoint string
	Err      error
}

func (e *ConnError) Error() string {
	return fmt.Sprintf("runtime API at %s: %v", e.Endpoint, e.Err)
}

func (e *ConnError) Unwrap() error { return e.Err }

// ReplyError is HAProxy refusing a command: it answered, with an error.
type ReplyError struct {
	Command  string
	Severity int    // -1 when the reply had no severity prefix
	Message  string // HAProxy's own words
}

func (e *ReplyError) Error() string {
	// Trailing dots would double up with the hint that follows.
	return fmt.Sprintf("HAProxy refused %q: %s", e.Command, strings.TrimRight(e.Message, ". "))
}

// UnknownCommand reports whether HAProxy did not know the command.
func (e *ReplyError) UnknownCommand() bool {
	return strings.HasPrefix(e.Message, "Unknown command")
}

// NotFound reports whether the message says a named object does not exist.
func (e *ReplyError) NotFound() bool {
	m := strings.ToLower(e.Message)
	for _, s := range []string{"no such", "can't find", "unknown map identifier", "unknown acl identifier", "not found", "unknown backend", "unknown frontend"} {
		if strings.Contains(m, s) {
			return true
		}
	}
	return false
}

// PermissionDenied reports whether the socket's level forbids the command.
func (e *ReplyError) PermissionDenied() bool {
	return strings.Contains(e.Message, "Permission denied")
}

// ErrUnsafeCommand is returned, before anything is sent, for a command that
// contains characters that would end it or start a payload.
var ErrUnsafeCommand = errors.New("command contains a control character or payload marker")

// severityPrefix matches "[N]: " at the start of a reply.
var severityPrefix = regexp.MustCompile(`^\[(\d)\]: ?`)

// Execute sends cmd and returns HAProxy's answer (without the severity
// prefix of informational messages). A refusal is a *ReplyError; a
// connection problem a *ConnError. ctx's deadline and cancellation reach the
// socket.
func (c *Client) Execute(ctx context.Context, cmd string) (string, error) {
	if strings.ContainsAny(cmd, "\r\n\x00") || strings.Contains(cmd, "<<") {
		return "", ErrUnsafeCommand
	}
	raw, err := c.roundTrip(ctx, cmd)
	if err != nil {
		return "", err
	}
	return Classify(cmd, raw)
}

func (c *Client) roundTrip(ctx context.Context, cmd string) (string, error) {
	if c.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, c.Timeout)
		defer cancel()
	}
	var d net.Dialer
	conn, err := d.DialContext(ctx, c.Network, c.Address)
	if err != nil {
		return "", &ConnError{Endpoint: c.Endpoint(), Err: err}
	}
	defer conn.Close()
	if dl, ok := ctx.Deadline(); ok {
		_ = conn.SetDeadline(dl)
	}
	// Cancellation without a deadline still has to unblock reads.
	stop := context.AfterFunc(ctx, func() { _ = conn.SetDeadline(time.Unix(1, 0)) })
	defer stop()

	if _, err := io.WriteString(conn, "set severity-output number;"+cmd+"\n"); err != nil {
		return "", &ConnError{Endpoint: c.Endpoint(), Err: ctxErr(ctx, err)}
	}
	// Non-interactive mode: HAProxy closes the connection after answering,
	// so reading to EOF gets the whole answer, however large.
	var b strings.Builder
	buf := make([]byte, 64<<10)
	for {
		n, err := conn.Read(buf)
		b.Write(buf[:n])
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return "", &ConnError{Endpoint: c.Endpoint(), Err: ctxErr(ctx, err)}
		}
	}
	return b.String(), nil
}

// ctxErr prefers the context's reason over the socket's deadline error.
func ctxErr(ctx context.Context, err error) error {
	if cerr := ctx.Err(); cerr != nil {
		return fmt.Errorf("%w (%v)", cerr, err)
	}
	// The socket deadline is the context's: it may fire a moment before
	// the context notices.
	if errors.Is(err, os.ErrDeadlineExceeded) {
		if dl, ok := ctx.Deadline(); ok && !time.Now().Before(dl) {
			return fmt.Errorf("%w (%v)", context.DeadlineExceeded, err)
		}
	}
	return err
}

// Classify turns a raw reply into text or a *ReplyError. Severities 0-3
// (emergency to error) are refusals, as are "Unknown command" and
// "Permission denied" whatever their prefix; 4-7 are informational.
func Classify(cmd, raw string) (string, error) {
	body := strings.TrimLeft(raw, "\n")
	sev := -1
	if m := severityPrefix.FindStringSubmatch(body); m != nil {
		sev, _ = strconv.Atoi(m[1])
		body = body[len(m[0]):]
	}
	msg := strings.TrimRight(body, "\n ")
	switch {
	case sev >= 0 && sev <= 3,
		strings.HasPrefix(msg, "Unknown command"),
		strings.Contains(firstLine(msg), "Permission denied"):
		return "", &ReplyError{Command: cmd, Severity: sev, Message: msg}
	}
	return body, nil
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}
