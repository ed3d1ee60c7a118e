// Package master talks to HAProxy's master CLI (the socket given to "-S" or
// a "stats socket ... master" line of a master-worker HAProxy): it lists the
// processes ("show proc"), reloads and confirms the outcome, and checks a
// configuration with the instance's own haproxy binary ("haproxy -c").
//
// The master CLI differs from a worker's runtime API in ways measured on
// 2.6, 3.0 and 3.2: it keeps a one-shot connection open until the client
// half-closes it, it refuses connections for a moment at start and while it
// re-executes itself for a reload, and "reload" answers nothing on 2.6 but
// "Success=0|1" and the startup log from 3.0 on.
package master

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strings"
	"syscall"
	"time"
)

// Client sends commands to one master CLI. It keeps no connection: every
// command is one connection, as the master closes it after answering.
type Client struct {
	Network string        // "unix" or "tcp4"/"tcp"
	Address string        // socket path or host:port
	Timeout time.Duration // per command, on top of the caller's context; 10s when zero
	// Unreachable bounds how long a command keeps retrying while the master
	// refuses connections (start, re-exec during a reload); 5s when zero.
	Unreachable time.Duration
}

// Endpoint describes the address for messages, e.g. "unix /run/master.sock".
func (c *Client) Endpoint() string { return c.Network + " " + c.Address }

// ConnError means the master CLI could not be reached or the exchange broke
// off; the master did not answer (completely).
type ConnError struct {
	Endpoint string
	Command  string
	Err      error
}

func (e *ConnError) Error() string {
	return fmt.Sprintf("master CLI at %s, %q: %v; check that HAProxy runs in master-worker mode (-W with -S, or a \"stats socket ... master\" line) and that PROXY_MASTER_URL names that socket", e.Endpoint, e.Command, e.Err)
}

func (e *ConnError) Unwrap() error { return e.Err }

// ErrUnsafeCommand is returned, before anything is sent, for a command with
// characters that would end it early or start a payload.
var ErrUnsafeCommand = errors.New("master CLI command contains a control character, ';' or a payload marker")

// Execute sends cmd and returns the raw answer. The write side is closed
// right after the command: the master otherwise keeps the connection open
// and the read would wait for the timeout. ctx reaches the dial, the write
// and the read.
func (c *Client) Execute(ctx context.Context, cmd string) (string, error) {
	// ";" would chain a second command behind the one the caller checked.
	if strings.ContainsAny(cmd, "\r\n\x00;") || strings.Contains(cmd, "<<") {
		return "", ErrUnsafeCommand
	}
	timeout := c.Timeout
	if timeout <= 0 {
		timeout = 10 * time.Second
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	conn, err := c.dial(ctx)
	if err != nil {
		return "", &ConnError{Endpoint: c.Endpoint(), Command: cmd, Err: err}
	}
	defer conn.Close()
	dl, _ := ctx.Deadline()
	_ = conn.SetDeadline(dl)
	// Cancellation without a deadline change still has to unblock the read.
	stop := context.AfterFunc(ctx, func() { _ = conn.SetDeadline(time.Unix(1, 0)) })
	defer stop()
	if _, err := io.WriteString(conn, cmd+"\n"); err != nil {
		return "", &ConnError{Endpoint: c.Endpoint(), Command: cmd, Err: ctxErr(ctx, err)}
	}
	if hc, ok := conn.(interface{ CloseWrite() error }); ok {
		if err := hc.CloseWrite(); err != nil {
			return "", &ConnError{Endpoint: c.Endpoint(), Command: cmd, Err: err}
		}
	}
	var b bytes.Buffer
	if _, err := b.ReadFrom(conn); err != nil {
		return "", &ConnError{Endpoint: c.Endpoint(), Command: cmd, Err: fmt.Errorf("answer cut off after %d bytes: %w", b.Len(), ctxErr(ctx, err))}
	}
	return b.String(), nil
}

// dial connects, retrying while the master is briefly away (connection
// refused, socket file missing: HAProxy recreates it when it re-executes).
// Other errors and the end of the Unreachable budget stop at once.
func (c *Client) dial(ctx context.Context) (net.Conn, error) {
	budget := c.Unreachable
	if budget <= 0 {
		budget = 5 * time.Second
	}
	giveUp := time.Now().Add(budget)
	var d net.Dialer
	tries := 0
	for {
		conn, err := d.DialContext(ctx, c.Network, c.Address)
		tries++
		if err == nil {
			return conn, nil
		}
		if !transient(err) {
			return nil, err
		}
		if time.Now().After(giveUp) {
			return nil, fmt.Errorf("still unreachable after %d attempts over %s: %w", tries, budget, err)
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("%w while waiting for the master CLI (last error: %v)", ctx.Err(), err)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// transient reports the errors of a master that is starting or
// re-executing: nothing listens yet, or the socket file is being replaced.
func transient(err error) bool {
	return errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ENOENT) || errors.Is(err, syscall.ECONNRESET)
}

// ctxErr prefers the context's reason over the socket's deadline error.
func ctxErr(ctx context.Context, err error) error {
	if cerr := ctx.Err(); cerr != nil {
		return fmt.Errorf("%w (%v)", cerr, err)
	}
	if errors.Is(err, os.ErrDeadlineExceeded) {
		return fmt.Errorf("%w (%v)", context.DeadlineExceeded, err)
	}
	return err
}
