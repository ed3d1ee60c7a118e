package trinotest

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/duckdb/duckdb-go/v2"
)

// send hands one event to the page server; false when the query was
// cancelled meanwhile.
func (q *query) send(ev event) bool {
	t := time.Now()
	defer func() { q.sendWait.Add(int64(time.Since(t))) }()
	select {
	case q.events <- ev:
		return true
	case <-q.ctx.Done():
		return false
	}
}

func (q *query) sendError(e *trinoError) {
	q.fail(e)
	q.send(event{err: e, done: true})
}

// sendStatic sends a complete, small result.
func (q *query) sendStatic(cols []columnJSON, rows [][]any, updateType string, hdr http.Header) {
	if rows == nil && cols != nil {
		rows = [][]any{}
	}
	q.rowsRead.Add(int64(len(rows)))
	q.send(event{columns: cols, rows: rows, done: true, updateType: updateType, headers: hdr})
}

// run executes one statement and feeds its result to q.events.
func (s *Server) run(q *query, sess session) {
	sqlText, toks, e := trinoText(q.sql)
	if e != nil {
		q.sendError(e)
		return
	}
	if toks[0].is("EXECUTE") {
		sqlText, e = expandExecute(sqlText, toks, sess)
		if e != nil {
			q.sendError(e)
			return
		}
		if sqlText, toks, e = trinoText(sqlText); e != nil {
			q.sendError(e)
			return
		}
	}
	if s.opts.Rules != nil {
		if sqlText, toks, e = s.opts.Rules.apply(q.ctx, s.db, sess, sqlText, toks); e != nil {
			q.sendError(e)
			return
		}
	}
	s.dispatch(q, sess, sqlText, toks)
}

// trinoText reads one statement with Trino's lexer (trinoLex) and returns
// it with its comments blanked: what every later step, DuckDB included,
// reads.
func trinoText(sqlText string) (string, []token, *trinoError) {
	toks, e := trinoLex(sqlText)
	if e != nil {
		return "", nil, e
	}
	sqlText = blankComments(sqlText, toks)
	if e := singleStatement(sqlText, toks); e != nil {
		return "", nil, e
	}
	return sqlText, toks, nil
}

// singleStatement refuses empty input and more than one statement; like
// Trino it also refuses a trailing semicolon.
func singleStatement(sqlText string, toks []token) *trinoError {
	if len(toks) == 0 {
		line, col := lineCol(sqlText, len(sqlText))
		return newError("SYNTAX_ERROR", "mismatched input '<EOF>'. Expecting: 'ALTER', 'ANALYZE', 'CALL', 'COMMENT', 'COMMIT', 'CREATE', 'DEALLOCATE', 'DELETE', 'DESC', 'DESCRIBE', 'DROP', 'EXECUTE', 'EXPLAIN', 'GRANT', 'INSERT', 'MERGE', 'PREPARE', 'REFRESH', 'RESET', 'REVOKE', 'ROLLBACK', 'SET', 'SHOW', 'START', 'TRUNCATE', 'UPDATE', 'USE', <query>", line, col)
	}
	for _, t := range toks {
		if t.isSymbol(";") {
			line, col := lineCol(sqlText, t.start)
			return newError("SYNTAX_ERROR", "mismatched input ';'. Expecting: <EOF> (one statement per request)", line, col)
		}
	}
	return nil
}

