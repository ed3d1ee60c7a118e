package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcpfleet/mcpfleet/proxymcp/internal/fleet"
	"github.com/mcpfleet/mcpfleet/proxymcp/internal/haproxy"
	"github.com/mcpfleet/mcpfleet/proxymcp/internal/validate"
	"github.com/mcpfleet/mcpfleet/shared/mcperr"
	"github.com/mcpfleet/mcpfleet/shared/toolcall"
)

// Fleet mode (PROXY_INSTANCES): every tool is declared once, as for one
// HAProxy, plus an optional "instance" argument, and each call runs the
// one-instance tool on every chosen instance concurrently. Reads merge the
// answers (every row and object carries "instance"; errors sit next to the
// data; the tools that describe the same objects add "divergence"); writes
// are planned on every instance, previewed and approved as one, run
// concurrently and reported per instance. A fleet of one (no
// PROXY_INSTANCES) takes no instance argument and answers as its HAProxy does.

type fleetTools struct {
	f     *fleet.Fleet
	per   map[string]*tools // by instance
	specs map[string]map[string]spec

	mu      sync.Mutex
	persist map[string]persistEntry // by instance: does a runtime change survive a reload?
}

type persistEntry struct {
	sp   haproxy.StatePersistence
	when time.Time
}

// registerFleet registers every tool once for the whole fleet and returns
// how many were registered. Each instance has its own tools (over its own
// client); the first declares them to the pipeline.
func registerFleet(calls *toolcall.Pipeline, f *fleet.Fleet, opts Options) int {
	ft := &fleetTools{f: f, per: map[string]*tools{}, specs: map[string]map[string]spec{}, persist: map[string]persistEntry{}}
	n := 0
	for i, m := range f.Members() {
		var t *tools
		if i == 0 {
			t = register(calls, m.Name, m.Client, opts, ft)
			n = t.n
		} else {
			t = register(nil, m.Name, m.Client, opts, nil)
		}
		ft.per[m.Name] = t
		ft.specs[m.Name] = map[string]spec{}
		for _, sp := range t.specs {
			ft.specs[m.Name][sp.name] = sp
		}
	}
	return n
}

func (ft *fleetTools) choose(names []string) ([]fleet.Member, error) {
	ms, err := ft.f.Select(names)
	if err != nil {
		return nil, &validate.Error{Arg: "instance", Rule: err.Error()}
	}
	return ms, nil
}

// sameInvalid returns the argument error every instance gave, when they
// all refused the arguments the same way (nothing reached any HAProxy):
// it is reported once, as for one instance.
func sameInvalid(errs []error) error {
	var first *validate.Error
	for _, err := range errs {
		var ve *validate.Error
		if !errors.As(err, &ve) {
			return nil
		}
		if first == nil {
			first = ve
		} else if ve.Error() != first.Error() {
			return nil
		}
	}
	return first
}

// divergent are the reads that describe the same objects on every
// instance, and how to list those objects from one instance's answer.
var divergent = map[string]func(obj map[string]any) []fleet.Item{
	"list_servers":       func(o map[string]any) []fleet.Item { return jsonItems(o["servers"], serverItem) },
	"get_server":         func(o map[string]any) []fleet.Item { return jsonItems([]any{o["server"]}, serverItem) },
	"show_stat":          func(o map[string]any) []fleet.Item { return jsonItems(o["rows"], statItem) },
	"show_servers_state": func(o map[string]any) []fleet.Item { return jsonItems(o["servers"], stateItem) },
	"show_map":           func(o map[string]any) []fleet.Item { return jsonItems(o["entries"], entryItem(fleet.KindMapEntry)) },
	"show_acl":           func(o map[string]any) []fleet.Item { return jsonItems(o["entries"], entryItem(fleet.KindACLEntry)) },
	"get_map":            func(o map[string]any) []fleet.Item { return lookupItem(fleet.KindMapEntry, "key", o) },
	"get_acl":            func(o map[string]any) []fleet.Item { return lookupItem(fleet.KindACLEntry, "value", o) },
}

