package trinotest

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"
)

// AccessRules is a small version of Trino's file-based access control
// (access-control.name=file, security.config-file=rules.json) for the test
// engine, so that tests can show two people asking the same question and
// getting different, correct answers:
//
//	{
//	  "catalogs": [{"user": "alice|bob", "catalog": "sales", "allow": "read-only"},
//	               {"catalog": ".*", "allow": "none"}],
//	  "tables": [{"user": "alice", "catalog": "sales", "schema": "public", "table": ".*",
//	              "privileges": ["SELECT"]},
//	             {"user": "bob", "catalog": "sales", "schema": "public", "table": "customers",
//	              "privileges": ["SELECT"], "filter": "country = 'US'",
//	              "columns": [{"name": "email", "mask": "'***'"}, {"name": "balance", "allow": false}]}],
//	  "impersonation": [{"original_user": "svc", "new_user": ".*"}]
//	}
//
// As in Trino, user, catalog, schema and table are regular expressions
// matched against the whole name (absent means any), the first matching rule
// of a section decides, no matching rule denies, and an absent section
// allows everything. A filter is a boolean SQL expression applied to every
// read of the table; a mask replaces a column's value; a column with
// "allow": false fails any query naming it (or selecting *). current_user in
// a filter or mask is the querying user.
//
// Scope of this fake (a real Trino is not embeddable): rules govern reads
// (SELECT, WITH, VALUES, TABLE, EXPLAIN) of the tables named after FROM and
// JOIN; writes and DDL are refused for every user; metadata statements (SHOW,
// DESCRIBE, information_schema) are not filtered.
type AccessRules struct {
	Catalogs      []CatalogRule       `json:"catalogs"`
	Tables        []TableRule         `json:"tables"`
	Impersonation []ImpersonationRule `json:"impersonation"`

	hasCatalogs, hasTables bool
}

// CatalogRule grants access to catalogs: allow is all, read-only or none.
type CatalogRule struct {
	User    string `json:"user"`
	Catalog string `json:"catalog"`
	Allow   string `json:"allow"`

	user, catalog *regexp.Regexp
}

// TableRule grants privileges on tables, with an optional row filter and
// column rules.
type TableRule struct {
	User       string       `json:"user"`
	Catalog    string       `json:"catalog"`
	Schema     string       `json:"schema"`
	Table      string       `json:"table"`
	Privileges []string     `json:"privileges"`
	Filter     string       `json:"filter"`
	Columns    []ColumnRule `json:"columns"`

	user, catalog, schema, table *regexp.Regexp
}

// ColumnRule hides (allow false) or masks one column.
type ColumnRule struct {
	Name  string `json:"name"`
	Allow *bool  `json:"allow"`
	Mask  string `json:"mask"`
}

// ImpersonationRule lets original_user run queries as new_user.
type ImpersonationRule struct {
	OriginalUser string `json:"original_user"`
	NewUser      string `json:"new_user"`
	Allow        *bool  `json:"allow"`

	orig, next *regexp.Regexp
}

// WithAccessRules enforces rules on every query.
func WithAccessRules(r *AccessRules) Option { return func(o *Options) { o.Rules = r } }

// LoadAccessRules reads an access-control file.
func LoadAccessRules(path string) (*AccessRules, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read access rules: %w", err)
	}
	return ParseAccessRules(b)
}

var privileges = []string{"SELECT", "INSERT", "DELETE", "UPDATE", "OWNERSHIP", "GRANT_SELECT"}