// expandExecute turns EXECUTE name USING a, b (the driver's form for query
// parameters) or EXECUTE IMMEDIATE 'sql' USING ... into the statement with
// its ? placeholders replaced by the parameter expressions.
func expandExecute(sqlText string, toks []token, sess session) (string, *trinoError) {
	var stmt string
	i := 1
	switch {
	case len(toks) > 2 && toks[1].is("IMMEDIATE") && toks[2].kind == tokString:
		stmt = toks[2].text
		i = 3
	case len(toks) > 1 && toks[1].isName():
		p, ok := sess.prepared[toks[1].name()]
		if !ok {
			p, ok = sess.prepared[toks[1].text]
		}
		if !ok {
			line, col := lineCol(sqlText, toks[1].start)
			return "", newError("NOT_FOUND", "Prepared statement not found: "+toks[1].text, line, col)
		}
		stmt = p
		i = 2
	default:
		return "", newError("SYNTAX_ERROR", "mismatched input after EXECUTE", 1, 1)
	}
	var params []string
	if i < len(toks) && toks[i].is("USING") {
		depth, start := 0, toks[i].end
		for j := i + 1; j < len(toks); j++ {
			switch {
			case toks[j].isSymbol("(") || toks[j].isSymbol("["):
				depth++
			case toks[j].isSymbol(")") || toks[j].isSymbol("]"):
				depth--
			case toks[j].isSymbol(",") && depth == 0:
				params = append(params, strings.TrimSpace(sqlText[start:toks[j].start]))
				start = toks[j].end
			}
		}
		params = append(params, strings.TrimSpace(sqlText[start:]))
	}
	var b strings.Builder
	last, n := 0, 0
	for _, t := range lex(stmt) {
		if t.isSymbol("?") {
			if n >= len(params) {
				return "", newError("INVALID_FUNCTION_ARGUMENT", fmt.Sprintf("Incorrect number of parameters: expected more than %d but found %d", n, len(params)), 1, 1)
			}
			b.WriteString(stmt[last:t.start])
			b.WriteString(params[n])
			last = t.end
			n++
		}
	}
	if n != len(params) {
		return "", newError("INVALID_FUNCTION_ARGUMENT", fmt.Sprintf("Incorrect number of parameters: expected %d but found %d", n, len(params)), 1, 1)
	}
	b.WriteString(stmt[last:])
	return b.String(), nil
}

func (s *Server) dispatch(q *query, sess session, sqlText string, toks []token) {
	first := toks[0]
	switch {
	case first.is("SHOW"):
		s.runShow(q, sess, sqlText, toks)
	case first.is("DESCRIBE") || first.is("DESC"):
		s.runDescribe(q, sess, sqlText, toks, 1)
	case first.is("EXPLAIN"):
		s.runExplain(q, sess, sqlText, toks)
	case first.is("USE"):
		s.runUse(q, sess, sqlText, toks)
	case first.is("SET") && len(toks) > 1 && toks[1].is("SESSION"):
		s.runSetSession(q, sqlText, toks)
	case first.is("RESET") && len(toks) > 1 && toks[1].is("SESSION"):
		s.runResetSession(q, sqlText, toks)
	case first.is("START") && len(toks) > 1 && toks[1].is("TRANSACTION"):
		s.runStartTransaction(q, sess, toks)
	case first.is("COMMIT") || first.is("ROLLBACK"):
		s.runEndTransaction(q, sess, strings.ToUpper(first.text))
	default:
		if e := trinoStatement(sqlText, toks); e != nil {
			q.sendError(e)
			return
		}
		s.runDuck(q, sess, sqlText, toks)
	}
}

// duckStatements are the first words of the Trino statements the engine
// hands to DuckDB. Anything else is refused the way Trino refuses it, so
// DuckDB-only commands (PRAGMA, COPY, ATTACH, INSTALL, FROM-first queries,
// SET of DuckDB settings, ...) cannot run.
var duckStatements = map[string]bool{
	"SELECT": true, "WITH": true, "VALUES": true, "TABLE": true, "(": true,
	"INSERT": true, "UPDATE": true, "DELETE": true, "MERGE": true,
	"CREATE": true, "DROP": true, "ALTER": true, "COMMENT": true, "TRUNCATE": true,
}

// trinoOnly are Trino statements the engine does not implement.
var trinoOnly = map[string]bool{
	"CALL": true, "GRANT": true, "REVOKE": true, "DENY": true, "ANALYZE": true, "REFRESH": true,
	"PREPARE": true, "DEALLOCATE": true, "SET": true, "RESET": true,
}

