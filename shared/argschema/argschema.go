// Package argschema validates a tool call's arguments against that tool's
// own input schema before its handler runs, and says in one line which
// argument is wrong, what type or value the schema wants, and what was
// given, as a tool error (isError, SEP-1303) the model can act on.
package argschema

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"math/big"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"sync"
	"unsafe"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
	"golang.org/x/text/language"
	"golang.org/x/text/message"

	"github.com/mcpfleet/mcpfleet/shared/mcperr"
)

// Validator compiles each tool's input schema once and checks calls
// against it. It is safe for concurrent use.
type Validator struct {
	mu         sync.RWMutex
	cache      map[[32]byte]compiled
	byIdentity map[identity]compiled
}

type compiled struct {
	schema *jsonschema.Schema
	err    error
	keep   [2]any // see schemaFor
}

// New returns an empty Validator.
func New() *Validator {
	return &Validator{cache: map[[32]byte]compiled{}, byIdentity: map[identity]compiled{}}
}

// Check validates args (a map, json.RawMessage or nil) against tool's input
// schema. The error is an mcperr Invalid error naming every wrong argument.
// A schema that does not compile is a server bug and is reported as such,
// rather than letting unchecked arguments through.
func (v *Validator) Check(tool mcp.Tool, args any) error {
	s, err := v.schemaFor(tool)
	if err != nil {
		return mcperr.New(mcperr.Internal, fmt.Sprintf("check the arguments of tool %s", tool.Name), err,
			"this is a bug in the server's tool schema; report it")
	}
	_, err = check(tool.Name, s, args)
	return err
}

// Compiled is one tool's input schema, compiled when the tool is
// registered: a call is checked against it directly, without finding the
// schema first.
type Compiled struct {
	name   string
	schema *jsonschema.Schema
}

// Compile compiles tool's input schema. An error means the schema is
// broken: a bug in the server, to be found at registration, not per call.
func Compile(tool mcp.Tool) (*Compiled, error) {
	raw := tool.RawInputSchema
	if len(raw) == 0 {
		b, err := json.Marshal(tool.InputSchema)
		if err != nil {
			return nil, fmt.Errorf("encode input schema of %s: %w", tool.Name, err)
		}
		raw = b
	}
	c := compile(tool.Name, raw)
	if c.err != nil {
		return nil, c.err
	}
	return &Compiled{name: tool.Name, schema: c.schema}, nil
}

// Parse validates args (a map, json.RawMessage or nil) and returns them as
// the validator read them (objects as map[string]any, numbers as
// json.Number), so a caller can decode them without parsing again. Its
// errors are Check's, word for word.
func (c *Compiled) Parse(args any) (any, error) { return check(c.name, c.schema, args) }

// check validates args against s and returns the instance it validated.
func check(name string, s *jsonschema.Schema, args any) (any, error) {
	inst, err := instance(args)
	if err != nil {
		return nil, mcperr.New(mcperr.Invalid, fmt.Sprintf("read the arguments of tool %s", name), err,
			"send the arguments as one JSON object")
	}
	if err := s.Validate(inst); err != nil {
		verr, ok := err.(*jsonschema.ValidationError)
		if !ok {
			return nil, mcperr.New(mcperr.Invalid, "check the arguments of tool "+name, err, "")
		}
		msgs := dedupe(describe(verr, inst))
		return nil, &mcperr.Error{Kind: mcperr.Invalid,
			Op:   fmt.Sprintf("invalid arguments for tool %s: %s", name, strings.Join(msgs, "; ")),
			Hint: "nothing was run; call again with the types and values the tool's input schema declares"}
	}
	return inst, nil
}

func (v *Validator) schemaFor(tool mcp.Tool) (*jsonschema.Schema, error) {
	// Per call, a registered tool is found by the identity of its schema's
	// storage (no encoding, no hash): encoding the schema on every call
	// was most of the cost of validating a small call.
	id, fast := identityOf(tool)
	if fast {
		v.mu.RLock()
		c, ok := v.byIdentity[id]
		v.mu.RUnlock()
		if ok {
			return c.schema, c.err
		}
	}
	s, err := v.schemaByContent(tool)
	if fast {
		v.mu.Lock()
		// keep holds the map and bytes the identity points at, so their
		// addresses cannot be reused by another schema while cached.
		v.byIdentity[id] = compiled{schema: s, err: err, keep: [2]any{tool.InputSchema.Properties, tool.RawInputSchema}}
		v.mu.Unlock()
	}
	return s, err
}

