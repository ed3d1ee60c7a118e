package mcpserver

import (
	"context"
	"fmt"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcpfleet/mcpfleet/proxymcp/internal/haproxy"
	"github.com/mcpfleet/mcpfleet/shared/toolcall"
)

func pSessionID() prop {
	return prop{"session_id", mcp.WithString("session_id", mcp.Required(), mcp.Pattern(`^0x[0-9a-fA-F]{1,16}$`),
		mcp.Description("Session (stream) id as show_sessions lists it, e.g. 0x55e889caf120."))}
}

func (t *tools) sessionTools() {
	t.add("show_sessions", "List sessions",
		"Current streams (`show sess`), parsed: id, frontend, backend, server, client address and HAProxy's other fields. Optionally only those of one frontend, backend or server. The runtime API connection asking is left out.",
		read, []prop{pOptName("frontend", "Only sessions on this frontend."), pOptName("backend", "Only sessions on this backend."), pOptName("server", "Only sessions on this server.")},
		func(ctx context.Context, a *args) (result, error) {
			fe, be, sv := a.name("frontend", false), a.name("backend", false), a.name("server", false)
			if err := a.check(); err != nil {
				return result{}, err
			}
			s, err := t.hp.Sessions(ctx, fe, be, sv)
			if err != nil {
				return result{}, err
			}
			return ok(haproxy.SourceRuntime, map[string]any{"count": len(s), "sessions": s}), nil
		})

	t.add("show_session", "Show a session",
		"One stream's full detail (`show sess <id>`), as HAProxy prints it.",
		read, []prop{pSessionID()},
		func(ctx context.Context, a *args) (result, error) {
			id := a.sessionID("session_id")
			if err := a.check(); err != nil {
				return result{}, err
			}
			out, err := t.hp.ShowSession(ctx, id)
			if err != nil {
				return result{}, err
			}
			r := ok(haproxy.SourceRuntime, map[string]any{"session_id": id, "text": out})
			r.text = out
			return r, nil
		})

	t.change("shutdown_session", "End a session",
		"Abort one stream immediately (`shutdown session <id>`); the client sees its connection closed.",
		destructive, toolcall.Destructive, []prop{pSessionID()},
		func(a *args) (planned, error) {
			id := a.sessionID("session_id")
			if err := a.check(); err != nil {
				return planned{}, err
			}
			return planned{
				commands: t.hp.ShutdownSessionCommands(id),
				describe: func(ctx context.Context) (toolcall.Preview, error) {
					v, err := t.hp.SessionView(ctx, id)
					if err != nil {
						return toolcall.Preview{}, err
					}
					where := "frontend " + v.Frontend
					if v.Backend != "" && v.Backend != "<NONE>" {
						where += ", backend " + v.Backend
					}
					if v.Server != "" && v.Server != "<NONE>" {
						where += ", server " + v.Server
					}
					return toolcall.Preview{
						Summary:      fmt.Sprintf("End session %s (client %s on %s) on %s: its connection is closed at once and cannot be resumed.", v.ID, v.Source, where, t.at()),
						State:        v,
						Effect:       "the client sees its connection closed",
						Precondition: "session " + v.ID + " exists on " + v.Frontend,
					}, nil
				},
				run: func(ctx context.Context) (result, error) {
					res, err := t.hp.ShutdownSession(ctx, id)
					if err != nil {
						return result{}, err
					}
					return ok(haproxy.SourceRuntime, applied(map[string]any{"session_id": id, "shut_down": true}, res)), nil
				},
			}, nil
		})

	t.change("shutdown_server_sessions", "End a server's sessions",
		"Abort every stream attached to one server (`shutdown sessions server`), e.g. after draining it.",
		destructive, toolcall.Destructive, []prop{pBackend("Backend name."), pServer()},
		func(a *args) (planned, error) {
			b, s := backendServer(a)
			if err := a.check(); err != nil {
				return planned{}, err
			}
			return planned{
				commands: t.hp.ShutdownServerSessionsCommands(b, s),
				describe: t.serverPreview(b, s, "every client connected through the server sees its connection closed", func(v haproxy.ServerView) string {
					return fmt.Sprintf("End every session of server %s (%s) on %s. It is %s and holds %s, which will be cut.", v.Name(), v.Endpoint(), t.at(), v.Status, sessions(v.Sessions))
				}),
				run: func(ctx context.Context) (result, error) {
					res, err := t.hp.ShutdownServerSessions(ctx, b, s)
					if err != nil {
						return result{}, err
					}
					return ok(haproxy.SourceRuntime, applied(map[string]any{"backend": b, "server": s, "shut_down": true}, res)), nil
				},
			}, nil
		})
}
