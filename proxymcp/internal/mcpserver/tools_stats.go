package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/mcpfleet/mcpfleet/proxymcp/internal/fleet"
	"github.com/mcpfleet/mcpfleet/proxymcp/internal/haproxy"
	"github.com/mcpfleet/mcpfleet/proxymcp/internal/validate"
	"github.com/mcpfleet/mcpfleet/shared/toolcall"
)

type showStatIn struct {
	fleetArg
	Filter string   `json:"filter,omitempty" jsonschema:"Empty for everything; else a proxy name, server name or type to match." maxLength:"128"`
	Proxy  string   `json:"proxy,omitempty" jsonschema:"Only rows of this frontend/backend." pattern:"^[A-Za-z0-9_.:-]{1,128}$"`
	Type   string   `json:"type,omitempty" jsonschema:"Object type: frontend, backend, server or listener." enum:"frontend,backend,server,listener"`
	Server string   `json:"server,omitempty" jsonschema:"Only rows whose server name (svname) is this." pattern:"^[A-Za-z0-9_.:-]{1,128}$"`
	Fields []string `json:"fields,omitempty" jsonschema:"CSV column names to return, in this order (e.g. [\"pxname\",\"svname\",\"status\",\"scur\"]); [\"all\"] for every column. Default: pxname, svname, status, weight, act, bck, addr, scur, smax, slim, qcur, rate, stot, bin, bout, ereq, econ, eresp, hrsp_5xx, check_status, check_code, chkdown, lastchg, downtime, rtime, agent_status." pattern:"^[a-z0-9_]{1,64}$" maxItems:"256"`
	Format string   `json:"format,omitempty" jsonschema:"table (the default: the same rows in about the size of HAProxy's CSV, where objects repeat every column name on every row, about 3x the CSV with every column): fields lists the columns once, layouts gives per object type the positions in fields its rows carry, and each row is an array [layout, value, ...] in that order (null for an empty cell, trailing empty cells left out). objects: each row as an object keyed by column name, with object_type." enum:"objects,table" default:"table"`
}

type clearCountersIn struct {
	fleetArg
	All bool `json:"all,omitempty" jsonschema:"Also reset maxima and cumulative totals."`
}

type showErrorsIn struct {
	fleetArg
	Proxy     string `json:"proxy,omitempty" jsonschema:"Only errors captured on this frontend or backend." pattern:"^[A-Za-z0-9_.:-]{1,128}$"`
	Direction string `json:"direction,omitempty" jsonschema:"request or response." enum:"request,response"`
}

type echoIn struct {
	fleetArg
	Text string `json:"text" jsonschema:"Text to echo (no control characters, no \"<<\")." minLength:"1" maxLength:"4096"`
}