// read runs a read on every chosen instance and merges the answers.
func (ft *fleetTools) read(ctx context.Context, name string, names []string, in any) *mcp.CallToolResult {
	ms, err := ft.choose(names)
	if err != nil {
		return toolError(name, read, err)
	}
	ans, err := fleet.Read(ctx, ms, func(ctx context.Context, m fleet.Member) (map[string]any, haproxy.Source, error) {
		return ft.readOne(ctx, name, m.Name, in)
	})
	var errs []error
	for _, a := range ans {
		if a.Err != nil {
			errs = append(errs, a.Err)
		}
	}
	if len(errs) == len(ans) {
		if ve := sameInvalid(errs); ve != nil {
			return toolError(name, read, ve)
		}
	}
	if err != nil {
		return toolError(name, read, err)
	}
	return shape(ctx, name, read, ft.merge(name, read, ans), nil)
}

// readOne runs the one-instance read and decodes its JSON answer.
func (ft *fleetTools) readOne(ctx context.Context, name, instance string, in any) (map[string]any, haproxy.Source, error) {
	res, err := ft.specs[instance][name].read(ctx, in)
	if err != nil {
		return nil, "", err
	}
	body := res.raw
	if body == nil {
		if body, err = json.Marshal(res.data); err != nil {
			return nil, "", err
		}
	}
	obj := map[string]any{}
	d := json.NewDecoder(bytes.NewReader(body))
	d.UseNumber()
	if err := d.Decode(&obj); err != nil {
		return nil, "", err
	}
	if name == "version_info" {
		sp, err := ft.persistence(ctx, instance)
		if err != nil {
			obj["state_persistence"] = map[string]any{"known": false, "detail": "unknown: " + err.Error()}
		} else {
			obj["state_persistence"] = sp
		}
	}
	src, _ := obj["source"].(string)
	return obj, haproxy.Source(src), nil
}

// merge builds the fleet answer: arrays of objects are concatenated, each
// element with its "instance"; everything else stays in the instance's own
// object under "instances"; errors are listed by instance; and, for the
// reads that compare, the divergence.
func (ft *fleetTools) merge(name string, eff effect, ans []fleet.Answer[map[string]any]) result {
	out := map[string]any{}
	var instances []any
	var errs []any
	var answered []string
	items := map[string][]fleet.Item{}
	count, counted := 0, false
	var lists []string
	for _, a := range ans {
		if a.Err != nil {
			var nf *haproxy.NotFoundError
			if errors.As(a.Err, &nf) && (name == "get_server") {
				// Answered: the server is not there (a divergence of presence).
				answered = append(answered, a.Instance)
				items[a.Instance] = nil
			}
			errs = append(errs, map[string]any{"instance": a.Instance, "error": classify(name, eff != read, a.Err).Error()})
			continue
		}
		answered = append(answered, a.Instance)
		if f, ok := divergent[name]; ok {
			items[a.Instance] = f(a.Value)
		}
		own := map[string]any{"instance": a.Instance}
		for k, v := range a.Value {
			if rows, ok := objects(v); ok && k != "state_persistence" {
				if !slices.Contains(lists, k) {
					lists = append(lists, k)
				}
				cur, _ := out[k].([]any)
				for _, r := range rows {
					r["instance"] = a.Instance
					cur = append(cur, r)
				}
				if cur == nil {
					cur = []any{}
				}
				out[k] = cur
				continue
			}
			if obj, ok := v.(map[string]any); ok && k != "state_persistence" && k != "result" && k != "table" {
				obj["instance"] = a.Instance
			}
			if k == "count" {
				if n, err := v.(json.Number).Int64(); err == nil {
					count += int(n)
					counted = true
				}
			}
			own[k] = v
		}
		instances = append(instances, own)
	}
	if counted {
		out["count"] = count
	}
	out["instances"] = instances
	if errs == nil {
		errs = []any{}
	}
	out["errors"] = errs
	var summary strings.Builder
	fmt.Fprintf(&summary, "%s on %d of %d instances (%s)", name, len(ans)-len(errs), len(ans), strings.Join(ansNames(ans), ", "))
	if _, ok := divergent[name]; ok {
		ds := fleet.Diverge(answered, items)
		out["divergence"] = ds
		out["compared"] = answered
		switch {
		case len(answered) < 2:
			summary.WriteString("; fewer than two instances answered, nothing compared")
		case len(ds) == 0:
			summary.WriteString("; no divergence: the instances agree on every object compared")
		default:
			fmt.Fprintf(&summary, "; %d divergent:", len(ds))
			for i, d := range ds {
				if i == 20 {
					fmt.Fprintf(&summary, "\n- … %d more in structuredContent.divergence", len(ds)-20)
					break
				}
				summary.WriteString("\n- " + d.Summary)
			}
		}
	}
	for _, e := range errs {
		m := e.(map[string]any)
		fmt.Fprintf(&summary, "\nerror on %s: %s", m["instance"], m["error"])
	}
	if len(lists) > 0 {
		fmt.Fprintf(&summary, "\nrows (each with instance) in structuredContent: %s", strings.Join(lists, ", "))
	}
	// Free-text dumps (help, show_activity, show_session, ...): each
	// instance's text, as HAProxy printed it.
	for _, in := range instances {
		m := in.(map[string]any)
		if txt, ok := m["text"].(string); ok {
			fmt.Fprintf(&summary, "\n\n== %s ==\n%s", m["instance"], txt)
		}
	}
	return result{data: out, summary: summary.String()}
}

