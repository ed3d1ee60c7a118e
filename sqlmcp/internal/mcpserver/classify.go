package mcpserver

import (
	"strings"

	"github.com/mcpfleet/mcpfleet/shared/toolcall"

	"github.com/mcpfleet/mcpfleet/sqlmcp/internal/sqlguard"
)

// Object kinds a statement can write.
const (
	kindTable  = "table"
	kindView   = "view"
	kindMView  = "materialized view"
	kindSchema = "schema"
)

// object is a table, view or schema a statement writes, resolved against
// the query's session catalog and schema as Trino resolves it.
type object struct {
	Kind    string
	Catalog string
	Schema  string
	Name    string // "" for a schema
}

func (o object) String() string {
	if o.Kind == kindSchema {
		return o.Catalog + "." + o.Schema
	}
	return o.Catalog + "." + o.Schema + "." + o.Name
}

// statement is what the one checked statement says about its effect: its
// risk class, its verb and what it names. It is read from the tokens of
// the statement the guard returned (for EXPLAIN ANALYZE, of the statement
// it runs), never from the caller's raw text.
type statement struct {
	Class toolcall.Class
	// Verb is "DELETE", "UPDATE", "MERGE", "INSERT", "CREATE", "DROP",
	// "TRUNCATE", "ALTER", another first keyword (CALL, GRANT, COMMENT, ...)
	// or "PASS-THROUGH".
	Verb string
	// Kind is the object kind after CREATE/DROP/ALTER/TRUNCATE ("table" for
	// DML).
	Kind    string
	Target  *object // nil when the statement names none the server can read
	AsQuery bool    // CREATE TABLE ... AS
	Replace bool    // CREATE OR REPLACE
	IfGuard bool    // IF EXISTS / IF NOT EXISTS
	Cascade bool    // DROP SCHEMA ... CASCADE
	Where   string  // DELETE/UPDATE condition, as written
	Set     string  // UPDATE assignments, as written
	Rest    string  // ALTER: the action after the name, as written
}

// classify reads the risk class of st: read for statements that cannot
// change anything; change for INSERT and CREATE (undone by DELETE or
// DROP); destructive for DELETE, UPDATE, MERGE, DROP, TRUNCATE, ALTER,
// CREATE OR REPLACE (it discards what it replaces), pass-through table
// functions (what they run elsewhere cannot be seen) and every other
// statement the guard admits (CALL, GRANT, REVOKE, COMMENT, ANALYZE, ...):
// unknown is destructive. catalog and schema are the session's, for
// resolving the names the statement gives.
func classify(st *sqlguard.Statement, catalog, schema string) statement {
	if st.PassThrough {
		return statement{Class: toolcall.Destructive, Verb: "PASS-THROUGH"}
	}
	if st.ReadOnly {
		return statement{Class: toolcall.Read, Verb: st.InnerKeyword}
	}
	// A query that contains a write (WITH ... DELETE) is that write.
	sql := st.Inner
	if st.Write != "" {
		sql = st.Write
	}
	toks, err := sqlguard.Tokenize(sql)
	if err != nil || len(toks) == 0 {
		return statement{Class: toolcall.Destructive, Verb: st.InnerKeyword}
	}
	s := statement{Class: toolcall.Destructive, Verb: toks[0].Value, Kind: kindTable}
	p := &parser{sql: sql, toks: toks, i: 1, catalog: catalog, schema: schema}
	switch s.Verb {
	case "INSERT":
		s.Class = toolcall.Change
		if p.keyword("INTO") {
			s.Target = p.name(kindTable)
		}
	case "DELETE":
		if p.keyword("FROM") {
			s.Target = p.name(kindTable)
			s.Where = p.after("WHERE")
		}
	case "UPDATE":
		s.Target = p.name(kindTable)
		s.Set = p.between("SET", "WHERE")
		s.Where = p.after("WHERE")
	case "MERGE":
		if p.keyword("INTO") {
			s.Target = p.name(kindTable)
		}
	case "TRUNCATE":
		if p.keyword("TABLE") {
			s.Target = p.name(kindTable)
		}
	case "CREATE":
		s.Class = toolcall.Change
		if p.keyword("OR") && p.keyword("REPLACE") {
			s.Replace = true
			s.Class = toolcall.Destructive
		}
		s.Kind = p.kind()
		if s.Kind == "" {
			break // ROLE, FUNCTION, CATALOG, ...: nothing whose state is read
		}
		s.IfGuard = p.keyword("IF") && p.keyword("NOT") && p.keyword("EXISTS")
		s.Target = p.name(s.Kind)
		s.AsQuery = s.Kind == kindTable && p.topLevel("AS") >= 0
	case "DROP", "ALTER":
		s.Kind = p.kind()
		if s.Kind == "" {
			break
		}
		s.IfGuard = p.keyword("IF") && p.keyword("EXISTS")
		s.Target = p.name(s.Kind)
		if s.Verb == "ALTER" && p.i < len(toks) {
			s.Rest = strings.TrimSpace(sql[toks[p.i].Pos:])
		}
		s.Cascade = s.Verb == "DROP" && p.topLevel("CASCADE") >= 0
	default:
		s.Kind = ""
	}
	// The preview's wording marks its parts with NUL (see wd); a NUL in a
	// literal is shown escaped.
	s.Where, s.Set, s.Rest = noNUL(s.Where), noNUL(s.Set), noNUL(s.Rest)
	return s
}

