package trinotest

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"sync"

	"github.com/duckdb/duckdb-go/v2"
)

// systemSchemas are the schemas of Trino's built-in system catalog, which
// the engine lists but does not populate.
var systemSchemas = []string{"information_schema", "jdbc", "metadata", "runtime"}

// likeClause parses [LIKE 'p' [ESCAPE 'e']] at toks[i].
func likeClause(sqlText string, toks []token, i int) (pattern, escape *string, next int, e *trinoError) {
	if i >= len(toks) {
		return nil, nil, i, nil
	}
	if !toks[i].is("LIKE") {
		return nil, nil, i, syntaxAt(sqlText, toks[i])
	}
	if i+1 >= len(toks) || toks[i+1].kind != tokString {
		return nil, nil, i, syntaxAt(sqlText, lastOr(toks, i+1))
	}
	p := toks[i+1].text
	i += 2
	if i < len(toks) && toks[i].is("ESCAPE") {
		if i+1 >= len(toks) || toks[i+1].kind != tokString {
			return nil, nil, i, syntaxAt(sqlText, lastOr(toks, i+1))
		}
		esc := toks[i+1].text
		escape = &esc
		i += 2
	}
	if i < len(toks) {
		return nil, nil, i, syntaxAt(sqlText, toks[i])
	}
	return &p, escape, i, nil
}

func lastOr(toks []token, i int) token {
	if i < len(toks) {
		return toks[i]
	}
	t := toks[len(toks)-1]
	return token{kind: tokSymbol, text: "<EOF>", start: t.end, end: t.end}
}

func syntaxAt(sqlText string, t token) *trinoError {
	line, col := lineCol(sqlText, t.start)
	text := t.text
	if t.kind == tokString {
		text = "'" + text + "'"
	}
	return newError("SYNTAX_ERROR", fmt.Sprintf("mismatched input '%s'", text), line, col)
}

// likeFilter appends "AND col LIKE ? [ESCAPE ?]" to a query.
func likeFilter(col string, pattern, escape *string, args []any) (string, []any) {
	if pattern == nil {
		return "", args
	}
	args = append(args, *pattern)
	if escape != nil {
		args = append(args, *escape)
		return " AND " + col + " LIKE ? ESCAPE ?", args
	}
	return " AND " + col + " LIKE ?", args
}

// stringColumn runs a one-column query and answers it as one varchar column
// called name.
func (s *Server) stringColumn(q *query, name, query string, args ...any) {
	rows, err := s.db.QueryContext(q.ctx, query, args...)
	if err != nil {
		q.sendError(fromDuckDB(query, err, q.ctx))
		return
	}
	defer rows.Close()
	var out [][]any
	for rows.Next() {
		var v string
		if err := rows.Scan(&v); err != nil {
			q.sendError(fromDuckDB(query, err, q.ctx))
			return
		}
		out = append(out, []any{v})
	}
	if err := rows.Err(); err != nil {
		q.sendError(fromDuckDB(query, err, q.ctx))
		return
	}
	q.sendStatic([]columnJSON{newColumn(name, typeVarchar)}, out, "", nil)
}

// catalogs lists the Trino catalogs: the attached databases plus system.
func (s *Server) catalogs(ctx context.Context) ([]string, error) {
	rows, err := s.db.QueryContext(ctx, "SELECT database_name FROM duckdb_databases()")
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []string{"system"}
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			return nil, err
		}
		if !isHiddenCatalog(n) {
			out = append(out, n)
		}
	}
	sort.Strings(out)
	return out, rows.Err()
}

func (s *Server) hasCatalog(ctx context.Context, name string) bool {
	cats, _ := s.catalogs(ctx)
	for _, c := range cats {
		if c == name {
			return true
		}
	}
	return false
}

func (s *Server) hasSchema(ctx context.Context, catalog, schema string) bool {
	if catalog == "system" {
		for _, n := range systemSchemas {
			if n == schema {
				return true
			}
		}
		return false
	}
	var n int
	_ = s.db.QueryRowContext(ctx, "SELECT count(*) FROM "+quoteIdent(catalog)+"."+quoteIdent(infoSchema)+".schemata WHERE schema_name = ?", schema).Scan(&n)
	return n > 0
}

func catalogNotFound(name string) *trinoError {
	return newError("CATALOG_NOT_FOUND", fmt.Sprintf("Catalog '%s' not found", name), 1, 1)
}

func schemaNotFound(catalog, schema string) *trinoError {
	return newError("SCHEMA_NOT_FOUND", fmt.Sprintf("Schema '%s' does not exist", catalog+"."+schema), 1, 1)
}

