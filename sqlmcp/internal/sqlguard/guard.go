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
	// (query(...), raw_query(...), procedure(...)) or of a table function
	// the guard does not know, which may run SQL in another system; only
	// admitted when writes are allowed, and then never a read.
	PassThrough bool
	// Write is set when a statement that starts like a query contains a
	// write (WITH ... DELETE, a CTE body that INSERTs): the SQL from that
	// write's keyword on, a suffix of Inner. The statement is then judged
	// by that write, as its effect is that write's.
	Write string

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

// passThrough names table functions that run SQL in another system: the
// JDBC connectors' and BigQuery's query, Elasticsearch's and OpenSearch's
// raw_query, SQL Server's procedure.
var passThrough = map[string]bool{"query": true, "raw_query": true, "procedure": true}

// readTableFunctions are the table functions known only to read (Trino's
// built-in ones). Any other function called in TABLE(...) may be a
// connector's pass-through under a name not listed above, so it is judged
// as one.
var readTableFunctions = map[string]bool{"sequence": true, "exclude_columns": true}

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
				if fn, arg := tableFunction(toks[i+2:]); !arg && (fn == nil || !passThrough[fn.Name()] && !readTableFunctions[fn.Name()]) {
					st.PassThrough = true
					if !opts.AllowWrites {
						what := "the table function call TABLE(...)"
						if fn != nil {
							what = "the table function " + fn.Text + "(...)"
						}
						return nil, &Refusal{What: what,
							Why:   "it is not a table function known only to read (" + readTableFunctionList + "), and others such as query, raw_query and procedure run SQL in another system, which can change data there",
							Allow: "set " + SettingAllowWrites + "=true to allow it"}
					}
				}
			}
		}
	}
	if err := judge(st, sql, toks, end, opts); err != nil {
		return nil, err
	}
	return st, nil
}

const readTableFunctionList = "sequence, exclude_columns"

// tableFunction reads the tokens after TABLE's parenthesis: a function
// call [catalog.][schema.]name( returns the name's last part; a table
// argument of a table function (TABLE(t), TABLE(SELECT ...)) returns arg;
// anything else returns neither.
func tableFunction(toks []Token) (fn *Token, arg bool) {
	if len(toks) > 0 && toks[0].Kind == Word && queryKeywords[toks[0].Value] {
		return nil, true
	}
	for i := 0; i+1 < len(toks); i += 2 {
		if toks[i].Kind != Word && toks[i].Kind != QuotedIdent {
			return nil, false
		}
		switch {
		case toks[i+1].IsSymbol("("):
			return &toks[i], false
		case toks[i+1].IsSymbol(")"):
			return nil, true
		case !toks[i+1].IsSymbol("."):
			return nil, false
		}
	}
	return nil, false
}

// writeAt reports whether toks[i] starts a write statement inside a
// statement that starts like a query. INSERT, DELETE, CREATE, DROP and
// ALTER are reserved words in Trino, so never a name; UPDATE, MERGE and
// TRUNCATE are not, and count only in their statements' shapes (UPDATE t
// [AS a] SET, MERGE INTO, TRUNCATE TABLE), so that a column or alias of
// that name stays a read.
func writeAt(toks []Token, i int) bool {
	t := toks[i]
	next := func(k int) Token {
		if i+k < len(toks) {
			return toks[i+k]
		}
		return Token{}
	}
	switch {
	case t.Is("INSERT"), t.Is("DELETE"), t.Is("CREATE"), t.Is("DROP"), t.Is("ALTER"):
		return true
	case t.Is("MERGE"):
		return next(1).Is("INTO")
	case t.Is("TRUNCATE"):
		return next(1).Is("TABLE")
	case t.Is("UPDATE"):
		for k := 1; i+k < len(toks) && k < 12; k++ {
			switch u := toks[i+k]; {
			case u.Is("SET"):
				return k > 1
			case u.Kind == Word, u.Kind == QuotedIdent, u.IsSymbol("."):
			default:
				return false
			}
		}
	}
	return false
}

// writeIn returns the index of the write a query-shaped statement contains
// (the first that is not an INSERT or CREATE when there are several, so
// that the most destructive one decides), or -1.
func writeIn(toks []Token) int {
	found := -1
	for i := range toks {
		if !writeAt(toks, i) {
			continue
		}
		if !toks[i].Is("INSERT") && !toks[i].Is("CREATE") {
			return i
		}
		if found < 0 {
			found = i
		}
	}
	return found
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
			return judgeQuery(st, sql, toks, end, opts)
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
	case queryKeywords[kw]:
		return judgeQuery(st, sql, toks, end, opts)
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

// judgeQuery judges a statement that starts like a query by its effect: a
// read, unless it contains a write (WITH ... DELETE, a CTE body that
// INSERTs), which engines that accept it run as that write. Trino cannot
// parse such statements, but the class must not depend on that.
func judgeQuery(st *Statement, sql string, toks []Token, end int, opts Options) error {
	w := writeIn(toks)
	if w < 0 {
		st.ReadOnly = true
		return nil
	}
	if !opts.AllowWrites {
		return &Refusal{What: toks[0].Text + " ... " + toks[w].Value,
			Why:   "a query that contains " + toks[w].Value + " is that write: it may change data or the catalog, and only read-only statements (" + readList + ") run",
			Allow: "set " + SettingAllowWrites + "=true to allow writes"}
	}
	st.ReadOnly = false
	st.Write = strings.TrimSpace(sql[toks[w].Pos:end])
	return nil
}