// ParseAccessRules reads the JSON of an access-control file and reports
// every mistake it can find before any query runs.
func ParseAccessRules(data []byte) (*AccessRules, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var r AccessRules
	if err := dec.Decode(&r); err != nil {
		return nil, fmt.Errorf("access rules: %w", err)
	}
	if dec.More() {
		return nil, errors.New("access rules: more than one JSON value")
	}
	var raw map[string]json.RawMessage
	_ = json.Unmarshal(data, &raw)
	_, r.hasCatalogs = raw["catalogs"]
	_, r.hasTables = raw["tables"]
	var errs []error
	re := func(where, field, pat string) *regexp.Regexp {
		if pat == "" {
			pat = ".*"
		}
		x, err := regexp.Compile(`^(?:` + pat + `)$`)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %s is not a regular expression: %w", where, field, err))
		}
		return x
	}
	for i := range r.Catalogs {
		c := &r.Catalogs[i]
		where := fmt.Sprintf("catalogs[%d]", i)
		c.user, c.catalog = re(where, "user", c.User), re(where, "catalog", c.Catalog)
		if !slices.Contains([]string{"all", "read-only", "none"}, c.Allow) {
			errs = append(errs, fmt.Errorf("%s: allow must be all, read-only or none, not %q", where, c.Allow))
		}
	}
	for i := range r.Tables {
		t := &r.Tables[i]
		where := fmt.Sprintf("tables[%d]", i)
		t.user, t.catalog, t.schema, t.table = re(where, "user", t.User), re(where, "catalog", t.Catalog), re(where, "schema", t.Schema), re(where, "table", t.Table)
		if t.Privileges == nil {
			errs = append(errs, fmt.Errorf("%s: privileges is required ([] denies)", where))
		}
		for _, p := range t.Privileges {
			if !slices.Contains(privileges, p) {
				errs = append(errs, fmt.Errorf("%s: unknown privilege %q (use %s)", where, p, strings.Join(privileges, ", ")))
			}
		}
		if t.Filter != "" {
			if _, err := trinoLex(t.Filter); err != nil || strings.Contains(t.Filter, ";") {
				errs = append(errs, fmt.Errorf("%s: filter is not one SQL expression", where))
			}
		}
		seen := map[string]bool{}
		for j, c := range t.Columns {
			cw := fmt.Sprintf("%s.columns[%d]", where, j)
			switch {
			case c.Name == "":
				errs = append(errs, fmt.Errorf("%s: name is required", cw))
			case seen[strings.ToLower(c.Name)]:
				errs = append(errs, fmt.Errorf("%s: column %q has two rules", cw, c.Name))
			case c.Allow != nil && !*c.Allow && c.Mask != "":
				errs = append(errs, fmt.Errorf("%s: a denied column cannot also be masked", cw))
			case c.Mask != "":
				if _, err := trinoLex(c.Mask); err != nil || strings.Contains(c.Mask, ";") {
					errs = append(errs, fmt.Errorf("%s: mask is not one SQL expression", cw))
				}
			}
			seen[strings.ToLower(c.Name)] = true
		}
	}
	for i := range r.Impersonation {
		m := &r.Impersonation[i]
		where := fmt.Sprintf("impersonation[%d]", i)
		m.orig, m.next = re(where, "original_user", m.OriginalUser), re(where, "new_user", m.NewUser)
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return &r, nil
}

func denied(format string, a ...any) *trinoError {
	return newError("PERMISSION_DENIED", "Access Denied: "+fmt.Sprintf(format, a...), 0, 0)
}

func (r *AccessRules) catalogAllow(user, catalog string) string {
	if !r.hasCatalogs {
		return "all"
	}
	for _, c := range r.Catalogs {
		if c.user.MatchString(user) && c.catalog.MatchString(catalog) {
			return c.Allow
		}
	}
	return "none"
}

func (r *AccessRules) tableRule(user, catalog, schema, table string) *TableRule {
	if !r.hasTables {
		return &TableRule{Privileges: privileges}
	}
	for i, t := range r.Tables {
		if t.user.MatchString(user) && t.catalog.MatchString(catalog) && t.schema.MatchString(schema) && t.table.MatchString(table) {
			return &r.Tables[i]
		}
	}
	return nil
}

func (r *AccessRules) mayImpersonate(orig, next string) bool {
	for _, m := range r.Impersonation {
		if m.orig.MatchString(orig) && m.next.MatchString(next) {
			return m.Allow == nil || *m.Allow
		}
	}
	return false
}

// tableRef is one relation named after FROM or JOIN.
type tableRef struct {
	from, to               int // token indexes [from, to)
	catalog, schema, table string
	aliased                bool
}

// notAlias are the words that can follow a relation without being its alias.
var notAlias = map[string]bool{
	"WHERE": true, "JOIN": true, "LEFT": true, "RIGHT": true, "INNER": true, "FULL": true, "CROSS": true,
	"NATURAL": true, "ON": true, "USING": true, "GROUP": true, "ORDER": true, "LIMIT": true, "OFFSET": true,
	"UNION": true, "EXCEPT": true, "INTERSECT": true, "HAVING": true, "WINDOW": true, "FETCH": true,
	"TABLESAMPLE": true, "FOR": true, "MATCH_RECOGNIZE": true,
}

var readStatements = map[string]bool{"SELECT": true, "WITH": true, "VALUES": true, "TABLE": true, "(": true, "EXPLAIN": true}
var sessionStatements = map[string]bool{"SHOW": true, "DESCRIBE": true, "DESC": true, "USE": true, "SET": true, "RESET": true, "START": true, "COMMIT": true, "ROLLBACK": true}