func (s *Server) runShow(q *query, sess session, sqlText string, toks []token) {
	if len(toks) < 2 {
		q.sendError(syntaxAt(sqlText, lastOr(toks, 1)))
		return
	}
	what := toks[1]
	switch {
	case what.is("CATALOGS"):
		pattern, escape, _, e := likeClause(sqlText, toks, 2)
		if e != nil {
			q.sendError(e)
			return
		}
		cats, err := s.catalogs(q.ctx)
		if err != nil {
			q.sendError(fromDuckDB("", err, q.ctx))
			return
		}
		values := make([]string, 0, len(cats))
		for _, c := range cats {
			values = append(values, "("+quoteString(c)+")")
		}
		where, args := likeFilter("name", pattern, escape, nil)
		s.stringColumn(q, "Catalog", "SELECT name FROM (VALUES "+strings.Join(values, ",")+") v(name) WHERE true"+where+" ORDER BY name", args...)
	case what.is("SCHEMAS") || what.is("DATABASES"):
		catalog, i := sess.catalog, 2
		if i < len(toks) && (toks[i].is("FROM") || toks[i].is("IN")) {
			parts, next := qualifiedName(toks, i+1)
			if len(parts) != 1 {
				q.sendError(syntaxAt(sqlText, lastOr(toks, i+1)))
				return
			}
			catalog, i = parts[0], next
		}
		pattern, escape, _, e := likeClause(sqlText, toks, i)
		if e != nil {
			q.sendError(e)
			return
		}
		if catalog == "" {
			q.sendError(newError("MISSING_CATALOG_NAME", "Catalog must be specified when session catalog is not set", 1, 1))
			return
		}
		if !s.hasCatalog(q.ctx, catalog) {
			q.sendError(catalogNotFound(catalog))
			return
		}
		if catalog == "system" {
			values := make([]string, len(systemSchemas))
			for i, n := range systemSchemas {
				values[i] = "(" + quoteString(n) + ")"
			}
			where, args := likeFilter("name", pattern, escape, nil)
			s.stringColumn(q, "Schema", "SELECT name FROM (VALUES "+strings.Join(values, ",")+") v(name) WHERE true"+where+" ORDER BY name", args...)
			return
		}
		where, args := likeFilter("schema_name", pattern, escape, nil)
		s.stringColumn(q, "Schema", "SELECT schema_name FROM "+quoteIdent(catalog)+"."+quoteIdent(infoSchema)+".schemata WHERE true"+where+" ORDER BY schema_name", args...)
	case what.is("TABLES"):
		catalog, schema, i := sess.catalog, sess.schema, 2
		if i < len(toks) && (toks[i].is("FROM") || toks[i].is("IN")) {
			parts, next := qualifiedName(toks, i+1)
			switch len(parts) {
			case 1:
				schema = parts[0]
			case 2:
				catalog, schema = parts[0], parts[1]
			default:
				q.sendError(syntaxAt(sqlText, lastOr(toks, i+1)))
				return
			}
			i = next
		}
		pattern, escape, _, e := likeClause(sqlText, toks, i)
		if e != nil {
			q.sendError(e)
			return
		}
		if catalog == "" {
			q.sendError(newError("MISSING_CATALOG_NAME", "Catalog must be specified when session catalog is not set", 1, 1))
			return
		}
		if schema == "" {
			q.sendError(newError("MISSING_SCHEMA_NAME", "Schema must be specified when session schema is not set", 1, 1))
			return
		}
		if !s.hasCatalog(q.ctx, catalog) {
			q.sendError(catalogNotFound(catalog))
			return
		}
		if !s.hasSchema(q.ctx, catalog, schema) {
			q.sendError(schemaNotFound(catalog, schema))
			return
		}
		if catalog == "system" {
			q.sendStatic([]columnJSON{newColumn("Table", typeVarchar)}, nil, "", nil)
			return
		}
		where, args := likeFilter("table_name", pattern, escape, []any{schema})
		s.stringColumn(q, "Table", "SELECT table_name FROM "+quoteIdent(catalog)+"."+quoteIdent(infoSchema)+".tables WHERE table_schema = ?"+where+" ORDER BY table_name", args...)
	case what.is("COLUMNS"):
		if len(toks) < 3 || !(toks[2].is("FROM") || toks[2].is("IN")) {
			q.sendError(syntaxAt(sqlText, lastOr(toks, 2)))
			return
		}
		s.runDescribe(q, sess, sqlText, toks, 3)
	case what.is("CREATE") && len(toks) > 2 && (toks[2].is("TABLE") || toks[2].is("VIEW")):
		s.runShowCreate(q, sess, sqlText, toks)
	default:
		q.sendError(newError("NOT_SUPPORTED", fmt.Sprintf("SHOW %s is not supported by the trinotest engine (supported: SHOW CATALOGS, SHOW SCHEMAS, SHOW TABLES, SHOW COLUMNS, SHOW CREATE TABLE|VIEW)", strings.ToUpper(what.text)), 1, 1))
	}
}

