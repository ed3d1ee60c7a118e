package mcpserver

import (
	"context"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcpfleet/mcpfleet/proxymcp/internal/haproxy"
	"github.com/mcpfleet/mcpfleet/proxymcp/internal/validate"
)

const typeEnumDesc = "Object type: frontend, backend, server or listener."

func (t *tools) statsTools() {
	t.add("show_info", "Process information",
		"HAProxy process information from `show info` as an object: version, uptime, connection and rate counters, limits. No arguments.",
		read, nil, func(ctx context.Context, a *args) (result, error) {
			info, err := t.hp.ShowInfo(ctx)
			if err != nil {
				return result{}, err
			}
			return ok(haproxy.SourceRuntime, map[string]any{"info": info}), nil
		})

	t.add("show_stat", "Statistics",
		"Every statistics row (frontends, backends, servers, listeners) parsed by CSV header name; numbers are numbers. "+
			"`filter` narrows the rows on our side: empty means everything, otherwise a proxy name, a server name or a type "+
			"(frontend, backend, server, listener). `proxy`, `type` and `server` narrow further. Answered by the runtime API, or by the stats page when the runtime API cannot be reached.",
		read, []prop{
			{"filter", mcp.WithString("filter", mcp.Description("Empty for everything; else a proxy name, server name or type to match."), mcp.MaxLength(validate.MaxNameLen))},
			pOptName("proxy", "Only rows of this frontend/backend."),
			{"type", mcp.WithString("type", mcp.Description(typeEnumDesc), mcp.Enum("frontend", "backend", "server", "listener"))},
			pOptName("server", "Only rows whose server name (svname) is this."),
		}, func(ctx context.Context, a *args) (result, error) {
			f := haproxy.StatFilter{Text: a.str("filter", false), Proxy: a.name("proxy", false),
				Type: a.enum("type", false, "frontend", "backend", "server", "listener"), Server: a.name("server", false)}
			if f.Text != "" {
				a.set(validate.Name("filter", f.Text))
			}
			if err := a.check(); err != nil {
				return result{}, err
			}
			rows, src, err := t.hp.ShowStat(ctx, f)
			if err != nil {
				return result{}, err
			}
			return ok(src, map[string]any{"count": len(rows), "rows": haproxy.StatRows(rows)}), nil
		})

	t.add("clear_counters", "Clear statistics counters",
		"Reset statistics counters (`clear counters`). With all=true also resets maxima and totals (`clear counters all`, needs the admin level). Cannot be undone.",
		destructive, []prop{{"all", mcp.WithBoolean("all", mcp.Description("Also reset maxima and cumulative totals."))}},
		func(ctx context.Context, a *args) (result, error) {
			all := a.boolean("all", false)
			if err := a.check(); err != nil {
				return result{}, err
			}
			res, err := t.hp.ClearCounters(ctx, all)
			if err != nil {
				return result{}, err
			}
			return ok(haproxy.SourceRuntime, applied(map[string]any{"cleared": true, "all": all}, res)), nil
		})

	t.add("show_activity", "Scheduler activity",
		"HAProxy's `show activity` dump (per-thread scheduler and polling counters) as HAProxy prints it.",
		read, nil, t.rawTool(haproxy.DumpActivity))

	t.add("show_version", "HAProxy version",
		"The running HAProxy's version (`show version`).",
		read, nil, func(ctx context.Context, a *args) (result, error) {
			v, err := t.hp.ShowVersion(ctx)
			if err != nil {
				return result{}, err
			}
			return ok(haproxy.SourceRuntime, map[string]any{"version": v}), nil
		})
}

// rawTool answers with a free-text dump: text content is HAProxy's output.
func (t *tools) rawTool(d haproxy.Dump) handlerFunc {
	return func(ctx context.Context, a *args) (result, error) {
		out, err := t.hp.Text(ctx, d)
		if err != nil {
			return result{}, err
		}
		r := ok(haproxy.SourceRuntime, map[string]any{"text": out})
		r.text = out
		return r, nil
	}
}

func (t *tools) miscTools() {
	t.add("show_errors", "Captured protocol errors",
		"Requests and responses HAProxy rejected as invalid (`show errors`), with hex dumps; optionally for one proxy and one direction.",
		read, []prop{
			pOptName("proxy", "Only errors captured on this frontend or backend."),
			{"direction", mcp.WithString("direction", mcp.Description("request or response."), mcp.Enum("request", "response"))},
		}, func(ctx context.Context, a *args) (result, error) {
			proxy, dir := a.name("proxy", false), a.enum("direction", false, "request", "response")
			if err := a.check(); err != nil {
				return result{}, err
			}
			rep, err := t.hp.ShowErrors(ctx, proxy, dir)
			if err != nil {
				return result{}, err
			}
			return ok(haproxy.SourceRuntime, map[string]any{"total_events": rep.Total, "text": rep.Text}), nil
		})

	t.add("echo", "Echo text",
		"Return `text` unchanged. Uses HAProxy's `echo` command where the version has it (3.1+) and answers locally otherwise; `answered_by` says which (`haproxy` or `proxymcp`). Useful to check the connection.",
		read, []prop{pText("text", "Text to echo (no control characters, no \"<<\").", true)},
		func(ctx context.Context, a *args) (result, error) {
			text := a.text("text", true)
			if err := a.check(); err != nil {
				return result{}, err
			}
			out, by, err := t.hp.Echo(ctx, text)
			if err != nil {
				return result{}, err
			}
			return ok(haproxy.SourceRuntime, map[string]any{"text": out, "answered_by": by}), nil
		})

	t.add("help", "Runtime API commands",
		"HAProxy's own list of runtime API commands available at this socket's level (`help`), as HAProxy prints it.",
		read, nil, func(ctx context.Context, a *args) (result, error) {
			out, err := t.hp.Text(ctx, haproxy.DumpHelp)
			// "help" answers with its list; some versions prefix it like an error.
			if err != nil {
				return result{}, err
			}
			r := ok(haproxy.SourceRuntime, map[string]any{"text": out})
			r.text = out
			return r, nil
		})

	t.add("version_info", "Versions and supported commands",
		"This server's version and what it detected of HAProxy: its version and which version-dependent runtime API commands it supports.",
		read, nil, func(ctx context.Context, a *args) (result, error) {
			fields := map[string]any{"proxymcp_version": t.opts.ServerVersion}
			v, err := t.hp.Version(ctx)
			if err != nil {
				return result{}, err
			}
			fields["haproxy_version"] = v.Raw
			fields["commands"] = haproxy.Support(v)
			return ok(haproxy.SourceRuntime, fields), nil
		})
}