func ansNames(ans []fleet.Answer[map[string]any]) []string {
	out := make([]string, len(ans))
	for i, a := range ans {
		out[i] = a.Instance
	}
	return out
}

// objects reports whether v is a list of JSON objects (an empty list counts).
func objects(v any) ([]map[string]any, bool) {
	l, ok := v.([]any)
	if !ok {
		return nil, false
	}
	out := make([]map[string]any, 0, len(l))
	for _, x := range l {
		m, ok := x.(map[string]any)
		if !ok {
			return nil, false
		}
		out = append(out, m)
	}
	return out, true
}

func jsonItems(v any, f func(map[string]any) (fleet.Item, bool)) []fleet.Item {
	l, _ := v.([]any)
	var out []fleet.Item
	for _, x := range l {
		if m, ok := x.(map[string]any); ok {
			if it, ok := f(m); ok {
				out = append(out, it)
			}
		}
	}
	return out
}

func str(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return x
	}
	return fmt.Sprint(v)
}

func limitOf(v any) string {
	if s := str(v); s != "" && s != "0" {
		return s
	}
	return "unlimited"
}

func serverItem(m map[string]any) (fleet.Item, bool) {
	addr := str(m["address"])
	if p := str(m["port"]); p != "" && p != "0" {
		addr = haproxy.ServerView{Address: addr}.Address + ":" + p
		if strings.Contains(str(m["address"]), ":") {
			addr = "[" + str(m["address"]) + "]:" + p
		}
	}
	it := fleet.Item{Kind: fleet.KindServer, Key: str(m["backend"]) + "/" + str(m["name"]), Fields: []fleet.Field{
		{Name: fleet.FieldStatus, Value: str(m["status"])},
		{Name: fleet.FieldWeight, Value: str(m["weight"])},
		{Name: fleet.FieldAddress, Value: addr},
		{Name: fleet.FieldMaxconn, Value: limitOf(m["session_limit"])},
	}}
	if st, ok := m["state"].(map[string]any); ok {
		if n, err := st["srv_admin_state"].(json.Number).Int64(); err == nil {
			it.Fields = append(it.Fields, fleet.Field{Name: fleet.FieldAdminState, Value: haproxy.AdminStateName(n)})
		}
	}
	return it, str(m["name"]) != ""
}

