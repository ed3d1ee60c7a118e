// Package sqlguard decides whether a Trino SQL statement may run: a real
// tokenizer of Trino's lexical grammar (so that strings, quoted identifiers
// and comments can never hide or fake a keyword), a read-only allowlist of
// statements, single-statement enforcement, refusal of session and
// transaction statements and of pass-through table functions, and the
// allowed-schemas rule applied to the tables the engine says a statement
// touches.
package sqlguard

import (
	"fmt"
	"strings"
)

// Kind is the lexical class of a token.
type Kind int

// Token kinds.
const (
	Word        Kind = iota // unquoted identifier or keyword
	QuotedIdent             // "..." (or `...`)
	String                  // '...', U&'...', X'...'
	Number                  // 12, 1.5, 1e3, .5
	Symbol                  // operators and punctuation: ( ) , ; . = <> || => ...
)

// Token is one lexical token of a statement.
type Token struct {
	Kind Kind
	// Text is the token as written in the source.
	Text string
	// Value is the normalised value: upper case for a Word, the unquoted
	// name for a QuotedIdent, the content for a String.
	Value string
	// Pos is the byte offset of the token in the source.
	Pos int
}

// Is reports whether t is the keyword kw (a Word, compared case-insensitively).
func (t Token) Is(kw string) bool { return t.Kind == Word && t.Value == kw }

// IsSymbol reports whether t is the symbol s.
func (t Token) IsSymbol(s string) bool { return t.Kind == Symbol && t.Text == s }

// Name returns the identifier a Word or QuotedIdent names, folded to lower
// case as Trino does for function, catalog and schema names.
func (t Token) Name() string {
	switch t.Kind {
	case Word, QuotedIdent:
		return strings.ToLower(t.Value)
	}
	return ""
}

// SyntaxError is input the tokenizer cannot read the way Trino would, and
// so refuses rather than guesses.
type SyntaxError struct {
	Pos int
	Msg string
}

func (e *SyntaxError) Error() string {
	return fmt.Sprintf("cannot read the SQL at byte %d: %s", e.Pos, e.Msg)
}

// Tokenize splits sql into tokens following Trino's lexer: string literals
// with ” escapes, U&'...' Unicode and X'...' binary literals, "..."
// quoted identifiers with "" escapes, -- line comments and non-nested
// /* */ comments (both dropped). Characters Trino's lexer does not accept
// outside literals and comments (non-ASCII letters, control characters) are
// an error, as are unterminated literals and comments.
func Tokenize(sql string) ([]Token, error) {
	var toks []Token
	i, n := 0, len(sql)
	for i < n {
		c := sql[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			i++
		case c == '-' && i+1 < n && sql[i+1] == '-':
			for i < n && sql[i] != '\n' && sql[i] != '\r' {
				i++
			}
		case c == '/' && i+1 < n && sql[i+1] == '*':
			end := strings.Index(sql[i+2:], "*/")
			if end < 0 {
				return nil, &SyntaxError{Pos: i, Msg: "unterminated /* comment"}
			}
			i += 2 + end + 2
		case c == '\'':
			j, val, err := scanQuoted(sql, i, '\'', true)
			if err != nil {
				return nil, err
			}
			toks = append(toks, Token{Kind: String, Text: sql[i:j], Value: val, Pos: i})
			i = j
		case (c == 'U' || c == 'u') && i+2 < n && sql[i+1] == '&' && sql[i+2] == '\'':
			j, val, err := scanQuoted(sql, i+2, '\'', true)
			if err != nil {
				return nil, err
			}
			toks = append(toks, Token{Kind: String, Text: sql[i:j], Value: val, Pos: i})
			i = j
		case (c == 'X' || c == 'x') && i+1 < n && sql[i+1] == '\'':
			// Binary literals have no '' escape: they end at the first quote.
			end := strings.IndexByte(sql[i+2:], '\'')
			if end < 0 {
				return nil, &SyntaxError{Pos: i, Msg: "unterminated binary literal"}
			}
			j := i + 2 + end + 1
			toks = append(toks, Token{Kind: String, Text: sql[i:j], Value: sql[i+2 : j-1], Pos: i})
			i = j
		case c == '"' || c == '`':
			j, val, err := scanQuoted(sql, i, c, true)
			if err != nil {
				return nil, err
			}
			if val == "" {
				return nil, &SyntaxError{Pos: i, Msg: "empty quoted identifier"}
			}
			toks = append(toks, Token{Kind: QuotedIdent, Text: sql[i:j], Value: val, Pos: i})
			i = j
		case isLetter(c) || c == '_':
			j := scanWord(sql, i)
			toks = append(toks, Token{Kind: Word, Text: sql[i:j], Value: strings.ToUpper(sql[i:j]), Pos: i})
			i = j
		case isDigit(c) || (c == '.' && i+1 < n && isDigit(sql[i+1])):
			// Trino's lexer takes the longest match: 1e5 and 0x1F are
			// numbers, 1e5x and 123abc (digit) identifiers.
			j := scanNumber(sql, i)
			if isDigit(c) {
				if k := scanWord(sql, i); k > j {
					toks = append(toks, Token{Kind: Word, Text: sql[i:k], Value: strings.ToUpper(sql[i:k]), Pos: i})
					i = k
					continue
				}
			}
			toks = append(toks, Token{Kind: Number, Text: sql[i:j], Value: sql[i:j], Pos: i})
			i = j
		case c < 0x20 || c == 0x7f:
			return nil, &SyntaxError{Pos: i, Msg: fmt.Sprintf("control character %U outside a literal", rune(c))}
		case c >= 0x80:
			return nil, &SyntaxError{Pos: i, Msg: "non-ASCII character outside a string or quoted identifier"}
		default:
			j := i + 1
			for _, op := range []string{"<>", "<=", ">=", "!=", "||", "=>", "->"} {
				if strings.HasPrefix(sql[i:], op) {
					j = i + len(op)
					break
				}
			}
			toks = append(toks, Token{Kind: Symbol, Text: sql[i:j], Value: sql[i:j], Pos: i})
			i = j
		}
	}
	return toks, nil
}