// resolveTable qualifies a 1-, 2- or 3-part table name with the session.
func resolveTable(sess session, parts []string) (catalog, schema, table string, e *trinoError) {
	switch len(parts) {
	case 1:
		catalog, schema, table = sess.catalog, sess.schema, parts[0]
	case 2:
		catalog, schema, table = sess.catalog, parts[0], parts[1]
	case 3:
		catalog, schema, table = parts[0], parts[1], parts[2]
	default:
		return "", "", "", newError("SYNTAX_ERROR", "Too many dots in table name: "+strings.Join(parts, "."), 1, 1)
	}
	if catalog == "" {
		return "", "", "", newError("MISSING_CATALOG_NAME", "Catalog must be specified when session catalog is not set", 1, 1)
	}
	if schema == "" {
		return "", "", "", newError("MISSING_SCHEMA_NAME", "Schema must be specified when session schema is not set", 1, 1)
	}
	return catalog, schema, table, nil
}

// runDescribe answers DESCRIBE t and SHOW COLUMNS FROM t [LIKE p] with
// Trino's columns Column, Type, Extra, Comment.
func (s *Server) runDescribe(q *query, sess session, sqlText string, toks []token, at int) {
	if at < len(toks) && (toks[at].is("INPUT") || toks[at].is("OUTPUT")) {
		q.sendError(newError("NOT_SUPPORTED", "DESCRIBE INPUT/OUTPUT is not supported by the trinotest engine", 1, 1))
		return
	}
	parts, next := qualifiedName(toks, at)
	if len(parts) == 0 {
		q.sendError(syntaxAt(sqlText, lastOr(toks, at)))
		return
	}
	pattern, escape, _, e := likeClause(sqlText, toks, next)
	if e != nil {
		q.sendError(e)
		return
	}
	catalog, schema, table, e := resolveTable(sess, parts)
	if e != nil {
		q.sendError(e)
		return
	}
	full := catalog + "." + schema + "." + table
	if !s.hasCatalog(q.ctx, catalog) {
		q.sendError(catalogNotFound(catalog))
		return
	}
	if catalog == "system" || !s.hasSchema(q.ctx, catalog, schema) {
		q.sendError(schemaNotFound(catalog, schema))
		return
	}
	cols := []columnJSON{
		newColumn("Column", typeVarchar), newColumn("Type", typeVarchar),
		newColumn("Extra", typeVarchar), newColumn("Comment", typeVarchar),
	}
	is := quoteIdent(catalog) + "." + quoteIdent(infoSchema)
	// Exact name first; DuckDB itself resolves names case-insensitively.
	var actual string
	err := s.db.QueryRowContext(q.ctx, "SELECT table_name FROM "+is+".tables WHERE table_schema = ? AND lower(table_name) = lower(?) ORDER BY table_name = ? DESC LIMIT 1", schema, table, table).Scan(&actual)
	if err == sql.ErrNoRows {
		q.sendError(newError("TABLE_NOT_FOUND", fmt.Sprintf("Table '%s' does not exist", full), 1, 1))
		return
	}
	if err != nil {
		q.sendError(fromDuckDB("", err, q.ctx))
		return
	}
	where, args := likeFilter("column_name", pattern, escape, []any{schema, actual})
	columnsOf := "SELECT column_name, data_type, coalesce(comment, '') AS comment, ordinal_position AS ord FROM " + is + ".columns WHERE table_schema = ? AND table_name = ?"
	if schema == "information_schema" {
		// The views behind information_schema live in the hidden schema.
		args = append([]any{catalog, infoSchema}, args[1:]...)
		columnsOf = "SELECT column_name, trino_type(data_type) AS data_type, '' AS comment, column_index AS ord FROM duckdb_columns() WHERE database_name = ? AND schema_name = ? AND table_name = ?"
	}
	rows, err := s.db.QueryContext(q.ctx, "SELECT column_name, data_type, comment FROM ("+columnsOf+") WHERE true"+where+" ORDER BY ord", args...)
	if err != nil {
		q.sendError(fromDuckDB("", err, q.ctx))
		return
	}
	defer rows.Close()
	var out [][]any
	for rows.Next() {
		var name, typ, comment string
		if err := rows.Scan(&name, &typ, &comment); err != nil {
			q.sendError(fromDuckDB("", err, q.ctx))
			return
		}
		out = append(out, []any{name, typ, "", comment})
	}
	if err := rows.Err(); err != nil {
		q.sendError(fromDuckDB("", err, q.ctx))
		return
	}
	q.sendStatic(cols, out, "", nil)
}

