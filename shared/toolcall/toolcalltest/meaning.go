// Package toolcalltest compares tool declarations by JSON meaning, for
// tests that prove a tool declared another way (a typed input struct)
// shows clients exactly what its golden file recorded.
package toolcalltest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/big"
	"reflect"
	"slices"
	"sort"
	"strings"
)

// SchemaDiff compares two JSON schemas by meaning and returns one line per
// difference, naming where it is (empty: the same). Key order and these
// equivalent spellings are ignored:
//   - "required": [] and no "required"; the order of "required";
//   - "properties": {} and no "properties";
//   - "additionalProperties" false and {"not": {}}; true, {} and none;
//   - "type": ["string"] and "type": "string"; the order of a type list;
//   - numbers by value (1 and 1.0).
//
// Everything else is meaning: descriptions, enum and oneOf order (a
// client shows them in that order; error texts list them so), bounds,
// patterns, defaults.
func SchemaDiff(want, got []byte) []string {
	w, err := decode(want)
	if err != nil {
		return []string{"want: " + err.Error()}
	}
	g, err := decode(got)
	if err != nil {
		return []string{"got: " + err.Error()}
	}
	var out []string
	diff("", schema(w), schema(g), &out)
	return out
}

// ToolsDiff compares two tool lists (a tools/list result, a golden
// surface file with a "tools" member, or an array of tools) tool by tool:
// name, title, description, annotations, execution and _meta as plain
// JSON; inputSchema and outputSchema by SchemaDiff's rules.
func ToolsDiff(want, got []byte) []string {
	w, err := tools(want)
	if err != nil {
		return []string{"want: " + err.Error()}
	}
	g, err := tools(got)
	if err != nil {
		return []string{"got: " + err.Error()}
	}
	var out []string
	for _, name := range unionKeys(w, g) {
		wt, inW := w[name]
		gt, inG := g[name]
		switch {
		case !inW:
			out = append(out, fmt.Sprintf("tool %s: not wanted, got it", name))
		case !inG:
			out = append(out, fmt.Sprintf("tool %s: wanted, missing", name))
		default:
			diff("tool "+name, tool(wt), tool(gt), &out)
		}
	}
	return out
}

func decode(b []byte) (any, error) {
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return nil, err
	}
	return v, nil
}

func tools(b []byte) (map[string]map[string]any, error) {
	v, err := decode(b)
	if err != nil {
		return nil, err
	}
	if m, ok := v.(map[string]any); ok {
		v = m["tools"]
	}
	list, ok := v.([]any)
	if !ok {
		return nil, fmt.Errorf("no list of tools")
	}
	out := map[string]map[string]any{}
	for _, t := range list {
		m, ok := t.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("a tool is not an object")
		}
		name, _ := m["name"].(string)
		out[name] = m
	}
	return out, nil
}

func tool(t map[string]any) map[string]any {
	out := map[string]any{}
	for k, v := range t {
		switch k {
		case "inputSchema", "outputSchema":
			out[k] = schema(v)
		default:
			out[k] = number(v)
		}
	}
	return out
}

// schema normalizes a schema value: keywords are read as keywords, and
// property names (under properties, $defs...) as names, never keywords (a
// property may be called "type" or "required").
func schema(v any) any {
	switch t := v.(type) {
	case bool:
		if t {
			return map[string]any{}
		}
		return false
	case map[string]any:
		if len(t) == 1 {
			if not, ok := t["not"].(map[string]any); ok && len(not) == 0 {
				return false // {"not": {}} is false
			}
		}
		out := map[string]any{}
		for k, x := range t {
			switch k {
			case "properties", "patternProperties", "$defs", "definitions", "dependentSchemas":
				m, ok := x.(map[string]any)
				if !ok {
					out[k] = number(x)
					continue
				}
				if len(m) == 0 {
					continue
				}
				n := map[string]any{}
				for name, s := range m {
					n[name] = schema(s)
				}
				out[k] = n
			case "items", "additionalProperties", "additionalItems", "not", "contains", "propertyNames",
				"if", "then", "else", "unevaluatedItems", "unevaluatedProperties":
				if _, isList := x.([]any); isList {
					out[k] = number(x)
					continue
				}
				s := schema(x)
				if m, ok := s.(map[string]any); ok && len(m) == 0 && k == "additionalProperties" {
					continue // true admits anything, as no keyword does
				}
				out[k] = s
			case "oneOf", "anyOf", "allOf", "prefixItems":
				list, ok := x.([]any)
				if !ok {
					out[k] = number(x)
					continue
				}
				n := make([]any, len(list))
				for i, s := range list {
					n[i] = schema(s)
				}
				out[k] = n
			case "required":
				list, ok := x.([]any)
				if !ok {
					out[k] = number(x)
					continue
				}
				if len(list) == 0 {
					continue
				}
				out[k] = sortedStrings(list)
			case "type":
				if list, ok := x.([]any); ok {
					if len(list) == 1 {
						out[k] = list[0]
						continue
					}
					out[k] = sortedStrings(list)
					continue
				}
				out[k] = x
			default:
				out[k] = number(x)
			}
		}
		return out
	}
	return number(v)
}

func sortedStrings(list []any) []any {
	s := make([]string, 0, len(list))
	for _, x := range list {
		s = append(s, fmt.Sprint(x))
	}
	sort.Strings(s)
	out := make([]any, len(s))
	for i, x := range s {
		out[i] = x
	}
	return out
}

// number replaces each json.Number by its exact value, so 1 and 1.0 are
// equal.
func number(v any) any {
	switch t := v.(type) {
	case json.Number:
		r, ok := new(big.Rat).SetString(string(t))
		if !ok {
			return string(t)
		}
		return r.RatString()
	case []any:
		out := make([]any, len(t))
		for i, x := range t {
			out[i] = number(x)
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(t))
		for k, x := range t {
			out[k] = number(x)
		}
		return out
	}
	return v
}

func diff(path string, want, got any, out *[]string) {
	wm, wok := want.(map[string]any)
	gm, gok := got.(map[string]any)
	if wok && gok {
		for _, k := range unionKeys(wm, gm) {
			wv, inW := wm[k]
			gv, inG := gm[k]
			p := join(path, k)
			switch {
			case !inW:
				*out = append(*out, fmt.Sprintf("%s: not wanted, got %s", p, show(gv)))
			case !inG:
				*out = append(*out, fmt.Sprintf("%s: wanted %s, missing", p, show(wv)))
			default:
				diff(p, wv, gv, out)
			}
		}
		return
	}
	wl, wok := want.([]any)
	gl, gok := got.([]any)
	if wok && gok && len(wl) == len(gl) {
		for i := range wl {
			diff(fmt.Sprintf("%s[%d]", path, i), wl[i], gl[i], out)
		}
		return
	}
	if !reflect.DeepEqual(want, got) {
		*out = append(*out, fmt.Sprintf("%s: wanted %s, got %s", cmpOr(path, "(root)"), show(want), show(got)))
	}
}

func unionKeys[V any](a, b map[string]V) []string {
	keys := make([]string, 0, len(a)+len(b))
	for k := range a {
		keys = append(keys, k)
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	return keys
}

func join(path, k string) string {
	if path == "" {
		return k
	}
	if strings.HasPrefix(path, "tool ") && !strings.Contains(path, ":") {
		return path + ": " + k
	}
	return path + "." + k
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

func show(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	if len(b) > 200 {
		return string(b[:200]) + "…"
	}
	return string(b)
}
