package mcpserver

import (
	"fmt"
	"sort"
	"strings"

	"github.com/mcpfleet/mcpfleet/proxymcp/internal/validate"
)

// args reads and validates one call's arguments. The first problem is
// kept; later reads become no-ops, so a handler can read everything and
// check err once.
type args struct {
	m   map[string]any
	err error
}

func newArgs(raw any, allowed []string) *args {
	a := &args{}
	switch m := raw.(type) {
	case map[string]any:
		a.m = m
	case nil:
		a.m = map[string]any{}
	default:
		a.err = &validate.Error{Arg: "arguments", Rule: "must be a JSON object"}
		return a
	}
	var unknown []string
	for k := range a.m {
		if !contains(allowed, k) {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		rule := "is not an argument of this tool"
		if len(allowed) > 0 {
			rule += "; accepted: " + strings.Join(allowed, ", ")
		}
		a.err = &validate.Error{Arg: unknown[0], Rule: rule}
	}
	return a
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func (a *args) set(err error) {
	if a.err == nil && err != nil {
		a.err = err
	}
}

func (a *args) has(key string) bool {
	v, ok := a.m[key]
	return ok && v != nil
}

// str returns a string argument ("" when absent and optional).
func (a *args) str(key string, required bool) string {
	if a.err != nil {
		return ""
	}
	v, ok := a.m[key]
	if !ok || v == nil {
		if required {
			a.set(&validate.Error{Arg: key, Rule: "is required"})
		}
		return ""
	}
	s, ok := v.(string)
	if !ok {
		a.set(&validate.Error{Arg: key, Rule: "must be a string"})
		return ""
	}
	return s
}

// name returns a validated identifier (backend, server, frontend, table).
func (a *args) name(key string, required bool) string {
	s := a.str(key, required)
	if a.err != nil || (s == "" && !required) {
		return ""
	}
	a.set(validate.Name(key, s))
	return s
}

func (a *args) enum(key string, required bool, allowed ...string) string {
	s := a.str(key, required)
	if a.err != nil || (s == "" && !required) {
		return ""
	}
	a.set(validate.Enum(key, s, allowed...))
	return s
}

func (a *args) boolean(key string, def bool) bool {
	if a.err != nil || !a.has(key) {
		return def
	}
	b, ok := a.m[key].(bool)
	if !ok {
		a.set(&validate.Error{Arg: key, Rule: "must be true or false"})
	}
	return b
}

func (a *args) integer(key string, required bool, min, max int64) int64 {
	if a.err != nil {
		return 0
	}
	if !a.has(key) {
		if required {
			a.set(&validate.Error{Arg: key, Rule: fmt.Sprintf("is required: a whole number from %d to %d", min, max)})
		}
		return 0
	}
	n, err := validate.Int(key, a.m[key], min, max)
	a.set(err)
	return n
}

func (a *args) port(key string, required bool) int {
	if a.err != nil {
		return 0
	}
	if !a.has(key) {
		if required {
			a.set(&validate.Error{Arg: key, Rule: "is required: a port number from 1 to 65535"})
		}
		return 0
	}
	p, err := validate.Port(key, a.m[key])
	a.set(err)
	return p
}

func (a *args) ip(key string, required bool) string {
	s := a.str(key, required)
	if a.err != nil || (s == "" && !required) {
		return ""
	}
	ip, err := validate.IP(key, s)
	a.set(err)
	return ip
}

func (a *args) weight(key string, required bool) string {
	if a.err != nil {
		return ""
	}
	if !a.has(key) {
		if required {
			a.set(&validate.Error{Arg: key, Rule: "is required: 0-256 or a percentage such as \"50%\""})
		}
		return ""
	}
	w, err := validate.Weight(key, a.m[key])
	a.set(err)
	return w
}

func (a *args) ref(key string) string {
	s := a.str(key, true)
	if a.err != nil {
		return ""
	}
	a.set(validate.Ref(key, s))
	return s
}

// text returns validated free text, unescaped: the haproxy package escapes.
func (a *args) text(key string, required bool) string {
	s := a.str(key, required)
	if a.err != nil || (s == "" && !required) {
		return ""
	}
	_, err := validate.Text(key, s, false)
	a.set(err)
	return s
}

func (a *args) sessionID(key string) string {
	s := a.str(key, true)
	if a.err != nil {
		return ""
	}
	a.set(validate.SessionID(key, s))
	return s
}

// check returns the first validation problem; handlers call it before any I/O.
func (a *args) check() error { return a.err }

// nested names an item's argument inside its list argument ("entries.key").
func nested(parent string, err error) error {
	if ve, ok := err.(*validate.Error); ok {
		return &validate.Error{Arg: parent + "." + ve.Arg, Rule: ve.Rule}
	}
	return err
}
