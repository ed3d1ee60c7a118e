// Package argschema validates a tool call's arguments against that tool's
// own input schema before its handler runs, and says in one line which
// argument is wrong, what type or value the schema wants, and what was
// given, as a tool error (isError, SEP-1303) the model can act on.
package argschema

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/big"
	"sort"
	"strconv"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
	"golang.org/x/text/language"
	"golang.org/x/text/message"

	"github.com/mcpfleet/mcpfleet/shared/mcperr"
)

// Compiled is one tool's input schema, compiled when the tool is
// registered: a call is checked against it directly, without finding the
// schema first.
type Compiled struct {
	name   string
	schema *jsonschema.Schema
	// emptyOK is whether the schema accepts no arguments ({}): judged once
	// here, since the verdict on {} cannot change from call to call.
	emptyOK bool
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
	schema, err := compile(tool.Name, raw)
	if err != nil {
		return nil, err
	}
	return &Compiled{name: tool.Name, schema: schema, emptyOK: schema.Validate(map[string]any{}) == nil}, nil
}

// Parse validates args (a map, json.RawMessage or nil) and returns them as
// the validator read them (objects as map[string]any, numbers as
// json.Number), so a caller can decode them without parsing again. Its
// errors are Check's, word for word.
func (c *Compiled) Parse(args any) (any, error) {
	if c.emptyOK && isEmpty(args) {
		return map[string]any{}, nil
	}
	return check(c.name, c.schema, args)
}

// isEmpty reports whether args read as {}: missing, null or {} as they come
// off the wire (instance), or an empty map.
func isEmpty(args any) bool {
	switch t := args.(type) {
	case nil:
		return true
	case json.RawMessage:
		raw := bytes.TrimSpace(t)
		return len(raw) == 0 || string(raw) == "null" || string(raw) == "{}"
	case map[string]any:
		return t != nil && len(t) == 0 // a nil map reads as null: not an object
	}
	return false
}

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

func compile(name string, raw []byte) (*jsonschema.Schema, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return nil, fmt.Errorf("decode input schema of %s: %w", name, err)
	}
	url := "mem:///tools/" + name + ".json"
	c := jsonschema.NewCompiler()
	// mcp-go's structured schemas carry no $schema; 2020-12 is MCP's default dialect.
	c.DefaultDraft(jsonschema.Draft2020)
	if err := c.AddResource(url, doc); err != nil {
		return nil, fmt.Errorf("load input schema of %s: %w", name, err)
	}
	s, err := c.Compile(url)
	if err != nil {
		return nil, fmt.Errorf("compile input schema of %s: %w", name, err)
	}
	return s, nil
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
		// A tool without arguments is called with {}: decoding it took a
		// fresh decoder (with its 4 KB buffer) per call for an empty map.
		if string(raw) == "{}" {
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

// Bind returns h behind a check of the call's arguments against tool's
// input schema, compiled here, once: for a tool added to an mcp-go server
// directly, not through the tool-call pipeline (which binds its own). A
// schema that does not compile
// is a bug in the server, and Bind panics when the tool is added rather
// than letting unchecked calls through.
func Bind(tool mcp.Tool, h server.ToolHandlerFunc) server.ToolHandlerFunc {
	c, err := Compile(tool)
	if err != nil {
		panic(fmt.Sprintf("argschema.Bind(%s): %v", tool.Name, err))
	}
	return func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		if _, err := c.Parse(req.Params.Arguments); err != nil {
			return mcperr.ToolResult(err), nil
		}
		return h(ctx, req)
	}
}