// identity names a tool's schema by where it is stored: the Properties map
// and Required slice of a structured schema, or the bytes of a raw one. A
// tool is never changed in place once registered (mcp-go replaces a
// re-added tool), so the same storage means the same schema.
type identity struct {
	name  string
	props uintptr
	req   *string
	nreq  int
	raw   *byte
	nraw  int
	typ   string
	// closed is additionalProperties when it is a plain bool (what
	// mcp.WithSchemaAdditionalProperties sets): 0 unset, 1 false, 2 true.
	closed int8
}

func identityOf(tool mcp.Tool) (identity, bool) {
	id := identity{name: tool.Name, req: unsafe.SliceData(tool.InputSchema.Required), nreq: len(tool.InputSchema.Required),
		raw: unsafe.SliceData(tool.RawInputSchema), nraw: len(tool.RawInputSchema), typ: tool.InputSchema.Type}
	if tool.InputSchema.Properties != nil {
		id.props = reflect.ValueOf(tool.InputSchema.Properties).Pointer()
	}
	// A bool additionalProperties is part of the identity; other
	// structured fields (definitions, a schema for additionalProperties)
	// have no cheap identity: such schemas take the content path.
	simple := tool.InputSchema.Defs == nil
	switch ap := tool.InputSchema.AdditionalProperties.(type) {
	case nil:
	case bool:
		id.closed = 1
		if ap {
			id.closed = 2
		}
	default:
		simple = false
	}
	return id, (id.props != 0 || id.raw != nil) && (id.raw != nil || simple)
}

func (v *Validator) schemaByContent(tool mcp.Tool) (*jsonschema.Schema, error) {
	raw := tool.RawInputSchema
	if len(raw) == 0 {
		b, err := json.Marshal(tool.InputSchema)
		if err != nil {
			return nil, fmt.Errorf("encode input schema: %w", err)
		}
		raw = b
	}
	key := sha256.Sum256(append([]byte(tool.Name+"\x00"), raw...))
	v.mu.RLock()
	c, ok := v.cache[key]
	v.mu.RUnlock()
	if ok {
		return c.schema, c.err
	}
	c = compile(tool.Name, raw)
	v.mu.Lock()
	v.cache[key] = c
	v.mu.Unlock()
	return c.schema, c.err
}

func compile(name string, raw []byte) compiled {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return compiled{err: fmt.Errorf("decode input schema of %s: %w", name, err)}
	}
	url := "mem:///tools/" + name + ".json"
	c := jsonschema.NewCompiler()
	// mcp-go's structured schemas carry no $schema; 2020-12 is MCP's default dialect.
	c.DefaultDraft(jsonschema.Draft2020)
	if err := c.AddResource(url, doc); err != nil {
		return compiled{err: fmt.Errorf("load input schema of %s: %w", name, err)}
	}
	s, err := c.Compile(url)
	if err != nil {
		return compiled{err: fmt.Errorf("compile input schema of %s: %w", name, err)}
	}
	return compiled{schema: s}
}

// instance turns the arguments into the loosely typed form the validator
// wants (json.Number for numbers); missing arguments are an empty object.
func instance(args any) (any, error) {
	var raw []byte
	switch t := args.(type) {
	case nil:
		return map[string]any{}, nil
	case json.RawMessage:
		raw = bytes.TrimSpace(t)
		// Omitted and null arguments both mean "no arguments".
		if len(raw) == 0 || string(raw) == "null" {
			return map[string]any{}, nil
		}
	default:
		b, err := json.Marshal(t)
		if err != nil {
			return nil, err
		}
		raw = b
	}
	return jsonschema.UnmarshalJSON(bytes.NewReader(raw))
}

