package mcpserver

import (
	"context"
	"regexp"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcpfleet/mcpfleet/proxymcp/internal/haproxy"
	"github.com/mcpfleet/mcpfleet/proxymcp/internal/validate"
)

var tableDataPattern = regexp.MustCompile(`^[a-z][a-z0-9_]{0,63}$`)

func (t *tools) topologyTools() {
	t.add("list_frontends", "List frontends",
		"Every frontend with its status (OPEN, STOP, PAUSED), mode, session counts and limit, bytes and request rate.",
		read, nil, func(ctx context.Context, a *args) (result, error) {
			fe, src, err := t.hp.ListFrontends(ctx)
			if err != nil {
				return result{}, err
			}
			return ok(src, map[string]any{"count": len(fe), "frontends": fe}), nil
		})

	t.add("list_backends", "List backends",
		"Every backend (listen sections included) with status, balance algorithm, active/backup server counts, weight and session totals.",
		read, nil, func(ctx context.Context, a *args) (result, error) {
			be, src, err := t.hp.ListBackends(ctx)
			if err != nil {
				return result{}, err
			}
			return ok(src, map[string]any{"count": len(be), "backends": be}), nil
		})

	t.add("get_backend", "Get a backend",
		"One backend's totals and all of its servers (name, address, port, status, weight, check status, sessions).",
		read, []prop{pBackend("Backend name (see list_backends).")},
		func(ctx context.Context, a *args) (result, error) {
			b := a.name("backend", true)
			if err := a.check(); err != nil {
				return result{}, err
			}
			d, src, err := t.hp.GetBackend(ctx, b)
			if err != nil {
				return result{}, err
			}
			return ok(src, map[string]any{"backend": d}), nil
		})

	t.add("list_servers", "List servers",
		"Servers of one backend (or of every backend when `backend` is omitted): name, address, port, status (UP, DOWN, DRAIN, MAINT, \"no check\"...), weight, check and agent status, sessions.",
		read, []prop{pOptName("backend", "Backend name; omit for every backend.")},
		func(ctx context.Context, a *args) (result, error) {
			b := a.name("backend", false)
			if err := a.check(); err != nil {
				return result{}, err
			}
			s, src, err := t.hp.ListServers(ctx, b)
			if err != nil {
				return result{}, err
			}
			return ok(src, map[string]any{"count": len(s), "servers": s}), nil
		})

	t.add("get_server", "Get a server",
		"One server's statistics and, from the runtime API, its state row (`show servers state`: operational and admin state, weights, check and agent settings).",
		read, []prop{pBackend("Backend name."), pServer()},
		func(ctx context.Context, a *args) (result, error) {
			b, s := backendServer(a)
			if err := a.check(); err != nil {
				return result{}, err
			}
			d, src, err := t.hp.GetServer(ctx, b, s)
			if err != nil {
				return result{}, err
			}
			return ok(src, map[string]any{"server": d}), nil
		})

	t.add("show_servers_state", "Servers state",
		"`show servers state`: per server the operational state (0 stopped, 1 starting, 2 running, 3 stopping), admin state bits (0x01 forced maintenance, 0x08 forced drain, ...), weights, check and agent state, address and ports.",
		read, []prop{pOptName("backend", "Only this backend; omit for all.")},
		func(ctx context.Context, a *args) (result, error) {
			return t.serversTable(ctx, a, "state")
		})

	t.add("show_servers_conn", "Servers connections",
		"`show servers conn`: per server the idle and used connection counts of its connection pools.",
		read, []prop{pOptName("backend", "Only this backend; omit for all.")},
		func(ctx context.Context, a *args) (result, error) {
			return t.serversTable(ctx, a, "conn")
		})

	t.add("list_tables", "List stick tables",
		"Every stick table: name, key type, size and entries used.",
		read, nil, func(ctx context.Context, a *args) (result, error) {
			l, err := t.hp.ListTables(ctx)
			if err != nil {
				return result{}, err
			}
			return ok(haproxy.SourceRuntime, map[string]any{"count": len(l), "tables": l}), nil
		})

	t.add("show_table", "Show a stick table",
		"Entries of one stick table with their stored data (counters, rates). Filter by one `key`, or by `filters` on stored data such as {\"data\":\"conn_cur\",\"op\":\"gt\",\"value\":0} (several are ANDed).",
		read, []prop{
			{"table", mcp.WithString("table", mcp.Required(), mcp.Description("Table name (see list_tables)."), mcp.Pattern(validate.NamePattern))},
			pText("key", "Only the entry with this key.", false),
			{"filters", mcp.WithArray("filters", mcp.Description("Conditions on stored data."), mcp.MaxItems(4), mcp.Items(map[string]any{
				"type": "object", "additionalProperties": false, "required": []string{"data", "op", "value"},
				"properties": map[string]any{
					"data":  map[string]any{"type": "string", "description": "Stored data type, e.g. conn_cur, gpc0, http_req_rate.", "pattern": tableDataPattern.String()},
					"op":    map[string]any{"type": "string", "enum": []string{"eq", "ne", "lt", "le", "gt", "ge"}},
					"value": map[string]any{"type": "integer"},
				}}))},
		}, func(ctx context.Context, a *args) (result, error) {
			table := a.name("table", true)
			key := a.text("key", false)
			filters := tableFilters(a)
			if key != "" && len(filters) > 0 {
				a.set(&validate.Error{Arg: "filters", Rule: "cannot be combined with key"})
			}
			if err := a.check(); err != nil {
				return result{}, err
			}
			info, entries, err := t.hp.ShowTable(ctx, table, key, filters)
			if err != nil {
				return result{}, err
			}
			return ok(haproxy.SourceRuntime, map[string]any{"table": info, "count": len(entries), "entries": entries}), nil
		})

	t.add("show_resolvers", "DNS resolvers",
		"`show resolvers`: per resolvers section and nameserver, the DNS query and error counters, as HAProxy prints them.",
		read, nil, t.rawTool(haproxy.DumpResolvers))
}

