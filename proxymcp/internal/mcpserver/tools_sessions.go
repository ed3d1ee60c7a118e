package mcpserver

import (
	"context"
	"fmt"

	"github.com/mcpfleet/mcpfleet/proxymcp/internal/haproxy"
	"github.com/mcpfleet/mcpfleet/proxymcp/internal/validate"
	"github.com/mcpfleet/mcpfleet/shared/toolcall"
)

type sessionIn struct {
	fleetArg
	SessionID string `json:"session_id" jsonschema:"Session (stream) id as show_sessions lists it, e.g. 0x55e889caf120." pattern:"^0x[0-9a-fA-F]{1,16}$"`
}

type showSessionsIn struct {
	fleetArg
	Frontend string `json:"frontend,omitempty" jsonschema:"Only sessions on this frontend." pattern:"^[A-Za-z0-9_.:-]{1,128}$"`
	Backend  string `json:"backend,omitempty" jsonschema:"Only sessions on this backend." pattern:"^[A-Za-z0-9_.:-]{1,128}$"`
	Server   string `json:"server,omitempty" jsonschema:"Only sessions on this server." pattern:"^[A-Za-z0-9_.:-]{1,128}$"`
}

func (t *tools) sessionTools() {
	addRead(t, "show_sessions", "List sessions",
		"Current streams (`show sess`), parsed: id, frontend, backend, server, client address and HAProxy's other fields. Optionally only those of one frontend, backend or server. The runtime API connection asking is left out.",
		func(ctx context.Context, in showSessionsIn) (result, error) {
			s, err := t.hp.Sessions(ctx, in.Frontend, in.Backend, in.Server)
			if err != nil {
				return result{}, err
			}
			return ok(haproxy.SourceRuntime, map[string]any{"count": len(s), "sessions": s}), nil
		})

	addRead(t, "show_session", "Show a session",
		"One stream's full detail (`show sess <id>`), as HAProxy prints it.",
		func(ctx context.Context, in sessionIn) (result, error) {
			id := in.SessionID
			if err := validate.SessionID("session_id", id); err != nil {
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

	addChange(t, "shutdown_session", "End a session",
		"Abort one stream immediately (`shutdown session <id>`); the client sees its connection closed.",
		destructive, toolcall.Destructive,
		func(in sessionIn) (planned, error) {
			id := in.SessionID
			if err := validate.SessionID("session_id", id); err != nil {
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

	addChange(t, "shutdown_server_sessions", "End a server's sessions",
		"Abort every stream attached to one server (`shutdown sessions server`), e.g. after draining it.",
		destructive, toolcall.Destructive,
		func(in backendServerIn) (planned, error) {
			b, s := in.Backend, in.Server
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