func (s *Server) runUse(q *query, sess session, sqlText string, toks []token) {
	parts, next := qualifiedName(toks, 1)
	if next < len(toks) || len(parts) == 0 || len(parts) > 2 {
		q.sendError(syntaxAt(sqlText, lastOr(toks, next)))
		return
	}
	catalog, schema := sess.catalog, parts[0]
	if len(parts) == 2 {
		catalog, schema = parts[0], parts[1]
	}
	if catalog == "" {
		q.sendError(newError("MISSING_CATALOG_NAME", "Catalog must be specified when session catalog is not set", 1, 1))
		return
	}
	if !s.hasCatalog(q.ctx, catalog) {
		q.sendError(catalogNotFound(catalog))
		return
	}
	if !s.hasSchema(q.ctx, catalog, schema) {
		q.sendError(newError("SCHEMA_NOT_FOUND", fmt.Sprintf("Schema does not exist: %s.%s", catalog, schema), 1, 1))
		return
	}
	hdr := http.Header{}
	if len(parts) == 2 {
		hdr.Set("X-Trino-Set-Catalog", catalog)
	}
	hdr.Set("X-Trino-Set-Schema", schema)
	q.sendStatic(nil, nil, "USE", hdr)
}

func (s *Server) runSetSession(q *query, sqlText string, toks []token) {
	parts, next := qualifiedName(toks, 2)
	if len(parts) == 0 || next >= len(toks) || !toks[next].isSymbol("=") || next+1 >= len(toks) {
		q.sendError(syntaxAt(sqlText, lastOr(toks, next)))
		return
	}
	value := strings.TrimSpace(sqlText[toks[next+1].start:])
	if toks[next+1].kind == tokString && next+2 == len(toks) {
		value = toks[next+1].text
	}
	hdr := http.Header{}
	hdr.Set("X-Trino-Set-Session", strings.Join(parts, ".")+"="+value)
	q.sendStatic(nil, nil, "SET SESSION", hdr)
}

func (s *Server) runResetSession(q *query, sqlText string, toks []token) {
	parts, next := qualifiedName(toks, 2)
	if len(parts) == 0 || next < len(toks) {
		q.sendError(syntaxAt(sqlText, lastOr(toks, next)))
		return
	}
	hdr := http.Header{}
	hdr.Set("X-Trino-Clear-Session", strings.Join(parts, "."))
	q.sendStatic(nil, nil, "RESET SESSION", hdr)
}

// transaction is an open START TRANSACTION: a pinned DuckDB connection.
type transaction struct {
	id       string
	conn     *sql.Conn
	readOnly bool
	mu       sync.Mutex
}

func (t *transaction) close() {
	t.mu.Lock()
	defer t.mu.Unlock()
	_, _ = t.conn.ExecContext(context.Background(), "ROLLBACK")
	_ = t.conn.Close()
}

func (s *Server) runStartTransaction(q *query, sess session, toks []token) {
	if s.opts.NoTransactions {
		q.sendError(newError("NOT_SUPPORTED", "This connector does not support transactions", 1, 1))
		return
	}
	if id := sess.transactionID; id != "" && id != "NONE" {
		q.sendError(newError("NOT_SUPPORTED", "Nested transactions not supported", 1, 1))
		return
	}
	readOnly := false
	for i := 2; i+1 < len(toks); i++ {
		if toks[i].is("READ") && toks[i+1].is("ONLY") {
			readOnly = true
		}
	}
	c, err := s.db.Conn(context.Background())
	if err != nil {
		q.sendError(newError("GENERIC_INTERNAL_ERROR", "get a DuckDB connection: "+err.Error(), 0, 0))
		return
	}
	if _, err := c.ExecContext(q.ctx, "BEGIN TRANSACTION"); err != nil {
		_ = c.Close()
		q.sendError(fromDuckDB("", err, q.ctx))
		return
	}
	var b [16]byte
	_, _ = rand.Read(b[:])
	tx := &transaction{id: hex.EncodeToString(b[:]), conn: c, readOnly: readOnly}
	s.mu.Lock()
	s.txs[tx.id] = tx
	s.txStarters[tx.id] = TxStarter{User: sess.user, ClientTags: strings.Join(sess.clientTags, ","), ClientInfo: sess.clientInfo}
	s.mu.Unlock()
	hdr := http.Header{}
	hdr.Set("X-Trino-Started-Transaction-Id", tx.id)
	q.sendStatic(nil, nil, "START TRANSACTION", hdr)
}