func tableFilters(a *args) []haproxy.TableFilter {
	if a.err != nil || !a.has("filters") {
		return nil
	}
	list, isList := a.m["filters"].([]any)
	if !isList || len(list) > 4 {
		a.set(&validate.Error{Arg: "filters", Rule: "must be an array of at most 4 {data, op, value} objects"})
		return nil
	}
	var out []haproxy.TableFilter
	for _, item := range list {
		m, isObj := item.(map[string]any)
		if !isObj {
			a.set(&validate.Error{Arg: "filters", Rule: "items must be {data, op, value} objects"})
			return nil
		}
		sub := newArgs(m, []string{"data", "op", "value"})
		data := sub.str("data", true)
		if sub.err == nil && !tableDataPattern.MatchString(data) {
			sub.set(&validate.Error{Arg: "filters.data", Rule: "must be a stored data type name such as conn_cur or http_req_rate (lowercase letters, digits, _)"})
		}
		op := sub.enum("op", true, "eq", "ne", "lt", "le", "gt", "ge")
		v := sub.integer("value", true, -1<<62, 1<<62)
		if sub.err != nil {
			a.set(nested("filters", sub.err))
			return nil
		}
		out = append(out, haproxy.TableFilter{Data: data, Op: op, Value: v})
	}
	return out
}

func (t *tools) serversTable(ctx context.Context, a *args, what string) (result, error) {
	b := a.name("backend", false)
	if err := a.check(); err != nil {
		return result{}, err
	}
	rows, err := t.hp.ServersTable(ctx, what, b)
	if err != nil {
		return result{}, err
	}
	return ok(haproxy.SourceRuntime, map[string]any{"count": len(rows), "servers": rows}), nil
}