func statItem(m map[string]any) (fleet.Item, bool) {
	var fields []fleet.Field
	add := func(name, col string, f func(any) string) {
		if v, ok := m[col]; ok {
			fields = append(fields, fleet.Field{Name: name, Value: f(v)})
		}
	}
	switch str(m["object_type"]) {
	case "frontend":
		add(fleet.FieldStatus, "status", str)
		if _, ok := m["status"]; ok {
			fields = append(fields, fleet.Field{Name: fleet.FieldMaxconn, Value: limitOf(m["slim"])})
		}
		return fleet.Item{Kind: fleet.KindFrontend, Key: str(m["pxname"]), Fields: fields}, true
	case "server":
		add(fleet.FieldStatus, "status", str)
		add(fleet.FieldWeight, "weight", str)
		add(fleet.FieldAddress, "addr", str)
		if _, ok := m["status"]; ok {
			fields = append(fields, fleet.Field{Name: fleet.FieldMaxconn, Value: limitOf(m["slim"])})
		}
		return fleet.Item{Kind: fleet.KindServer, Key: str(m["pxname"]) + "/" + str(m["svname"]), Fields: fields}, true
	}
	return fleet.Item{}, false
}

func stateItem(m map[string]any) (fleet.Item, bool) {
	row := map[string]any{}
	for k, v := range m {
		if n, ok := v.(json.Number); ok {
			if i, err := n.Int64(); err == nil {
				row[k] = i
				continue
			}
		}
		row[k] = v
	}
	items := fleet.StateItems([]map[string]any{row})
	return items[0], true
}

func entryItem(kind string) func(map[string]any) (fleet.Item, bool) {
	return func(m map[string]any) (fleet.Item, bool) {
		it := fleet.Item{Kind: kind, Key: str(m["key"])}
		if kind == fleet.KindMapEntry {
			it.Fields = []fleet.Field{{Name: fleet.FieldValue, Value: str(m["value"])}}
		}
		return it, true
	}
}

func lookupItem(kind, sampleArg string, o map[string]any) []fleet.Item {
	it := fleet.Item{Kind: kind, Key: str(o[sampleArg]), Fields: []fleet.Field{{Name: fleet.FieldMatch, Value: str(o["matched"])}}}
	if res, ok := o["result"].(map[string]any); ok && kind == fleet.KindMapEntry {
		it.Fields = append(it.Fields, fleet.Field{Name: fleet.FieldValue, Value: str(res["value"])})
	}
	return []fleet.Item{it}
}

// persistence returns (and remembers for a minute) whether runtime changes
// survive a reload on one instance.
func (ft *fleetTools) persistence(ctx context.Context, instance string) (haproxy.StatePersistence, error) {
	ft.mu.Lock()
	e, ok := ft.persist[instance]
	ft.mu.Unlock()
	if ok && time.Since(e.when) < time.Minute {
		return e.sp, nil
	}
	m, _ := ft.f.Member(instance)
	sp, err := m.Client.StatePersistence(ctx)
	if err != nil {
		return sp, err
	}
	ft.mu.Lock()
	ft.persist[instance] = persistEntry{sp: sp, when: time.Now()}
	ft.mu.Unlock()
	return sp, nil
}

// persistenceLine says in one line where the change just made is lost on
// reload; "" when every instance keeps server states over a reload.
func (ft *fleetTools) persistenceLine(ctx context.Context, instances []string) string {
	var lost, unknown []string
	for _, in := range instances {
		sp, err := ft.persistence(ctx, in)
		switch {
		case err != nil || !sp.Known:
			unknown = append(unknown, in)
		case !sp.Configured:
			lost = append(lost, in)
		}
	}
	var parts []string
	if len(lost) > 0 {
		parts = append(parts, "lost on reload on "+strings.Join(lost, ", ")+" (server-state-file and load-server-state-from-file are not configured there)")
	}
	if len(unknown) > 0 {
		parts = append(parts, "possibly lost on reload on "+strings.Join(unknown, ", ")+" (proxymcp cannot read their configuration; see version_info)")
	}
	if len(parts) == 0 {
		return ""
	}
	return "Runtime change: " + strings.Join(parts, "; ") + ". Maps and ACLs changed at run time are lost on reload everywhere."
}