func (s *Server) runEndTransaction(q *query, sess session, verb string) {
	id := sess.transactionID
	s.mu.Lock()
	tx := s.txs[id]
	delete(s.txs, id)
	s.mu.Unlock()
	if tx == nil {
		q.sendError(newError("NOT_IN_TRANSACTION", "No transaction in progress", 1, 1))
		return
	}
	tx.mu.Lock()
	_, err := tx.conn.ExecContext(context.Background(), verb)
	_ = tx.conn.Close()
	tx.mu.Unlock()
	hdr := http.Header{}
	hdr.Set("X-Trino-Clear-Transaction-Id", "true")
	if err != nil && verb == "COMMIT" {
		q.sendError(fromDuckDB("", err, q.ctx))
		return
	}
	q.sendStatic(nil, nil, verb, hdr)
}

// explainOptions parses EXPLAIN [ANALYZE [VERBOSE]] [(TYPE x, FORMAT y)]
// and returns the offset of the explained statement.
func explainOptions(sqlText string, toks []token) (analyze bool, typ, format string, at int, e *trinoError) {
	typ, format = "DISTRIBUTED", "TEXT"
	i := 1
	if i < len(toks) && toks[i].is("ANALYZE") {
		analyze = true
		i++
		if i < len(toks) && toks[i].is("VERBOSE") {
			i++
		}
	}
	if i < len(toks) && toks[i].isSymbol("(") {
		// "(" may also open the explained query: EXPLAIN (SELECT 1).
		if i+1 < len(toks) && (toks[i+1].is("TYPE") || toks[i+1].is("FORMAT")) {
			i++
			for i < len(toks) {
				if i+1 >= len(toks) {
					return false, "", "", 0, syntaxAt(sqlText, lastOr(toks, i))
				}
				key, val := strings.ToUpper(toks[i].text), strings.ToUpper(toks[i+1].text)
				switch key {
				case "TYPE":
					switch val {
					case "LOGICAL", "DISTRIBUTED", "VALIDATE", "IO":
						typ = val
					default:
						return false, "", "", 0, syntaxAt(sqlText, toks[i+1])
					}
				case "FORMAT":
					switch val {
					case "TEXT", "GRAPHVIZ", "JSON":
						format = val
					default:
						return false, "", "", 0, syntaxAt(sqlText, toks[i+1])
					}
				default:
					return false, "", "", 0, syntaxAt(sqlText, toks[i])
				}
				i += 2
				if i < len(toks) && toks[i].isSymbol(",") {
					i++
					continue
				}
				if i < len(toks) && toks[i].isSymbol(")") {
					i++
					break
				}
				return false, "", "", 0, syntaxAt(sqlText, lastOr(toks, i))
			}
		}
	}
	if i >= len(toks) {
		return false, "", "", 0, syntaxAt(sqlText, lastOr(toks, i))
	}
	return analyze, typ, format, i, nil
}

