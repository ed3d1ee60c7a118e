package mcpserver

import (
	"context"
	"fmt"
	"strconv"

	"github.com/mcpfleet/mcpfleet/proxymcp/internal/haproxy"
	"github.com/mcpfleet/mcpfleet/shared/toolcall"
)

// Previews: what a dry run shows and a person approves. Each reads the
// current state with read-only commands and words it for the call, never
// "Are you sure?". The fingerprint of what the approval depends on (the
// server's address and administrative state, a map's version and entries,
// a key's value) is re-read before an approved call runs.

// serverPreview reads one server and words the preview with say.
func (t *tools) serverPreview(backend, server, effect string, say func(v haproxy.ServerView) string) func(ctx context.Context) (toolcall.Preview, error) {
	return func(ctx context.Context) (toolcall.Preview, error) {
		v, err := t.hp.ServerView(ctx, backend, server)
		if err != nil {
			return toolcall.Preview{}, err
		}
		return toolcall.Preview{Summary: say(v), State: v, Effect: effect, Precondition: v.Fingerprint()}, nil
	}
}

// frontendPreview reads one frontend and words the preview with say.
func (t *tools) frontendPreview(frontend, effect string, say func(v haproxy.FrontendView) string) func(ctx context.Context) (toolcall.Preview, error) {
	return func(ctx context.Context) (toolcall.Preview, error) {
		v, err := t.hp.FrontendView(ctx, frontend)
		if err != nil {
			return toolcall.Preview{}, err
		}
		return toolcall.Preview{Summary: say(v), State: v, Effect: effect, Precondition: v.Fingerprint()}, nil
	}
}

// serverNow words a server's current state: "It is UP (admin state ready)
// with weight 1 and holds 3 current sessions."
func serverNow(v haproxy.ServerView) string {
	return fmt.Sprintf("It is %s (admin state %s) with weight %d and holds %s.", v.Status, v.Admin, v.Weight, sessions(v.Sessions))
}

func sessions(n int64) string {
	if n == 1 {
		return "1 current session"
	}
	return strconv.FormatInt(n, 10) + " current sessions"
}

func entries(n int) string {
	if n == 1 {
		return "1 entry"
	}
	return strconv.Itoa(n) + " entries"
}

func limit(n int64) string {
	if n == 0 {
		return "unlimited"
	}
	return strconv.FormatInt(n, 10)
}

// at names the HAProxy a change goes to: "on HAProxy at unix:///run/haproxy/admin.sock".
func (t *tools) at() string { return "HAProxy at " + t.hp.Target() }