func trinoStatement(sqlText string, toks []token) *trinoError {
	first := strings.ToUpper(toks[0].text)
	if toks[0].kind == tokWord && duckStatements[first] || toks[0].isSymbol("(") {
		if e := queryWrites(sqlText, toks); e != nil {
			return e
		}
		return duckOnlyVariant(sqlText, toks)
	}
	line, col := lineCol(sqlText, toks[0].start)
	if toks[0].kind == tokWord && trinoOnly[first] {
		what := first
		if len(toks) > 1 && toks[1].kind == tokWord {
			what += " " + strings.ToUpper(toks[1].text)
		}
		return newError("NOT_SUPPORTED", what+" is not supported by the trinotest engine", line, col)
	}
	return newError("SYNTAX_ERROR", fmt.Sprintf("mismatched input '%s'. Expecting: 'ALTER', 'ANALYZE', 'CALL', 'COMMENT', 'COMMIT', 'CREATE', 'DEALLOCATE', 'DELETE', 'DESC', 'DESCRIBE', 'DROP', 'EXECUTE', 'EXPLAIN', 'GRANT', 'INSERT', 'MERGE', 'PREPARE', 'REFRESH', 'RESET', 'REVOKE', 'ROLLBACK', 'SET', 'SHOW', 'START', 'TRUNCATE', 'UPDATE', 'USE', <query>", toks[0].text), line, col)
}

// queryReserved are reserved words of Trino that its queries never
// contain unquoted: the verbs of statements that write, and INTO.
var queryReserved = map[string]bool{"INSERT": true, "DELETE": true, "CREATE": true, "DROP": true, "ALTER": true, "INTO": true}

// queryWrites refuses, as Trino's parser does, a query (SELECT, WITH,
// VALUES, TABLE, a parenthesis) that contains a statement that writes:
// WITH ... DELETE/INSERT/UPDATE/MERGE, a CTE body that writes. DuckDB runs
// them; Trino's grammar has no place for them (UPDATE is not reserved, so
// only UPDATE name SET counts).
func queryWrites(sqlText string, toks []token) *trinoError {
	if !toks[0].isSymbol("(") && !toks[0].is("SELECT") && !toks[0].is("WITH") && !toks[0].is("VALUES") && !toks[0].is("TABLE") {
		return nil
	}
	for i, t := range toks {
		bad := t.kind == tokWord && queryReserved[strings.ToUpper(t.text)]
		if t.is("UPDATE") {
			j := i + 1
			for j < len(toks) && (toks[j].isName() || toks[j].isSymbol(".")) && !toks[j].is("SET") {
				j++
			}
			bad = j > i+1 && j < len(toks) && toks[j].is("SET")
		}
		if bad {
			line, col := lineCol(sqlText, t.start)
			return newError("SYNTAX_ERROR", fmt.Sprintf("mismatched input '%s'. Expecting: '(', 'SELECT', 'TABLE', 'VALUES'", t.text), line, col)
		}
	}
	return nil
}

// duckOnlyObjects follow CREATE/DROP (after OR REPLACE) in DuckDB-only
// statements: macros, secrets, types, sequences, indexes, temporary objects.
var duckOnlyObjects = map[string]bool{
	"MACRO": true, "SECRET": true, "TYPE": true, "SEQUENCE": true, "INDEX": true, "UNIQUE": true,
	"TEMP": true, "TEMPORARY": true, "PERSISTENT": true, "DATABASE": true,
}

// duckOnlyVariant refuses DuckDB-only forms of statements Trino has:
// CREATE MACRO/SECRET/TYPE/SEQUENCE/INDEX/TEMP ..., the same with DROP,
// and INSERT OR REPLACE/IGNORE.
func duckOnlyVariant(sqlText string, toks []token) *trinoError {
	i := 1
	switch {
	case toks[0].is("CREATE") || toks[0].is("DROP"):
		if i+1 < len(toks) && toks[i].is("OR") && toks[i+1].is("REPLACE") {
			i += 2
		}
		if i < len(toks) && toks[i].kind == tokWord && duckOnlyObjects[strings.ToUpper(toks[i].text)] {
			line, col := lineCol(sqlText, toks[i].start)
			return newError("SYNTAX_ERROR", fmt.Sprintf("mismatched input '%s'. Expecting: 'MATERIALIZED', 'OR', 'ROLE', 'SCHEMA', 'TABLE', 'VIEW', 'FUNCTION'", toks[i].text), line, col)
		}
	case toks[0].is("INSERT"):
		if i < len(toks) && toks[i].is("OR") {
			line, col := lineCol(sqlText, toks[i].start)
			return newError("SYNTAX_ERROR", "mismatched input 'OR'. Expecting: 'INTO'", line, col)
		}
	}
	return nil
}

