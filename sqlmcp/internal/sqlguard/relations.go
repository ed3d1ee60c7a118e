package sqlguard

import (
	"fmt"
	"strings"
)

// Ident is one part of a name as the statement writes it.
type Ident struct {
	Value  string // unquoted: as written; quoted: the name with "" undone
	Quoted bool
}

// canonical is the part as Trino resolves it: unquoted identifiers fold to
// lower case, quoted ones keep their case.
func (id Ident) canonical() string {
	if id.Quoted {
		return id.Value
	}
	return strings.ToLower(id.Value)
}

// sameName reports whether a and b name the same thing under either of the
// case rules an engine may follow; when unsure (mixed quoting) it says no,
// so the name is then checked as a table rather than skipped as a CTE.
func sameName(a, b Ident) bool {
	if a.Quoted != b.Quoted {
		return false
	}
	if a.Quoted {
		return a.Value == b.Value
	}
	return strings.EqualFold(a.Value, b.Value)
}

// Relation is a table or view a statement names (in FROM, JOIN, TABLE,
// INTO, UPDATE, USING ...), 1 to 3 parts as written.
type Relation struct {
	Parts []Ident
	Pos   int // byte offset in Statement.SQL
}

func (r Relation) String() string {
	parts := make([]string, len(r.Parts))
	for i, p := range r.Parts {
		if p.Quoted {
			parts[i] = `"` + strings.ReplaceAll(p.Value, `"`, `""`) + `"`
		} else {
			parts[i] = p.Value
		}
	}
	return strings.Join(parts, ".")
}

// frame is one parenthesis level of the walk in Relations.
type frame struct {
	opener    string // upper-case word before "(" (function or keyword), "" if none
	from      bool   // in a FROM clause: a top-level ',' starts a relation
	expect    bool   // the next token starts a relation
	ctes      []Ident
	with      withState
	recursive bool
	cteName   *Ident // the CTE being defined at this level
	pending   *Ident // CTE whose body this frame is (added to the parent on close)
}

type withState int

const (
	withNone  withState = iota
	withName            // expecting a CTE name (or RECURSIVE)
	withAfter           // after the name: column list or AS
	withBody            // after AS: the body's "("
	withNext            // after the body: ',' or the query
)

// noFromWords open parentheses in which FROM is part of the function's
// syntax, not a relation: EXTRACT(YEAR FROM x), SUBSTRING(s FROM 2), TRIM(x FROM s).
var noFromWords = map[string]bool{"EXTRACT": true, "SUBSTRING": true, "TRIM": true, "POSITION": true, "OVERLAY": true, "NORMALIZE": true}

// endFromWords end a FROM clause at their level.
var endFromWords = map[string]bool{
	"SELECT": true, "WHERE": true, "GROUP": true, "HAVING": true, "WINDOW": true, "ORDER": true,
	"LIMIT": true, "OFFSET": true, "FETCH": true, "UNION": true, "INTERSECT": true, "EXCEPT": true,
	"VALUES": true, "SET": true, "WHEN": true, "RETURNING": true,
}

