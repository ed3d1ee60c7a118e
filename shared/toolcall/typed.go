package toolcall

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcpfleet/mcpfleet/shared/argschema"
	"github.com/mcpfleet/mcpfleet/shared/audit"
	"github.com/mcpfleet/mcpfleet/shared/mcperr"
)

// Tool declares a tool whose arguments are a Go struct (see AddRead and
// AddChange). Its input schema is derived from the struct once, when the
// tool is added, compiled and bound to it: each call is validated against
// that compiled schema and decoded into the struct once.
type Tool struct {
	Name        string
	Description string
	Effect      Effect
	// Schema, when set, adjusts the derived input schema once, before it is
	// compiled, with what only the running server knows: a configured
	// limit, the member names a cluster or instance argument accepts, a
	// configured default. Struct tags cannot say those.
	Schema func(s *jsonschema.Schema)
	// Options are further mcp-go tool options (an output schema, icons).
	// Title and annotations come from Effect.
	Options []mcp.ToolOption
}

// Handler answers a read tool's call from its decoded arguments.
type Handler[T any] func(ctx context.Context, in T) (*mcp.CallToolResult, error)

// PlannerOf plans a change tool's call from its decoded arguments, as a
// Planner does from a request.
type PlannerOf[T any] func(ctx context.Context, in T) (Plan, error)

// AddRead adds a tool that changes nothing (d.Effect.Most is Read). A call
// whose arguments do not fit the schema gets argschema's one-line error
// and h is not called. It panics when the declaration is wrong (the type,
// its tags, the Effect): a bug that every test registering the tool shows.
func AddRead[T any](p *Pipeline, d Tool, h Handler[T], opts ...ToolOption) {
	if d.Effect.Most != Read {
		panic(fmt.Sprintf("toolcall.AddRead(%s): Effect.Most is %s; a tool that can change things is added with AddChange", d.Name, d.Effect.Most))
	}
	b := mustBind[T](p, d)
	p.add(b.tool, func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		in, err := b.decode(req)
		if err != nil {
			return mcperr.ToolResult(err), nil
		}
		return h(withRequest(ctx, req), in)
	}, toolOpts(opts))
}

// AddChange adds a tool whose calls can change a back end (d.Effect.Most
// is Change or Destructive), through the whole pipeline: validation,
// classification by plan, dry run, approval, audit. plan receives the
// decoded arguments (without the pipeline's dryRun and confirm); the Plan
// it returns closes over them. An invalid call is refused with its audit
// record. It panics when the declaration is wrong, as AddRead does.
func AddChange[T any](p *Pipeline, d Tool, plan PlannerOf[T], opts ...ToolOption) {
	if d.Effect.Most == Read {
		panic(fmt.Sprintf("toolcall.AddChange(%s): Effect.Most is read; a tool that changes nothing is added with AddRead", d.Name))
	}
	b := mustBind[T](p, d)
	tool, most := b.tool, d.Effect.Most
	p.add(tool, func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		in, err := b.decode(req)
		if err != nil {
			// Refused before planning, as the pipeline refuses an invalid
			// call of an untyped change tool: an audit record says so.
			start := p.now()
			rec := p.record(ctx, tool.Name, most, req)
			rec.Approval = audit.Refused
			return p.outcome(ctx, rec, start, nil, err)
		}
		// No schema for call: the bound one has validated this very call.
		return p.call(ctx, tool, most, func(ctx context.Context, callReq mcp.CallToolRequest) (Plan, error) {
			return plan(withRequest(ctx, callReq), in)
		}, req, nil)
	}, toolOpts(opts))
}

// bound is a tool as clients see it, with its compiled schema and the
// decoder of its argument type.
type bound[T any] struct {
	tool   mcp.Tool
	schema *argschema.Compiled
	dec    decoder
}

func mustBind[T any](p *Pipeline, d Tool) *bound[T] {
	b, err := bind[T](p, d)
	if err != nil {
		panic(fmt.Sprintf("toolcall: tool %s: %v", d.Name, err))
	}
	return b
}

func bind[T any](p *Pipeline, d Tool) (*bound[T], error) {
	t := reflect.TypeFor[T]()
	s, err := inputSchema(t)
	if err != nil {
		return nil, err
	}
	if d.Effect.Most != Read {
		for _, own := range []string{"dryRun", "confirm"} {
			if _, clash := s.Properties[own]; clash {
				return nil, fmt.Errorf("argument %q is the pipeline's own (every change tool has it)", own)
			}
		}
	}
	if d.Schema != nil {
		d.Schema(s)
	}
	raw, err := json.Marshal(s)
	if err != nil {
		return nil, fmt.Errorf("encode input schema: %w", err)
	}
	if raw, err = withProperties(raw); err != nil {
		return nil, err
	}
	tool := mcp.NewToolWithRawSchema(d.Name, d.Description, raw)
	for _, o := range d.Options {
		o(&tool)
	}
	if err := d.Effect.annotate(&tool); err != nil {
		return nil, err
	}
	if d.Effect.Most != Read {
		tool = p.augment(tool, d.Effect.Most)
	}
	// The schema compiled is the one clients see, dryRun and confirm
	// included: what the pipeline validated before is validated now.
	c, err := argschema.Compile(tool)
	if err != nil {
		return nil, err
	}
	dec, err := decoderFor(t)
	if err != nil {
		return nil, err
	}
	return &bound[T]{tool: tool, schema: c, dec: dec}, nil
}

// decode validates a call's arguments against the bound schema and
// decodes them into a T.
func (b *bound[T]) decode(req mcp.CallToolRequest) (T, error) {
	var in T
	var args any = req.Params.RawArguments
	if len(req.Params.RawArguments) == 0 {
		args = req.Params.Arguments // an in-process call carries no wire bytes
	}
	inst, err := b.schema.Parse(args)
	if err != nil {
		return in, err
	}
	if err := b.dec(reflect.ValueOf(&in).Elem(), inst); err != nil {
		var re *rangeError
		if errors.As(err, &re) {
			return in, &mcperr.Error{Kind: mcperr.Invalid,
				Op:   fmt.Sprintf("invalid arguments for tool %s: %s", b.tool.Name, re),
				Hint: "nothing was run; call again with the types and values the tool's input schema declares"}
		}
		return in, mcperr.New(mcperr.Internal, "decode the arguments of tool "+b.tool.Name, err,
			"this is a bug in the server: its argument type and schema disagree; report it")
	}
	return in, nil
}

type requestKey struct{}

func withRequest(ctx context.Context, req mcp.CallToolRequest) context.Context {
	return context.WithValue(ctx, requestKey{}, &req)
}

// CallRequest returns the request of the typed tool call running in ctx,
// for what the arguments do not carry: the progress token
// (tasks.NewProgress), the task, the _meta. For a change tool it is the
// request as its planner sees it, without dryRun and confirm.
func CallRequest(ctx context.Context) (mcp.CallToolRequest, bool) {
	r, ok := ctx.Value(requestKey{}).(*mcp.CallToolRequest)
	if !ok {
		return mcp.CallToolRequest{}, false
	}
	return *r, true
}

// withProperties keeps "properties": {} on an input schema without
// arguments: jsonschema-go drops the empty map, and some clients refuse an
// object schema without properties.
func withProperties(raw []byte) ([]byte, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, fmt.Errorf("encode input schema: %w", err)
	}
	if _, ok := m["properties"]; ok {
		return raw, nil
	}
	m["properties"] = json.RawMessage("{}")
	return json.Marshal(m)
}