// plan plans a write on every chosen instance: the same validated
// arguments, each instance's own commands, one preview showing every
// instance's state, one approval for the set.
func (ft *fleetTools) plan(ctx context.Context, name string, eff effect, class toolcall.Class, names []string, in any) (toolcall.Plan, error) {
	ms, err := ft.choose(names)
	if err != nil {
		return toolcall.Plan{}, classify(name, true, err)
	}
	rest := callArgs(ctx)
	plans := make([]planned, len(ms))
	for i, m := range ms {
		p, err := ft.specs[m.Name][name].plan(in)
		if err != nil {
			return toolcall.Plan{}, classify(name, true, err)
		}
		plans[i] = p
	}
	// Each instance's class from its own state, read concurrently, each
	// within its own limit; the call's is the widest of them.
	classes := make([]toolcall.Class, len(ms))
	var wg sync.WaitGroup
	for i, m := range ms {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rctx, cancel := m.ReadContext(ctx)
			defer cancel()
			classes[i], plans[i] = ft.per[m.Name].settle(rctx, plans[i], class)
		}()
	}
	wg.Wait()
	c := toolcall.Read
	for _, pc := range classes {
		c = max(c, pc)
	}
	var targets []string
	for _, m := range ms {
		targets = append(targets, m.Name+" ("+m.Client.Target()+")")
	}
	pl := toolcall.Plan{Class: c, Target: "HAProxy instances " + strings.Join(targets, ", "), Commands: fleetCommands(ms, plans)}
	if plans[0].describe != nil {
		pl.Describe = func(ctx context.Context) (toolcall.Preview, error) { return ft.describe(ctx, name, ms, plans) }
	}
	pl.Run = func(ctx context.Context) (*mcp.CallToolResult, error) {
		return ft.run(ctx, name, eff, ms, plans, rest), nil
	}
	return pl, nil
}

// fleetCommands lists what each instance is sent: once when they are all
// sent the same, else prefixed by the instance.
func fleetCommands(ms []fleet.Member, plans []planned) []string {
	same := true
	for _, p := range plans[1:] {
		if !slices.Equal(p.commands, plans[0].commands) {
			same = false
		}
	}
	if same {
		return plans[0].commands
	}
	var out []string
	for i, p := range plans {
		for _, c := range p.commands {
			out = append(out, ms[i].Name+": "+c)
		}
	}
	return out
}

// describe reads every instance's state for the preview, concurrently. An
// instance that cannot be read is shown as such; its precondition is that
// it could not be read, so an approval given while it was down is not
// used once it is back with a state nobody saw.
func (ft *fleetTools) describe(ctx context.Context, name string, ms []fleet.Member, plans []planned) (toolcall.Preview, error) {
	type one struct {
		pv  toolcall.Preview
		err error
	}
	got := make([]one, len(ms))
	var wg sync.WaitGroup
	for i, m := range ms {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rctx, cancel := m.ReadContext(ctx)
			defer cancel()
			got[i].pv, got[i].err = plans[i].describe(rctx)
		}()
	}
	wg.Wait()
	var sum, pre []string
	state := map[string]any{}
	failed := 0
	effect := ""
	for i, g := range got {
		in := ms[i].Name
		if g.err != nil {
			failed++
			msg := classify(name, false, g.err).Error()
			sum = append(sum, in+": its current state cannot be read ("+msg+"); the change will be tried there too.")
			state[in] = map[string]any{"error": msg}
			pre = append(pre, in+": unreadable")
			continue
		}
		sum = append(sum, in+": "+g.pv.Summary)
		state[in] = g.pv.State
		pre = append(pre, in+": "+g.pv.Precondition)
		if effect == "" {
			effect = g.pv.Effect
		}
	}
	if failed == len(ms) {
		return toolcall.Preview{}, got[0].err
	}
	head := fmt.Sprintf("On %d HAProxy instance(s), one approval for all of them:", len(ms))
	return toolcall.Preview{Summary: head + "\n" + strings.Join(sum, "\n"), State: state, Effect: effect,
		Precondition: strings.Join(pre, "\n")}, nil
}

