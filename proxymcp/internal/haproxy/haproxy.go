// Package haproxy is proxymcp's view of one HAProxy: it knows which runtime
// API command does what on which version, shapes the answers into typed
// values, and falls back between the runtime API and the stats page.
package haproxy

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/mcpfleet/mcpfleet/proxymcp/internal/runtimeapi"
	"github.com/mcpfleet/mcpfleet/proxymcp/internal/statspage"
)

// Source names the back end that answered, as the top-level "source" field.
type Source string

// The two back ends.
const (
	SourceRuntime Source = "runtime_api"
	SourceStats   Source = "stats_page"
)

// Client is one HAProxy reached through the runtime API, the stats page or both.
// Either back end may be nil (disabled).
type Client struct {
	Runtime *runtimeapi.Client
	Stats   *statspage.Client

	mu       sync.Mutex
	version  *Version // detected once, on first success
	commands Commands // from "help" at detection; nil when unknown
}

// New returns a Client; rt or st may be nil.
func New(rt *runtimeapi.Client, st *statspage.Client) *Client {
	return &Client{Runtime: rt, Stats: st}
}

// ErrRuntimeDisabled is returned by runtime-only operations when PROXY_RUNTIME_ENABLED=false.
var ErrRuntimeDisabled = errors.New("the runtime API is disabled (PROXY_RUNTIME_ENABLED=false) and the stats page cannot do this")

// UnsupportedError is a command the detected HAProxy version does not have.
type UnsupportedError struct {
	Command string
	Need    string // minimum version
	Have    string // detected version
	Detail  string // how that was detected, when not by version alone
}

func (e *UnsupportedError) Error() string {
	msg := fmt.Sprintf("%q needs HAProxy %s or newer; this HAProxy is %s", e.Command, e.Need, e.Have)
	if e.Detail != "" {
		msg += " (" + e.Detail + ")"
	}
	return msg
}

// Attempt is one back end tried for an operation.
type Attempt struct {
	Source Source
	Err    error
}

// UnavailableError says every back end that could do an operation failed.
type UnavailableError struct {
	Op       string
	Attempts []Attempt
}

func (e *UnavailableError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: no back end could answer (", e.Op)
	for i, a := range e.Attempts {
		if i > 0 {
			b.WriteString("; ")
		}
		fmt.Fprintf(&b, "%s: %v", a.Source, a.Err)
	}
	b.WriteString(")")
	return b.String()
}

// Unwrap returns the attempts' errors.
func (e *UnavailableError) Unwrap() []error {
	out := make([]error, 0, len(e.Attempts))
	for _, a := range e.Attempts {
		out = append(out, a.Err)
	}
	return out
}

// NotFoundError is a named object that does not exist.
type NotFoundError struct {
	What, Name string
}

func (e *NotFoundError) Error() string { return fmt.Sprintf("%s %q not found", e.What, e.Name) }

// exec runs one runtime API command.
func (c *Client) exec(ctx context.Context, cmd string) (string, error) {
	if c.Runtime == nil {
		return "", ErrRuntimeDisabled
	}
	return c.Runtime.Execute(ctx, cmd)
}

// read runs a command that changes nothing, sharing the answer of an
// identical one already on its way (runtimeapi.Client.Read).
func (c *Client) read(ctx context.Context, cmd string) (string, error) {
	if c.Runtime == nil {
		return "", ErrRuntimeDisabled
	}
	return c.Runtime.Read(ctx, cmd)
}

// execGated runs cmd after checking that the version supports feature.
func (c *Client) execGated(ctx context.Context, feature, cmd string) (string, error) {
	if err := c.Require(ctx, feature); err != nil {
		return "", err
	}
	return c.exec(ctx, cmd)
}

// unreachable reports whether err means the back end did not answer at all
// (so the other one may be tried), as opposed to HAProxy refusing.
func unreachable(err error) bool {
	if errors.Is(err, ErrRuntimeDisabled) {
		return true
	}
	var rc *runtimeapi.ConnError
	var sc *statspage.ConnError
	return errors.As(err, &rc) || errors.As(err, &sc)
}

// statCSV returns every statistics row: from the runtime API, or from the
// stats page when the runtime API cannot be reached.
func (c *Client) statCSV(ctx context.Context) ([]StatRow, Source, error) {
	var attempts []Attempt
	if c.Runtime != nil {
		out, err := c.Runtime.Read(ctx, "show stat")
		if err == nil {
			rows, perr := parseStat(out)
			return rows, SourceRuntime, perr
		}
		if !unreachable(err) || ctx.Err() != nil {
			return nil, SourceRuntime, err
		}
		attempts = append(attempts, Attempt{SourceRuntime, err})
	}
	if c.Stats != nil {
		data, err := c.Stats.CSV(ctx)
		if err == nil {
			rows, perr := ParseStatCSV(data)
			return rows, SourceStats, perr
		}
		attempts = append(attempts, Attempt{SourceStats, err})
	}
	return nil, "", &UnavailableError{Op: "read statistics", Attempts: attempts}
}

// adminChange runs a server state/health/agent change through the runtime
// API, or through the stats page's admin form when the runtime API cannot
// be reached and action is not empty.
func (c *Client) adminChange(ctx context.Context, op string, ch change, backend, server, action string) (Source, Applied, error) {
	var attempts []Attempt
	if c.Runtime != nil {
		res, err := c.apply(ctx, ch)
		if err == nil {
			return SourceRuntime, res, nil
		}
		if !unreachable(err) || ctx.Err() != nil {
			return SourceRuntime, Applied{}, err
		}
		attempts = append(attempts, Attempt{SourceRuntime, err})
	}
	if c.Stats != nil && action != "" {
		err := c.Stats.Admin(ctx, backend, server, action)
		if err == nil {
			// The page answers DONE only when it applied the action.
			return SourceStats, Applied{Changed: true}, nil
		}
		var ae *statspage.AdminError
		if errors.As(err, &ae) && !ae.Denied() {
			return SourceStats, Applied{}, err // the page answered: the server or backend is wrong
		}
		attempts = append(attempts, Attempt{SourceStats, err})
	} else if c.Stats != nil {
		attempts = append(attempts, Attempt{SourceStats, errors.New("the stats page's admin form cannot do this")})
	}
	return "", Applied{}, &UnavailableError{Op: op, Attempts: attempts}
}
