package trinotest

import (
	"strings"
)

// tokenKind classifies the tokens of the small Trino SQL lexer the engine
// uses to recognise the statements it answers itself (SHOW, DESCRIBE, USE,
// EXPLAIN, ...) and to refuse more than one statement. Everything else is
// left to DuckDB's own parser.
type tokenKind int

const (
	tokWord   tokenKind = iota // unquoted identifier or keyword
	tokQuoted                  // "quoted identifier" (text unescaped)
	tokString                  // 'string literal' (text unescaped)
	tokNumber
	tokSymbol
)

type token struct {
	kind  tokenKind
	text  string // unescaped text; keywords keep their spelling
	start int    // byte offset in the statement
	end   int
}

// is reports whether t is the unquoted keyword kw (case-insensitive).
func (t token) is(kw string) bool {
	return t.kind == tokWord && strings.EqualFold(t.text, kw)
}

func (t token) isSymbol(s string) bool {
	return t.kind == tokSymbol && t.text == s
}

// isName reports whether t can be an identifier.
func (t token) isName() bool {
	return t.kind == tokWord || t.kind == tokQuoted
}

// name returns the identifier t stands for: quoted identifiers keep their
// case; unquoted ones are lower-cased, as Trino does.
func (t token) name() string {
	if t.kind == tokQuoted {
		return t.text
	}
	return strings.ToLower(t.text)
}

// lex splits sql into tokens, skipping whitespace and comments. Trino's
// quoting rules apply: a doubled quote inside a string or quoted
// identifier stands for itself, -- and /* */ comments (not nested). An unterminated literal or comment ends the
// input.
func lex(sql string) []token {
	var toks []token
	i := 0
	for i < len(sql) {
		c := sql[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f':
			i++
		case c == '-' && i+1 < len(sql) && sql[i+1] == '-':
			for i < len(sql) && sql[i] != '\n' {
				i++
			}
		case c == '/' && i+1 < len(sql) && sql[i+1] == '*':
			end := strings.Index(sql[i+2:], "*/")
			if end < 0 {
				i = len(sql)
			} else {
				i += end + 4
			}
		case c == '\'' || c == '"':
			start := i
			var b strings.Builder
			i++
			for i < len(sql) {
				if sql[i] == c {
					if i+1 < len(sql) && sql[i+1] == c {
						b.WriteByte(c)
						i += 2
						continue
					}
					i++
					break
				}
				b.WriteByte(sql[i])
				i++
			}
			kind := tokString
			if c == '"' {
				kind = tokQuoted
			}
			toks = append(toks, token{kind: kind, text: b.String(), start: start, end: i})
		case isWordByte(c):
			start := i
			for i < len(sql) && (isWordByte(sql[i]) || sql[i] >= '0' && sql[i] <= '9') {
				i++
			}
			toks = append(toks, token{kind: tokWord, text: sql[start:i], start: start, end: i})
		case c >= '0' && c <= '9':
			start := i
			for i < len(sql) && (sql[i] >= '0' && sql[i] <= '9' || sql[i] == '.' || sql[i] == 'e' || sql[i] == 'E') {
				i++
			}
			toks = append(toks, token{kind: tokNumber, text: sql[start:i], start: start, end: i})
		default:
			toks = append(toks, token{kind: tokSymbol, text: string(c), start: i, end: i + 1})
			i++
		}
	}
	return toks
}

func isWordByte(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= 0x80
}

// lineCol converts a byte offset in sql to Trino's 1-based line and column.
func lineCol(sql string, offset int) (line, col int) {
	line, col = 1, 1
	for i := 0; i < offset && i < len(sql); i++ {
		if sql[i] == '\n' {
			line++
			col = 1
		} else {
			col++
		}
	}
	return line, col
}

// qualifiedName reads a dotted name (a.b.c) starting at toks[i] and returns
// its parts and the index after it.
func qualifiedName(toks []token, i int) ([]string, int) {
	var parts []string
	for i < len(toks) && toks[i].isName() {
		parts = append(parts, toks[i].name())
		i++
		if i < len(toks) && toks[i].isSymbol(".") && i+1 < len(toks) && toks[i+1].isName() {
			i++
			continue
		}
		break
	}
	return parts, i
}

// quoteIdent quotes an identifier for DuckDB: "..." with "" inside.
func quoteIdent(s string) string {
	return `"` + strings.ReplaceAll(s, `"`, `""`) + `"`
}

// quoteString quotes a string literal: '...' with ” inside.
func quoteString(s string) string {
	return `'` + strings.ReplaceAll(s, `'`, `''`) + `'`
}