func (s *Server) runExplain(q *query, sess session, sqlText string, toks []token) {
	analyze, typ, format, at, e := explainOptions(sqlText, toks)
	if e != nil {
		q.sendError(e)
		return
	}
	inner := sqlText[toks[at].start:]
	innerToks := toks[at:]
	if analyze && typ == "VALIDATE" || analyze && typ == "IO" {
		q.sendError(newError("NOT_SUPPORTED", "EXPLAIN ANALYZE does not support TYPE "+typ, 1, 1))
		return
	}
	planCol := []columnJSON{newColumn("Query Plan", typeVarchar)}
	if innerToks[0].is("SHOW") || innerToks[0].is("DESCRIBE") || innerToks[0].is("USE") || innerToks[0].is("EXPLAIN") {
		switch typ {
		case "VALIDATE":
			q.sendStatic([]columnJSON{newColumn("Valid", typeBoolean)}, [][]any{{true}}, "", nil)
		case "IO":
			q.sendStatic(planCol, [][]any{{`{"inputTableColumnInfos":[]}`}}, "", nil)
		default:
			q.sendStatic(planCol, [][]any{{"Metadata statement " + strings.ToUpper(innerToks[0].text) + ", answered by the trinotest engine"}}, "", nil)
		}
		return
	}
	if e := trinoStatement(inner, lex(inner)); e != nil {
		q.sendError(e)
		return
	}
	if e := checkNames(inner, lex(inner), sess.catalog); e != nil {
		q.sendError(e)
		return
	}
	rewritten, refs := toDuck(inner, lex(inner), sess.catalog)
	c, tx, release, e := s.conn(q.ctx, sess)
	if e != nil {
		q.sendError(e)
		return
	}
	defer release()
	st, err := statementType(q.ctx, c, rewritten)
	if err != nil {
		q.sendError(fromDuckDB(inner, err, q.ctx))
		return
	}
	switch st {
	case duckdb.STATEMENT_TYPE_SELECT, duckdb.STATEMENT_TYPE_INSERT, duckdb.STATEMENT_TYPE_UPDATE,
		duckdb.STATEMENT_TYPE_DELETE, duckdb.STATEMENT_TYPE_CREATE:
	default:
		if typ != "VALIDATE" {
			q.sendError(newError("NOT_SUPPORTED", "EXPLAIN is not supported for this statement by the trinotest engine", 1, 1))
			return
		}
	}
	if analyze {
		if tx != nil && tx.readOnly && st != duckdb.STATEMENT_TYPE_SELECT {
			// EXPLAIN ANALYZE runs its statement, in the transaction.
			q.sendError(newError("READ_ONLY_VIOLATION", "Cannot execute write in a read-only transaction", 0, 0))
			return
		}
		q.setState(StateRunning)
		plan, err := duckPlan(q.ctx, c, "EXPLAIN ANALYZE "+rewritten)
		if err != nil {
			q.sendError(fromDuckDB(inner, err, q.ctx))
			return
		}
		q.sendStatic(planCol, [][]any{{plan}}, "", nil)
		return
	}
	switch typ {
	case "VALIDATE":
		if st == duckdb.STATEMENT_TYPE_SELECT {
			if _, err := duckPlan(q.ctx, c, "EXPLAIN "+rewritten); err != nil {
				q.sendError(fromDuckDB(inner, err, q.ctx))
				return
			}
		}
		q.sendStatic([]columnJSON{newColumn("Valid", typeBoolean)}, [][]any{{true}}, "", nil)
	case "IO":
		plan, err := duckPlan(q.ctx, c, "EXPLAIN (FORMAT JSON) "+rewritten)
		if err != nil {
			q.sendError(fromDuckDB(inner, err, q.ctx))
			return
		}
		io, err := s.ioPlan(q.ctx, plan, refs, sess, innerToks)
		if err != nil {
			q.sendError(newError("GENERIC_INTERNAL_ERROR", "build the IO plan: "+err.Error(), 0, 0))
			return
		}
		q.sendStatic(planCol, [][]any{{io}}, "", nil)
	default:
		stmt := "EXPLAIN " + rewritten
		switch format {
		case "JSON":
			stmt = "EXPLAIN (FORMAT JSON) " + rewritten
		case "GRAPHVIZ":
			stmt = "EXPLAIN (FORMAT GRAPHVIZ) " + rewritten
		}
		plan, err := duckPlan(q.ctx, c, stmt)
		if err != nil {
			q.sendError(fromDuckDB(inner, err, q.ctx))
			return
		}
		q.sendStatic(planCol, [][]any{{plan}}, "", nil)
	}
}

// duckPlan runs a DuckDB EXPLAIN and returns the plan text.
func duckPlan(ctx context.Context, c *sql.Conn, stmt string) (string, error) {
	rows, err := c.QueryContext(ctx, stmt)
	if err != nil {
		return "", err
	}
	defer rows.Close()
	var parts []string
	for rows.Next() {
		var key, value string
		if err := rows.Scan(&key, &value); err != nil {
			return "", err
		}
		parts = append(parts, value)
	}
	return strings.Join(parts, "\n"), rows.Err()
}

// ioTable is Trino's CatalogSchemaTableName in EXPLAIN (TYPE IO) JSON.
type ioTable struct {
	Catalog     string `json:"catalog"`
	SchemaTable struct {
		Schema string `json:"schema"`
		Table  string `json:"table"`
	} `json:"schemaTable"`
}

type ioEstimate struct {
	OutputRowCount    estFloat `json:"outputRowCount"`
	OutputSizeInBytes estFloat `json:"outputSizeInBytes"`
	CPUCost           estFloat `json:"cpuCost"`
	MaxMemory         estFloat `json:"maxMemory"`
	NetworkCost       estFloat `json:"networkCost"`
}

type ioInput struct {
	Table             ioTable    `json:"table"`
	ColumnConstraints []any      `json:"columnConstraints"`
	Estimate          ioEstimate `json:"estimate"`
}

type ioOutput struct {
	Catalog     string `json:"catalog"`
	SchemaTable struct {
		Schema string `json:"schema"`
		Table  string `json:"table"`
	} `json:"schemaTable"`
}

type ioPlanJSON struct {
	InputTableColumnInfos []ioInput  `json:"inputTableColumnInfos"`
	OutputTable           *ioOutput  `json:"outputTable,omitempty"`
	Estimate              ioEstimate `json:"estimate"`
}

