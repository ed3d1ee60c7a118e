// Package envconfig reads typed configuration from environment variables and
// collects every problem, so that a misconfigured server reports all of its
// bad variables in one message instead of one per restart.
package envconfig

import (
	"fmt"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Var documents one environment variable for --help output, READMEs and the
// generated MCP Registry metadata (server.json) and bundle manifests.
type Var struct {
	Name        string `json:"name"`
	Default     string `json:"default,omitempty"`
	Description string `json:"description"`
	// Required: the server refuses to start without it.
	Required bool `json:"required,omitempty"`
	// Secret: a credential, read with Reader.Secret; never logged or echoed.
	Secret bool `json:"secret,omitempty"`
}

// Problem is one invalid or missing variable.
type Problem struct {
	Name     string // variable name
	Value    string // the value given ("" when missing)
	Accepted string // what would have been accepted
	Secret   bool   // the value must not be echoed
	// Text, when set, is a problem that is not one variable's value (a
	// configuration file that cannot be read), listed as it is.
	Text string
}

func (p Problem) String() string {
	switch {
	case p.Text != "":
		return p.Text
	case p.Secret && p.Value != "":
		return fmt.Sprintf("%s: value rejected (hidden); accepted: %s", p.Name, p.Accepted)
	case p.Value == "":
		return fmt.Sprintf("%s: not set; %s", p.Name, p.Accepted)
	default:
		return fmt.Sprintf("%s=%q: invalid; accepted: %s", p.Name, p.Value, p.Accepted)
	}
}

// Error lists every configuration problem found.
type Error struct {
	Problems []Problem
}

func (e *Error) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "invalid configuration (%d problem", len(e.Problems))
	if len(e.Problems) != 1 {
		b.WriteString("s")
	}
	b.WriteString("):")
	for _, p := range e.Problems {
		b.WriteString("\n  - ")
		b.WriteString(p.String())
	}
	return b.String()
}

// Reader reads variables through a lookup function and records problems.
// The zero value is not usable; call New.
type Reader struct {
	getenv   func(string) string
	problems []Problem
}

// New returns a Reader over getenv (os.Getenv when nil).
func New(getenv func(string) string) *Reader {
	if getenv == nil {
		getenv = os.Getenv
	}
	return &Reader{getenv: getenv}
}

// Lookup returns the raw, whitespace-trimmed value of name.
func (r *Reader) Lookup(name string) string {
	return strings.TrimSpace(r.getenv(name))
}

// Fail records a problem with name. accepted says what would be valid.
func (r *Reader) Fail(name, value, accepted string) {
	r.problems = append(r.problems, Problem{Name: name, Value: value, Accepted: accepted})
}

// FailSecret records a problem without echoing the value.
func (r *Reader) FailSecret(name, value, accepted string) {
	r.problems = append(r.problems, Problem{Name: name, Value: value, Accepted: accepted, Secret: true})
}

// Report records a problem that is not one variable's value, so that it
// is listed with the others.
func (r *Reader) Report(err error) {
	r.problems = append(r.problems, Problem{Text: err.Error()})
}

// Err returns an *Error listing every problem recorded, or nil.
func (r *Reader) Err() error {
	if len(r.problems) == 0 {
		return nil
	}
	return &Error{Problems: slices.Clone(r.problems)}
}

// String returns the value of name, or def when unset or empty.
func (r *Reader) String(name, def string) string {
	if v := r.Lookup(name); v != "" {
		return v
	}
	return def
}

// Secret returns the untrimmed value of name; secrets are never trimmed or echoed.
func (r *Reader) Secret(name string) string {
	return r.getenv(name)
}

// Required returns the value of name and records a problem when it is empty.
func (r *Reader) Required(name, accepted string) string {
	v := r.Lookup(name)
	if v == "" {
		r.Fail(name, "", "required: "+accepted)
	}
	return v
}

