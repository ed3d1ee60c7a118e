package haproxy

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
)

// HAProxy does not refuse every change it leaves undone: some refusals come
// back as warnings (severity 4 or 5, e.g. "[4]: health checks are not
// enabled on this server" for check-port) or as plain text, which the
// runtime client passes on as an answer. So every change names its
// documented successful answer; any other answer makes us read the state
// back and decide from what HAProxy actually holds.

// Applied is what one change did.
type Applied struct {
	// Changed is false when HAProxy said the requested state already held.
	Changed bool
	// Message is HAProxy's answer, if it gave one.
	Message string
	// State is what was read back, when the answer was not the documented
	// success and the state had to be checked.
	State string
}

// NotAppliedError is a change HAProxy answered without an error severity but
// did not make: the state read back does not show it, or (Unverified) the
// setting cannot be read back, so the change cannot be confirmed.
type NotAppliedError struct {
	Command    string
	Message    string // HAProxy's own words
	State      string // what was read back
	Unverified bool
	ReadErr    error // reading the state back failed
}

func (e *NotAppliedError) Error() string {
	answer := "an empty answer"
	if e.Message != "" {
		answer = strconv.Quote(e.Message)
	}
	switch {
	case e.ReadErr != nil:
		return fmt.Sprintf("not confirmed: HAProxy answered %q with %s instead of its usual confirmation, and reading the state back failed (%v)", e.Command, answer, e.ReadErr)
	case e.Unverified:
		return fmt.Sprintf("not confirmed: HAProxy answered %q with %s instead of its usual confirmation, and this setting cannot be read back", e.Command, answer)
	}
	return fmt.Sprintf("not applied: HAProxy answered %q with %s, and the state read back shows %s", e.Command, answer, e.State)
}

// PartialError is a change of several steps that stopped part way: Done
// lists what took effect before Err.
type PartialError struct {
	Done []string
	Err  error
}

func (e *PartialError) Error() string {
	return fmt.Sprintf("partially applied: %s took effect; then %v", strings.Join(e.Done, "; "), e.Err)
}

func (e *PartialError) Unwrap() error { return e.Err }

// partial wraps err with the steps already done, if any.
func partial(done []string, err error) error {
	if len(done) == 0 || err == nil {
		return err
	}
	return &PartialError{Done: done, Err: err}
}

// A change is one runtime API command and how to tell whether it took effect.
type change struct {
	cmd string
	// success reports HAProxy's documented answer when it applied the
	// change; nil means the empty answer.
	success func(msg string) bool
	// already reports the documented answer meaning the requested state
	// already held.
	already func(msg string) bool
	// check reads the state back: a description of what HAProxy holds and
	// whether that is the requested state. nil: it cannot be read back.
	check func(ctx context.Context) (state string, done bool, err error)
	// always reads the state back even after the documented success: for
	// commands HAProxy accepts silently when there is nothing to act on.
	always bool
}

// apply sends a change and, unless HAProxy answers with its documented
// success, reads the state back to report what actually happened.
func (c *Client) apply(ctx context.Context, ch change) (Applied, error) {
	out, err := c.exec(ctx, ch.cmd)
	if err != nil {
		return Applied{}, err
	}
	msg := strings.TrimSpace(out)
	succeeded := (ch.success == nil && msg == "") || (ch.success != nil && ch.success(msg))
	if succeeded && !(ch.always && ch.check != nil) {
		return Applied{Changed: true, Message: msg}, nil
	}
	already := ch.already != nil && ch.already(msg)
	if ch.check == nil {
		if already {
			return Applied{Message: msg}, nil
		}
		return Applied{}, &NotAppliedError{Command: ch.cmd, Message: msg, Unverified: true}
	}
	state, done, err := ch.check(ctx)
	if err != nil {
		return Applied{}, &NotAppliedError{Command: ch.cmd, Message: msg, ReadErr: err}
	}
	if !done {
		return Applied{}, &NotAppliedError{Command: ch.cmd, Message: msg, State: state}
	}
	if succeeded {
		return Applied{Changed: true, Message: msg}, nil
	}
	return Applied{Changed: !already, Message: msg, State: state}, nil
}

