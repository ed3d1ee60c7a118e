package cli

import "strings"

// scanState is where a scan of SQL text stopped.
type scanState int

const (
	stNormal       scanState = iota
	stString                 // inside '...'
	stIdent                  // inside "..."
	stLineComment            // after --
	stBlockComment           // inside /* */
)

// splitStatements cuts text at every ';' outside string literals, quoted
// identifiers and comments. It returns the complete statements (without
// their ';', blank ones dropped) and the unterminated remainder. The state
// reports whether the remainder ends inside a literal or comment, which the
// shell uses to keep reading lines.
func splitStatements(text string) (stmts []string, rest string, state scanState) {
	start := 0
	for i := 0; i < len(text); i++ {
		c := text[i]
		switch state {
		case stNormal:
			switch {
			case c == '\'':
				state = stString
			case c == '"':
				state = stIdent
			case c == '-' && i+1 < len(text) && text[i+1] == '-':
				state = stLineComment
				i++
			case c == '/' && i+1 < len(text) && text[i+1] == '*':
				state = stBlockComment
				i++
			case c == ';':
				if s := text[start:i]; !blankSQL(s) {
					stmts = append(stmts, strings.TrimSpace(s))
				}
				start = i + 1
			}
		case stString:
			// '' inside a literal is an escaped quote: the state flips out and
			// straight back in on the next quote.
			if c == '\'' {
				state = stNormal
			}
		case stIdent:
			if c == '"' {
				state = stNormal
			}
		case stLineComment:
			if c == '\n' {
				state = stNormal
			}
		case stBlockComment:
			if c == '*' && i+1 < len(text) && text[i+1] == '/' {
				state = stNormal
				i++
			}
		}
	}
	return stmts, text[start:], state
}

// blankSQL reports whether s holds nothing but spaces and comments.
func blankSQL(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f':
		case c == '-' && i+1 < len(s) && s[i+1] == '-':
			j := strings.IndexByte(s[i:], '\n')
			if j < 0 {
				return true
			}
			i += j
		case c == '/' && i+1 < len(s) && s[i+1] == '*':
			j := strings.Index(s[i+2:], "*/")
			if j < 0 {
				return true
			}
			i += j + 3
		default:
			return false
		}
	}
	return true
}

// scriptStatements splits a whole script (a file or standard input): the
// text after the last ';' counts as a final statement when not blank.
func scriptStatements(text string) []string {
	stmts, rest, _ := splitStatements(text)
	if !blankSQL(rest) {
		stmts = append(stmts, strings.TrimSpace(rest))
	}
	return stmts
}

// historyEntry puts a statement on one line for the history: line breaks
// outside literals become spaces and "--" comments become /* */ comments,
// so that the recalled line still means the same statement.
func historyEntry(stmt string) string {
	var b strings.Builder
	state := stNormal
	for i := 0; i < len(stmt); i++ {
		c := stmt[i]
		switch state {
		case stNormal:
			switch {
			case c == '\'':
				state = stString
			case c == '"':
				state = stIdent
			case c == '-' && i+1 < len(stmt) && stmt[i+1] == '-':
				end := strings.IndexByte(stmt[i:], '\n')
				if end < 0 {
					end = len(stmt) - i
				}
				text := strings.ReplaceAll(strings.TrimSpace(stmt[i+2:i+end]), "*/", "* /")
				b.WriteString("/* " + text + " */")
				i += end - 1
				continue
			case c == '/' && i+1 < len(stmt) && stmt[i+1] == '*':
				state = stBlockComment
			case c == '\n' || c == '\r' || c == '\t':
				c = ' '
			}
		case stString:
			if c == '\'' {
				state = stNormal
			}
		case stIdent:
			if c == '"' {
				state = stNormal
			}
		case stBlockComment:
			if c == '*' && i+1 < len(stmt) && stmt[i+1] == '/' {
				b.WriteString("*/")
				i++
				state = stNormal
				continue
			}
			if c == '\n' {
				c = ' '
			}
		}
		if (state == stString || state == stIdent) && c == '\n' {
			// A line break inside a literal cannot be kept on one line.
			c = ' '
		}
		b.WriteByte(c)
	}
	return strings.TrimSpace(b.String())
}
