package trinotest

import (
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/mcpfleet/mcpfleet/sqlmcp/internal/sqlguard"
)

// tokenKind classifies the tokens the engine uses to recognise the
// statements it answers itself (SHOW, DESCRIBE, USE, EXPLAIN, ...), to
// refuse what Trino refuses and to rewrite names for DuckDB.
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

// lex splits text the engine has already read with trinoLex (or built
// itself) into tokens; it has no errors to report.
func lex(sql string) []token {
	toks, _ := tokenize(sql)
	return toks
}

// tokenize reads sql with sqlguard's tokenizer: the SQL guard and the
// engine share one Trino lexer, so they cannot disagree about where a
// string, a quoted name or a comment ends.
func tokenize(sql string) ([]token, *sqlguard.SyntaxError) {
	gt, err := sqlguard.Tokenize(sql)
	if err != nil {
		var se *sqlguard.SyntaxError
		if !errors.As(err, &se) {
			se = &sqlguard.SyntaxError{Msg: err.Error()}
		}
		return nil, se
	}
	toks := make([]token, len(gt))
	for i, t := range gt {
		k := tokSymbol
		text := t.Text
		switch t.Kind {
		case sqlguard.Word:
			k = tokWord
		case sqlguard.QuotedIdent:
			k, text = tokQuoted, t.Value
		case sqlguard.String:
			k, text = tokString, t.Value
		case sqlguard.Number:
			k = tokNumber
		}
		toks[i] = token{kind: k, text: text, start: t.Pos, end: t.Pos + len(t.Text)}
	}
	return toks, nil
}

// trinoSymbols are the operators and punctuation of Trino's grammar outside
// MATCH_RECOGNIZE patterns (which DuckDB cannot run).
var trinoSymbols = map[string]bool{
	"(": true, ")": true, ",": true, ".": true, ";": true, "=": true, "<>": true, "!=": true,
	"<": true, "<=": true, ">": true, ">=": true, "+": true, "-": true, "*": true, "/": true,
	"%": true, "||": true, "?": true, "[": true, "]": true, "->": true, "=>": true,
}

// symbolNotes say what DuckDB would have made of a character Trino has no
// token for.
var symbolNotes = map[string]string{
	"$":  "Trino has no dollar-quoted strings or $n parameters",
	"#":  "Trino has no # comments",
	"\\": "Trino has no backslash escapes",
	":":  "Trino has no :: casts; use CAST(x AS type)",
	"{":  "Trino has no struct or map literals in braces",
	"}":  "Trino has no struct or map literals in braces",
}

// fromEnds end a FROM list.
var fromEnds = map[string]bool{"WHERE": true, "GROUP": true, "HAVING": true, "WINDOW": true, "ORDER": true, "LIMIT": true,
	"OFFSET": true, "FETCH": true, "UNION": true, "INTERSECT": true, "EXCEPT": true, "ON": true, "SELECT": true}

// trinoLex reads a statement as Trino's lexer and parser would, refusing
// with Trino's SYNTAX_ERROR what Trino refuses but DuckDB would read
// another way, before DuckDB sees the text: characters that are no Trino
// token ($, #, \, ::, ...), backquoted names, E'...' escape strings,
// identifiers starting with a digit, a string literal following
// another and a string where Trino wants a name. What passes is only tokens Trino and DuckDB delimit alike.
func trinoLex(sqlText string) ([]token, *trinoError) {
	toks, se := tokenize(sqlText)
	if se != nil {
		line, col := lineCol(sqlText, se.Pos)
		r, _ := utf8.DecodeRuneInString(sqlText[min(se.Pos, len(sqlText)):])
		return nil, newError("SYNTAX_ERROR", fmt.Sprintf("mismatched input '%c' (%s)", r, se.Msg), line, col)
	}
	// Per parenthesis level: whether a FROM list is open, and whether a
	// function's parenthesis (SUBSTRING(s FROM 2)) is.
	from, call := []bool{false}, []bool{false}
	for i, t := range toks {
		line, col := lineCol(sqlText, t.start)
		raw := sqlText[t.start:t.end]
		d := len(from) - 1
		switch {
		case t.isSymbol("("):
			from, call = append(from, false), append(call, i > 0 && toks[i-1].kind == tokWord)
		case t.isSymbol(")") && d > 0:
			from, call = from[:d], call[:d]
		case t.is("FROM") || t.is("JOIN"):
			from[d] = !call[d]
		case t.kind == tokWord && fromEnds[strings.ToUpper(t.text)]:
			from[d] = false
		}
		if t.kind == tokString && i > 0 && !call[d] {
			// A string where Trino wants a name: DuckDB reads it as an
			// alias, or in FROM as a file to scan.
			if p := toks[i-1]; p.is("AS") || p.is("FROM") || p.is("JOIN") || p.is("INTO") || p.is("UPDATE") || p.is("TABLE") || p.isSymbol(",") && from[d] {
				return nil, newError("SYNTAX_ERROR", fmt.Sprintf("mismatched input '%s'. Expecting: <identifier>", raw), line, col)
			}
		}
		switch {
		case t.kind == tokSymbol && !trinoSymbols[t.text]:
			note := symbolNotes[t.text]
			if note == "" {
				note = "no Trino token"
			}
			return nil, newError("SYNTAX_ERROR", fmt.Sprintf("mismatched input '%s' (%s)", t.text, note), line, col)
		case t.kind == tokQuoted && raw[0] == '`':
			return nil, newError("SYNTAX_ERROR", "backquoted identifiers are not supported; use double quotes to quote identifiers", line, col)
		case t.kind == tokWord && raw[0] >= '0' && raw[0] <= '9':
			return nil, newError("SYNTAX_ERROR", "identifiers must not start with a digit; surround the identifier with double quotes", line, col)
		case i > 0 && t.kind == tokString && (toks[i-1].kind == tokString || toks[i-1].end == t.start && toks[i-1].kind == tokWord && len(toks[i-1].text) == 1):
			// E'...' is DuckDB's escape string, B'...' its bit string (in
			// Trino, literals of types that do not exist);
			// X'ab''...' one DuckDB literal where Trino ends at the first
			// quote; 'a' 'b' on two lines one DuckDB string.
			return nil, newError("SYNTAX_ERROR", fmt.Sprintf("mismatched input '%s'", raw), line, col)
		}
	}
	return toks, nil
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