// Relations lists the tables and views the statement names, wherever they
// appear (subqueries, joins, set operations, CTE bodies, TABLE t, INSERT
// INTO, UPDATE, MERGE ... USING), whatever the engine's plan reads later:
// a scan the optimizer prunes still names its table. One-part names that
// refer to a CTE in scope are left out. It fails, rather than guesses, on
// what it cannot follow: a function call or table function in FROM,
// unbalanced parentheses, or a FROM not followed by a relation.
func (st *Statement) Relations() ([]Relation, error) {
	toks := st.toks
	var out []Relation
	stack := []*frame{{}}
	top := func() *frame { return stack[len(stack)-1] }
	isCTE := func(id Ident) bool {
		for i := len(stack) - 1; i >= 0; i-- {
			for _, c := range stack[i].ctes {
				if sameName(c, id) {
					return true
				}
			}
		}
		return false
	}
	fail := func(t Token, why string) error {
		return fmt.Errorf("%s at byte %d (%q)", why, t.Pos, t.Text)
	}
	next := func(i int) Token {
		if i+1 < len(toks) {
			return toks[i+1]
		}
		return Token{Kind: Symbol, Text: "", Pos: len(st.SQL)}
	}
	ident := func(t Token) Ident { return Ident{Value: t.Value, Quoted: t.Kind == QuotedIdent} }
	for i := 0; i < len(toks); i++ {
		t := toks[i]
		f := top()
		// The WITH list: names, optional column lists, AS, bodies.
		switch f.with {
		case withName:
			if t.Is("RECURSIVE") {
				f.recursive = true
				continue
			}
			if t.Kind != Word && t.Kind != QuotedIdent {
				return nil, fail(t, "a CTE name was expected after WITH")
			}
			id := ident(t)
			f.cteName = &id
			if f.recursive {
				f.ctes = append(f.ctes, id) // visible in its own body
			}
			f.with = withAfter
			continue
		case withAfter:
			switch {
			case t.IsSymbol("("): // column list
				depth := 0
				for ; i < len(toks); i++ {
					if toks[i].IsSymbol("(") {
						depth++
					} else if toks[i].IsSymbol(")") {
						depth--
						if depth == 0 {
							break
						}
					}
				}
				if depth != 0 {
					return nil, fail(t, "unbalanced parentheses")
				}
				continue
			case t.Is("AS"):
				f.with = withBody
				continue
			}
			return nil, fail(t, "AS was expected after a CTE name")
		case withBody:
			if !t.IsSymbol("(") {
				return nil, fail(t, "a parenthesised query was expected after AS")
			}
			body := &frame{}
			if !f.recursive {
				body.pending = f.cteName // visible only after its body
			}
			f.cteName = nil
			f.with = withNext
			stack = append(stack, body)
			continue
		case withNext:
			f.with = withNone
			if t.IsSymbol(",") {
				f.with = withName
				continue
			}
		}
		if f.expect && (t.Is("SELECT") || t.Is("WITH") || t.Is("VALUES")) {
			// "(" in a relation's place opened a query, not a join.
			f.expect, f.from = false, false
		}
		switch {
		case t.IsSymbol("("):
			nf := &frame{}
			if f.expect {
				// A subquery or a parenthesised join: a relation may follow.
				nf.from, nf.expect = true, true
				f.expect = false
			} else if i > 0 && toks[i-1].Kind == Word {
				nf.opener = toks[i-1].Value
			}
			stack = append(stack, nf)
		case t.IsSymbol(")"):
			if len(stack) == 1 {
				return nil, fail(t, "unbalanced parentheses")
			}
			stack = stack[:len(stack)-1]
			if f.pending != nil {
				p := top()
				p.ctes = append(p.ctes, *f.pending)
			}
		case t.IsSymbol(","):
			if f.from {
				f.expect = true
			}
		case f.expect:
			f.expect = false
			switch {
			case t.Is("LATERAL") || t.Is("UNNEST"):
				if !next(i).IsSymbol("(") {
					return nil, fail(t, "a parenthesis was expected")
				}
			case t.Is("TABLE"):
				if next(i).IsSymbol("(") {
					return nil, fail(t, "a table function's reads cannot be determined")
				}
				f.expect = true // (TABLE t): the name follows
			case t.Kind == Word || t.Kind == QuotedIdent:
				r := Relation{Pos: t.Pos, Parts: []Ident{ident(t)}}
				for i+2 < len(toks) && toks[i+1].IsSymbol(".") && (toks[i+2].Kind == Word || toks[i+2].Kind == QuotedIdent) {
					r.Parts = append(r.Parts, ident(toks[i+2]))
					i += 2
				}
				if next(i).IsSymbol(".") {
					return nil, fail(next(i), "a name part was expected after the dot")
				}
				if next(i).IsSymbol("(") {
					return nil, fail(t, "a function call where a table was expected (Trino calls table functions as TABLE(...))")
				}
				if len(r.Parts) > 3 {
					return nil, fail(t, "a table name has more than three parts")
				}
				if len(r.Parts) == 1 && isCTE(r.Parts[0]) {
					continue
				}
				out = append(out, r)
			default:
				return nil, fail(t, "a table name was expected")
			}
		case t.Is("WITH"):
			f.with = withName
		case t.Is("FROM"):
			if i > 0 && toks[i-1].Is("DISTINCT") || noFromWords[f.opener] {
				continue
			}
			f.from, f.expect = true, true
		case t.Is("JOIN") || t.Is("INTO") || t.Is("UPDATE"):
			f.from, f.expect = true, true
		case t.Is("TABLE"):
			if next(i).IsSymbol("(") {
				return nil, fail(t, "a table function's reads cannot be determined")
			}
			f.expect = true
		case t.Is("USING") && !next(i).IsSymbol("("):
			f.expect = true
		case t.Kind == Word && endFromWords[t.Value]:
			f.from, f.expect = false, false
		}
	}
	if len(stack) != 1 {
		return nil, fmt.Errorf("unbalanced parentheses")
	}
	if top().expect || top().with != withNone {
		return nil, fmt.Errorf("the statement ends where a table name was expected")
	}
	return out, nil
}
