// Package validate checks every tool argument by its type before anything is
// sent to HAProxy, and escapes free text the way the runtime API's parser
// expects. An error names the argument and the rule it broke.
package validate

import (
	"fmt"
	"math"
	"net"
	"regexp"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Error is an invalid argument: nothing was sent to HAProxy.
type Error struct {
	Arg  string
	Rule string
}

func (e *Error) Error() string {
	return fmt.Sprintf("invalid argument %q: %s; nothing was sent to HAProxy", e.Arg, e.Rule)
}

func fail(arg, format string, a ...any) error {
	return &Error{Arg: arg, Rule: fmt.Sprintf(format, a...)}
}

// Limits on lengths.
const (
	MaxNameLen = 128
	MaxTextLen = 4096
)

var (
	namePattern    = regexp.MustCompile(`^[A-Za-z0-9_.:-]+$`)
	sessionPattern = regexp.MustCompile(`^0x[0-9a-fA-F]{1,16}$`)
	refIDPattern   = regexp.MustCompile(`^#[0-9]{1,9}$`)
	refPathPattern = regexp.MustCompile(`^[A-Za-z0-9/._-]+$`)
	weightPct      = regexp.MustCompile(`^([0-9]{1,5})%$`)
)

// NameRule describes the identifier rule for error messages and schemas.
const NameRule = "must be 1-128 characters from A-Z a-z 0-9 _ . : -"

// NamePattern is the JSON-schema pattern for identifiers.
const NamePattern = `^[A-Za-z0-9_.:-]{1,128}$`

// Name checks a backend, server, frontend or table name.
func Name(arg, v string) error {
	if v == "" {
		return fail(arg, "is required and %s", NameRule)
	}
	if len(v) > MaxNameLen || !namePattern.MatchString(v) {
		return fail(arg, "%s", NameRule)
	}
	return nil
}

// Int converts a JSON value to an integer in [min, max]. JSON numbers arrive
// as float64; a fractional value is rejected rather than truncated.
func Int(arg string, v any, min, max int64) (int64, error) {
	var n int64
	switch x := v.(type) {
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) || x != math.Trunc(x) || x < -9e15 || x > 9e15 {
			return 0, fail(arg, "must be a whole number from %d to %d", min, max)
		}
		n = int64(x)
	case int:
		n = int64(x)
	case int64:
		n = x
	case string:
		p, err := strconv.ParseInt(x, 10, 64)
		if err != nil {
			return 0, fail(arg, "must be a whole number from %d to %d", min, max)
		}
		n = p
	default:
		return 0, fail(arg, "must be a whole number from %d to %d", min, max)
	}
	if n < min || n > max {
		return 0, fail(arg, "must be a whole number from %d to %d", min, max)
	}
	return n, nil
}

// Weight accepts 0-256 or "N%", a percentage of the initial weight
// (0%-25600%; HAProxy caps the result at 256). It returns the form HAProxy takes.
func Weight(arg string, v any) (string, error) {
	const rule = "must be a whole number from 0 to 256, or a percentage of the initial weight such as \"50%\" (0%-25600%)"
	if s, ok := v.(string); ok {
		if m := weightPct.FindStringSubmatch(s); m != nil {
			p, _ := strconv.Atoi(m[1])
			if p > 25600 {
				return "", fail(arg, "%s", rule)
			}
			return strconv.Itoa(p) + "%", nil
		}
	}
	n, err := Int(arg, v, 0, 256)
	if err != nil {
		return "", fail(arg, "%s", rule)
	}
	return strconv.FormatInt(n, 10), nil
}

// IP checks an IPv4 or IPv6 address (no host names, no zones).
func IP(arg, v string) (string, error) {
	ip := net.ParseIP(v)
	if ip == nil || strings.Contains(v, "%") {
		return "", fail(arg, "must be an IPv4 or IPv6 address such as 127.0.0.1")
	}
	return ip.String(), nil
}

// SessionID checks a stream id as "show sess" prints it: 0x followed by hex digits.
func SessionID(arg, v string) error {
	if !sessionPattern.MatchString(v) {
		return fail(arg, "must be a session id as listed by show_sessions: 0x followed by 1-16 hex digits")
	}
	return nil
}

// Ref checks a map or ACL reference: "#<id>" or a file path as HAProxy lists it.
func Ref(arg, v string) error {
	if refIDPattern.MatchString(v) {
		return nil
	}
	if v == "" || len(v) > 1024 || !refPathPattern.MatchString(v) || hasDotDot(v) {
		return fail(arg, "must be #<id> or a file path as listed by list_maps/list_acls (characters A-Z a-z 0-9 / . _ -, no \"..\" segments)")
	}
	return nil
}

func hasDotDot(p string) bool {
	for _, seg := range strings.Split(p, "/") {
		if seg == ".." {
			return true
		}
	}
	return false
}

// Text checks a free-text map/ACL key or value, or an agent-send string, and
// returns it escaped for the runtime API: "\" "\\", ";" "\;", " " "\ ".
// Control characters (C0, DEL, C1, line and paragraph separators), invalid
// UTF-8 and the payload marker "<<" are rejected.
func Text(arg, v string, allowEmpty bool) (string, error) {
	if v == "" {
		if allowEmpty {
			return "", nil
		}
		return "", fail(arg, "must not be empty")
	}
	if len(v) > MaxTextLen {
		return "", fail(arg, "must be at most %d bytes", MaxTextLen)
	}
	if !utf8.ValidString(v) {
		return "", fail(arg, "must be valid UTF-8")
	}
	for _, r := range v {
		if r < 0x20 || r == 0x7f || unicode.IsControl(r) || r == '\u2028' || r == '\u2029' || r == '\ufeff' {
			return "", fail(arg, "must not contain control characters (CR, LF, NUL, tab, ...)")
		}
	}
	if strings.Contains(v, "<<") {
		return "", fail(arg, "must not contain the payload marker \"<<\"")
	}
	return Escape(v), nil
}

// Escape escapes backslashes, semicolons and spaces for the runtime API.
func Escape(v string) string {
	var b strings.Builder
	b.Grow(len(v) + 8)
	for i := 0; i < len(v); i++ {
		switch c := v[i]; c {
		case '\\', ';', ' ':
			b.WriteByte('\\')
			b.WriteByte(c)
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// CertFile checks a certificate file name as "show ssl cert" lists it: a
// path from A-Z a-z 0-9 / . _ - (no "..", no "#", no "*" transaction
// marker, which would show an uncommitted certificate).
func CertFile(arg, v string) error {
	if v == "" || len(v) > 1024 || !refPathPattern.MatchString(v) || hasDotDot(v) {
		return fail(arg, "must be a certificate file name as listed by list_ssl_certs (characters A-Z a-z 0-9 / . _ -, no \"..\" segments)")
	}
	return nil
}
