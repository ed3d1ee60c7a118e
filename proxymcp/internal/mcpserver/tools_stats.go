package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcpfleet/mcpfleet/proxymcp/internal/haproxy"
	"github.com/mcpfleet/mcpfleet/proxymcp/internal/validate"
	"github.com/mcpfleet/mcpfleet/shared/toolcall"
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
		"Statistics rows (frontends, backends, servers, listeners) parsed by CSV header name; numbers are numbers, empty cells are left out, and every row has `object_type`. "+
			"`filter` narrows the rows on our side: empty means everything, otherwise a proxy name, a server name or a type "+
			"(frontend, backend, server, listener). `proxy`, `type` and `server` narrow further. "+
			"`fields` chooses the columns: by default "+strings.Join(defaultStatFields, ", ")+
			" (identity, state, load, traffic, errors and health); [\"all\"] gives every column HAProxy sends. "+
			"Answered by the runtime API, or by the stats page when the runtime API cannot be reached.",
		read, []prop{
			{"filter", mcp.WithString("filter", mcp.Description("Empty for everything; else a proxy name, server name or type to match."), mcp.MaxLength(validate.MaxNameLen))},
			pOptName("proxy", "Only rows of this frontend/backend."),
			{"type", mcp.WithString("type", mcp.Description(typeEnumDesc), mcp.Enum("frontend", "backend", "server", "listener"))},
			pOptName("server", "Only rows whose server name (svname) is this."),
			{"fields", mcp.WithArray("fields", mcp.Description("CSV column names to return, in this order (e.g. [\"pxname\",\"svname\",\"status\",\"scur\"]); [\"all\"] for every column. Default: "+strings.Join(defaultStatFields, ", ")+"."),
				mcp.MaxItems(maxStatFields), mcp.WithStringItems(mcp.Pattern(statFieldPattern.String())))},
		}, func(ctx context.Context, a *args) (result, error) {
			f := haproxy.StatFilter{Text: a.str("filter", false), Proxy: a.name("proxy", false),
				Type: a.enum("type", false, "frontend", "backend", "server", "listener"), Server: a.name("server", false)}
			if f.Text != "" {
				a.set(validate.Name("filter", f.Text))
			}
			fields := statFields(a)
			if err := a.check(); err != nil {
				return result{}, err
			}
			table, src, err := t.hp.ShowStat(ctx, f)
			if err != nil {
				return result{}, err
			}
			if table, err = table.Columns(fields); err != nil {
				return result{}, &validate.Error{Arg: "fields", Rule: err.Error() + "; call show_stat with fields [\"all\"] to see every column"}
			}
			return result{raw: statJSON(src, table), summary: statSummary(src, table)}, nil
		})

	t.change("clear_counters", "Clear statistics counters",
		"Reset statistics counters (`clear counters`). With all=true also resets maxima and totals (`clear counters all`, needs the admin level). Cannot be undone.",
		destructive, toolcall.Destructive, []prop{{"all", mcp.WithBoolean("all", mcp.Description("Also reset maxima and cumulative totals."))}},
		func(a *args) (planned, error) {
			all := a.boolean("all", false)
			if err := a.check(); err != nil {
				return planned{}, err
			}
			what := "the maxima of every frontend, backend and server"
			if all {
				what = "every statistics counter: maxima and cumulative totals (sessions, bytes, requests, errors) of every frontend, backend and server"
			}
			return planned{
				commands: t.hp.ClearCountersCommands(all),
				describe: func(ctx context.Context) (toolcall.Preview, error) {
					info, err := t.hp.ShowInfo(ctx)
					if err != nil {
						return toolcall.Preview{}, err
					}
					state := map[string]any{}
					for _, k := range []string{"CumConns", "CumReq", "MaxConnRate", "MaxSessRate", "Uptime"} {
						if v, found := info[k]; found {
							state[k] = v
						}
					}
					return toolcall.Preview{
						Summary: fmt.Sprintf("Reset %s on %s (up %v, %v connections so far). The old values cannot be recovered; dashboards and alerts reading them see a reset.",
							what, t.at(), info["Uptime"], info["CumConns"]),
						State:  state,
						Effect: "the counters restart from zero",
					}, nil
				},
				run: func(ctx context.Context) (result, error) {
					res, err := t.hp.ClearCounters(ctx, all)
					if err != nil {
						return result{}, err
					}
					return ok(haproxy.SourceRuntime, applied(map[string]any{"cleared": true, "all": all}, res)), nil
				},
			}, nil
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

// defaultStatFields are the columns show_stat returns unless asked: what
// identifies a row (pxname, svname, addr), its state (status, weight, act,
// bck, check_status, check_code, agent_status, chkdown, lastchg, downtime),
// its load (scur, smax, slim, qcur, rate, stot), traffic (bin, bout),
// errors (ereq, econ, eresp, hrsp_5xx) and response time (rtime). The other
// hundred columns (per-status-code counters, compression, caches, SSL, H1/H2
// protocol counters, ...) are a fields ["all"] away.
var defaultStatFields = []string{"pxname", "svname", "status", "weight", "act", "bck", "addr",
	"scur", "smax", "slim", "qcur", "rate", "stot", "bin", "bout", "ereq", "econ", "eresp", "hrsp_5xx",
	"check_status", "check_code", "chkdown", "lastchg", "downtime", "rtime", "agent_status"}

const maxStatFields = 256

var statFieldPattern = regexp.MustCompile(`^[a-z0-9_]{1,64}$`)

// statFields reads show_stat's fields argument: nil for every column.
func statFields(a *args) []string {
	if a.err != nil {
		return nil
	}
	if !a.has("fields") {
		return defaultStatFields
	}
	list, isList := a.m["fields"].([]any)
	if !isList || len(list) == 0 || len(list) > maxStatFields {
		a.set(&validate.Error{Arg: "fields", Rule: "must be a non-empty array of at most 256 column names, or [\"all\"]"})
		return nil
	}
	out := make([]string, 0, len(list))
	for _, v := range list {
		s, isStr := v.(string)
		if !isStr || !statFieldPattern.MatchString(s) {
			a.set(&validate.Error{Arg: "fields", Rule: "items must be CSV column names (a-z, 0-9, _), such as \"scur\""})
			return nil
		}
		if s == "all" {
			if len(list) > 1 {
				a.set(&validate.Error{Arg: "fields", Rule: "\"all\" stands alone"})
			}
			return nil
		}
		out = append(out, s)
	}
	return out
}

// statJSON encodes show_stat's result in one pass, straight from the CSV
// cells: {"source":…,"count":…,"fields":[…],"rows":[…]}.
func statJSON(src haproxy.Source, t haproxy.StatTable) []byte {
	b := make([]byte, 0, 256+len(t.Rows)*(32+16*len(t.Names())))
	b = append(b, `{"source":`...)
	b = strconv.AppendQuote(b, string(src))
	b = append(b, `,"count":`...)
	b = strconv.AppendInt(b, int64(len(t.Rows)), 10)
	b = append(b, `,"fields":`...)
	names, _ := json.Marshal(t.Names())
	b = append(b, names...)
	b = append(b, `,"rows":`...)
	b = t.AppendJSON(b)
	return append(b, '}')
}

// statSummary says in a few lines what show_stat returned: rows by object
// type, servers by status (UP, DOWN, MAINT, no check, ... without the "1/2"
// of a check in transition), the first DOWN servers, and where the rows are.
func statSummary(src haproxy.Source, t haproxy.StatTable) string {
	types := map[string]int{}
	status := map[string]int{}
	var down []string
	for _, r := range t.Rows {
		typ := r.Type()
		types[typ]++
		if typ != "server" {
			continue
		}
		st := r.Str("status")
		if i := strings.LastIndexByte(st, ' '); i > 0 && strings.Contains(st[i:], "/") {
			st = st[:i] // "UP 1/2" while a check is in transition
		}
		status[st]++
		if st == "DOWN" && len(down) < 10 {
			down = append(down, r.Str("pxname")+"/"+r.Str("svname"))
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%d statistics rows from the %s (%s). Every row, with the columns %s, is in structuredContent.rows.",
		len(t.Rows), strings.ReplaceAll(string(src), "_", " "), counts(types), strings.Join(t.Names(), ", "))
	if len(status) > 0 {
		fmt.Fprintf(&b, "\nServers by status: %s.", counts(status))
	}
	if len(down) > 0 {
		fmt.Fprintf(&b, "\nDOWN: %s", strings.Join(down, ", "))
		if status["DOWN"] > len(down) {
			fmt.Fprintf(&b, " and %d more", status["DOWN"]-len(down))
		}
		b.WriteString(".")
	}
	return b.String()
}

// counts writes "3 server, 1 backend" with the largest first.
func counts(m map[string]int) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return m[keys[i]] > m[keys[j]] || m[keys[i]] == m[keys[j]] && keys[i] < keys[j] })
	parts := make([]string, len(keys))
	for i, k := range keys {
		label := k
		if label == "" {
			label = "other"
		}
		parts[i] = fmt.Sprintf("%d %s", m[k], label)
	}
	return strings.Join(parts, ", ")
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
		"This server's version and what it detected of HAProxy (`show version` and `help`): its version, the support level of each tool on it (`supported`, `unsupported` with the reason, or `degraded`: works with less), and which version-dependent runtime API commands it has.",
		read, nil, func(ctx context.Context, a *args) (result, error) {
			fields := map[string]any{"proxymcp_version": t.opts.ServerVersion}
			cp, err := t.hp.Capabilities(ctx)
			if err != nil {
				return result{}, err
			}
			fields["haproxy_version"] = cp.Version.Raw
			fields["detected_from"] = "show version"
			if cp.Commands != nil {
				fields["detected_from"] = "show version, help"
			}
			fields["tools"] = toolSupport(cp, t.names)
			fields["commands"] = cp.Support()
			return ok(haproxy.SourceRuntime, fields), nil
		})
}