// apply checks sqlText against the rules for the session's user and
// returns it with the filtered and masked tables substituted.
func (r *AccessRules) apply(ctx context.Context, db *sql.DB, sess session, sqlText string, toks []token) (string, []token, *trinoError) {
	user := sess.principal
	if sess.user != "" && sess.user != sess.principal {
		if !r.mayImpersonate(sess.principal, sess.user) {
			return "", nil, denied("User %s cannot impersonate user %s", sess.principal, sess.user)
		}
		user = sess.user
	}
	first := strings.ToUpper(toks[0].text)
	if sqlText, toks = tableAsSelect(sqlText, toks); strings.EqualFold(toks[0].text, "SELECT") {
		first = "SELECT"
	}
	if sessionStatements[first] {
		return sqlText, toks, nil
	}
	if !readStatements[first] {
		return "", nil, denied("Cannot run %s: the test engine's access rules allow reads only", first)
	}
	ctes := map[string]bool{}
	for i := 1; i+2 < len(toks); i++ {
		if toks[i].isName() && toks[i+1].is("AS") && toks[i+2].isSymbol("(") && (toks[i-1].is("WITH") || toks[i-1].is("RECURSIVE") || toks[i-1].isSymbol(",")) {
			ctes[toks[i].name()] = true
		}
	}
	var refs []tableRef
	var relErr *trinoError
	relation := func(j int) int { // reads the relations of one FROM list from j
		for j < len(toks) {
			if toks[j].is("LATERAL") {
				j++
			}
			if j >= len(toks) {
				return j
			}
			if toks[j].isSymbol("(") {
				j = matchParen(toks, j) + 1
			} else if toks[j].isName() {
				start := j
				var parts []string
				for j < len(toks) && toks[j].isName() {
					parts = append(parts, toks[j].name())
					if j+1 < len(toks) && toks[j+1].isSymbol(".") {
						j += 2
						continue
					}
					j++
					break
				}
				if j < len(toks) && toks[j].isSymbol("(") {
					if !(len(parts) == 1 && (parts[0] == "unnest")) && relErr == nil {
						relErr = denied("Cannot use table function %s under the test engine's access rules", strings.Join(parts, "."))
					}
					j = matchParen(toks, j) + 1
				} else if !(len(parts) == 1 && ctes[parts[0]]) {
					ref := tableRef{from: start, to: j, catalog: sess.catalog, schema: sess.schema}
					switch len(parts) {
					case 1:
						ref.table = parts[0]
					case 2:
						ref.schema, ref.table = parts[0], parts[1]
					default:
						ref.catalog, ref.schema, ref.table = parts[len(parts)-3], parts[len(parts)-2], parts[len(parts)-1]
					}
					if j < len(toks) && (toks[j].is("AS") || (toks[j].isName() && !(toks[j].kind == tokWord && notAlias[strings.ToUpper(toks[j].text)]))) {
						ref.aliased = true
					}
					refs = append(refs, ref)
				}
			} else {
				return j
			}
			// skip an alias and its column list
			if j < len(toks) && toks[j].is("AS") {
				j++
			}
			if j < len(toks) && toks[j].isName() && !(toks[j].kind == tokWord && notAlias[strings.ToUpper(toks[j].text)]) {
				j++
				if j < len(toks) && toks[j].isSymbol("(") {
					j = matchParen(toks, j) + 1
				}
			}
			if j < len(toks) && toks[j].isSymbol(",") {
				j++
				continue
			}
			return j
		}
		return j
	}
	for i, t := range toks {
		if t.is("FROM") || t.is("JOIN") {
			relation(i + 1)
		}
	}
	if relErr != nil {
		return "", nil, relErr
	}
	if len(refs) == 0 {
		return sqlText, toks, nil
	}
	var b strings.Builder
	last := 0
	for _, ref := range refs {
		if ref.catalog == "" || ref.schema == "" || ref.schema == "information_schema" {
			continue // unresolved names fail in the engine; metadata is not filtered
		}
		if a := r.catalogAllow(user, ref.catalog); a == "none" {
			return "", nil, denied("Cannot access catalog %s", ref.catalog)
		}
		qualified := ref.catalog + "." + ref.schema + "." + ref.table
		rule := r.tableRule(user, ref.catalog, ref.schema, ref.table)
		if rule == nil || !(slices.Contains(rule.Privileges, "SELECT") || slices.Contains(rule.Privileges, "OWNERSHIP")) {
			return "", nil, denied("Cannot select from table %s", qualified)
		}
		if rule.Filter == "" && len(rule.Columns) == 0 {
			continue
		}
		cols, err := tableColumns(ctx, db, ref.catalog, ref.schema, ref.table)
		if err != nil || len(cols) == 0 {
			return "", nil, newError("TABLE_NOT_FOUND", fmt.Sprintf("line 1:1: Table '%s' does not exist", qualified), 1, 1)
		}
		var sel []string
		for _, c := range cols {
			cr := columnRule(rule, c)
			switch {
			case cr != nil && cr.Allow != nil && !*cr.Allow:
				if namesColumn(toks, c) {
					return "", nil, denied("Cannot select from columns [%s] in table or view %s", c, qualified)
				}
			case cr != nil && cr.Mask != "":
				sel = append(sel, "("+withUser(cr.Mask, user)+") AS "+quoteIdent(c))
			default:
				sel = append(sel, quoteIdent(c))
			}
		}
		sub := "(SELECT " + strings.Join(sel, ", ") + " FROM " + quoteIdent(ref.catalog) + "." + quoteIdent(ref.schema) + "." + quoteIdent(ref.table)
		if rule.Filter != "" {
			sub += " WHERE (" + withUser(rule.Filter, user) + ")"
		}
		sub += ")"
		if !ref.aliased {
			sub += " AS " + quoteIdent(ref.table)
		}
		b.WriteString(sqlText[last:toks[ref.from].start])
		b.WriteString(sub)
		last = toks[ref.to-1].end
	}
	if last == 0 {
		return sqlText, toks, nil
	}
	b.WriteString(sqlText[last:])
	out := b.String()
	return out, lex(out), nil
}