var printer = message.NewPrinter(language.English)

// describe renders the leaves of a validation error. A failed oneOf/anyOf
// becomes one message listing the alternatives, so a value that fits none
// is told every shape it could take.
func describe(e *jsonschema.ValidationError, inst any) []string {
	switch k := e.ErrorKind.(type) {
	case *kind.OneOf, *kind.AnyOf:
		if o, ok := k.(*kind.OneOf); ok && len(o.Subschemas) > 1 {
			return []string{fmt.Sprintf("%s matches more than one allowed form, got %s", where(e.InstanceLocation), shown(at(inst, e.InstanceLocation)))}
		}
		var alts []string
		for _, c := range e.Causes {
			alts = append(alts, strings.Join(wants(c), " and "))
		}
		return []string{fmt.Sprintf("%s must be %s, got %s", where(e.InstanceLocation), strings.Join(alts, ", or "), shown(at(inst, e.InstanceLocation)))}
	}
	if len(e.Causes) == 0 {
		return []string{leaf(e, inst)}
	}
	var out []string
	for _, c := range e.Causes {
		out = append(out, describe(c, inst)...)
	}
	return out
}

// wants says what a failed branch of oneOf/anyOf required.
func wants(e *jsonschema.ValidationError) []string {
	if len(e.Causes) == 0 {
		switch k := e.ErrorKind.(type) {
		case *kind.Type:
			return []string{article(k.Want)}
		case *kind.Pattern:
			return []string{"a string matching " + k.Want}
		case *kind.Enum:
			var want []string
			for _, w := range k.Want {
				want = append(want, shownShort(w))
			}
			return []string{"one of " + strings.Join(want, ", ")}
		default:
			return []string{"a value where " + k.LocalizedString(printer)}
		}
	}
	var out []string
	for _, c := range e.Causes {
		out = append(out, wants(c)...)
	}
	return out
}

func leaf(e *jsonschema.ValidationError, inst any) string {
	got := at(inst, e.InstanceLocation)
	switch k := e.ErrorKind.(type) {
	case *kind.Type:
		return fmt.Sprintf("%s must be %s, got %s", where(e.InstanceLocation), article(k.Want), shown(got))
	case *kind.Required:
		names := make([]string, len(k.Missing))
		for i, m := range k.Missing {
			names[i] = strconv.Quote(m)
		}
		sort.Strings(names)
		if len(e.InstanceLocation) == 0 {
			return "missing required argument " + strings.Join(names, ", ")
		}
		return fmt.Sprintf("%s is missing required field %s", where(e.InstanceLocation), strings.Join(names, ", "))
	case *kind.AdditionalProperties:
		names := make([]string, len(k.Properties))
		for i, m := range k.Properties {
			names[i] = strconv.Quote(m)
		}
		sort.Strings(names)
		if len(e.InstanceLocation) == 0 {
			return "unknown argument " + strings.Join(names, ", ") + " (not in the tool's input schema)"
		}
		return fmt.Sprintf("%s has unknown field %s", where(e.InstanceLocation), strings.Join(names, ", "))
	case *kind.Enum:
		var want []string
		for _, w := range k.Want {
			want = append(want, shownShort(w))
		}
		return fmt.Sprintf("%s must be one of %s, got %s", where(e.InstanceLocation), strings.Join(want, ", "), shown(got))
	case *kind.FalseSchema:
		return where(e.InstanceLocation) + " is not allowed"
	case *kind.Minimum:
		return fmt.Sprintf("%s must be at least %s, got %s", where(e.InstanceLocation), ratText(k.Want), shown(got))
	case *kind.Maximum:
		return fmt.Sprintf("%s must be at most %s, got %s", where(e.InstanceLocation), ratText(k.Want), shown(got))
	case *kind.ExclusiveMinimum:
		return fmt.Sprintf("%s must be greater than %s, got %s", where(e.InstanceLocation), ratText(k.Want), shown(got))
	case *kind.ExclusiveMaximum:
		return fmt.Sprintf("%s must be less than %s, got %s", where(e.InstanceLocation), ratText(k.Want), shown(got))
	case *kind.MinLength:
		return fmt.Sprintf("%s must be at least %d characters long, got %s", where(e.InstanceLocation), k.Want, shown(got))
	case *kind.MaxLength:
		return fmt.Sprintf("%s must be at most %d characters long, got %d characters", where(e.InstanceLocation), k.Want, k.Got)
	case *kind.Pattern:
		return fmt.Sprintf("%s must match %s, got %s", where(e.InstanceLocation), k.Want, shown(got))
	default:
		return fmt.Sprintf("%s: %s, got %s", where(e.InstanceLocation), k.LocalizedString(printer), shown(got))
	}
}

