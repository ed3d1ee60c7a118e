package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"reflect"
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

// registerFleet registers every tool once for the whole fleet. Each
// instance has its own tools (over its own client); the first declares
// them to the pipeline.
func registerFleet(calls *toolcall.Pipeline, f *fleet.Fleet, opts Options) {
	ft := &fleetTools{f: f, per: map[string]*tools{}, specs: map[string]map[string]spec{}, persist: map[string]persistEntry{}}
	for i, m := range f.Members() {
		var t *tools
		if i == 0 {
			t = register(calls, m.Name, m.Client, opts, ft)
		} else {
			t = register(nil, m.Name, m.Client, opts, nil)
		}
		ft.per[m.Name] = t
		ft.specs[m.Name] = map[string]spec{}
		for _, sp := range t.specs {
			ft.specs[m.Name][sp.name] = sp
		}
	}
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

// read runs a read on every chosen instance and merges the answers.
func (ft *fleetTools) read(ctx context.Context, name string, names []string, in any) *mcp.CallToolResult {
	ms, err := ft.choose(names)
	if err != nil {
		return toolError(name, read, err)
	}
	ans, err := fleet.Read(ctx, ms, func(ctx context.Context, m fleet.Member) (result, haproxy.Source, error) {
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
	res, err := merge(name, ans)
	return shape(ctx, name, read, res, err)
}

// unknownPersistence is state_persistence when it cannot be read.
type unknownPersistence struct {
	Known  bool   `json:"known"`
	Detail string `json:"detail"`
}

// readOne runs the one-instance read; its answer stays as the tool built it.
func (ft *fleetTools) readOne(ctx context.Context, name, instance string, in any) (result, haproxy.Source, error) {
	res, err := ft.specs[instance][name].read(ctx, in)
	if err != nil {
		return result{}, "", err
	}
	if res.persistence {
		sp, err := ft.persistence(ctx, instance)
		if err != nil {
			res.data["state_persistence"] = verbatim{unknownPersistence{Detail: "unknown: " + err.Error()}}
		} else {
			res.data["state_persistence"] = verbatim{sp}
		}
	}
	return res, res.src, nil
}

// merge builds the fleet answer: lists of objects are concatenated, each
// element with its "instance"; everything else stays in the instance's own
// object under "instances" (objects in it carry "instance" too, unless the
// tool keeps them verbatim); errors are listed by instance; and, for the
// reads whose answers list comparable objects (result.items), the
// divergence. Each value is encoded once, as the tool built it.
func merge(name string, ans []fleet.Answer[result]) (result, error) {
	out := map[string]any{}
	lists := map[string][]byte{} // JSON arrays, without their closing bracket
	var instances []any
	var errs []any
	var answered []string
	items := map[string][]fleet.Item{}
	count, counted, compares := 0, false, false
	tables := false // show_stat's table format: rows per instance, under instances
	list := func(k string, add func(b []byte) []byte) {
		b, ok := lists[k]
		if !ok {
			b = append(make([]byte, 0, 1024), '[')
		}
		lists[k] = add(b)
	}
	for _, a := range ans {
		if a.Err != nil {
			var ab *absentError
			if errors.As(a.Err, &ab) {
				// Answered: the object is not there (a divergence of presence).
				answered = append(answered, a.Instance)
				items[a.Instance] = nil
				compares = true
			}
			errs = append(errs, map[string]any{"instance": a.Instance, "error": classify(name, false, a.Err).Error()})
			continue
		}
		answered = append(answered, a.Instance)
		res := a.Value
		if res.items != nil {
			compares = true
			items[a.Instance] = res.items()
		}
		if res.data["format"] == "table" {
			tables = true
		}
		tag := instanceMember(a.Instance)
		own := map[string]any{"instance": a.Instance}
		if t := res.table; t != nil {
			list("rows", func(b []byte) []byte {
				if len(t.Rows) == 0 {
					return b
				}
				if len(b) > 1 {
					b = append(b, ',')
				}
				rows := t.AppendJSONWith(nil, tag)
				return append(b, rows[1:len(rows)-1]...)
			})
		}
		for k, v := range res.data {
			if rows, ok, err := objectList(v); err != nil {
				return result{}, err
			} else if ok {
				list(k, func(b []byte) []byte {
					for _, r := range rows {
						if len(b) > 1 {
							b = append(b, ',')
						}
						b = withMember(b, r, tag)
					}
					return b
				})
				continue
			}
			switch x := v.(type) {
			case int:
				if k == "count" {
					count += x
					counted = true
				}
			case verbatim:
			default:
				obj, err := object(v)
				if err != nil {
					return result{}, err
				}
				if obj != nil {
					v = json.RawMessage(withMember(nil, obj, tag))
				}
			}
			own[k] = v
		}
		instances = append(instances, own)
	}
	names := slices.Sorted(maps.Keys(lists))
	for _, k := range names {
		out[k] = json.RawMessage(append(lists[k], ']'))
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
	if compares {
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
			for i, line := range fleet.Summaries(ds) {
				if i == 20 {
					fmt.Fprintf(&summary, "\n- … %d more in structuredContent.divergence", len(ds)-20)
					break
				}
				summary.WriteString("\n- " + line)
			}
		}
	}
	for _, e := range errs {
		m := e.(map[string]any)
		fmt.Fprintf(&summary, "\nerror on %s: %s", m["instance"], m["error"])
	}
	if len(names) > 0 {
		fmt.Fprintf(&summary, "\nrows (each with instance) in structuredContent: %s", strings.Join(names, ", "))
	}
	if tables {
		summary.WriteString("\nrows of each instance in structuredContent.instances[].table (fields, layouts, rows)")
	}
	// Free-text dumps (help, show_activity, show_session, ...): each
	// instance's text, as HAProxy printed it.
	for _, in := range instances {
		m := in.(map[string]any)
		if txt, ok := m["text"].(string); ok {
			fmt.Fprintf(&summary, "\n\n== %s ==\n%s", m["instance"], txt)
		}
	}
	return result{data: out, summary: summary.String()}, nil
}

func ansNames[T any](ans []fleet.Answer[T]) []string {
	out := make([]string, len(ans))
	for i, a := range ans {
		out[i] = a.Instance
	}
	return out
}

// instanceMember is the `"instance":"name"` member a fleet adds to objects.
func instanceMember(instance string) []byte {
	b, _ := json.Marshal(instance)
	return append([]byte(`"instance":`), b...)
}

// withMember appends the JSON object obj with member written first.
func withMember(b, obj, member []byte) []byte {
	b = append(b, '{')
	b = append(b, member...)
	if rest := bytes.TrimSpace(obj[1:]); len(rest) > 0 && rest[0] != '}' {
		b = append(b, ',')
	}
	return append(b, obj[1:]...)
}

// objectList encodes v's elements when v is a list whose every element is
// a JSON object (an empty list counts); ok is false for anything else.
func objectList(v any) (rows [][]byte, ok bool, err error) {
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Slice || rv.IsNil() || rv.Type().Elem().Kind() == reflect.Uint8 {
		return nil, false, nil
	}
	rows = make([][]byte, rv.Len())
	for i := range rows {
		e := rv.Index(i)
		for e.Kind() == reflect.Interface || e.Kind() == reflect.Pointer {
			e = e.Elem()
		}
		if e.Kind() != reflect.Struct && e.Kind() != reflect.Map {
			return nil, false, nil
		}
		if rows[i], err = object(e.Interface()); err != nil || rows[i] == nil {
			return nil, false, err
		}
	}
	return rows, true, nil
}

// object encodes v when it is a JSON object (a struct or a map), else nil.
func object(v any) ([]byte, error) {
	if raw, ok := v.(json.RawMessage); ok { // already encoded (show_info's info)
		if len(raw) > 0 && raw[0] == '{' {
			return raw, nil
		}
		return nil, nil
	}
	rv := reflect.ValueOf(v)
	for rv.Kind() == reflect.Interface || rv.Kind() == reflect.Pointer {
		if rv.IsNil() {
			return nil, nil
		}
		rv = rv.Elem()
	}
	if k := rv.Kind(); k != reflect.Struct && k != reflect.Map || k == reflect.Map && rv.IsNil() {
		return nil, nil
	}
	b, err := json.Marshal(v)
	if err != nil || len(b) == 0 || b[0] != '{' {
		return nil, err
	}
	return b, nil
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
	// Maps and ACLs survive where PROXY_PERSIST rewrites their files (a
	// failed write is reported on its own, per instance).
	var mapsLost []string
	for _, in := range instances {
		if l := ft.per[in].life; l == nil || !l.Persist {
			mapsLost = append(mapsLost, in)
		}
	}
	maps := ""
	switch {
	case len(mapsLost) == len(instances):
		maps = " Maps and ACLs changed at run time are lost on reload everywhere."
	case len(mapsLost) > 0:
		maps = " Maps and ACLs changed at run time are lost on reload on " + strings.Join(mapsLost, ", ") + " (PROXY_PERSIST is off there)."
	}
	return "Runtime change: " + strings.Join(parts, "; ") + "." + maps
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
	onEach(ctx, ms, func(ctx context.Context, i int) {
		classes[i], plans[i] = ft.per[ms[i].Name].settle(ctx, plans[i], class)
	})
	c := toolcall.Read
	for _, pc := range classes {
		c = max(c, pc)
	}
	var targets []string
	for _, m := range ms {
		targets = append(targets, m.Name+" ("+m.Client.Target()+")")
	}
	cmds, same := fleetCommands(ms, plans)
	pl := toolcall.Plan{Class: c, Target: "HAProxy instances " + strings.Join(targets, ", "), Commands: cmds}
	if plans[0].describe != nil {
		pl.Describe = func(ctx context.Context) (toolcall.Preview, error) { return ft.describe(ctx, name, ms, plans) }
	}
	pl.Run = func(ctx context.Context) (*mcp.CallToolResult, error) {
		res := ft.run(ctx, name, eff, ms, plans, rest)
		refreshCommands(cmds, same, ms, plans)
		return res, nil
	}
	return pl, nil
}

// onEach runs f for every member concurrently, each within its own read
// limit (PROXY_<NAME>_RUNTIME_TIMEOUT), and waits for all of them.
func onEach(ctx context.Context, ms []fleet.Member, f func(ctx context.Context, i int)) {
	var wg sync.WaitGroup
	for i, m := range ms {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rctx, cancel := m.ReadContext(ctx)
			defer cancel()
			f(rctx, i)
		}()
	}
	wg.Wait()
}

// fleetCommands lists what each instance is sent: once when they are all
// sent the same (same), else prefixed by the instance. The list is a
// copy: refreshCommands completes it after the run.
func fleetCommands(ms []fleet.Member, plans []planned) (cmds []string, same bool) {
	same = true
	for _, p := range plans[1:] {
		if !slices.Equal(p.commands, plans[0].commands) {
			same = false
		}
	}
	if same {
		return slices.Clone(plans[0].commands), true
	}
	var out []string
	for i, p := range plans {
		for _, c := range p.commands {
			out = append(out, ms[i].Name+": "+c)
		}
	}
	return out, false
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
	onEach(ctx, ms, func(ctx context.Context, i int) {
		got[i].pv, got[i].err = plans[i].describe(ctx)
	})
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
	cmds, _ := fleetCommands(ms, plans)
	results := make([]map[string]any, len(ms))
	failed := make([]string, len(ms)) // applied at run time, NOT persisted: why
	byName := map[string]int{}
	for i, m := range ms {
		byName[m.Name] = i
	}
	ch := fleet.Change{
		Call:     fleet.ToolCall{Tool: name, Args: rest},
		Commands: cmds, // nil in an outcome: nothing was sent there
		Sent:     func(m fleet.Member, src haproxy.Source) []string { return sentBy(plans[byName[m.Name]], src) },
		Apply: func(ctx context.Context, m fleet.Member) (haproxy.Applied, haproxy.Source, error) {
			i := byName[m.Name]
			res, err := plans[i].run(ctx)
			if err != nil {
				return haproxy.Applied{}, "", err
			}
			results[i] = res.data
			failed[i] = res.failed
			changed, ok := res.data["changed"].(bool)
			if !ok {
				changed = true
			}
			msg, _ := res.data["message"].(string)
			return haproxy.Applied{Changed: changed, Message: msg}, res.src, nil
		},
	}
	if u, ok := undoable[name]; ok {
		ch.Undo = func(ctx context.Context, m fleet.Member) (*fleet.ToolCall, error) { return u(ctx, m.Client, rest) }
	}
	outs, err := fleet.Write(ctx, ms, ch)
	var outcomes []any
	var names []string
	var notPersisted []string // "instance: why"
	var retry []map[string]any
	for i, o := range outs {
		names = append(names, o.Instance)
		entry := map[string]any{"instance": o.Instance, "sent": o.Sent, "applied": o.Applied, "changed": o.Changed, "answer": o.Answer}
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
		if failed[i] != "" {
			// The change is applied there, its file is not written: the
			// entry says so, with the call that retries the write there.
			entry["persisted"] = false
			entry["not_persisted"] = failed[i]
			if p, ok := results[i]["persistence"].(map[string]any); ok {
				if r, ok := p["retry_with"].(map[string]any); ok {
					args := maps.Clone(r["arguments"].(map[string]any))
					args["instance"] = o.Instance
					rw := map[string]any{"tool": r["tool"], "arguments": args}
					entry["retry_with"] = rw
					retry = append(retry, rw)
				}
			}
			notPersisted = append(notPersisted, o.Instance+": "+failed[i])
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
		msg := "partially applied — " + strings.TrimPrefix(pe.Error(), "partially applied: ")
		if len(notPersisted) > 0 {
			data["not_persisted_on"], data["retry_with"] = notPersistedNames(notPersisted), retry
			msg += "\n" + notPersistedText(notPersisted, retry)
		}
		return errorResult(data, msg, line)
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
	if len(notPersisted) > 0 {
		// Not the success asked for: the change is live everywhere but
		// will not survive a reload where its file was not written.
		data["not_persisted_on"], data["retry_with"] = notPersistedNames(notPersisted), retry
		return errorResult(data, fmt.Sprintf("%s applied at run time on %s, but NOT persisted on %d of them:\n%s",
			name, strings.Join(names, ", "), len(notPersisted), notPersistedText(notPersisted, retry)), line)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s applied on %s.", name, strings.Join(names, ", "))
	if line != "" {
		b.WriteString("\n" + line)
	}
	return shape(ctx, name, eff, result{data: data, summary: b.String()}, nil)
}

// notPersistedNames are the instances of "instance: why" lines.
func notPersistedNames(lines []string) []string {
	out := make([]string, len(lines))
	for i, l := range lines {
		out[i], _, _ = strings.Cut(l, ": ")
	}
	return out
}

// notPersistedText words the instances whose file write failed and the
// calls that retry it.
func notPersistedText(lines []string, retry []map[string]any) string {
	var b strings.Builder
	for _, l := range lines {
		b.WriteString("- " + l + "\n")
	}
	for _, r := range retry {
		fmt.Fprintf(&b, "retry with %s %s\n", r["tool"], mustJSON(r["arguments"]))
	}
	return strings.TrimRight(b.String(), "\n")
}

// refreshCommands rewrites, after the run, the lines of the fleet's
// commands that a run completes (the persistence write: "persist: rewrote
// <file> <before> -> <after>" or "persist: FAILED ..."), so that the audit's
// outcome record says what happened on each instance. cmds are the
// commands the plan was approved with (fleetCommands), rewritten in place:
// the audit record holds the same slice.
func refreshCommands(cmds []string, same bool, ms []fleet.Member, plans []planned) {
	if same {
		// Every instance was to be sent the same: one line, per instance
		// where the run made them differ.
		for j := range cmds {
			differ := false
			for _, p := range plans[1:] {
				differ = differ || p.commands[j] != plans[0].commands[j]
			}
			if !differ {
				cmds[j] = plans[0].commands[j]
				continue
			}
			parts := make([]string, len(plans))
			for i, p := range plans {
				parts[i] = ms[i].Name + ": " + p.commands[j]
			}
			cmds[j] = strings.Join(parts, "; ")
		}
		return
	}
	k := 0
	for i, p := range plans {
		for _, c := range p.commands {
			cmds[k] = ms[i].Name + ": " + c
			k++
		}
	}
}

// sentBy keeps the planned commands the back end that answered was sent:
// the runtime API's, or the stats page fallback's.
func sentBy(p planned, src haproxy.Source) []string {
	out := []string{}
	for _, c := range p.commands {
		if slices.Contains(p.fallback, c) == (src == haproxy.SourceStats) {
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
