package engine

import (
	"errors"
	"fmt"
	"strings"
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
