package mcpserver

import (
	"context"
	"fmt"
	"strings"

	"github.com/mcpfleet/mcpfleet/proxymcp/internal/haproxy"
	"github.com/mcpfleet/mcpfleet/proxymcp/internal/validate"
	"github.com/mcpfleet/mcpfleet/shared/toolcall"
)

type serverHealthIn struct {
	backendServerIn
	Health string `json:"health" jsonschema:"up, stopping or down." enum:"up,stopping,down"`
}

type serverAgentIn struct {
	backendServerIn
	State   string `json:"state,omitempty" jsonschema:"Force the agent state." enum:"up,down"`
	Address string `json:"address,omitempty" jsonschema:"Agent IPv4 or IPv6 address."`
	Port    int    `json:"port,omitempty" jsonschema:"Agent TCP port." minimum:"1" maximum:"65535"`
	Send    string `json:"send,omitempty" jsonschema:"String sent to the agent on connection (no control characters)." maxLength:"4096"`
}

type checkPortIn struct {
	backendServerIn
	Port int `json:"port" jsonschema:"TCP port." minimum:"1" maximum:"65535"`
}

func (t *tools) healthTools() {
	for _, v := range []struct {
		name, title, desc string
		agent, enable     bool
	}{
		{"enable_health", "Enable health check", "Start a server's health check (`enable health`).", false, true},
		{"disable_health", "Disable health check", "Stop a server's health check (`disable health`); its state stays as last seen.", false, false},
		{"enable_agent", "Enable agent check", "Start a server's agent check (`enable agent`); the server must have an agent configured.", true, true},
		{"disable_agent", "Disable agent check", "Stop a server's agent check (`disable agent`).", true, false},
	} {
		v := v
		addChange(t, v.name, v.title, v.desc+" Uses the runtime API, or the stats page's admin form when the runtime API cannot be reached.",
			idempotent, toolcall.Change,
			func(in backendServerIn) (planned, error) {
				b, s := in.Backend, in.Server
				what, verb := "health check", "Stop"
				cmds := t.hp.SetHealthCheckCommands(b, s, v.enable)
				if v.agent {
					what, cmds = "agent check", t.hp.SetAgentCheckCommands(b, s, v.enable)
				}
				effect := "HAProxy stops checking the server; its state stays as last seen"
				if v.enable {
					verb, effect = "Start", "HAProxy checks the server again and marks it up or down by the result"
				}
				return planned{
					commands: cmds.All(),
					fallback: cmds.Fallback,
					describe: t.serverPreview(b, s, effect, func(sv haproxy.ServerView) string {
						now := sv.HealthCheck
						if v.agent {
							now = sv.AgentCheck
						}
						if now == "" {
							now = "unknown (the runtime API did not answer)"
						}
						return fmt.Sprintf("%s the %s of server %s (%s) on %s. The %s is %s; the server is %s and holds %s.",
							verb, what, sv.Name(), sv.Endpoint(), t.at(), what, now, sv.Status, sessions(sv.Sessions))
					}),
					run: func(ctx context.Context) (result, error) {
						f := map[string]any{"backend": b, "server": s}
						if v.agent {
							f["agent_check_enabled"] = v.enable
							return t.stateChange(t.hp.SetAgentCheck(ctx, b, s, v.enable))(f)
						}
						f["health_check_enabled"] = v.enable
						return t.stateChange(t.hp.SetHealthCheck(ctx, b, s, v.enable))(f)
					},
				}, nil
			})
	}

	addChange(t, "set_server_health", "Force health state",
		"Force a server's health-check state: up, stopping (no new traffic) or down, until the next check says otherwise. Uses the runtime API, or the stats page's admin form when the runtime API cannot be reached.",
		idempotent, toolcall.Destructive,
		func(in serverHealthIn) (planned, error) {
			b, s, h := in.Backend, in.Server, in.Health
			var out func(ctx context.Context) (toolcall.Class, string)
			if h != "up" {
				out = t.rotationEffect(b, s)
			}
			cmds := t.hp.SetServerHealthCommands(b, s, h)
			return planned{
				class:    toolcall.Change, // when out is nil: forcing up takes nothing out
				effect:   out,
				key:      backendKey(b),
				commands: cmds.All(),
				fallback: cmds.Fallback,
				describe: t.serverPreview(b, s, "the server is treated as "+h+" until its next health check says otherwise", func(v haproxy.ServerView) string {
					return fmt.Sprintf("Force the health state of server %s (%s) to %s on %s. %s", v.Name(), v.Endpoint(), h, t.at(), serverNow(v))
				}),
				run: func(ctx context.Context) (result, error) {
					return t.stateChange(t.hp.SetServerHealth(ctx, b, s, h))(map[string]any{"backend": b, "server": s, "health": h})
				},
			}, nil
		})

	addChange(t, "set_server_agent", "Configure agent check",
		"Change a server's agent check: force its state (up/down), its address, port and the string sent to the agent. Give at least one. A state change alone can go through the stats page when the runtime API cannot be reached.",
		idempotent, toolcall.Destructive,
		func(in serverAgentIn) (planned, error) {
			b, s := in.Backend, in.Server
			st := haproxy.AgentSettings{State: in.State, Port: in.Port, Send: in.Send}
			var err error
			if in.Address != "" {
				st.Addr, err = validate.IP("address", in.Address)
			}
			err = checkAll(err, textArg("send", in.Send))
			if err == nil && st == (haproxy.AgentSettings{}) {
				err = &validate.Error{Arg: "state", Rule: "give at least one of state, address, port, send"}
			}
			if err != nil {
				return planned{}, err
			}
			var parts []string
			if st.State != "" {
				parts = append(parts, "force its state to "+st.State)
			}
			if st.Addr != "" {
				parts = append(parts, "set its address to "+st.Addr)
			}
			if st.Port != 0 {
				parts = append(parts, fmt.Sprintf("set its port to %d", st.Port))
			}
			if st.Send != "" {
				parts = append(parts, fmt.Sprintf("set the string it is sent to %q", st.Send))
			}
			var out func(ctx context.Context) (toolcall.Class, string)
			if st.State == "down" {
				out = t.rotationEffect(b, s) // an agent reported down takes the server down
			}
			cmds := t.hp.SetServerAgentCommands(b, s, st)
			return planned{
				class:    toolcall.Change, // when out is nil
				effect:   out,
				key:      backendKey(b),
				commands: cmds.All(),
				fallback: cmds.Fallback,
				describe: t.serverPreview(b, s, "the agent check uses the new settings from its next run", func(v haproxy.ServerView) string {
					return fmt.Sprintf("Change the agent check of server %s (%s) on %s: %s. Its agent check is %s (address %s, port %d). %s",
						v.Name(), v.Endpoint(), t.at(), strings.Join(parts, ", "), v.AgentCheck, v.AgentAddr, v.AgentPort, serverNow(v))
				}),
				run: func(ctx context.Context) (result, error) {
					src, msgs, err := t.hp.SetServerAgent(ctx, b, s, st)
					if err != nil {
						return result{}, err
					}
					f := map[string]any{"backend": b, "server": s, "changed": true}
					if st.State != "" {
						f["state"] = st.State
					}
					if st.Addr != "" {
						f["address"] = st.Addr
					}
					if st.Port != 0 {
						f["port"] = st.Port
					}
					if st.Send != "" {
						f["send"] = st.Send
					}
					if len(msgs) > 0 {
						f["messages"] = msgs
					}
					return ok(src, f), nil
				},
			}, nil
		})

	addChange(t, "set_server_check_port", "Set health-check port",
		"Change the port a server's health check connects to (`set server ... check-port`).",
		idempotent, toolcall.Change,
		func(in checkPortIn) (planned, error) {
			b, s, p := in.Backend, in.Server, in.Port
			return planned{
				commands: t.hp.SetServerCheckPortCommands(b, s, p),
				describe: t.serverPreview(b, s, "the health check connects to the new port from its next run", func(v haproxy.ServerView) string {
					return fmt.Sprintf("Change the health-check port of server %s (%s) from %d to %d on %s. Its health check is %s. %s", v.Name(), v.Endpoint(), v.CheckPort, p, t.at(), v.HealthCheck, serverNow(v))
				}),
				run: func(ctx context.Context) (result, error) {
					res, err := t.hp.SetServerCheckPort(ctx, b, s, p)
					if err != nil {
						return result{}, err
					}
					return ok(haproxy.SourceRuntime, applied(map[string]any{"backend": b, "server": s, "check_port": p}, res)), nil
				},
			}, nil
		})
}
