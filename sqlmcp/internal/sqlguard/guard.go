package sqlguard

import (
	"fmt"
	"strings"
)

// Setting names quoted in refusals.
const (
	SettingAllowWrites    = "SQLENGINE_ALLOW_WRITE_QUERIES"
	SettingAllowedSchemas = "SQLENGINE_ALLOWED_SCHEMAS"
)

// Options select what Check accepts.
type Options struct {
	// AllowWrites lets statements that may change data or the catalog run
	// (SQLENGINE_ALLOW_WRITE_QUERIES=true). Session and transaction
	// statements and multiple statements are refused even then.
	AllowWrites bool
}

// Statement is a statement Check accepted.
type Statement struct {
	// SQL is the statement to send, and the only text checked: the input's
	// tokens with every comment replaced by one space, without the one
	// trailing ';' and surrounding space. Comments go because an engine
	// whose comment rules differ from the guard's (nested block comments)
	// would otherwise read different statement text than the guard did.
	SQL string
	// Keyword is the statement's first keyword in upper case ("(" for a
	// parenthesised query); InnerKeyword is that of Inner.
	Keyword      string
	InnerKeyword string
	// ReadOnly reports that the statement cannot change anything.
	ReadOnly bool
	// Explain is set for EXPLAIN (Analyze for EXPLAIN ANALYZE); Inner is
	// then the SQL of the statement explained (innermost), else SQL. Inner
	// is always a suffix of SQL, byte for byte.
	Explain bool
	Analyze bool
	Inner   string
	// TableFunction reports a table function call, TABLE(...), whose reads
	// the engine's IO plan cannot show.
	TableFunction bool
	// InformationSchema reports a reference to an information_schema name.
	InformationSchema bool
	// PassThrough reports a call of a pass-through table function
	// (query(...), raw_query(...)), which runs SQL in another system; only
	// admitted when writes are allowed, and then never a read.
	PassThrough bool

	// toks are the tokens of SQL (positions in SQL), for Relations.
	toks []Token
}

// Refusal is a statement Check refused: what, why, and which setting (if
// any) would allow it.
type Refusal struct {
	What  string // what was refused, e.g. "INSERT"
	Why   string
	Allow string // what allows it, or what to do instead
}

func (r *Refusal) Error() string {
	msg := "refused " + r.What + ": " + r.Why
	if r.Allow != "" {
		msg += ". " + r.Allow
	}
	return msg
}

// readKeywords start statements that cannot change anything.
var readKeywords = map[string]bool{
	"SELECT": true, "WITH": true, "VALUES": true, "TABLE": true,
	"SHOW": true, "DESCRIBE": true, "DESC": true,
}

// queryKeywords may follow the opening parentheses of a query.
var queryKeywords = map[string]bool{"SELECT": true, "WITH": true, "VALUES": true, "TABLE": true}

// sessionKeywords start statements that change the session or transaction.
var sessionKeywords = map[string]bool{
	"SET": true, "RESET": true, "USE": true, "START": true, "BEGIN": true,
	"COMMIT": true, "ROLLBACK": true, "ABORT": true, "PREPARE": true,
	"EXECUTE": true, "DEALLOCATE": true,
}

// passThrough names table functions that run SQL in another system.
var passThrough = map[string]bool{"query": true, "raw_query": true}

const readList = "SELECT, WITH, VALUES, TABLE, SHOW, DESCRIBE and EXPLAIN"

// Check decides whether sql may run under opts and returns the statement to
// send. A refusal is a *Refusal.
func Check(sql string, opts Options) (*Statement, error) {
	toks, err := Tokenize(sql)
	if err != nil {
		return nil, &Refusal{What: "the statement", Why: err.Error(), Allow: "fix the SQL (strings, quoted names and comments must be closed; write names with non-ASCII letters in double quotes)"}
	}
	end := len(sql)
	if len(toks) > 0 && toks[len(toks)-1].IsSymbol(";") {
		toks = toks[:len(toks)-1]
	}
	if len(toks) == 0 {
		return nil, &Refusal{What: "the statement", Why: "it is empty", Allow: "give one SQL statement"}
	}
	for _, t := range toks {
		if t.IsSymbol(";") {
			return nil, &Refusal{What: "more than one statement", Why: "only one statement runs per call (a single trailing ';' is allowed)", Allow: "send the statements one at a time"}
		}
	}
	// From here on only the normalised text exists: it is what is judged,
	// explained and run.
	sql, toks = normalize(sql, toks)
	end = len(sql)
	st := &Statement{SQL: sql, toks: toks}
	for i, t := range toks {
		if t.Name() == "information_schema" {
			st.InformationSchema = true
		}
		if i+1 < len(toks) && toks[i+1].IsSymbol("(") {
			if (t.Kind == Word || t.Kind == QuotedIdent) && passThrough[t.Name()] {
				st.PassThrough = true
			}
			if st.PassThrough && !opts.AllowWrites {
				return nil, &Refusal{What: "the table function " + t.Text + "(...)",
					Why:   "pass-through table functions run SQL in another system, which can change data there",
					Allow: "set " + SettingAllowWrites + "=true to allow it"}
			}
			if i > 0 && t.Is("TABLE") {
				st.TableFunction = true
			}
		}
	}
	if err := judge(st, sql, toks, end, opts); err != nil {
		return nil, err
	}
	return st, nil
}