// conn returns the DuckDB connection for sess (the transaction's when the
// query runs in one) set to the session's catalog and schema, and a release
// function.
func (s *Server) conn(ctx context.Context, sess session) (*sql.Conn, *transaction, func(), *trinoError) {
	var (
		c       *sql.Conn
		tx      *transaction
		err     error
		release func()
	)
	if id := sess.transactionID; id != "" && id != "NONE" {
		s.mu.Lock()
		tx = s.txs[id]
		s.mu.Unlock()
		if tx == nil {
			return nil, nil, nil, newError("UNKNOWN_TRANSACTION", "Unknown transaction ID: "+id+". Possibly expired? Commands ignored until end of transaction block", 0, 0)
		}
		tx.mu.Lock()
		c = tx.conn
		release = tx.mu.Unlock
	} else {
		c, err = s.db.Conn(ctx)
		if err != nil {
			return nil, nil, nil, newError("GENERIC_INTERNAL_ERROR", "get a DuckDB connection: "+err.Error(), 0, 0)
		}
		release = func() { _ = c.Close() }
	}
	target := hiddenCatalog + ".main"
	if sess.catalog != "" && s.catalogExists(ctx, c, sess.catalog) {
		schema := sess.schema
		if schema == "" {
			schema = "main"
		}
		target = quoteIdent(sess.catalog) + "." + quoteIdent(schema)
	}
	if _, err := c.ExecContext(ctx, "USE "+target); err != nil {
		// An unknown session schema: keep the catalog, as Trino only fails
		// when a name must be resolved in it.
		if _, err2 := c.ExecContext(ctx, "USE "+quoteIdent(sess.catalog)+".main"); err2 != nil {
			release()
			return nil, nil, nil, fromDuckDB("", err, ctx)
		}
	}
	return c, tx, release, nil
}

// catalogExists says whether name is a catalog. A catalog found is
// remembered until Exec (which may detach one) runs: Trino resolves a
// session's catalog without a query, and a lookup per statement made the
// engine's cost of a session catalog part of every client's measurements.
func (s *Server) catalogExists(ctx context.Context, c *sql.Conn, name string) bool {
	if isHiddenCatalog(name) {
		return false
	}
	if _, ok := s.knownCatalogs.Load(name); ok {
		return true
	}
	var n int
	_ = c.QueryRowContext(ctx, "SELECT count(*) FROM duckdb_databases() WHERE database_name = ?", name).Scan(&n)
	if n > 0 {
		s.knownCatalogs.Store(name, true)
	}
	return n > 0
}

// setMemoryLimit sets DuckDB's engine-wide memory_limit to bytes unless it
// is already that (Exec forgets the value, as it may set it).
func (s *Server) setMemoryLimit(ctx context.Context, c *sql.Conn, bytes int64) error {
	s.memLimitMu.Lock()
	defer s.memLimitMu.Unlock()
	if s.memLimit == bytes {
		return nil
	}
	if _, err := c.ExecContext(ctx, fmt.Sprintf("SET memory_limit = '%dB'", bytes)); err != nil {
		s.memLimit = 0
		return err
	}
	s.memLimit = bytes
	return nil
}

// statementType prepares sqlText on c and returns DuckDB's statement type;
// preparing also reports syntax and binding errors early.
func statementType(ctx context.Context, c *sql.Conn, sqlText string) (duckdb.StmtType, error) {
	st := duckdb.STATEMENT_TYPE_INVALID
	err := c.Raw(func(dc any) error {
		pc, ok := dc.(driver.ConnPrepareContext)
		if !ok {
			return errors.New("duckdb connection cannot prepare")
		}
		stmt, err := pc.PrepareContext(ctx, sqlText)
		if err != nil {
			return err
		}
		defer stmt.Close()
		ds, ok := stmt.(*duckdb.Stmt)
		if !ok {
			return errors.New("unexpected statement type")
		}
		st, err = ds.StatementType()
		return err
	})
	return st, err
}

