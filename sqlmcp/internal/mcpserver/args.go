package mcpserver

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcpfleet/mcpfleet/shared/mcperr"

	"github.com/mcpfleet/mcpfleet/sqlmcp/internal/engine"
)

// args reads a tool's arguments strictly: unknown names and wrong types are
// errors naming the argument, so bad input changes nothing. Readers return
// zero values after the first problem, which err keeps, so a handler reads
// all its arguments and then checks once.
type args struct {
	tool string
	m    map[string]any
	err  error
}

func readArgs(tool string, req mcp.CallToolRequest, accepted ...string) *args {
	a := &args{tool: tool, m: req.GetArguments()}
	var unknown []string
	for k := range a.m {
		if !contains(accepted, k) {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		a.err = mcperr.Invalidf("%s: unknown argument %s; accepted: %s", tool, strings.Join(unknown, ", "), strings.Join(accepted, ", "))
	}
	return a
}

// fail records the first problem.
func (a *args) fail(err error) {
	if a.err == nil {
		a.err = err
	}
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
func (a *args) str(name string, required bool) string {
	v, ok := a.m[name]
	if !ok || v == nil {
		if required {
			a.fail(mcperr.Invalidf("%s: argument %q is required", a.tool, name))
		}
		return ""
	}
	s, ok := v.(string)
	if !ok {
		a.fail(mcperr.Invalidf("%s: argument %q must be a string, got %s", a.tool, name, jsonType(v)))
		return ""
	}
	if required && strings.TrimSpace(s) == "" {
		a.fail(mcperr.Invalidf("%s: argument %q must not be empty", a.tool, name))
		return ""
	}
	return s
}

// name returns a catalog, schema or table argument: one identifier, taken
// verbatim (never split on dots), that must be a valid name (no control
// characters) before any request is made. "" when absent.
func (a *args) name(arg string, required bool) string {
	s := a.str(arg, required)
	if s == "" || a.err != nil {
		return s
	}
	if err := engine.CheckName(s); err != nil {
		a.fail(mcperr.Invalidf("%s: argument %q is not a valid name: %v; give one %s name, without line breaks or other control characters", a.tool, arg, err, arg))
		return ""
	}
	return s
}

// integer returns an integer argument and whether it was given.
func (a *args) integer(name string) (int, bool) {
	v, ok := a.m[name]
	if !ok || v == nil {
		return 0, false
	}
	f, ok := v.(float64)
	if !ok {
		if n, isInt := v.(int); isInt {
			return n, true
		}
		a.fail(mcperr.Invalidf("%s: argument %q must be an integer, got %s", a.tool, name, jsonType(v)))
		return 0, false
	}
	if f != math.Trunc(f) || math.Abs(f) > 1e15 {
		a.fail(mcperr.Invalidf("%s: argument %q must be an integer, got %v", a.tool, name, f))
		return 0, false
	}
	return int(f), true
}

// enum returns an upper-cased string argument that must be one of allowed.
func (a *args) enum(name, def string, allowed []string) string {
	s := a.str(name, false)
	if s == "" {
		return def
	}
	u := strings.ToUpper(strings.TrimSpace(s))
	if !contains(allowed, u) {
		a.fail(mcperr.Invalidf("%s: argument %q is %q; accepted: %s", a.tool, name, s, strings.Join(allowed, ", ")))
		return def
	}
	return u
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