func (t *tools) statsTools() {
	addRead(t, "show_info", "Process information",
		"HAProxy process information from `show info` as an object: version, uptime, connection and rate counters, limits. No arguments.",
		func(ctx context.Context, _ noArgs) (result, error) {
			// Many callers at once share one answer, its parse and its
			// encoding (issue 31): the body is written around that JSON.
			info, err := t.hp.SharedInfo(ctx)
			if err != nil {
				return result{}, err
			}
			a := t.infoAnswer(info)
			return result{raw: a.body, summary: a.summary, src: haproxy.SourceRuntime,
				data: map[string]any{"info": info.JSON, "source": string(haproxy.SourceRuntime)}}, nil
		})

	addRead(t, "show_stat", "Statistics",
		"Statistics rows (frontends, backends, servers, listeners) by CSV header name; numbers are numbers, empty cells are left out. "+
			"By default (`format` table, about the size of HAProxy's CSV) the answer's `fields` lists the columns once, `layouts` gives per `object_type` "+
			"the positions in `fields` its rows carry, and each row is an array [layout, value, ...]: the row is {fields[layouts[layout].fields[i]]: value} "+
			"for each non-null value. `format` objects gives each row as that object, with `object_type` (about 3x the bytes with every column). "+
			"`filter` narrows the rows on our side: empty means everything, otherwise a proxy name, a server name or a type "+
			"(frontend, backend, server, listener). `proxy`, `type` and `server` narrow further. "+
			"`fields` chooses the columns: by default "+strings.Join(defaultStatFields, ", ")+
			" (identity, state, load, traffic, errors and health); [\"all\"] gives every column HAProxy sends. "+
			"Answered by the runtime API, or by the stats page when the runtime API cannot be reached.",
		func(ctx context.Context, in showStatIn) (result, error) {
			f := haproxy.StatFilter{Text: in.Filter, Proxy: in.Proxy, Type: in.Type, Server: in.Server}
			var err error
			if f.Text != "" {
				err = validate.Name("filter", f.Text)
			}
			fields, ferr := statFields(in.Fields)
			if err := checkAll(err, ferr); err != nil {
				return result{}, err
			}
			table, src, err := t.hp.ShowStat(ctx, f)
			if err != nil {
				return result{}, err
			}
			if table, err = table.Columns(fields); err != nil {
				return result{}, &validate.Error{Arg: "fields", Rule: err.Error() + "; call show_stat with fields [\"all\"] to see every column"}
			}
			items := func() []fleet.Item { return fleet.StatItems(table.Rows) }
			if in.Format == "objects" {
				return result{raw: statJSON(src, table), summary: statSummary(src, table), src: src, table: &table, items: items,
					data: map[string]any{"source": string(src), "count": len(table.Rows), "fields": table.Names()}}, nil
			}
			// The table is the default: every cell in about the CSV's size,
			// where objects repeat every column name on every row (issue 31).
			// It is one value: a fleet keeps it per instance.
			body := statTableJSON(src, table)
			return result{raw: body, summary: statSummary(src, table), src: src, items: items,
				data: map[string]any{"source": string(src), "count": len(table.Rows), "format": "table",
					"table": verbatim{json.RawMessage(append(table.AppendTableJSON([]byte{'{'}), '}'))}}}, nil
		})

	addChange(t, "clear_counters", "Clear statistics counters",
		"Reset statistics counters (`clear counters`). With all=true also resets maxima and totals (`clear counters all`, needs the admin level). Cannot be undone.",
		destructive, toolcall.Destructive,
		func(in clearCountersIn) (planned, error) {
			all := in.All
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

	addRead(t, "show_activity", "Scheduler activity",
		"HAProxy's `show activity` dump (per-thread scheduler and polling counters) as HAProxy prints it.",
		t.rawTool(haproxy.DumpActivity))

	addRead(t, "show_version", "HAProxy version",
		"The running HAProxy's version (`show version`).",
		func(ctx context.Context, _ noArgs) (result, error) {
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

// statFields reads show_stat's fields argument: nil for every column.
func statFields(list []string) ([]string, error) {
	if list == nil {
		return defaultStatFields, nil
	}
	if len(list) == 0 {
		return nil, &validate.Error{Arg: "fields", Rule: "must be a non-empty array of at most 256 column names, or [\"all\"]"}
	}
	if slices.Contains(list, "all") {
		if len(list) > 1 {
			return nil, &validate.Error{Arg: "fields", Rule: "\"all\" stands alone"}
		}
		return nil, nil
	}
	return list, nil
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

// statTableJSON encodes show_stat's result in the "table" format:
// {"source":…,"count":…,"format":"table","fields":[…],"layouts":[…],"rows":[…]}.
func statTableJSON(src haproxy.Source, t haproxy.StatTable) []byte {
	b := make([]byte, 0, 256+len(t.Rows)*(8+6*len(t.Names())))
	b = append(b, `{"source":`...)
	b = strconv.AppendQuote(b, string(src))
	b = append(b, `,"count":`...)
	b = strconv.AppendInt(b, int64(len(t.Rows)), 10)
	b = append(b, `,"format":"table",`...)
	b = t.AppendTableJSON(b)
	return append(b, '}')
}

// infoAnswer is show_info's answer to one "show info" exchange: callers
// that shared the exchange (haproxy.SharedInfo) share its body and summary
// too (read-only), built by the first of them. It is keyed on the
// exchange itself, so it is never an older answer than the caller's.
type infoAnswer struct {
	info    *haproxy.Info
	body    []byte
	summary string
}

func (t *tools) infoAnswer(info *haproxy.Info) *infoAnswer {
	if a := t.lastInfo.Load(); a != nil && a.info == info {
		return a
	}
	const tail = `,"source":"` + string(haproxy.SourceRuntime) + `"}`
	body := make([]byte, 0, len(`{"info":`)+len(info.JSON)+len(tail))
	body = append(append(append(body, `{"info":`...), info.JSON...), tail...)
	a := &infoAnswer{info: info, body: body[:len(body):len(body)], summary: infoSummary(info.Fields)}
	t.lastInfo.Store(a)
	return a
}

// infoSummary is show_info's text for clients that read structuredContent:
// who answered and its load, in a line.
func infoSummary(info map[string]any) string {
	return fmt.Sprintf("HAProxy %v (pid %v), up %v: %v connections now (maxconn %v), %v since start. All %d fields of `show info` are in structuredContent.info.",
		info["Version"], info["Pid"], info["Uptime"], info["CurrConns"], info["Maxconn"], info["CumConns"], len(info))
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
func (t *tools) rawTool(d haproxy.Dump) func(context.Context, noArgs) (result, error) {
	return func(ctx context.Context, _ noArgs) (result, error) {
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
	addRead(t, "show_errors", "Captured protocol errors",
		"Requests and responses HAProxy rejected as invalid (`show errors`), with hex dumps; optionally for one proxy and one direction.",
		func(ctx context.Context, in showErrorsIn) (result, error) {
			rep, err := t.hp.ShowErrors(ctx, in.Proxy, in.Direction)
			if err != nil {
				return result{}, err
			}
			return ok(haproxy.SourceRuntime, map[string]any{"total_events": rep.Total, "text": rep.Text}), nil
		})

	addRead(t, "echo", "Echo text",
		"Return `text` unchanged. Uses HAProxy's `echo` command where the version has it (3.1+) and answers locally otherwise; `answered_by` says which (`haproxy` or `proxymcp`). Useful to check the connection.",
		func(ctx context.Context, in echoIn) (result, error) {
			text := in.Text
			if err := textArg("text", text); err != nil {
				return result{}, err
			}
			out, by, err := t.hp.Echo(ctx, text)
			if err != nil {
				return result{}, err
			}
			return ok(haproxy.SourceRuntime, map[string]any{"text": out, "answered_by": by}), nil
		})

	addRead(t, "help", "Runtime API commands",
		"HAProxy's own list of runtime API commands available at this socket's level (`help`), as HAProxy prints it.",
		func(ctx context.Context, _ noArgs) (result, error) {
			out, err := t.hp.Text(ctx, haproxy.DumpHelp)
			// "help" answers with its list; some versions prefix it like an error.
			if err != nil {
				return result{}, err
			}
			r := ok(haproxy.SourceRuntime, map[string]any{"text": out})
			r.text = out
			return r, nil
		})

	addRead(t, "version_info", "Versions and supported commands",
		"This server's version and what it detected of HAProxy (`show version` and `help`): its version, the support level of each tool on it (`supported`, `unsupported` with the reason, or `degraded`: works with less), and which version-dependent runtime API commands it has.",
		func(ctx context.Context, _ noArgs) (result, error) {
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
			r := ok(haproxy.SourceRuntime, fields)
			r.persistence = true
			return r, nil
		})
}