func noNUL(s string) string { return strings.ReplaceAll(s, "\x00", `\0`) }

// parser walks the tokens of one statement.
type parser struct {
	sql             string
	toks            []sqlguard.Token
	i               int
	catalog, schema string
}

// keyword consumes kw when it is next.
func (p *parser) keyword(kw string) bool {
	if p.i < len(p.toks) && p.toks[p.i].Is(kw) {
		p.i++
		return true
	}
	return false
}

// kind consumes the object kind after CREATE [OR REPLACE], DROP or ALTER.
func (p *parser) kind() string {
	switch {
	case p.keyword("TABLE"):
		return kindTable
	case p.keyword("VIEW"):
		return kindView
	case p.keyword("SCHEMA"):
		return kindSchema
	case p.i+1 < len(p.toks) && p.toks[p.i].Is("MATERIALIZED") && p.toks[p.i+1].Is("VIEW"):
		p.i += 2
		return kindMView
	}
	return ""
}

// name consumes a one- to three-part name and resolves it as Trino does:
// unquoted parts fold to lower case; missing parts come from the session.
func (p *parser) name(kind string) *object {
	var parts []string
	for p.i < len(p.toks) {
		t := p.toks[p.i]
		switch t.Kind {
		case sqlguard.Word:
			parts = append(parts, strings.ToLower(t.Text))
		case sqlguard.QuotedIdent:
			parts = append(parts, noNUL(t.Value))
		default:
			return nil
		}
		p.i++
		if p.i < len(p.toks) && p.toks[p.i].IsSymbol(".") && len(parts) < 3 {
			p.i++
			continue
		}
		break
	}
	o := &object{Kind: kind}
	if kind == kindSchema {
		switch len(parts) {
		case 1:
			o.Catalog, o.Schema = p.catalog, parts[0]
		case 2:
			o.Catalog, o.Schema = parts[0], parts[1]
		default:
			return nil
		}
		if o.Catalog == "" {
			return nil
		}
		return o
	}
	switch len(parts) {
	case 1:
		o.Catalog, o.Schema, o.Name = p.catalog, p.schema, parts[0]
	case 2:
		o.Catalog, o.Schema, o.Name = p.catalog, parts[0], parts[1]
	case 3:
		o.Catalog, o.Schema, o.Name = parts[0], parts[1], parts[2]
	default:
		return nil
	}
	if o.Catalog == "" || o.Schema == "" {
		return nil
	}
	return o
}

// topLevel returns the index of keyword kw outside parentheses from the
// current position on, or -1.
func (p *parser) topLevel(kw string) int {
	depth := 0
	for j := p.i; j < len(p.toks); j++ {
		t := p.toks[j]
		switch {
		case t.IsSymbol("("):
			depth++
		case t.IsSymbol(")"):
			depth--
		case depth == 0 && t.Is(kw):
			return j
		}
	}
	return -1
}

// after returns the text after the top-level keyword kw, as written.
func (p *parser) after(kw string) string {
	j := p.topLevel(kw)
	if j < 0 || j+1 >= len(p.toks) {
		return ""
	}
	return strings.TrimSpace(p.sql[p.toks[j+1].Pos:])
}

// between returns the text between top-level keywords from and to (or the
// end), as written.
func (p *parser) between(from, to string) string {
	j := p.topLevel(from)
	if j < 0 || j+1 >= len(p.toks) {
		return ""
	}
	end := len(p.sql)
	if k := p.topLevel(to); k > j {
		end = p.toks[k].Pos
	}
	return strings.TrimSpace(p.sql[p.toks[j+1].Pos:end])
}