func newIOTable(catalog, schema, table string) ioTable {
	var t ioTable
	t.Catalog, t.SchemaTable.Schema, t.SchemaTable.Table = catalog, schema, table
	return t
}

// ioPlan builds Trino's EXPLAIN (TYPE IO, FORMAT JSON) answer from DuckDB's
// physical plan: every table scan (through views, CTEs, subqueries and
// joins, since DuckDB has resolved them) is an input; information_schema
// references are inputs too; the written table is the output.
func (s *Server) ioPlan(ctx context.Context, plan string, refs []infoRef, sess session, toks []token) (string, error) {
	var nodes []map[string]any
	if err := json.Unmarshal([]byte(plan), &nodes); err != nil {
		return "", fmt.Errorf("parse DuckDB plan: %w", err)
	}
	known, err := s.tableNames(ctx)
	if err != nil {
		return "", err
	}
	out := ioPlanJSON{InputTableColumnInfos: []ioInput{}}
	seen := map[string]bool{}
	add := func(t ioTable, rows float64) {
		key := t.Catalog + "\x00" + t.SchemaTable.Schema + "\x00" + t.SchemaTable.Table
		if seen[key] {
			return
		}
		seen[key] = true
		out.InputTableColumnInfos = append(out.InputTableColumnInfos, ioInput{Table: t, ColumnConstraints: []any{}, Estimate: s.inputEstimate(ctx, t, rows)})
	}
	var walk func(n map[string]any)
	walk = func(n map[string]any) {
		if extra, ok := n["extra_info"].(map[string]any); ok {
			if name, ok := extra["Table"].(string); ok {
				rows := -1.0 // unknown unless DuckDB says
				if est, ok := extra["Estimated Cardinality"].(string); ok {
					_, _ = fmt.Sscan(est, &rows)
				}
				if t, ok := known[name]; ok {
					add(t, rows)
				} else {
					p := strings.SplitN(name, ".", 3)
					for len(p) < 3 {
						p = append([]string{""}, p...)
					}
					add(newIOTable(p[0], p[1], p[2]), rows)
				}
			}
		}
		if children, ok := n["children"].([]any); ok {
			for _, c := range children {
				if m, ok := c.(map[string]any); ok {
					walk(m)
				}
			}
		}
	}
	for _, n := range nodes {
		walk(n)
	}
	for _, r := range refs {
		add(newIOTable(r.catalog, "information_schema", r.table), -1)
	}
	sort.SliceStable(out.InputTableColumnInfos, func(i, j int) bool {
		a, b := out.InputTableColumnInfos[i].Table, out.InputTableColumnInfos[j].Table
		return a.Catalog+"."+a.SchemaTable.Schema+"."+a.SchemaTable.Table < b.Catalog+"."+b.SchemaTable.Schema+"."+b.SchemaTable.Table
	})
	if target := writeTarget(toks); target != nil {
		catalog, schema, table, e := resolveTable(sess, target)
		if e == nil {
			o := &ioOutput{Catalog: catalog}
			o.SchemaTable.Schema, o.SchemaTable.Table = schema, table
			out.OutputTable = o
		}
	}
	b, err := json.Marshal(out)
	return string(b), err
}

// tableNames maps DuckDB's "catalog.schema.table" plan names to their
// parts, so names containing dots are split correctly.
func (s *Server) tableNames(ctx context.Context) (map[string]ioTable, error) {
	rows, err := s.db.QueryContext(ctx, "SELECT database_name, schema_name, table_name FROM duckdb_tables()")
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string]ioTable{}
	for rows.Next() {
		var c, sc, t string
		if err := rows.Scan(&c, &sc, &t); err != nil {
			return nil, err
		}
		// DuckDB's plan quotes a part only when it must; accept both forms.
		for _, cn := range []string{c, quoteIdent(c)} {
			for _, sn := range []string{sc, quoteIdent(sc)} {
				for _, tn := range []string{t, quoteIdent(t)} {
					out[cn+"."+sn+"."+tn] = newIOTable(c, sc, t)
				}
			}
		}
	}
	return out, rows.Err()
}

// writeTarget finds the table an INSERT, UPDATE, DELETE, MERGE or CREATE
// TABLE writes.
func writeTarget(toks []token) []string {
	i := 0
	switch {
	case toks[0].is("INSERT") && len(toks) > 2 && toks[1].is("INTO"):
		i = 2
	case toks[0].is("DELETE") && len(toks) > 2 && toks[1].is("FROM"):
		i = 2
	case toks[0].is("UPDATE"):
		i = 1
	case toks[0].is("MERGE") && len(toks) > 2 && toks[1].is("INTO"):
		i = 2
	case toks[0].is("CREATE"):
		i = 1
		for i < len(toks) && (toks[i].is("OR") || toks[i].is("REPLACE") || toks[i].is("TEMP") || toks[i].is("TEMPORARY")) {
			i++
		}
		if i >= len(toks) || !toks[i].is("TABLE") {
			return nil
		}
		i++
		if i+2 < len(toks) && toks[i].is("IF") && toks[i+1].is("NOT") && toks[i+2].is("EXISTS") {
			i += 3
		}
	default:
		return nil
	}
	parts, _ := qualifiedName(toks, i)
	if len(parts) == 0 {
		return nil
	}
	return parts
}