// where names an argument: "argument \"port\"" or "argument \"servers[2].name\"".
func where(loc []string) string {
	if len(loc) == 0 {
		return "the arguments"
	}
	var b strings.Builder
	for i, s := range loc {
		if _, err := strconv.Atoi(s); err == nil && i > 0 {
			b.WriteString("[" + s + "]")
			continue
		}
		if i > 0 {
			b.WriteByte('.')
		}
		b.WriteString(s)
	}
	return "argument " + strconv.Quote(b.String())
}

func article(types []string) string {
	out := make([]string, len(types))
	for i, t := range types {
		switch t {
		case "integer", "object", "array":
			out[i] = "an " + t
		case "null":
			out[i] = "null"
		default:
			out[i] = "a " + t
		}
	}
	return strings.Join(out, " or ")
}

// at returns the value at loc in inst.
func at(inst any, loc []string) any {
	v := inst
	for _, s := range loc {
		switch t := v.(type) {
		case map[string]any:
			v = t[s]
		case []any:
			i, err := strconv.Atoi(s)
			if err != nil || i < 0 || i >= len(t) {
				return nil
			}
			v = t[i]
		default:
			return nil
		}
	}
	return v
}

// shown says what was given: its JSON type and (shortened) value.
func shown(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "the boolean " + shownShort(v)
	case json.Number, float64, int:
		return "the number " + shownShort(v)
	case string:
		return "the string " + shownShort(v)
	case []any:
		return "an array " + shownShort(v)
	case map[string]any:
		return "an object " + shownShort(v)
	}
	return shownShort(v)
}

const maxShown = 60

func shownShort(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	s := string(b)
	if len(s) > maxShown {
		// Cut on a rune boundary.
		r := []rune(s)
		if len(r) > maxShown {
			s = string(r[:maxShown]) + "…"
		}
	}
	return s
}

func ratText(r *big.Rat) string {
	if r.IsInt() {
		return r.Num().String()
	}
	f, _ := r.Float64()
	return strconv.FormatFloat(f, 'g', -1, 64)
}

func dedupe(msgs []string) []string {
	seen := map[string]bool{}
	out := msgs[:0]
	for _, m := range msgs {
		if !seen[m] {
			seen[m] = true
			out = append(out, m)
		}
	}
	return out
}

// checkedKey marks a context whose call's arguments were already validated.
type checkedKey struct{}

// Checked reports whether the arguments of the call in ctx were validated
// by Middleware.
func Checked(ctx context.Context) bool { return ctx.Value(checkedKey{}) != nil }

// MarkChecked returns ctx recording that the call's arguments were validated.
func MarkChecked(ctx context.Context) context.Context {
	return context.WithValue(ctx, checkedKey{}, true)
}

// Middleware validates every call against the schema of the tool lookup
// returns for its name, answering an isError result for invalid arguments
// before the handler runs. Tools lookup does not know are passed through
// (mcp-go answers unknown tools itself).
func Middleware(v *Validator, lookup func(name string) (mcp.Tool, bool)) server.ToolHandlerMiddleware {
	return func(next server.ToolHandlerFunc) server.ToolHandlerFunc {
		return func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			tool, ok := lookup(req.Params.Name)
			if !ok {
				return next(ctx, req)
			}
			if err := v.Check(tool, req.Params.Arguments); err != nil {
				return mcperr.ToolResult(err), nil
			}
			return next(MarkChecked(ctx), req)
		}
	}
}