// updateTypeOf names a statement the way Trino's updateType does:
// INSERT, CREATE TABLE, DROP VIEW, ... ("" for queries).
func updateTypeOf(st duckdb.StmtType, toks []token) string {
	switch st {
	case duckdb.STATEMENT_TYPE_SELECT, duckdb.STATEMENT_TYPE_EXPLAIN, duckdb.STATEMENT_TYPE_RELATION:
		return ""
	case duckdb.STATEMENT_TYPE_INSERT:
		return "INSERT"
	case duckdb.STATEMENT_TYPE_UPDATE:
		return "UPDATE"
	case duckdb.STATEMENT_TYPE_DELETE:
		if toks[0].is("TRUNCATE") {
			return "TRUNCATE TABLE"
		}
		return "DELETE"
	}
	if toks[0].is("MERGE") {
		return "MERGE"
	}
	var words []string
	for _, t := range toks {
		if t.kind != tokWord || len(words) == 2 {
			break
		}
		w := strings.ToUpper(t.text)
		if w == "OR" || w == "REPLACE" || w == "TEMP" || w == "TEMPORARY" {
			continue
		}
		words = append(words, w)
	}
	return strings.Join(words, " ")
}

// returnsRowCount reports statements for which Trino answers one bigint
// column "rows" with the number of rows written.
func returnsRowCount(updateType string, toks []token) bool {
	switch updateType {
	case "INSERT", "UPDATE", "DELETE", "MERGE", "TRUNCATE TABLE":
		return true
	case "CREATE TABLE":
		for _, t := range toks {
			if t.is("AS") {
				return true
			}
		}
	}
	return false
}