// Int returns name as an integer in [min, max], or def when unset.
func (r *Reader) Int(name string, def, min, max int) int {
	v := r.Lookup(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < min || n > max {
		r.Fail(name, v, fmt.Sprintf("an integer from %d to %d", min, max))
		return def
	}
	return n
}

// Int64 returns name as a 64-bit integer in [min, max], or def when unset.
func (r *Reader) Int64(name string, def, min, max int64) int64 {
	v := r.Lookup(name)
	if v == "" {
		return def
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < min || n > max {
		r.Fail(name, v, fmt.Sprintf("an integer from %d to %d", min, max))
		return def
	}
	return n
}

// ParseBool accepts 1,true,yes,on and 0,false,no,off in any case.
func ParseBool(v string) (bool, bool) {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "1", "true", "yes", "on":
		return true, true
	case "0", "false", "no", "off":
		return false, true
	}
	return false, false
}

// Bool returns name as a boolean, or def when unset.
func (r *Reader) Bool(name string, def bool) bool {
	v := r.Lookup(name)
	if v == "" {
		return def
	}
	b, ok := ParseBool(v)
	if !ok {
		r.Fail(name, v, "one of 1,true,yes,on or 0,false,no,off (any case)")
		return def
	}
	return b
}

// ParseDuration accepts a bare number of seconds ("10", "1.5") or Go syntax ("10s", "1m30s").
func ParseDuration(v string) (time.Duration, error) {
	v = strings.TrimSpace(v)
	if f, err := strconv.ParseFloat(v, 64); err == nil {
		if f < 0 {
			return 0, fmt.Errorf("negative duration %q", v)
		}
		return time.Duration(f * float64(time.Second)), nil
	}
	d, err := time.ParseDuration(v)
	if err != nil {
		return 0, err
	}
	if d < 0 {
		return 0, fmt.Errorf("negative duration %q", v)
	}
	return d, nil
}

// Duration returns name as a duration of at least min, or def when unset.
func (r *Reader) Duration(name string, def, min time.Duration) time.Duration {
	v := r.Lookup(name)
	if v == "" {
		return def
	}
	d, err := ParseDuration(v)
	if err != nil || d < min {
		r.Fail(name, v, fmt.Sprintf("seconds (e.g. 10) or a Go duration (e.g. 10s, 1m30s), at least %s", min))
		return def
	}
	return d
}

// List returns name split on commas with empty items dropped, or def when unset.
func (r *Reader) List(name string, def []string) []string {
	v := r.Lookup(name)
	if v == "" {
		return def
	}
	var out []string
	for _, item := range strings.Split(v, ",") {
		if item = strings.TrimSpace(item); item != "" {
			out = append(out, item)
		}
	}
	return out
}

// Enum returns name when it is one of allowed (compared case-insensitively,
// returned in the allowed spelling), or def when unset.
func (r *Reader) Enum(name, def string, allowed ...string) string {
	v := r.Lookup(name)
	if v == "" {
		return def
	}
	for _, a := range allowed {
		if strings.EqualFold(a, v) {
			return a
		}
	}
	r.Fail(name, v, "one of "+strings.Join(allowed, ", "))
	return def
}

// URL returns name parsed as an absolute URL whose scheme is one of schemes
// (any scheme when none are given), or def parsed when unset.
func (r *Reader) URL(name, def string, schemes ...string) *url.URL {
	v := r.Lookup(name)
	if v == "" {
		if def == "" {
			return nil
		}
		u, _ := url.Parse(def)
		return u
	}
	u, err := url.Parse(v)
	accepted := "an absolute URL"
	if len(schemes) > 0 {
		accepted += " with scheme " + strings.Join(schemes, " or ")
	}
	if err != nil || u.Scheme == "" || (u.Host == "" && u.Opaque == "" && u.Path == "") {
		r.Fail(name, redactURL(v), accepted)
		return nil
	}
	if len(schemes) > 0 && !slices.Contains(schemes, strings.ToLower(u.Scheme)) {
		r.Fail(name, redactURL(v), accepted)
		return nil
	}
	return u
}

// redactURL hides a password embedded in a URL before it is echoed.
func redactURL(v string) string {
	u, err := url.Parse(v)
	if err != nil || u.User == nil {
		return v
	}
	return u.Redacted()
}