// normalize rebuilds the statement from its tokens: the source between two
// tokens is kept when it is only white space, else (a comment) replaced by
// one space. The tokens are returned with their positions in the new text.
func normalize(sql string, toks []Token) (string, []Token) {
	var b strings.Builder
	out := make([]Token, len(toks))
	for i, t := range toks {
		if i > 0 {
			gap := sql[toks[i-1].Pos+len(toks[i-1].Text) : t.Pos]
			if strings.Trim(gap, " \t\r\n") != "" {
				gap = " "
			}
			b.WriteString(gap)
		}
		t.Pos = b.Len()
		b.WriteString(t.Text)
		out[i] = t
	}
	return b.String(), out
}

// judge classifies the statement in toks (ending at byte end of sql),
// filling st.
func judge(st *Statement, sql string, toks []Token, end int, opts Options) error {
	first := toks[0]
	st.Inner = strings.TrimSpace(sql[first.Pos:end])
	st.InnerKeyword = first.Value
	if first.IsSymbol("(") {
		i := 0
		for i < len(toks) && toks[i].IsSymbol("(") {
			i++
		}
		if st.Keyword == "" {
			st.Keyword = "("
		}
		if i < len(toks) && toks[i].Kind == Word && queryKeywords[toks[i].Value] {
			st.ReadOnly = true
			return nil
		}
		return &Refusal{What: "the statement", Why: "a parenthesised statement must be a query (SELECT, WITH, VALUES or TABLE)", Allow: "fix the SQL"}
	}
	if first.Kind != Word {
		return &Refusal{What: "the statement", Why: fmt.Sprintf("it does not start with a keyword (found %q)", first.Text), Allow: "start with one of " + readList}
	}
	kw := first.Value
	if st.Keyword == "" {
		st.Keyword = kw
	}
	switch {
	case kw == "EXPLAIN":
		st.Explain = true
		i := 1
		analyze := false
		if i < len(toks) && toks[i].Is("ANALYZE") {
			analyze = true
			st.Analyze = true
			i++
			if i < len(toks) && toks[i].Is("VERBOSE") {
				i++
			}
		}
		if i+1 < len(toks) && toks[i].IsSymbol("(") && (toks[i+1].Is("TYPE") || toks[i+1].Is("FORMAT")) {
			depth := 0
			for ; i < len(toks); i++ {
				if toks[i].IsSymbol("(") {
					depth++
				} else if toks[i].IsSymbol(")") {
					depth--
					if depth == 0 {
						i++
						break
					}
				}
			}
		}
		if i >= len(toks) {
			return &Refusal{What: "EXPLAIN", Why: "no statement follows it", Allow: "give the statement to explain"}
		}
		inner := toks[i:]
		if analyze || inner[0].Is("EXPLAIN") {
			// EXPLAIN ANALYZE executes its statement: judge it as that statement.
			return judge(st, sql, inner, end, opts)
		}
		// A plain EXPLAIN only plans its statement; nothing is executed.
		st.Inner = strings.TrimSpace(sql[inner[0].Pos:end])
		st.InnerKeyword = inner[0].Value
		st.ReadOnly = true
		return nil
	case readKeywords[kw]:
		st.ReadOnly = true
		return nil
	case sessionKeywords[kw]:
		what := kw
		if len(toks) > 1 && toks[1].Kind == Word {
			what += " " + toks[1].Value
		}
		return &Refusal{What: what,
			Why:   "statements that change the session or transaction are not run (each call is its own session)",
			Allow: "pass the catalog and schema arguments instead of USE; no setting allows session statements"}
	case opts.AllowWrites:
		st.ReadOnly = false
		return nil
	}
	return &Refusal{What: kw,
		Why:   "it may change data or the catalog, and only read-only statements (" + readList + ") run",
		Allow: "set " + SettingAllowWrites + "=true to allow writes"}
}