// runDuck executes a statement on DuckDB and streams its rows in pages.
func (s *Server) runDuck(q *query, sess session, sqlText string, toks []token) {
	ctx := q.ctx
	if e := checkNames(sqlText, toks, sess.catalog); e != nil {
		q.sendError(e)
		return
	}
	sqlText, _ = toDuck(sqlText, toks, sess.catalog)
	c, tx, release, e := s.conn(ctx, sess)
	if e != nil {
		q.sendError(e)
		return
	}
	defer release()
	if v, ok := sess.properties["query_max_memory"]; ok {
		// Trino's query_max_memory as DuckDB's memory_limit. DuckDB's limit
		// is engine-wide, so the last query's value holds for all: tests of
		// the memory limit use a server of their own.
		if b, perr := parseDataSize(v); perr != nil {
			q.sendError(newError("INVALID_SESSION_PROPERTY", "query_max_memory: "+perr.Error(), 0, 0))
			return
		} else if err := s.setMemoryLimit(ctx, c, b); err != nil {
			q.sendError(fromDuckDB(sqlText, err, ctx))
			return
		}
	}
	st, err := statementType(ctx, c, sqlText)
	if err != nil {
		q.sendError(fromDuckDB(sqlText, err, ctx))
		return
	}
	if st == duckdb.STATEMENT_TYPE_MULTI {
		q.sendError(newError("SYNTAX_ERROR", "mismatched input ';'. Expecting: <EOF> (one statement per request)", 1, 1))
		return
	}
	if st == duckdb.STATEMENT_TYPE_TRANSACTION {
		q.sendError(newError("NOT_SUPPORTED", "Use START TRANSACTION, COMMIT or ROLLBACK", 1, 1))
		return
	}
	updateType := updateTypeOf(st, toks)
	if tx != nil && tx.readOnly && updateType != "" {
		q.sendError(newError("READ_ONLY_VIOLATION", "Cannot execute write in a read-only transaction", 0, 0))
		return
	}
	q.setState(StateRunning)
	var renames map[int]string
	if st == duckdb.STATEMENT_TYPE_SELECT {
		renames = unaliasedColumns(ctx, c, sqlText)
	}
	isValues := toks[0].is("VALUES")
	windowed := st == duckdb.STATEMENT_TYPE_SELECT && scanWindows(ctx, c, sqlText, s.opts.PageSize)
	first := sqlText
	if windowed {
		first = windowSQL(sqlText, 2*s.opts.PageSize, 0)
	}
	rows, err := c.QueryContext(ctx, first)
	if err != nil {
		q.sendError(fromDuckDB(sqlText, err, ctx))
		return
	}
	defer func() {
		if rows != nil {
			_ = rows.Close()
		}
	}()
	names, err := rows.Columns()
	if err != nil {
		q.sendError(fromDuckDB(sqlText, err, ctx))
		return
	}
	cts, err := rows.ColumnTypes()
	if err != nil {
		q.sendError(fromDuckDB(sqlText, err, ctx))
		return
	}

	if updateType != "" {
		// DuckDB answers writes with a Count column; Trino with "rows".
		var count int64
		if rows.Next() {
			var v any
			if err := rows.Scan(&v); err == nil {
				if n, ok := v.(int64); ok {
					count = n
				}
			}
		}
		if err := rows.Err(); err != nil {
			q.sendError(fromDuckDB(sqlText, err, ctx))
			return
		}
		if returnsRowCount(updateType, toks) {
			q.sendStaticCount(updateType, count)
			return
		}
		q.sendStatic([]columnJSON{newColumn("result", typeBoolean)}, [][]any{{true}}, updateType, nil)
		return
	}

	types := make([]trinoType, len(cts))
	cols := make([]columnJSON, len(cts))
	for i, ct := range cts {
		types[i] = trinoTypeOf(ct.DatabaseTypeName())
		name := names[i]
		if r, ok := renames[i]; ok {
			name = r
		}
		if isValues {
			name = fmt.Sprintf("_col%d", i)
		}
		cols[i] = newColumn(name, types[i])
	}
	p := &pager{q: q, cols: cols, types: types, size: s.opts.PageSize, first: true}
	if !windowed {
		if _, ok := p.read(rows, sqlText); ok {
			p.finish()
		}
		return
	}
	// Read the scan window by window (see scanWindows), growing each window
	// so that reading everything costs about twice one full scan.
	offset, window := 0, 2*s.opts.PageSize
	for {
		n, ok := p.read(rows, sqlText)
		_ = rows.Close()
		if !ok {
			return
		}
		if n < window {
			p.finish()
			return
		}
		offset += n
		window = min(window*2, 64*s.opts.PageSize)
		rows, err = c.QueryContext(ctx, windowSQL(sqlText, window, offset))
		if err != nil {
			q.sendError(fromDuckDB(sqlText, err, ctx))
			return
		}
	}
}

// windowSQL appends LIMIT/OFFSET on a new line, so that a trailing line
// comment cannot swallow it.
func windowSQL(sqlText string, limit, offset int) string {
	return fmt.Sprintf("%s\nLIMIT %d OFFSET %d", sqlText, limit, offset)
}

// scanWindows reports whether a SELECT is a plain scan (projections and
// filters over one table scan, no sort, aggregate, join or limit) of a large
// table. DuckDB keeps insertion order for such plans, so the result can be
// read in consecutive LIMIT/OFFSET windows that together are exactly the
// full result. That keeps the engine from materialising a million-row
// result when the client reads a hundred rows and cancels: DuckDB (through
// duckdb-go) only returns fully materialised results.
func scanWindows(ctx context.Context, c *sql.Conn, sqlText string, pageSize int) bool {
	plan, err := duckPlan(ctx, c, "EXPLAIN (FORMAT JSON) "+sqlText)
	if err != nil {
		return false
	}
	var nodes []map[string]any
	if err := json.Unmarshal([]byte(plan), &nodes); err != nil || len(nodes) != 1 {
		return false
	}
	var largest float64
	scans := 0
	var walk func(n map[string]any) bool
	walk = func(n map[string]any) bool {
		name, _ := n["name"].(string)
		switch strings.TrimSpace(name) {
		case "PROJECTION", "FILTER":
		case "SEQ_SCAN", "TABLE_SCAN":
			scans++
			if extra, ok := n["extra_info"].(map[string]any); ok {
				if est, ok := extra["Estimated Cardinality"].(string); ok {
					var v float64
					_, _ = fmt.Sscan(est, &v)
					largest = max(largest, v)
				}
			}
		default:
			return false
		}
		children, _ := n["children"].([]any)
		for _, ch := range children {
			m, ok := ch.(map[string]any)
			if !ok || !walk(m) {
				return false
			}
		}
		return true
	}
	return walk(nodes[0]) && scans == 1 && largest >= float64(8*pageSize)
}

