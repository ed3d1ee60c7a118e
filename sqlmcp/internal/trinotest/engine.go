package trinotest

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/duckdb/duckdb-go/v2"
)

const (
	// hiddenCatalog is DuckDB's default database: empty, and not listed as
	// a catalog. Queries without a session catalog run in it.
	hiddenCatalog = "memory"
	// infoSchema is the DuckDB schema, in every catalog, holding the views
	// that answer catalog.information_schema.* in Trino's shapes.
	infoSchema = "trinotest_information_schema"
)

// isHiddenCatalog reports DuckDB databases that are not Trino catalogs.
func isHiddenCatalog(name string) bool {
	switch name {
	case hiddenCatalog, "system", "temp":
		return true
	}
	return false
}

// openEngine opens an in-memory DuckDB with the engine's functions.
func openEngine() (*sql.DB, error) {
	connector, err := duckdb.NewConnector("", func(execer driver.ExecerContext) error {
		// Trino divides integers as integers (7/2 = 3).
		_, err := execer.ExecContext(context.Background(), "SET integer_division = true", nil)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("open DuckDB: %w", err)
	}
	db := sql.OpenDB(connector)
	ctx := context.Background()
	c, err := db.Conn(ctx)
	if err != nil {
		_ = db.Close()
		return nil, fmt.Errorf("open DuckDB: %w", err)
	}
	defer c.Close()
	if err := duckdb.RegisterScalarUDF(c, "pause_ms", sleepFunc{}); err != nil {
		_ = db.Close()
		return nil, fmt.Errorf("register pause_ms: %w", err)
	}
	if err := duckdb.RegisterScalarUDF(c, "trino_type", trinoTypeFunc{}); err != nil {
		_ = db.Close()
		return nil, fmt.Errorf("register trino_type: %w", err)
	}
	return db, nil
}

// sleepFunc is pause_ms(ms BIGINT) → BIGINT: it waits ms milliseconds
// (per row) and returns ms. It stops early, failing the query, when the
// query is cancelled, so tests can watch a cancel reach the engine.
type sleepFunc struct{}

func (sleepFunc) Config() duckdb.ScalarFuncConfig {
	bigint, _ := duckdb.NewTypeInfo(duckdb.TYPE_BIGINT)
	return duckdb.ScalarFuncConfig{InputTypeInfos: []duckdb.TypeInfo{bigint}, ResultTypeInfo: bigint, Volatile: true}
}

func (sleepFunc) Executor() duckdb.ScalarFuncExecutor {
	return duckdb.ScalarFuncExecutor{RowContextExecutor: func(ctx context.Context, values []driver.Value) (any, error) {
		ms, _ := values[0].(int64)
		t := time.NewTimer(time.Duration(ms) * time.Millisecond)
		defer t.Stop()
		select {
		case <-t.C:
			return ms, nil
		case <-ctx.Done():
			return nil, errors.New("INTERRUPT: pause_ms cancelled")
		}
	}}
}

// trinoTypeFunc is trino_type(duckdb_type VARCHAR) → VARCHAR, the Trino
// name of a DuckDB type, used by the information_schema views.
type trinoTypeFunc struct{}

func (trinoTypeFunc) Config() duckdb.ScalarFuncConfig {
	varchar, _ := duckdb.NewTypeInfo(duckdb.TYPE_VARCHAR)
	return duckdb.ScalarFuncConfig{InputTypeInfos: []duckdb.TypeInfo{varchar}, ResultTypeInfo: varchar}
}

func (trinoTypeFunc) Executor() duckdb.ScalarFuncExecutor {
	return duckdb.ScalarFuncExecutor{RowExecutor: func(values []driver.Value) (any, error) {
		s, _ := values[0].(string)
		return trinoTypeOf(s).String(), nil
	}}
}

// createCatalog attaches an in-memory DuckDB database as a Trino catalog
// with its information_schema views.
func createCatalog(ctx context.Context, db *sql.DB, name string) error {
	q := quoteIdent(name)
	lit := quoteString(name)
	is := q + "." + quoteIdent(infoSchema)
	hidden := quoteString(infoSchema)
	stmts := []string{
		"ATTACH ':memory:' AS " + q,
		"CREATE SCHEMA " + is,
		// schemata: every schema but DuckDB's empty main and our own.
		`CREATE VIEW ` + is + `.schemata AS
		 SELECT s.database_name AS catalog_name, s.schema_name AS schema_name
		 FROM duckdb_schemas() s
		 WHERE s.database_name = ` + lit + ` AND s.schema_name NOT IN (` + hidden + `, 'information_schema', 'pg_catalog')
		   AND (s.schema_name <> 'main' OR EXISTS (SELECT 1 FROM duckdb_tables() t WHERE t.database_name = s.database_name AND t.schema_name = 'main'))
		 UNION ALL SELECT ` + lit + `, 'information_schema'`,
		`CREATE VIEW ` + is + `.tables AS
		 SELECT database_name AS table_catalog, schema_name AS table_schema, table_name, 'BASE TABLE' AS table_type
		 FROM duckdb_tables() WHERE database_name = ` + lit + ` AND schema_name <> ` + hidden + `
		 UNION ALL
		 SELECT database_name, schema_name, view_name, 'VIEW'
		 FROM duckdb_views() WHERE database_name = ` + lit + ` AND NOT internal AND schema_name <> ` + hidden + `
		 UNION ALL
		 SELECT ` + lit + `, 'information_schema', name, 'BASE TABLE' FROM (VALUES ('columns'), ('schemata'), ('tables'), ('views')) v(name)`,
		`CREATE VIEW ` + is + `.columns AS
		 SELECT database_name AS table_catalog, schema_name AS table_schema, table_name, column_name,
		        CAST(column_index AS BIGINT) AS ordinal_position, column_default,
		        CASE WHEN is_nullable THEN 'YES' ELSE 'NO' END AS is_nullable,
		        trino_type(data_type) AS data_type, comment, CAST(NULL AS VARCHAR) AS extra_info
		 FROM duckdb_columns() WHERE database_name = ` + lit + ` AND schema_name <> ` + hidden,
		`CREATE VIEW ` + is + `.views AS
		 SELECT database_name AS table_catalog, schema_name AS table_schema, view_name AS table_name, sql AS view_definition
		 FROM duckdb_views() WHERE database_name = ` + lit + ` AND NOT internal AND schema_name <> ` + hidden,
	}
	for _, st := range stmts {
		if _, err := db.ExecContext(ctx, st); err != nil {
			return fmt.Errorf("create catalog %s: %w", name, err)
		}
	}
	return nil
}

// toDuck adapts a Trino statement to DuckDB: information_schema
// references (see rewriteInformationSchema) and VALUES rows without
// parentheses (Trino's VALUES 1, 2 is DuckDB's VALUES (1), (2)).
func toDuck(sqlText string, toks []token, sessionCatalog string) (string, []infoRef) {
	rewritten, refs := rewriteInformationSchema(sqlText, toks, sessionCatalog)
	if rewritten != sqlText {
		sqlText, toks = rewritten, lex(rewritten)
	}
	if len(toks) > 1 && toks[0].is("VALUES") {
		sqlText = parenthesizeValues(sqlText, toks)
	}
	return sqlText, refs
}

// parenthesizeValues wraps every top-level row of a VALUES statement that
// is not already in parentheses.
func parenthesizeValues(sqlText string, toks []token) string {
	var b strings.Builder
	b.WriteString(sqlText[:toks[1].start])
	depth, rowStart := 0, 1
	flush := func(end int) {
		row := toks[rowStart:end]
		text := sqlText[row[0].start:row[len(row)-1].end]
		if row[0].isSymbol("(") && len(row) > 1 && row[len(row)-1].isSymbol(")") {
			b.WriteString(text)
		} else {
			b.WriteString("(" + text + ")")
		}
	}
	for i := 1; i < len(toks); i++ {
		switch {
		case toks[i].isSymbol("(") || toks[i].isSymbol("["):
			depth++
		case toks[i].isSymbol(")") || toks[i].isSymbol("]"):
			depth--
		case depth == 0 && toks[i].isSymbol(","):
			flush(i)
			b.WriteString(", ")
			rowStart = i + 1
		case depth == 0 && (toks[i].is("ORDER") || toks[i].is("LIMIT") || toks[i].is("OFFSET") || toks[i].is("FETCH")):
			flush(i)
			b.WriteString(" " + sqlText[toks[i].start:])
			return b.String()
		}
	}
	if rowStart < len(toks) {
		flush(len(toks))
	}
	return b.String()
}

// infoRef is a reference to catalog.information_schema.table found in a
// statement.
type infoRef struct{ catalog, table string }

// rewriteInformationSchema points information_schema references at the
// engine's Trino-shaped views: c.information_schema.t becomes
// c.trinotest_information_schema.t, and information_schema.t (with a session
// catalog) the same in the session catalog. String literals and comments
// are left alone because the lexer skips them.
func rewriteInformationSchema(sqlText string, toks []token, sessionCatalog string) (string, []infoRef) {
	var b strings.Builder
	var refs []infoRef
	last := 0
	for i, t := range toks {
		if !t.isName() || !strings.EqualFold(t.text, "information_schema") {
			continue
		}
		if i+2 >= len(toks) || !toks[i+1].isSymbol(".") || !toks[i+2].isName() {
			continue
		}
		catalog := sessionCatalog
		if i >= 2 && toks[i-1].isSymbol(".") && toks[i-2].isName() {
			if i >= 4 && toks[i-3].isSymbol(".") {
				continue // x.catalog.information_schema: not a table name
			}
			catalog = toks[i-2].name()
		} else if sessionCatalog == "" {
			refs = append(refs, infoRef{table: toks[i+2].name()}) // no catalog: refused by the caller
			continue
		}
		refs = append(refs, infoRef{catalog: catalog, table: toks[i+2].name()})
		b.WriteString(sqlText[last:t.start])
		b.WriteString(quoteIdent(infoSchema))
		last = t.end
	}
	if last == 0 {
		return sqlText, refs
	}
	b.WriteString(sqlText[last:])
	return b.String(), refs
}

// duckOnlyFunctions are DuckDB functions Trino does not have that reach
// DuckDB's catalog, settings, files or SQL execution. Together with the
// prefixes in duckOnlyPrefix they are refused however they are spelled:
// qualified with any catalog and schema, quoted, in any case.
var duckOnlyFunctions = map[string]bool{
	"query": true, "query_table": true, "read_csv": true, "read_csv_auto": true, "read_parquet": true,
	"parquet_scan": true, "parquet_metadata": true, "parquet_schema": true, "parquet_file_metadata": true,
	"parquet_kv_metadata": true, "read_json": true, "read_json_auto": true, "read_json_objects": true,
	"read_ndjson": true, "read_ndjson_objects": true, "read_ndjson_auto": true, "read_text": true, "read_blob": true,
	"glob": true, "sniff_csv": true, "json_execute_serialized_sql": true, "json_serialize_sql": true,
	"json_deserialize_sql": true, "json_serialize_plan": true, "current_setting": true, "getvariable": true,
	"which_secret": true, "test_all_types": true, "test_vector_types": true, "checkpoint": true,
	"force_checkpoint": true, "summary": true, "range": true, "generate_series": true, "repeat_row": true,
	"unnest_table": true, "current_database": true, "current_schemas": true, "sql_auto_complete": true,
	"iceberg_scan": true, "delta_scan": true, "database_size": true, "enable_profiling": true,
	"duckdb_api": true, "has_table_privilege": true, "has_schema_privilege": true,
}

func duckOnlyName(n string) bool {
	for _, p := range []string{"duckdb_", "pragma_", "pg_", "sqlite_", "icu_", "arrow_scan"} {
		if strings.HasPrefix(n, p) {
			return true
		}
	}
	return n == infoSchema || n == "pg_catalog" || n == "sqlite_master" || n == "sqlite_schema" || n == "sqlite_temp_master"
}

// blankComments replaces every comment of sqlText (what lies between the
// lexer's tokens) with spaces, keeping line breaks and byte offsets, so
// that DuckDB, which nests block comments where Trino does not, reads
// exactly the tokens the engine's own checks read.
func blankComments(sqlText string, toks []token) string {
	b := []byte(sqlText)
	blank := func(from, to int) {
		for i := from; i < to && i < len(b); i++ {
			if b[i] != '\n' && b[i] != '\r' && b[i] != '\t' {
				b[i] = ' '
			}
		}
	}
	prev := 0
	for _, t := range toks {
		blank(prev, t.start)
		prev = t.end
	}
	blank(prev, len(b))
	return string(b)
}

// checkNames refuses what Trino does not have but DuckDB would answer:
// DuckDB's own functions (duckdb_tables(), read_csv(), query_table(),
// pragma_*, ...) however qualified, its catalog views (pg_catalog,
// sqlite_master, duckdb_*), its catalogs that are not Trino catalogs
// (memory, system, temp), function calls in FROM (Trino calls table
// functions only as TABLE(...)), the engine's hidden schema, and
// information_schema without a catalog. Without this a test could learn
// every catalog's tables through a query whose EXPLAIN (TYPE IO) lists no
// table at all, and a gap in sqlmcp would stay hidden.
func checkNames(sqlText string, toks []token, sessionCatalog string) *trinoError {
	for i, t := range toks {
		if !t.isName() {
			continue
		}
		n := strings.ToLower(t.text)
		call := i+1 < len(toks) && toks[i+1].isSymbol("(")
		qualified := i > 0 && toks[i-1].isSymbol(".")
		line, col := lineCol(sqlText, t.start)
		if call && (duckOnlyFunctions[n] || duckOnlyName(n)) {
			return newError("FUNCTION_NOT_FOUND", fmt.Sprintf("Function '%s' not registered", n), line, col)
		}
		if call && i > 0 && (toks[i-1].is("FROM") || toks[i-1].is("JOIN")) && !t.is("UNNEST") && !t.is("LATERAL") && !t.is("TABLE") {
			return newError("SYNTAX_ERROR", fmt.Sprintf("mismatched input '('. Expecting: <identifier> (table function %s must be called as TABLE(%s(...)))", n, n), line, col)
		}
		if duckOnlyName(n) {
			return newError("TABLE_NOT_FOUND", fmt.Sprintf("Table '%s' does not exist", n), line, col)
		}
		// catalog.schema.table with a DuckDB catalog that is no Trino catalog.
		if !qualified && isHiddenCatalog(n) && i+4 < len(toks) && toks[i+1].isSymbol(".") && toks[i+2].isName() && toks[i+3].isSymbol(".") && toks[i+4].isName() {
			return newError("CATALOG_NOT_FOUND", fmt.Sprintf("Catalog '%s' not found", n), line, col)
		}
	}
	if sessionCatalog == "" {
		for i, t := range toks {
			if t.isName() && strings.EqualFold(t.text, "information_schema") && !(i > 0 && toks[i-1].isSymbol(".")) &&
				i+1 < len(toks) && toks[i+1].isSymbol(".") {
				line, col := lineCol(sqlText, t.start)
				return newError("MISSING_CATALOG_NAME", "Catalog must be specified when session catalog is not set", line, col)
			}
		}
	}
	return nil
}
