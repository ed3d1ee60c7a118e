package mcpserver

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcpfleet/mcpfleet/proxymcp/internal/validate"
	"github.com/mcpfleet/mcpfleet/shared/apps"
	"github.com/mcpfleet/mcpfleet/shared/envconfig"
	"github.com/mcpfleet/mcpfleet/shared/toolcall"
)

// Every tool's arguments are a struct that embeds fleetArg: the instance
// argument a fleet's tools take. A fleet of one does not show it (its
// schema drops it), so a call naming an instance there is refused as an
// unknown argument.
type fleetArg struct {
	Instance instanceList `json:"instance,omitempty"`
}

func (a fleetArg) instances() []string { return a.Instance }

// selector is every tool's argument struct: the instances it names.
type selector interface{ instances() []string }

// instanceList is one instance name or a list of them.
type instanceList []string

// JSONSchema is the argument's shape; the names it accepts are the
// fleet's, set when the tools are registered (instanceSchema).
func (instanceList) JSONSchema() *jsonschema.Schema {
	return &jsonschema.Schema{OneOf: []*jsonschema.Schema{
		{Type: "string"},
		{Type: "array", Items: &jsonschema.Schema{Type: "string"}, MinItems: jsonschema.Ptr(1), UniqueItems: true},
	}}
}

func (l *instanceList) UnmarshalJSON(b []byte) error {
	var one string
	if err := json.Unmarshal(b, &one); err == nil {
		*l = instanceList{one}
		return nil
	}
	var many []string
	if err := json.Unmarshal(b, &many); err != nil {
		return &validate.Error{Arg: "instance", Rule: "must be an instance name, a list of names or \"all\""}
	}
	*l = many
	return nil
}

// instanceSchema is the instance argument of a fleet of names.
func instanceSchema(names []string) *jsonschema.Schema {
	enum := make([]any, 0, len(names)+1)
	items := make([]any, 0, len(names))
	for _, n := range names {
		enum = append(enum, n)
		items = append(items, n)
	}
	enum = append(enum, envconfig.All)
	return &jsonschema.Schema{
		Description: "HAProxy instance(s) to use: one name, a list of names, or \"all\" (the default). Instances: " + strings.Join(names, ", ") + ".",
		OneOf: []*jsonschema.Schema{
			{Type: "string", Enum: enum},
			{Type: "array", Items: &jsonschema.Schema{Type: "string", Enum: items}, MinItems: jsonschema.Ptr(1), UniqueItems: true},
		},
	}
}

// noArgs is the argument struct of a tool without arguments of its own.
type noArgs struct{ fleetArg }

// spec is one tool as one instance runs it, on its decoded arguments.
type spec struct {
	name  string
	eff   effect
	class toolcall.Class
	read  func(ctx context.Context, in any) (result, error)
	plan  func(in any) (planned, error)
}

// declare is a tool's declaration for the pipeline; most is the widest
// class a call of it can have, so destructiveHint is true for every tool
// one of whose calls can be destructive (a drain of the last server), not
// only for the tools whose every call is.
func (t *tools) declare(name, title, desc string, eff effect, most toolcall.Class) toolcall.Tool {
	t.names = append(t.names, name)
	d := toolcall.Tool{Name: name, Description: desc, Effect: toolcall.Effect{
		Title: title, Most: most, Destructive: eff == destructive, Idempotent: eff == read || eff == idempotent}}
	if v := t.opts.Views; v != nil {
		switch {
		case name == "list_servers":
			d.Options = v.Tool(ViewBackendPool)
		case most != toolcall.Read:
			d.Options = v.Tool(apps.ChangePreviewView)
		}
	}
	if t.ft == nil {
		d.Schema = func(s *jsonschema.Schema) { delete(s.Properties, "instance") }
		return d
	}
	names := t.ft.f.Names()
	d.Description += " Fleet: runs on every instance chosen by `instance` concurrently; results carry `instance`."
	d.Schema = func(s *jsonschema.Schema) { s.Properties["instance"] = instanceSchema(names) }
	return d
}

// addRead adds a tool that changes nothing: the pipeline validates and
// decodes its arguments, never audits it.
func addRead[T selector](t *tools, name, title, desc string, h func(ctx context.Context, in T) (result, error)) {
	d := t.declare(name, title, desc, read, toolcall.Read)
	t.specs = append(t.specs, spec{name: name, eff: read, read: func(ctx context.Context, in any) (result, error) { return h(ctx, in.(T)) }})
	switch {
	case t.calls == nil:
	case t.ft != nil:
		toolcall.AddRead(t.calls, d, func(ctx context.Context, in T) (*mcp.CallToolResult, error) {
			return t.ft.read(ctx, name, in.instances(), in), nil
		})
	default:
		toolcall.AddRead(t.calls, d, func(ctx context.Context, in T) (*mcp.CallToolResult, error) {
			res, err := h(ctx, in)
			return shape(ctx, name, read, res, err), nil
		})
	}
}

// addChange adds a tool that can change HAProxy: class is the widest risk
// class a call of it can have (the approval policy's unit; a call's own
// class may be lower, see planned.effect), eff its annotations. plan must
// not talk to HAProxy (planned.effect does, when called).
// PROXY_READ_ONLY leaves it out entirely.
func addChange[T selector](t *tools, name, title, desc string, eff effect, class toolcall.Class, plan func(in T) (planned, error)) {
	if eff == read || class == toolcall.Read {
		panic("mcpserver: " + name + " is registered as a change but declared read")
	}
	if t.opts.ReadOnly {
		return
	}
	t.classes[name] = class
	plan = persisting(t, name, plan) // PROXY_PERSIST: the file rewrite after an applied change
	d := t.declare(name, title, desc, eff, class)
	t.specs = append(t.specs, spec{name: name, eff: eff, class: class, plan: func(in any) (planned, error) { return plan(in.(T)) }})
	switch {
	case t.calls == nil:
	case t.ft != nil:
		toolcall.AddChange(t.calls, d, func(ctx context.Context, in T) (toolcall.Plan, error) {
			return t.ft.plan(ctx, name, eff, class, in.instances(), in)
		})
	default:
		toolcall.AddChange(t.calls, d, func(ctx context.Context, in T) (toolcall.Plan, error) {
			p, err := plan(in)
			if err != nil {
				return toolcall.Plan{}, classify(name, true, err)
			}
			c, p := t.settle(ctx, p, class)
			pl := toolcall.Plan{Class: c, Target: t.hp.Target(), Commands: p.commands,
				Run: func(ctx context.Context) (*mcp.CallToolResult, error) {
					res, err := p.run(ctx)
					return markFailed(shape(ctx, name, eff, res, err), res), nil
				}}
			if p.describe != nil {
				pl.Describe = func(ctx context.Context) (toolcall.Preview, error) {
					pv, err := p.describe(ctx)
					if err != nil {
						return pv, classify(name, false, err)
					}
					return pv, nil
				}
			}
			return pl, nil
		})
	}
}

// callArgs are the arguments of the call running in ctx other than the
// instance, for the calls a fleet suggests (complete, undo).
func callArgs(ctx context.Context) map[string]any {
	req, _ := toolcall.CallRequest(ctx)
	m, _ := req.Params.Arguments.(map[string]any)
	out := make(map[string]any, len(m))
	for k, v := range m {
		if k != "instance" {
			out[k] = v
		}
	}
	return out
}

// checkAll returns the first error of errs.
func checkAll(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}