func exact(answers ...string) func(string) bool {
	return func(msg string) bool {
		for _, a := range answers {
			if msg == a {
				return true
			}
		}
		return false
	}
}

// Bits of srv_admin_state and of srv_check_state / srv_agent_state in
// "show servers state" (HAProxy's SRV_ADMF_* and CHK_ST_*).
const (
	adminForcedMaint = 0x01
	adminForcedDrain = 0x08
	checkConfigured  = 0x02
	checkEnabled     = 0x04
)

// serverState returns one server's "show servers state" row.
func (c *Client) serverState(ctx context.Context, backend, server string) (map[string]any, error) {
	rows, err := c.ServersTable(ctx, "state", backend)
	if err != nil {
		return nil, err
	}
	for _, r := range rows {
		if r["srv_name"] == server {
			return r, nil
		}
	}
	return nil, &NotFoundError{What: "server", Name: srv(backend, server)}
}

func intField(row map[string]any, name string) int64 {
	n, _ := row[name].(int64)
	return n
}

// checkServer builds a check on one server's state row.
func (c *Client) checkServer(backend, server string, f func(row map[string]any) (string, bool)) func(context.Context) (string, bool, error) {
	return func(ctx context.Context) (string, bool, error) {
		row, err := c.serverState(ctx, backend, server)
		if err != nil {
			return "", false, err
		}
		state, done := f(row)
		return srv(backend, server) + " " + state, done, nil
	}
}

// checkStat builds a check on one statistics row (svname FRONTEND for a frontend).
func (c *Client) checkStat(proxy, svname string, f func(r StatRow) (string, bool)) func(context.Context) (string, bool, error) {
	return func(ctx context.Context) (string, bool, error) {
		rows, _, err := c.statCSV(ctx)
		if err != nil {
			return "", false, err
		}
		for _, r := range rows {
			if r.Str("pxname") == proxy && r.Str("svname") == svname {
				state, done := f(r)
				return state, done, nil
			}
		}
		return "", false, &NotFoundError{What: "statistics row", Name: proxy + "/" + svname}
	}
}

// sameAddr compares two IP addresses in any notation.
func sameAddr(a, b string) bool {
	x, y := net.ParseIP(a), net.ParseIP(b)
	return x != nil && y != nil && x.Equal(y)
}

func adminStateName(bits int64) string {
	switch {
	case bits&adminForcedMaint != 0:
		return "maint"
	case bits&adminForcedDrain != 0:
		return "drain"
	}
	return "ready"
}

// checkAdminState: the server's forced administrative state is state.
func (c *Client) checkAdminState(backend, server, state string) func(context.Context) (string, bool, error) {
	return c.checkServer(backend, server, func(row map[string]any) (string, bool) {
		got := adminStateName(intField(row, "srv_admin_state"))
		return "is in state " + got, got == state
	})
}

// checkEnabledBit: the health (column srv_check_state) or agent
// (srv_agent_state) check is configured, and enabled or not. HAProxy
// accepts disabling a check that is not configured without a word.
func (c *Client) checkEnabledBit(backend, server, column, what string, enable bool) func(context.Context) (string, bool, error) {
	return c.checkServer(backend, server, func(row map[string]any) (string, bool) {
		bits := intField(row, column)
		if bits&checkConfigured == 0 {
			return "has no " + what + " configured", false
		}
		on := bits&checkEnabled != 0
		if on {
			return "has its " + what + " enabled", enable
		}
		return "has its " + what + " disabled", !enable
	})
}

// checkServerExists: the server exists (or not).
func (c *Client) checkServerExists(backend, server string, want bool) func(context.Context) (string, bool, error) {
	return func(ctx context.Context) (string, bool, error) {
		_, err := c.serverState(ctx, backend, server)
		var nf *NotFoundError
		switch {
		case err == nil:
			return srv(backend, server) + " exists", want, nil
		case errors.As(err, &nf):
			return srv(backend, server) + " does not exist", !want, nil
		}
		return "", false, err
	}
}