// trinoName quotes a name part the way Trino prints it: bare when it is a
// plain lower-case identifier.
func trinoName(parts ...string) string {
	out := make([]string, len(parts))
	for i, p := range parts {
		out[i] = quoteFieldName(p)
	}
	return strings.Join(out, ".")
}

// runShowCreate answers SHOW CREATE TABLE t (column "Create Table") and
// SHOW CREATE VIEW v ("Create View") in Trino's layout.
func (s *Server) runShowCreate(q *query, sess session, sqlText string, toks []token) {
	view := toks[2].is("VIEW")
	parts, next := qualifiedName(toks, 3)
	if len(parts) == 0 || next < len(toks) {
		q.sendError(syntaxAt(sqlText, lastOr(toks, next)))
		return
	}
	catalog, schema, table, e := resolveTable(sess, parts)
	if e != nil {
		q.sendError(e)
		return
	}
	full := catalog + "." + schema + "." + table
	if !s.hasCatalog(q.ctx, catalog) || catalog == "system" {
		q.sendError(catalogNotFound(catalog))
		return
	}
	is := quoteIdent(catalog) + "." + quoteIdent(infoSchema)
	if view {
		var def string
		err := s.db.QueryRowContext(q.ctx, "SELECT view_definition FROM "+is+".views WHERE table_schema = ? AND table_name = ?", schema, table).Scan(&def)
		if err != nil {
			q.sendError(newError("TABLE_NOT_FOUND", fmt.Sprintf("View '%s' does not exist", full), 1, 1))
			return
		}
		// DuckDB keeps "CREATE VIEW name AS <query>;".
		if i := strings.Index(strings.ToUpper(def), " AS "); i >= 0 {
			def = def[i+4:]
		}
		def = strings.TrimSuffix(strings.TrimSpace(def), ";")
		text := "CREATE VIEW " + trinoName(catalog, schema, table) + " SECURITY DEFINER AS\n" + def
		q.sendStatic([]columnJSON{newColumn("Create View", typeVarchar)}, [][]any{{text}}, "", nil)
		return
	}
	var kind string
	err := s.db.QueryRowContext(q.ctx, "SELECT table_type FROM "+is+".tables WHERE table_schema = ? AND table_name = ?", schema, table).Scan(&kind)
	if err != nil || kind != "BASE TABLE" {
		q.sendError(newError("TABLE_NOT_FOUND", fmt.Sprintf("Table '%s' does not exist", full), 1, 1))
		return
	}
	rows, err := s.db.QueryContext(q.ctx, "SELECT column_name, data_type, is_nullable, comment FROM "+is+".columns WHERE table_schema = ? AND table_name = ? ORDER BY ordinal_position", schema, table)
	if err != nil {
		q.sendError(fromDuckDB("", err, q.ctx))
		return
	}
	defer rows.Close()
	var cols []string
	for rows.Next() {
		var name, typ, nullable string
		var comment sql.NullString
		if err := rows.Scan(&name, &typ, &nullable, &comment); err != nil {
			q.sendError(fromDuckDB("", err, q.ctx))
			return
		}
		line := "   " + trinoName(name) + " " + typ
		if nullable == "NO" {
			line += " NOT NULL"
		}
		if comment.Valid && comment.String != "" {
			line += " COMMENT " + quoteString(comment.String)
		}
		cols = append(cols, line)
	}
	if err := rows.Err(); err != nil {
		q.sendError(fromDuckDB("", err, q.ctx))
		return
	}
	text := "CREATE TABLE " + trinoName(catalog, schema, table) + " (\n" + strings.Join(cols, ",\n") + "\n)"
	var tableComment sql.NullString
	_ = s.db.QueryRowContext(q.ctx, "SELECT comment FROM duckdb_tables() WHERE database_name = ? AND schema_name = ? AND table_name = ?", catalog, schema, table).Scan(&tableComment)
	if tableComment.Valid && tableComment.String != "" {
		text += "\nCOMMENT " + quoteString(tableComment.String)
	}
	q.sendStatic([]columnJSON{newColumn("Create Table", typeVarchar)}, [][]any{{text}}, "", nil)
}
