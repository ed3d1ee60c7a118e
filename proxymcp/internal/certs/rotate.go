package certs

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"time"

	"github.com/mcpfleet/mcpfleet/proxymcp/internal/runtimeapi"
	"github.com/mcpfleet/mcpfleet/proxymcp/internal/validate"
)

// The runtime API's certificate transaction, one builder per command. file
// is the certificate's name as "show ssl cert" lists it, checked with
// validate.CertFile so that it cannot carry a second command.
//
// SetCommand opens (or updates) a transaction with a payload: the PEM goes
// after it, then an empty line.
func SetCommand(file string) (string, error) { return build("set ssl cert ", file, " <<") }

// CommitCommand makes the transaction's certificate the one in use.
func CommitCommand(file string) (string, error) { return build("commit ssl cert ", file, "") }

// AbortCommand drops the transaction; the certificate in use stays.
func AbortCommand(file string) (string, error) { return build("abort ssl cert ", file, "") }

func build(verb, file, tail string) (string, error) {
	if err := validate.CertFile("cert", file); err != nil {
		return "", err
	}
	return verb + file + tail, nil
}

// Runtime runs one runtime API command (a *runtimeapi.Client).
type Runtime interface {
	Execute(ctx context.Context, cmd string) (string, error)
}

// PayloadSender sends one command with a payload on a new non-interactive
// runtime API connection: runtimeapi.Client refuses payloads on purpose,
// so this is the one place that sends one, and only a re-encoded PEM.
type PayloadSender struct {
	Network, Address string
	Timeout          time.Duration // 10s when zero
}

// Send writes cmd (ending in "<<"), the payload and the empty line that
// ends it, and classifies HAProxy's answer like every runtime API answer.
func (s PayloadSender) Send(ctx context.Context, cmd string, payload []byte) (string, error) {
	if !strings.HasSuffix(cmd, " <<") || strings.ContainsAny(cmd, "\r\n\x00;") {
		return "", errors.New("certs: not a payload command")
	}
	// An empty line inside the payload would end it early and run the rest
	// as commands: PEM from Bundle.PEM never has one.
	if bytes.Contains(payload, []byte("\n\n")) || bytes.ContainsAny(payload, "\r\x00") {
		return "", errors.New("certs: the payload contains an empty line or a control character")
	}
	timeout := s.Timeout
	if timeout <= 0 {
		timeout = 10 * time.Second
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var d net.Dialer
	conn, err := d.DialContext(ctx, s.Network, s.Address)
	if err != nil {
		return "", &runtimeapi.ConnError{Endpoint: s.Network + " " + s.Address, Err: err}
	}
	defer conn.Close()
	dl, _ := ctx.Deadline()
	_ = conn.SetDeadline(dl)
	stop := context.AfterFunc(ctx, func() { _ = conn.SetDeadline(time.Unix(1, 0)) })
	defer stop()
	var msg bytes.Buffer
	msg.WriteString("set severity-output number;" + cmd + "\n")
	msg.Write(bytes.TrimRight(payload, "\n"))
	msg.WriteString("\n\n")
	if _, err := conn.Write(msg.Bytes()); err != nil {
		return "", &runtimeapi.ConnError{Endpoint: s.Network + " " + s.Address, Err: err}
	}
	var out bytes.Buffer
	if _, err := io.Copy(&out, conn); err != nil {
		return "", &runtimeapi.ConnError{Endpoint: s.Network + " " + s.Address, Err: fmt.Errorf("answer to %q cut off: %w", cmd, err)}
	}
	return runtimeapi.Classify(cmd, out.String())
}

// Rotated is the outcome of Rotate.
type Rotated struct {
	File    string `json:"file"`
	Answer  string `json:"answer"` // HAProxy's answer to the commit
	Aborted bool   `json:"aborted,omitempty"`
}

// Rotate replaces the certificate file in use with b: set ssl cert (the
// payload), then commit ssl cert; any failure after the transaction opened
// sends abort ssl cert, so the certificate in use never changes halfway.
func Rotate(ctx context.Context, rt Runtime, send PayloadSender, file string, b *Bundle) (Rotated, error) {
	r := Rotated{File: file}
	set, err := SetCommand(file)
	if err != nil {
		return r, err
	}
	commit, _ := CommitCommand(file)
	abort, _ := AbortCommand(file)
	fail := func(step string, err error) (Rotated, error) {
		// A fresh context: the caller's may be what just ran out.
		actx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		if _, aerr := rt.Execute(actx, abort); aerr != nil {
			return r, fmt.Errorf("%s of %s failed: %w; abort ssl cert also failed (%v): check \"show ssl cert\" for a pending transaction (*%s) and abort it", step, file, err, aerr, file)
		}
		r.Aborted = true
		return r, fmt.Errorf("%s of %s failed: %w; the transaction was aborted and the certificate in use is unchanged", step, file, err)
	}
	if _, err := send.Send(ctx, set, b.PEM()); err != nil {
		return fail("set ssl cert", err)
	}
	out, err := rt.Execute(ctx, commit)
	if err == nil && !strings.Contains(out, "Success!") {
		err = fmt.Errorf("HAProxy did not confirm: %s", strings.TrimSpace(out))
	}
	if err != nil {
		return fail("commit ssl cert", err)
	}
	r.Answer = strings.TrimSpace(out)
	return r, nil
}
