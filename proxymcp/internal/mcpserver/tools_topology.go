package mcpserver

import (
	"context"
	"errors"

	"github.com/mcpfleet/mcpfleet/proxymcp/internal/fleet"
	"github.com/mcpfleet/mcpfleet/proxymcp/internal/haproxy"
	"github.com/mcpfleet/mcpfleet/proxymcp/internal/validate"
)

type getBackendIn struct {
	fleetArg
	Backend string `json:"backend" jsonschema:"Backend name (see list_backends)." pattern:"^[A-Za-z0-9_.:-]{1,128}$"`
}

type listServersIn struct {
	fleetArg
	Backend string `json:"backend,omitempty" jsonschema:"Backend name; omit for every backend." pattern:"^[A-Za-z0-9_.:-]{1,128}$"`
}

type tableFilter struct {
	Data  string `json:"data" jsonschema:"Stored data type, e.g. conn_cur, gpc0, http_req_rate." pattern:"^[a-z][a-z0-9_]{0,63}$"`
	Op    string `json:"op" enum:"eq,ne,lt,le,gt,ge"`
	Value int64  `json:"value"`
}

type showTableIn struct {
	fleetArg
	Table   string        `json:"table" jsonschema:"Table name (see list_tables)." pattern:"^[A-Za-z0-9_.:-]{1,128}$"`
	Key     string        `json:"key,omitempty" jsonschema:"Only the entry with this key." maxLength:"4096"`
	Filters []tableFilter `json:"filters,omitempty" jsonschema:"Conditions on stored data." maxItems:"4"`
}

func (t *tools) topologyTools() {
	addRead(t, "list_frontends", "List frontends",
		"Every frontend with its status (OPEN, STOP, PAUSED), mode, session counts and limit, bytes and request rate.",
		func(ctx context.Context, _ noArgs) (result, error) {
			fe, src, err := t.hp.ListFrontends(ctx)
			if err != nil {
				return result{}, err
			}
			return ok(src, map[string]any{"count": len(fe), "frontends": fe}), nil
		})

	addRead(t, "list_backends", "List backends",
		"Every backend (listen sections included) with status, balance algorithm, active/backup server counts, weight and session totals.",
		func(ctx context.Context, _ noArgs) (result, error) {
			be, src, err := t.hp.ListBackends(ctx)
			if err != nil {
				return result{}, err
			}
			return ok(src, map[string]any{"count": len(be), "backends": be}), nil
		})

	addRead(t, "get_backend", "Get a backend",
		"One backend's totals and all of its servers (name, address, port, status, weight, check status, sessions).",
		func(ctx context.Context, in getBackendIn) (result, error) {
			d, src, err := t.hp.GetBackend(ctx, in.Backend)
			if err != nil {
				return result{}, err
			}
			return ok(src, map[string]any{"backend": d}), nil
		})

	addRead(t, "list_servers", "List servers",
		"Servers of one backend (or of every backend when `backend` is omitted): name, address, port, status (UP, DOWN, DRAIN, MAINT, \"no check\"...), weight, check and agent status, sessions.",
		func(ctx context.Context, in listServersIn) (result, error) {
			s, src, err := t.hp.ListServers(ctx, in.Backend)
			if err != nil {
				return result{}, err
			}
			r := ok(src, map[string]any{"count": len(s), "servers": s})
			r.items = func() []fleet.Item { return fleet.ServerItems(s) }
			return r, nil
		})

	addRead(t, "get_server", "Get a server",
		"One server's statistics and, from the runtime API, its state row (`show servers state`: operational and admin state, weights, check and agent settings).",
		func(ctx context.Context, in backendServerIn) (result, error) {
			d, src, err := t.hp.GetServer(ctx, in.Backend, in.Server)
			var nf *haproxy.NotFoundError
			if errors.As(err, &nf) {
				return result{}, &absentError{err}
			}
			if err != nil {
				return result{}, err
			}
			r := ok(src, map[string]any{"server": d})
			r.items = func() []fleet.Item { return []fleet.Item{fleet.ServerDetailItem(d)} }
			return r, nil
		})

	addRead(t, "show_servers_state", "Servers state",
		"`show servers state`: per server the operational state (0 stopped, 1 starting, 2 running, 3 stopping), admin state bits (0x01 forced maintenance, 0x08 forced drain, ...), weights, check and agent state, address and ports.",
		func(ctx context.Context, in optBackendIn) (result, error) {
			r, err := t.serversTable(ctx, in.Backend, "state")
			if rows, ok := r.data["servers"].([]map[string]any); ok {
				r.items = func() []fleet.Item { return fleet.StateItems(rows) }
			}
			return r, err
		})

	addRead(t, "show_servers_conn", "Servers connections",
		"`show servers conn`: per server the idle and used connection counts of its connection pools.",
		func(ctx context.Context, in optBackendIn) (result, error) {
			return t.serversTable(ctx, in.Backend, "conn")
		})

	addRead(t, "list_tables", "List stick tables",
		"Every stick table: name, key type, size and entries used.",
		func(ctx context.Context, _ noArgs) (result, error) {
			l, err := t.hp.ListTables(ctx)
			if err != nil {
				return result{}, err
			}
			return ok(haproxy.SourceRuntime, map[string]any{"count": len(l), "tables": l}), nil
		})

	addRead(t, "show_table", "Show a stick table",
		"Entries of one stick table with their stored data (counters, rates). Filter by one `key`, or by `filters` on stored data such as {\"data\":\"conn_cur\",\"op\":\"gt\",\"value\":0} (several are ANDed).",
		func(ctx context.Context, in showTableIn) (result, error) {
			table, key := in.Table, in.Key
			var filters []haproxy.TableFilter
			for _, f := range in.Filters {
				filters = append(filters, haproxy.TableFilter{Data: f.Data, Op: f.Op, Value: f.Value})
			}
			err := checkAll(textArg("key", key))
			if err == nil && key != "" && len(filters) > 0 {
				err = &validate.Error{Arg: "filters", Rule: "cannot be combined with key"}
			}
			if err != nil {
				return result{}, err
			}
			info, entries, err := t.hp.ShowTable(ctx, table, key, filters)
			if err != nil {
				return result{}, err
			}
			return ok(haproxy.SourceRuntime, map[string]any{"table": verbatim{info}, "count": len(entries), "entries": entries}), nil
		})

	addRead(t, "show_resolvers", "DNS resolvers",
		"`show resolvers`: per resolvers section and nameserver, the DNS query and error counters, as HAProxy prints them.",
		t.rawTool(haproxy.DumpResolvers))
}

func (t *tools) serversTable(ctx context.Context, b, what string) (result, error) {
	rows, err := t.hp.ServersTable(ctx, what, b)
	if err != nil {
		return result{}, err
	}
	return ok(haproxy.SourceRuntime, map[string]any{"count": len(rows), "servers": rows}), nil
}