func columnRule(t *TableRule, col string) *ColumnRule {
	for i, c := range t.Columns {
		if strings.EqualFold(c.Name, col) {
			return &t.Columns[i]
		}
	}
	return nil
}

// namesColumn reports whether the query names col or selects *: a denied
// column fails both, as in Trino.
func namesColumn(toks []token, col string) bool {
	for i, t := range toks {
		if t.isName() && strings.EqualFold(t.name(), col) {
			return true
		}
		if t.isSymbol("*") && i > 0 && (toks[i-1].is("SELECT") || toks[i-1].is("DISTINCT") || toks[i-1].is("ALL") || toks[i-1].isSymbol(",") || toks[i-1].isSymbol(".")) {
			return true
		}
	}
	return false
}

// withUser replaces current_user in expr by the querying user.
func withUser(expr, user string) string {
	toks := lex(expr)
	var b strings.Builder
	last := 0
	for _, t := range toks {
		if t.is("current_user") {
			b.WriteString(expr[last:t.start])
			b.WriteString("'" + strings.ReplaceAll(user, "'", "''") + "'")
			last = t.end
		}
	}
	b.WriteString(expr[last:])
	return b.String()
}

func matchParen(toks []token, open int) int {
	depth := 0
	for i := open; i < len(toks); i++ {
		switch {
		case toks[i].isSymbol("("):
			depth++
		case toks[i].isSymbol(")"):
			depth--
			if depth == 0 {
				return i
			}
		}
	}
	return len(toks) - 1
}

func tableColumns(ctx context.Context, db *sql.DB, catalog, schema, table string) ([]string, error) {
	rows, err := db.QueryContext(ctx, `SELECT column_name FROM information_schema.columns
		WHERE table_catalog = ? AND table_schema = ? AND table_name = ? ORDER BY ordinal_position`, catalog, schema, table)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var cols []string
	for rows.Next() {
		var c string
		if err := rows.Scan(&c); err != nil {
			return nil, err
		}
		cols = append(cols, c)
	}
	return cols, rows.Err()
}

// tableAsSelect rewrites every TABLE t query (a statement, a subquery or a
// set operand) as SELECT * FROM t, so the relation is read after FROM like
// any other.
func tableAsSelect(sqlText string, toks []token) (string, []token) {
	var b strings.Builder
	last := 0
	for i, t := range toks {
		if !t.is("TABLE") || i+1 >= len(toks) || !toks[i+1].isName() {
			continue
		}
		if i > 0 {
			p := toks[i-1]
			if !(p.isSymbol("(") || p.is("UNION") || p.is("EXCEPT") || p.is("INTERSECT") || p.is("ALL") || p.is("DISTINCT") || p.is("AS")) {
				continue
			}
		}
		b.WriteString(sqlText[last:t.start])
		b.WriteString("SELECT * FROM")
		last = t.end
	}
	if last == 0 {
		return sqlText, toks
	}
	b.WriteString(sqlText[last:])
	out := b.String()
	return out, lex(out)
}
