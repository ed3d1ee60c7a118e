package mcpserver

import (
	"context"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcpfleet/mcpfleet/proxymcp/internal/haproxy"
	"github.com/mcpfleet/mcpfleet/proxymcp/internal/validate"
)

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
		t.add(v.name, v.title, v.desc+" Uses the runtime API, or the stats page's admin form when the runtime API cannot be reached.",
			idempotent, []prop{pBackend("Backend name."), pServer()},
			func(ctx context.Context, a *args) (result, error) {
				b, s := backendServer(a)
				if err := a.check(); err != nil {
					return result{}, err
				}
				f := map[string]any{"backend": b, "server": s}
				if v.agent {
					f["agent_check_enabled"] = v.enable
					return t.stateChange(t.hp.SetAgentCheck(ctx, b, s, v.enable))(f)
				}
				f["health_check_enabled"] = v.enable
				return t.stateChange(t.hp.SetHealthCheck(ctx, b, s, v.enable))(f)
			})
	}

	t.add("set_server_health", "Force health state",
		"Force a server's health-check state: up, stopping (no new traffic) or down, until the next check says otherwise. Uses the runtime API, or the stats page's admin form when the runtime API cannot be reached.",
		idempotent, []prop{pBackend("Backend name."), pServer(),
			{"health", mcp.WithString("health", mcp.Required(), mcp.Enum("up", "stopping", "down"), mcp.Description("up, stopping or down."))}},
		func(ctx context.Context, a *args) (result, error) {
			b, s := backendServer(a)
			h := a.enum("health", true, "up", "stopping", "down")
			if err := a.check(); err != nil {
				return result{}, err
			}
			return t.stateChange(t.hp.SetServerHealth(ctx, b, s, h))(map[string]any{"backend": b, "server": s, "health": h})
		})

	t.add("set_server_agent", "Configure agent check",
		"Change a server's agent check: force its state (up/down), its address, port and the string sent to the agent. Give at least one. A state change alone can go through the stats page when the runtime API cannot be reached.",
		idempotent, []prop{pBackend("Backend name."), pServer(),
			{"state", mcp.WithString("state", mcp.Enum("up", "down"), mcp.Description("Force the agent state."))},
			{"address", mcp.WithString("address", mcp.Description("Agent IPv4 or IPv6 address."))},
			{"port", mcp.WithInteger("port", mcp.Min(1), mcp.Max(65535), mcp.Description("Agent TCP port."))},
			pText("send", "String sent to the agent on connection (no control characters).", false)},
		func(ctx context.Context, a *args) (result, error) {
			b, s := backendServer(a)
			st := haproxy.AgentSettings{State: a.enum("state", false, "up", "down"), Addr: a.ip("address", false),
				Port: a.port("port", false), Send: a.text("send", false)}
			if a.err == nil && st == (haproxy.AgentSettings{}) {
				a.set(&validate.Error{Arg: "state", Rule: "give at least one of state, address, port, send"})
			}
			if err := a.check(); err != nil {
				return result{}, err
			}
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
		})

	t.add("set_server_check_port", "Set health-check port",
		"Change the port a server's health check connects to (`set server ... check-port`).",
		idempotent, []prop{pBackend("Backend name."), pServer(),
			{"port", mcp.WithInteger("port", mcp.Required(), mcp.Min(1), mcp.Max(65535), mcp.Description("TCP port."))}},
		func(ctx context.Context, a *args) (result, error) {
			b, s := backendServer(a)
			p := a.port("port", true)
			if err := a.check(); err != nil {
				return result{}, err
			}
			res, err := t.hp.SetServerCheckPort(ctx, b, s, p)
			if err != nil {
				return result{}, err
			}
			return ok(haproxy.SourceRuntime, applied(map[string]any{"backend": b, "server": s, "check_port": p}, res)), nil
		})
}
