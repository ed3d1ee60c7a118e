// Package runtimeapi talks to HAProxy's runtime API (the "stats socket") over
// a Unix socket or a TCP port. With MaxConns set it keeps a small pool of
// interactive ("prompt" mode) connections, one command at a time on each;
// otherwise, and as the fallback when prompt mode is refused, it opens one
// non-interactive connection per command. Either way severity-output
// numbering is switched on so that refusals are recognisable, and an answer
// counts only when its end marker arrived: the prompt in interactive mode,
// the empty line before the close in non-interactive mode.
package runtimeapi

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"go.opentelemetry.io/otel/attribute"

	"github.com/mcpfleet/mcpfleet/shared/backendcall"
)

// Client sends commands to one runtime API endpoint. It is safe for
// concurrent use. Use it through a pointer: it holds the pool.
type Client struct {
	Network string        // "tcp4" or "unix"
	Address string        // host:port or socket path
	Timeout time.Duration // per command, on top of the caller's context

	// MaxConns, when above zero, keeps up to that many interactive
	// connections open and never opens more at once: further calls wait
	// for a free one under their own context. Keep it below the socket's
	// "stats maxconn" (10 unless configured) so that operators' own tools
	// still get in. Zero opens one connection per command.
	MaxConns int

	// Recorder, when set, records every command sent as one back-end call
	// (mcpfleet_backend_* metrics and a client span), by its verb (Verb).
	Recorder *backendcall.Recorder

	poolOnce sync.Once
	pool     *pool
	shared   shared // the reads on their way (Read)
}

// Endpoint describes the address for messages, e.g. "unix /run/admin.sock".
func (c *Client) Endpoint() string { return c.Network + " " + c.Address }

// ConnError means HAProxy could not be reached or the exchange broke off;
// HAProxy did not answer the command (or not completely).
type ConnError struct {
	Endpoint string
	Err      error
}

func (e *ConnError) Error() string {
	return fmt.Sprintf("runtime API at %s: %v", e.Endpoint, e.Err)
}

func (e *ConnError) Unwrap() error { return e.Err }

// ErrCutOff is wrapped by every error for an answer that ended before its
// end marker.
var ErrCutOff = errors.New("answer cut off")

// CutOffError is an answer that stopped before HAProxy's end marker: HAProxy
// was stopped or restarted, or something between us and it closed the
// connection. What arrived is not returned: a partial table would pass for
// a smaller complete one.
type CutOffError struct {
	Command string
	Bytes   int   // answer bytes that arrived
	Cause   error // how the connection ended: io.EOF, a reset, a deadline
}

func (e *CutOffError) Error() string {
	return fmt.Sprintf("the answer to %q was cut off after %d bytes (%v) before HAProxy's end-of-answer marker; "+
		"check that HAProxy is running and was not restarted (its log), that nothing between proxymcp and the socket "+
		"closes connections, then retry", e.Command, e.Bytes, e.Cause)
}

// Is makes errors.Is(err, ErrCutOff) true.
func (e *CutOffError) Is(target error) bool { return target == ErrCutOff }

func (e *CutOffError) Unwrap() error { return e.Cause }

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
// connection problem, including an answer cut off before its end, a
// *ConnError. ctx's deadline and cancellation reach the socket and the wait
// for a pooled connection.
func (c *Client) Execute(ctx context.Context, cmd string) (string, error) {
	if strings.ContainsAny(cmd, "\r\n\x00") || strings.Contains(cmd, "<<") {
		return "", ErrUnsafeCommand
	}
	if c.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, c.Timeout)
		defer cancel()
	}
	ctx, call := c.Recorder.Start(ctx, Verb(cmd))
	if call.Traced() {
		call.SetAttributes(attribute.String("haproxy.command", cmd), attribute.String("haproxy.endpoint", c.Endpoint()))
	}
	out, err := c.execute(ctx, cmd)
	call.SetOutcome(Outcome(err))
	call.End(err)
	return out, err
}

func (c *Client) execute(ctx context.Context, cmd string) (string, error) {
	if err := c.notSent(ctx, cmd); err != nil {
		return "", err
	}
	var raw string
	var err error
	if c.MaxConns > 0 {
		raw, err = c.getPool().execute(ctx, cmd)
	} else {
		raw, err = c.oneShot(ctx, cmd)
	}
	if err != nil {
		return "", err
	}
	return Classify(cmd, raw)
}

// Outcomes of a command, the outcome label of mcpfleet_backend_requests_total:
// a refusal is HAProxy answering (a wrong name, a forbidden command), not
// HAProxy failing, so "back end failing" alerts on error and timeout only.
const (
	OutcomeRefused = "refused" // HAProxy answered with an error (*ReplyError)
)

// Outcome classifies a command's error for the outcome label: ok, refused
// (HAProxy answered with an error), cancelled, timeout, or error (no
// complete answer: unreachable, reset, cut off).
func Outcome(err error) string {
	var re *ReplyError
	if errors.As(err, &re) {
		return OutcomeRefused
	}
	return backendcall.Classify(err)
}