// undoable are the writes whose previous state one call restores, and
// how to read it before the change.
var undoable = map[string]func(ctx context.Context, c *haproxy.Client, rest map[string]any) (*fleet.ToolCall, error){
	"set_server_state": undoServerState, "enable_server": undoServerState, "disable_server": undoServerState,
	"set_server_weight": func(ctx context.Context, c *haproxy.Client, rest map[string]any) (*fleet.ToolCall, error) {
		return undoServer(ctx, c, rest, func(v haproxy.ServerView) *fleet.ToolCall {
			return &fleet.ToolCall{Tool: "set_server_weight", Args: map[string]any{"backend": v.Backend, "server": v.Server, "weight": v.Weight}}
		})
	},
	"set_server_maxconn": func(ctx context.Context, c *haproxy.Client, rest map[string]any) (*fleet.ToolCall, error) {
		return undoServer(ctx, c, rest, func(v haproxy.ServerView) *fleet.ToolCall {
			return &fleet.ToolCall{Tool: "set_server_maxconn", Args: map[string]any{"backend": v.Backend, "server": v.Server, "maxconn": v.Maxconn}}
		})
	},
	"set_server_addr": func(ctx context.Context, c *haproxy.Client, rest map[string]any) (*fleet.ToolCall, error) {
		return undoServer(ctx, c, rest, func(v haproxy.ServerView) *fleet.ToolCall {
			return &fleet.ToolCall{Tool: "set_server_addr", Args: map[string]any{"backend": v.Backend, "server": v.Server, "address": v.Address, "port": v.Port}}
		})
	},
}

func undoServerState(ctx context.Context, c *haproxy.Client, rest map[string]any) (*fleet.ToolCall, error) {
	return undoServer(ctx, c, rest, func(v haproxy.ServerView) *fleet.ToolCall {
		return &fleet.ToolCall{Tool: "set_server_state", Args: map[string]any{"backend": v.Backend, "server": v.Server, "state": v.Admin}}
	})
}

func undoServer(ctx context.Context, c *haproxy.Client, rest map[string]any, f func(haproxy.ServerView) *fleet.ToolCall) (*fleet.ToolCall, error) {
	b, _ := rest["backend"].(string)
	s, _ := rest["server"].(string)
	v, err := c.ServerView(ctx, b, s)
	var nf *haproxy.NotFoundError
	if errors.As(err, &nf) {
		return nil, nil // the change will fail there: nothing to undo
	}
	if err != nil {
		return nil, err
	}
	return f(v), nil
}

