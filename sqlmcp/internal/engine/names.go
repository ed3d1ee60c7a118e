package engine

import (
	"errors"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// QuoteIdentifier returns name as a Trino delimited identifier: in double
// quotes with embedded double quotes doubled, so that any name (dots,
// spaces, capitals, quotes) is one identifier and cannot inject SQL.
func QuoteIdentifier(name string) string {
	return `"` + strings.ReplaceAll(name, `"`, `""`) + `"`
}

// QuoteString returns s as a Trino string literal, single quotes doubled.
func QuoteString(s string) string {
	return "'" + strings.ReplaceAll(s, "'", "''") + "'"
}

// QualifiedName joins non-empty parts as quoted identifiers with dots.
func QualifiedName(parts ...string) string {
	var q []string
	for _, p := range parts {
		if p != "" {
			q = append(q, QuoteIdentifier(p))
		}
	}
	return strings.Join(q, ".")
}

// SplitName splits a possibly qualified name such as
// catalog.schema.table into its parts. Parts may be double-quoted (with
// "" inside for a quote) to contain dots or spaces; unquoted parts are
// taken verbatim. It fails on an empty part or an unterminated quote.
func SplitName(s string) ([]string, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return nil, errors.New("the name is empty")
	}
	var parts []string
	for i := 0; ; {
		var part strings.Builder
		if i < len(s) && s[i] == '"' {
			i++
			closed := false
			for i < len(s) {
				if s[i] == '"' {
					if i+1 < len(s) && s[i+1] == '"' {
						part.WriteByte('"')
						i += 2
						continue
					}
					closed = true
					i++
					break
				}
				part.WriteByte(s[i])
				i++
			}
			if !closed {
				return nil, fmt.Errorf("unterminated quoted identifier in %q", s)
			}
			if i < len(s) && s[i] != '.' {
				return nil, fmt.Errorf("unexpected text after a quoted identifier in %q", s)
			}
		} else {
			j := strings.IndexByte(s[i:], '.')
			if j < 0 {
				j = len(s) - i
			}
			part.WriteString(strings.TrimSpace(s[i : i+j]))
			if strings.Contains(part.String(), `"`) {
				return nil, fmt.Errorf("misplaced double quote in %q; quote a whole part: \"my.table\"", s)
			}
			i += j
		}
		if part.Len() == 0 {
			return nil, fmt.Errorf("empty name part in %q", s)
		}
		parts = append(parts, part.String())
		if i >= len(s) {
			return parts, nil
		}
		i++ // the dot
		if i >= len(s) {
			return nil, fmt.Errorf("empty name part in %q", s)
		}
	}
}

// maxNameBytes bounds one identifier; Trino's own names are far shorter.
const maxNameBytes = 1024

// CheckName reports why name cannot be one catalog, schema or table name
// sent to the engine: it is empty, too long, not UTF-8, or holds a
// character that is not printable (CR, LF and other control characters,
// which would split an HTTP header, and invisible format characters such
// as zero-width spaces, which make one name look like another). nil means
// the name is acceptable; it still has to exist.
func CheckName(name string) error {
	switch {
	case name == "":
		return errors.New("it is empty")
	case len(name) > maxNameBytes:
		return fmt.Errorf("it is %d bytes long, more than the %d allowed", len(name), maxNameBytes)
	case !utf8.ValidString(name):
		return errors.New("it is not valid UTF-8")
	}
	for _, r := range name {
		if r != ' ' && !unicode.IsPrint(r) {
			return fmt.Errorf("it contains the character %U, which is not printable (line breaks and other control characters are not allowed in names)", r)
		}
	}
	return nil
}

// checkNames validates the non-empty names in pairs of (what, name), e.g.
// ("catalog", c), ("schema", s), as Invalid errors of op naming what.
func checkNames(op string, pairs ...string) error {
	for i := 0; i+1 < len(pairs); i += 2 {
		what, name := pairs[i], pairs[i+1]
		if name == "" {
			continue
		}
		if err := CheckName(name); err != nil {
			return newError(Invalid, op, fmt.Errorf("the %s name %q is not a valid name: %v", what, name, err),
				"give the "+what+" name as it is listed by the engine")
		}
	}
	return nil
}
