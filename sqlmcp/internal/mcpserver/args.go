package mcpserver

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcpfleet/mcpfleet/shared/mcperr"
)

// args reads a tool's arguments strictly: unknown names and wrong types are
// errors naming the argument, so bad input changes nothing.
type args struct {
	tool string
	m    map[string]any
}

func readArgs(tool string, req mcp.CallToolRequest, accepted ...string) (*args, error) {
	m := req.GetArguments()
	var unknown []string
	for k := range m {
		if !contains(accepted, k) {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		return nil, mcperr.Invalidf("%s: unknown argument %s; accepted: %s", tool, strings.Join(unknown, ", "), strings.Join(accepted, ", "))
	}
	return &args{tool: tool, m: m}, nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// str returns a string argument ("" when absent or null).
func (a *args) str(name string, required bool) (string, error) {
	v, ok := a.m[name]
	if !ok || v == nil {
		if required {
			return "", mcperr.Invalidf("%s: argument %q is required", a.tool, name)
		}
		return "", nil
	}
	s, ok := v.(string)
	if !ok {
		return "", mcperr.Invalidf("%s: argument %q must be a string, got %s", a.tool, name, jsonType(v))
	}
	if required && strings.TrimSpace(s) == "" {
		return "", mcperr.Invalidf("%s: argument %q must not be empty", a.tool, name)
	}
	return s, nil
}

// integer returns an integer argument and whether it was given.
func (a *args) integer(name string) (int, bool, error) {
	v, ok := a.m[name]
	if !ok || v == nil {
		return 0, false, nil
	}
	f, ok := v.(float64)
	if !ok {
		if n, isInt := v.(int); isInt {
			return n, true, nil
		}
		return 0, false, mcperr.Invalidf("%s: argument %q must be an integer, got %s", a.tool, name, jsonType(v))
	}
	if f != math.Trunc(f) || math.Abs(f) > 1e15 {
		return 0, false, mcperr.Invalidf("%s: argument %q must be an integer, got %v", a.tool, name, f)
	}
	return int(f), true, nil
}

// enum returns an upper-cased string argument that must be one of allowed.
func (a *args) enum(name, def string, allowed []string) (string, error) {
	s, err := a.str(name, false)
	if err != nil || s == "" {
		return def, err
	}
	u := strings.ToUpper(strings.TrimSpace(s))
	if !contains(allowed, u) {
		return "", mcperr.Invalidf("%s: argument %q is %q; accepted: %s", a.tool, name, s, strings.Join(allowed, ", "))
	}
	return u, nil
}

func jsonType(v any) string {
	switch v.(type) {
	case string:
		return "a string"
	case float64, int:
		return "a number"
	case bool:
		return "a boolean"
	case []any:
		return "an array"
	case map[string]any:
		return "an object"
	}
	return fmt.Sprintf("%T", v)
}