// run makes the change on every instance concurrently and reports each.
func (ft *fleetTools) run(ctx context.Context, name string, eff effect, ms []fleet.Member, plans []planned, rest map[string]any) *mcp.CallToolResult {
	results := make([]map[string]any, len(ms))
	byName := map[string]int{}
	for i, m := range ms {
		byName[m.Name] = i
	}
	ch := fleet.Change{
		Call:     fleet.ToolCall{Tool: name, Args: rest},
		Commands: fleetCommands(ms, plans), // nil in an outcome: nothing was sent there
		Apply: func(ctx context.Context, m fleet.Member) (haproxy.Applied, haproxy.Source, error) {
			i := byName[m.Name]
			res, err := plans[i].run(ctx)
			if err != nil {
				return haproxy.Applied{}, "", err
			}
			body, err := json.Marshal(res.data)
			if err != nil {
				return haproxy.Applied{}, "", err
			}
			obj := map[string]any{}
			_ = json.Unmarshal(body, &obj)
			results[i] = obj
			changed, ok := obj["changed"].(bool)
			if !ok {
				changed = true
			}
			msg, _ := obj["message"].(string)
			src, _ := obj["source"].(string)
			return haproxy.Applied{Changed: changed, Message: msg}, haproxy.Source(src), nil
		},
	}
	if u, ok := undoable[name]; ok {
		ch.Undo = func(ctx context.Context, m fleet.Member) (*fleet.ToolCall, error) { return u(ctx, m.Client, rest) }
	}
	outs, err := fleet.Write(ctx, ms, ch)
	var outcomes []any
	var names []string
	for i, o := range outs {
		names = append(names, o.Instance)
		entry := map[string]any{"instance": o.Instance, "sent": sentBy(plans[i].commands, o.Source), "applied": o.Applied, "changed": o.Changed, "answer": o.Answer}
		if o.Sent == nil {
			entry["sent"] = []string{}
		}
		if o.Source != "" {
			entry["source"] = o.Source
		}
		if o.Uncertain {
			entry["uncertain"] = true
		}
		if o.Err != nil {
			entry["error"] = classify(name, true, o.Err).Error()
		}
		if results[i] != nil {
			entry["result"] = results[i]
		}
		outcomes = append(outcomes, entry)
	}
	data := map[string]any{"outcomes": outcomes}
	line := ft.persistenceLine(ctx, names)
	if line != "" {
		data["persistence"] = line
	}
	var pe *fleet.PartialError
	var na *fleet.NotAppliedError
	switch {
	case errors.As(err, &pe):
		data["applied_on"], data["not_applied_on"], data["unknown_on"] = orEmpty(pe.Applied), orEmpty(pe.Failed), orEmpty(pe.Uncertain)
		data["complete_with"] = pe.Complete
		if len(pe.Undo) > 0 {
			data["undo_with"] = pe.Undo
		}
		return errorResult(data, "partially applied — "+strings.TrimPrefix(pe.Error(), "partially applied: "), line)
	case errors.As(err, &na):
		if len(outs) == 1 {
			return toolError(name, eff, outs[0].Err)
		}
		parts := make([]string, len(outs))
		for i, o := range outs {
			parts[i] = o.Instance + ": " + classify(name, true, o.Err).Error()
		}
		data["applied_on"], data["not_applied_on"] = []string{}, names
		return errorResult(data, "not applied on any instance, nothing was changed: "+strings.Join(parts, "; "), "")
	case err != nil:
		return toolError(name, eff, err)
	}
	data["applied_on"] = names
	var b strings.Builder
	fmt.Fprintf(&b, "%s applied on %s.", name, strings.Join(names, ", "))
	if line != "" {
		b.WriteString("\n" + line)
	}
	return shape(ctx, name, eff, result{data: data, summary: b.String()}, nil)
}

// statsFallback starts the planned command that only the stats page
// fallback sends (haproxy's command builder words it so).
const statsFallback = "only if the runtime API cannot be reached: "

// sentBy keeps the planned commands the back end that answered was sent:
// the runtime API's, or the stats page fallback's.
func sentBy(commands []string, src haproxy.Source) []string {
	out := []string{}
	for _, c := range commands {
		if strings.Contains(c, statsFallback) == (src == haproxy.SourceStats) {
			out = append(out, c)
		}
	}
	return out
}

func orEmpty(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// errorResult is an isError result that still carries every instance's
// outcome as structuredContent.
func errorResult(data map[string]any, msg, line string) *mcp.CallToolResult {
	if line != "" {
		msg += "\n" + line
	}
	data["error"] = msg
	body, err := json.Marshal(data)
	if err != nil {
		return mcperr.ToolResult(mcperr.Wrap(err, "fleet result", ""))
	}
	r := mcp.NewToolResultStructured(json.RawMessage(body), msg)
	r.IsError = true
	return r
}
