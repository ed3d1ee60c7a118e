// Package argschematest generates wrongly typed tool calls from a tool's own
// input schema, for tests that prove every argument of every tool is
// checked before its handler runs.
package argschematest

import (
	"encoding/json"
	"maps"
	"slices"

	"github.com/mark3labs/mcp-go/mcp"
)

// Case is one call of a tool with exactly one argument wrongly typed.
type Case struct {
	Tool  string
	Arg   string         // the argument under test
	Value any            // its wrong value
	Args  map[string]any // the valid arguments with Arg set to Value
}

// sample is a value of one JSON type.
type sample struct {
	typ string // JSON Schema type of the value
	v   any
}

// samples are the values tried: every JSON type, several shapes each, and
// strings that look like the other types (the classic loose coercions).
var samples = []sample{
	{"string", "8"}, {"string", "8080"}, {"string", "true"}, {"string", "[]"}, {"string", "{}"},
	{"integer", 7}, {"integer", 0},
	{"number", 1.5},
	{"boolean", true}, {"boolean", false},
	{"null", nil},
	{"array", []any{"a"}}, {"array", []any{1}},
	{"object", map[string]any{"a": "b"}}, {"object", map[string]any{}},
}

// Cases returns, for every property of tool's input schema whose type the
// schema states, one call per sample value of a type the property does not
// allow, with the other arguments taken from valid. An integer or number
// property with a maximum (minimum) is also sent 1e300 (-1e300). Properties
// whose schema allows any type are skipped. The result is in a fixed order.
func Cases(tool mcp.Tool, valid map[string]any) []Case {
	props := properties(tool)
	names := slices.Sorted(maps.Keys(props))
	var out []Case
	for _, name := range names {
		schema, _ := props[name].(map[string]any)
		allowed := types(schema)
		if len(allowed) == 0 {
			continue
		}
		var bad []any
		for _, s := range samples {
			if !allows(allowed, s) {
				bad = append(bad, s.v)
			}
		}
		if allowed["integer"] || allowed["number"] {
			if _, ok := bound(schema, "maximum"); ok {
				bad = append(bad, 1e300)
			}
			if _, ok := bound(schema, "minimum"); ok {
				bad = append(bad, -1e300)
			}
		}
		for _, v := range bad {
			args := maps.Clone(valid)
			if args == nil {
				args = map[string]any{}
			}
			args[name] = v
			out = append(out, Case{Tool: tool.Name, Arg: name, Value: v, Args: args})
		}
	}
	return out
}

func allows(allowed map[string]bool, s sample) bool {
	switch s.typ {
	case "integer":
		return allowed["integer"] || allowed["number"]
	default:
		return allowed[s.typ]
	}
}

// properties returns the top-level properties of tool's input schema.
func properties(tool mcp.Tool) map[string]any {
	if len(tool.RawInputSchema) > 0 {
		var s struct {
			Properties map[string]any `json:"properties"`
		}
		if err := json.Unmarshal(tool.RawInputSchema, &s); err == nil {
			return s.Properties
		}
		return nil
	}
	// Round-trip so that typed property schemas become generic JSON.
	b, err := json.Marshal(tool.InputSchema.Properties)
	if err != nil {
		return nil
	}
	var p map[string]any
	_ = json.Unmarshal(b, &p)
	return p
}

// types returns the JSON types schema allows: its "type" (a name or a
// list), or the union over its oneOf/anyOf branches. Empty means any type
// (or a form this generator does not understand).
func types(schema map[string]any) map[string]bool {
	out := map[string]bool{}
	switch t := schema["type"].(type) {
	case string:
		out[t] = true
		return out
	case []any:
		for _, x := range t {
			if s, ok := x.(string); ok {
				out[s] = true
			}
		}
		return out
	}
	for _, key := range []string{"oneOf", "anyOf"} {
		branches, _ := schema[key].([]any)
		for _, b := range branches {
			bm, _ := b.(map[string]any)
			bt := types(bm)
			if len(bt) == 0 {
				return nil // one branch takes anything
			}
			for k := range bt {
				out[k] = true
			}
		}
	}
	return out
}

func bound(schema map[string]any, key string) (float64, bool) {
	f, ok := schema[key].(float64)
	return f, ok
}