// verbs are the first words of the runtime API's commands (HAProxy
// management guide, 2.4 to 3.x): the operation label's closed set.
var verbs = map[string]bool{
	"abort": true, "add": true, "clear": true, "commit": true, "debug": true, "del": true, "disable": true,
	"dump": true, "echo": true, "enable": true, "experimental-mode": true, "expert-mode": true, "get": true,
	"help": true, "new": true, "operator": true, "prepare": true, "prompt": true, "quit": true, "set": true,
	"show": true, "shutdown": true, "trace": true, "update": true, "user": true, "wait": true,
}

// Verb is the operation label of cmd: its first word when that is a runtime
// API verb, else "other", so that no caller input becomes a label value.
func Verb(cmd string) string {
	w, _, _ := strings.Cut(strings.TrimLeft(cmd, " \t"), " ")
	if verbs[w] {
		return w
	}
	return "other"
}

// Close closes the pool's idle connections; calls still running finish and
// close theirs. The Client must not be used afterwards.
func (c *Client) Close() error {
	if c.MaxConns > 0 {
		c.getPool().close()
	}
	return nil
}

// FlushIdle closes the pool's idle connections, so that the next command
// reaches the current worker: after a master-worker reload the old worker
// keeps answering on the connections it had (see connMaxAge). Calls still
// running keep theirs.
func (c *Client) FlushIdle() {
	if c.MaxConns > 0 {
		c.getPool().flushIdle()
	}
}

func (c *Client) connErr(err error) error { return &ConnError{Endpoint: c.Endpoint(), Err: err} }

// errNotSent marks an exchange given up before its command was written.
var errNotSent = errors.New("not sent")

// notSent is the error for a command whose caller gave up (ctx done) before
// it was written, nil while the caller still waits. A command is never
// written after that: a cancelled write must not change HAProxy.
func (c *Client) notSent(ctx context.Context, cmd string) error {
	if err := ctx.Err(); err != nil {
		return c.connErr(fmt.Errorf("%w before %q was sent; nothing was sent to HAProxy", err, cmd))
	}
	return nil
}

func (c *Client) dial(ctx context.Context) (net.Conn, error) {
	var d net.Dialer
	conn, err := d.DialContext(ctx, c.Network, c.Address)
	if err != nil {
		return nil, c.connErr(err)
	}
	return conn, nil
}

// oneShot runs cmd on a new non-interactive connection: HAProxy answers,
// then closes it.
func (c *Client) oneShot(ctx context.Context, cmd string) (string, error) {
	conn, err := c.dial(ctx)
	if err != nil {
		return "", err
	}
	defer conn.Close()
	guard := watch(ctx, conn)
	defer guard()
	if err := c.notSent(ctx, cmd); err != nil {
		return "", err
	}
	if _, err := io.WriteString(conn, "set severity-output number;"+cmd+"\n"); err != nil {
		return "", c.connErr(ctxErr(ctx, err))
	}
	var b bytes.Buffer
	_, err = b.ReadFrom(conn) // until HAProxy closes: io.EOF is not an error here
	if err != nil {
		return "", c.connErr(&CutOffError{Command: cmd, Bytes: b.Len(), Cause: ctxErr(ctx, err)})
	}
	if !oneShotComplete(b.Bytes()) {
		return "", c.connErr(&CutOffError{Command: cmd, Bytes: b.Len(), Cause: io.EOF})
	}
	return b.String(), nil
}

// oneShotComplete reports whether a non-interactive answer (the empty answer
// to "set severity-output number", then the command's) arrived to its end.
// HAProxy ends answers with an empty line; the one exception (2.6: "del
// server", "set maxconn server ... abc") is a single severity-prefixed
// message line, accepted with its one newline. A single-line message cut
// inside its final newline pair therefore cannot be told from a complete
// one here; interactive mode has no such gap.
func oneShotComplete(raw []byte) bool {
	body, ok := bytes.CutPrefix(raw, []byte("\n"))
	if !ok || len(body) == 0 {
		return false // not even the answer to set severity-output, or no answer to cmd
	}
	if bytes.HasSuffix(body, []byte("\n\n")) || bytes.Equal(body, []byte("\n")) {
		return true
	}
	line, rest, _ := bytes.Cut(body, []byte("\n"))
	return len(rest) == 0 && bytes.HasSuffix(body, []byte("\n")) && severityPrefix.Match(line)
}

// watch applies ctx's deadline to conn and makes cancellation unblock its
// reads and writes. The returned stop reports whether conn is still usable:
// false once cancellation has touched it.
func watch(ctx context.Context, conn net.Conn) (stop func() bool) {
	// A reused connection may carry the previous caller's deadline.
	dl, _ := ctx.Deadline()
	_ = conn.SetDeadline(dl)
	// Cancellation without a deadline still has to unblock reads.
	s := context.AfterFunc(ctx, func() { _ = conn.SetDeadline(time.Unix(1, 0)) })
	return s
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