// pager turns DuckDB rows into result pages for the page server.
type pager struct {
	q     *query
	cols  []columnJSON
	types []trinoType
	size  int
	page  [][]any
	first bool
}

// read consumes rows into pages; it returns the number of rows read and
// false when the query failed or was cancelled (the error is sent).
func (p *pager) read(rows *sql.Rows, sqlText string) (int, bool) {
	q := p.q
	vals := make([]any, len(p.cols))
	ptrs := make([]any, len(p.cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	n := 0
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			q.sendError(fromDuckDB(sqlText, err, q.ctx))
			return n, false
		}
		row := make([]any, len(vals))
		for i, v := range vals {
			row[i] = encodeValue(p.types[i], v)
		}
		n++
		q.rowsRead.Add(1)
		p.page = append(p.page, row)
		if len(p.page) == p.size {
			ev := event{rows: p.page}
			if p.first {
				ev.columns, p.first = p.cols, false
			}
			if !q.send(ev) {
				return n, false
			}
			p.page = make([][]any, 0, p.size)
		}
	}
	if err := rows.Err(); err != nil {
		q.sendError(fromDuckDB(sqlText, err, q.ctx))
		return n, false
	}
	return n, true
}

// finish sends the last page.
func (p *pager) finish() {
	ev := event{rows: p.page, done: true}
	if p.first {
		ev.columns = p.cols
	}
	p.q.send(ev)
}

func (q *query) sendStaticCount(updateType string, count int64) {
	n := count
	q.rowsRead.Add(1)
	q.send(event{columns: []columnJSON{newColumn("rows", typeBigint)}, rows: [][]any{{count}}, done: true, updateType: updateType, updateCount: &n})
}

// unaliasedColumns finds the output columns of a SELECT that have neither
// an alias nor a plain column reference, which Trino names _col0, _col1, ...
// (DuckDB names them after the expression). It uses DuckDB's own parser.
func unaliasedColumns(ctx context.Context, c *sql.Conn, sqlText string) map[int]string {
	var raw string
	if err := c.QueryRowContext(ctx, "SELECT CAST(json_serialize_sql("+quoteString(sqlText)+") AS VARCHAR)").Scan(&raw); err != nil {
		return nil
	}
	var doc struct {
		Error      bool `json:"error"`
		Statements []struct {
			Node json.RawMessage `json:"node"`
		} `json:"statements"`
	}
	if err := json.Unmarshal([]byte(raw), &doc); err != nil || doc.Error || len(doc.Statements) != 1 {
		return nil
	}
	type selectNode struct {
		Type       string          `json:"type"`
		Left       json.RawMessage `json:"left"`
		SelectList []struct {
			Class string `json:"class"`
			Alias string `json:"alias"`
		} `json:"select_list"`
	}
	node := doc.Statements[0].Node
	for range 64 {
		var n selectNode
		if err := json.Unmarshal(node, &n); err != nil {
			return nil
		}
		if n.Type == "SET_OPERATION_NODE" && n.Left != nil {
			node = n.Left
			continue
		}
		if n.Type != "SELECT_NODE" {
			return nil
		}
		out := map[int]string{}
		for i, e := range n.SelectList {
			switch e.Class {
			case "STAR", "COLUMNS":
				return nil
			case "COLUMN_REF":
				continue
			}
			if e.Alias == "" {
				out[i] = fmt.Sprintf("_col%d", i)
			}
		}
		return out
	}
	return nil
}