// scanQuoted reads a literal opened by q at sql[start], where a doubled q
// stands for one. It returns the offset after the closing quote and the
// unescaped content.
func scanQuoted(sql string, start int, q byte, doubled bool) (int, string, error) {
	var b strings.Builder
	i := start + 1
	for i < len(sql) {
		if sql[i] == q {
			if doubled && i+1 < len(sql) && sql[i+1] == q {
				b.WriteByte(q)
				i += 2
				continue
			}
			return i + 1, b.String(), nil
		}
		b.WriteByte(sql[i])
		i++
	}
	what := "string literal"
	if q != '\'' {
		what = "quoted identifier"
	}
	return 0, "", &SyntaxError{Pos: start, Msg: "unterminated " + what}
}

// scanNumber returns the end of the longest of Trino's number literals at
// sql[i]: DECIMAL_INTEGER ('_' between digits), hexadecimal, octal and
// binary integers (0x1F, 0o17, 0b101), decimals (1., 1.5, .5) and doubles
// (1e3, 1.5E-3, .5e3, whose digits take no '_').
func scanNumber(sql string, i int) int {
	n := len(sql)
	digits := func(j int, ok func(byte) bool, underscores bool) int {
		start := j
		for j < n {
			switch {
			case ok(sql[j]):
				j++
			case underscores && sql[j] == '_' && j > start && j+1 < n && ok(sql[j+1]):
				j += 2
			default:
				return j
			}
		}
		return j
	}
	best := i
	if sql[i] == '0' && i+2 < n {
		var ok func(byte) bool
		switch sql[i+1] {
		case 'x', 'X':
			ok = func(c byte) bool { return isDigit(c) || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F' }
		case 'o', 'O':
			ok = func(c byte) bool { return c >= '0' && c <= '7' }
		case 'b', 'B':
			ok = func(c byte) bool { return c == '0' || c == '1' }
		}
		if ok != nil {
			// '_' may also come first: 0x_1F.
			j := i + 2
			if sql[j] == '_' && j+1 < n && ok(sql[j+1]) {
				j++
			}
			if k := digits(j, ok, true); k > j {
				best = k
			}
		}
	}
	// DECIMAL_INTEGER ['.' [DECIMAL_INTEGER]], or '.' DECIMAL_INTEGER.
	j := digits(i, isDigit, true)
	if j < n && sql[j] == '.' {
		j = digits(j+1, isDigit, true)
	}
	best = max(best, j)
	// DIGIT+ ['.' DIGIT*] EXPONENT, or '.' DIGIT+ EXPONENT.
	j = digits(i, isDigit, false)
	if j < n && sql[j] == '.' {
		j = digits(j+1, isDigit, false)
	}
	if j < n && (sql[j] == 'e' || sql[j] == 'E') {
		k := j + 1
		if k < n && (sql[k] == '+' || sql[k] == '-') {
			k++
		}
		if e := digits(k, isDigit, false); e > k {
			best = max(best, e)
		}
	}
	return best
}

// scanWord returns the end of the run of letters, digits and '_' at sql[i].
func scanWord(sql string, i int) int {
	for i < len(sql) && isWordChar(sql[i]) {
		i++
	}
	return i
}

func isLetter(c byte) bool { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') }
func isDigit(c byte) bool  { return c >= '0' && c <= '9' }
func isWordChar(c byte) bool {
	return isLetter(c) || isDigit(c) || c == '_'
}
