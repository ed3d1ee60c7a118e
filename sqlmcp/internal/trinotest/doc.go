// Package trinotest is a Trino-protocol test engine: an in-process HTTP
// server on 127.0.0.1 that speaks Trino's client protocol the way
// github.com/trinodb/trino-go-client v1.1.0 uses it, and executes SQL on an
// embedded DuckDB (github.com/duckdb/duckdb-go/v2). It exists for tests and
// for the playground command (cmd/playtrino); it needs cgo and must never be
// imported by release code (release builds are CGO_ENABLED=0).
//
// # Use in a test
//
//	func TestSomething(t *testing.T) {
//		srv := trinotest.Start(t, trinotest.WithPageSize(10))
//		db, err := sql.Open("trino", srv.DSN("alice")) // catalog sales, schema public
//		if err != nil {
//			t.Fatal(err)
//		}
//		defer db.Close()
//		var n int64
//		if err := db.QueryRow("SELECT count(*) FROM " + trinotest.LargeTable).Scan(&n); err != nil {
//			t.Fatal(err)
//		}
//		post := srv.Statements()[0]           // the recorded POST /v1/statement
//		_ = post.Header.Get("X-Trino-User")   // "alice"
//		_ = srv.Cancelled()                   // ids of queries that got a DELETE
//	}
//
// Outside tests use New(Options{...}) and Close. With WithTLS the server
// listens with a self-signed certificate (CACertPEM, CertPool, HTTPClient;
// DSN adds it as SSLCert). WithPassword(user, pw) requires HTTP basic
// authentication (TLS only, as in Trino; 401 otherwise). Host, Port and URL
// give the address.
//
// # Protocol
//
// GET /v1/info, HEAD /v1/statement, POST /v1/statement (QUEUED answer with a
// nextUri), GET nextUri pages of Options.PageSize rows with id, columns
// (name, Trino type, typeSignature), data and stats.state, DELETE
// /v1/query/{id} (or on the nextUri) to cancel: the DuckDB execution is
// interrupted (context cancellation) and later page requests answer
// USER_CANCELED. Errors are 200 pages with an error object (message,
// errorCode, errorName, errorType, errorLocation) mapped from DuckDB:
// SYNTAX_ERROR, TABLE_NOT_FOUND, SCHEMA_NOT_FOUND, CATALOG_NOT_FOUND,
// COLUMN_NOT_FOUND, ... Every request is recorded (Requests, Statements) with
// its headers; Queries/Query/WaitQuery tell what happened to each query
// (rows read from DuckDB, rows and pages sent, cancelled, interrupted).
// The session comes from X-Trino-Catalog and X-Trino-Schema of the POST;
// USE answers X-Trino-Set-Catalog/X-Trino-Set-Schema, SET SESSION and RESET
// SESSION answer X-Trino-Set-Session/X-Trino-Clear-Session, START
// TRANSACTION [READ ONLY], COMMIT and ROLLBACK work (writes in a read-only
// transaction fail with READ_ONLY_VIOLATION). Query parameters sent by the
// driver (EXECUTE ... USING with X-Trino-Prepared-Statement) are supported.
// More than one statement, and a trailing semicolon, are refused with
// SYNTAX_ERROR as Trino does. SetUnavailable makes every request answer 503
// (the driver retries) and SetStarting makes /v1/info report a starting
// coordinator (Ping fails). Request.Status is the HTTP status each request
// got.
//
// # SQL
//
// Catalogs are DuckDB databases and schemas are DuckDB schemas, so
// catalog.schema.table names work. Queries use DuckDB's SQL dialect with
// Trino-like integer division; results carry Trino type names (boolean,
// tinyint, smallint, integer, bigint, real, double, decimal(p,s), varchar,
// varbinary, date, time(6), timestamp(p), timestamp(p) with time zone, uuid,
// json, array(T), map(K, V), row(name T, ...)) and values encoded as Trino
// sends them (decimals, dates and timestamps as strings, varbinary as
// base64, rows as arrays, maps as objects). Unaliased expressions are named
// _col0, _col1, ... These statements are answered in Trino's exact shapes:
// SHOW CATALOGS [LIKE p] (column Catalog; includes system), SHOW SCHEMAS
// [FROM c] [LIKE p] (Schema; includes information_schema), SHOW TABLES [FROM
// [c.]s] [LIKE p] (Table; tables and views), DESCRIBE t and SHOW COLUMNS FROM
// t [LIKE p] (Column, Type, Extra, Comment), SHOW CREATE TABLE|VIEW (Create
// Table, Create View), EXPLAIN [ANALYZE] [(TYPE
// LOGICAL|DISTRIBUTED|VALIDATE|IO, FORMAT TEXT|JSON|GRAPHVIZ)] (Query Plan;
// VALIDATE gives boolean Valid; IO gives Trino's JSON with
// inputTableColumnInfos and outputTable, computed from DuckDB's physical
// plan, so tables read through views, joins, subqueries and CTEs are all
// listed). catalog.information_schema.{schemata,tables,columns,views} have
// Trino's columns and Trino type names.
//
// Statements Trino does not have are refused as Trino refuses them:
// DuckDB-only commands (PRAGMA, COPY, ATTACH, INSTALL, FROM-first queries,
// SET of a DuckDB setting) with SYNTAX_ERROR or NOT_SUPPORTED, DuckDB's own
// catalog objects (duckdb_*(), pg_catalog, sqlite_master) and functions
// (read_csv, query_table, pragma_*, ...) with TABLE_NOT_FOUND or
// FUNCTION_NOT_FOUND however they are qualified, quoted or cased, DuckDB's
// catalogs memory, system and temp with CATALOG_NOT_FOUND, function calls
// in FROM and DuckDB-only CREATE/DROP forms (MACRO, SECRET, TEMP, ...) with
// SYNTAX_ERROR; file access is disabled. Comments are blanked before DuckDB
// parses a statement, so its nested block comments cannot make it read
// other tokens than Trino's lexer does. Unlike
// Trino, names keep their case (the sample data has mixed-case names for
// quoting tests). Tests can add catalogs (AddCatalog) and objects (Exec,
// DuckDB SQL, fully qualified names).
//
// The session property query_max_run_time (X-Trino-Session, e.g.
// session_properties=query_max_run_time:10s in the DSN) limits a query's
// run time; an expired query fails with EXCEEDED_TIME_LIMIT. The session
// property query_max_memory becomes DuckDB's memory_limit (engine-wide: the
// last query's value holds for all, so memory tests use a server of their
// own); a query that exceeds it fails with EXCEEDED_GLOBAL_MEMORY_LIMIT. A query whose
// client stops asking for pages for Options.AbandonAfter fails with
// ABANDONED_QUERY.
//
// Every answer's stats carry state, processedRows and the query's times:
// queuedTimeMillis (Options.QueueTime keeps each query QUEUED that long
// before it runs), elapsedTimeMillis, and cpuTimeMillis, which is the time
// the statement's runner was busy (DuckDB's run time, not CPU time of its
// threads). QueryInfo.Stats is what the last answer said.
//
// DuckDB's error('message') fails a query where it is evaluated, e.g.
// after some pages: SELECT CASE WHEN id = 2500 THEN error('boom') ELSE id
// END FROM warehouse.logs.events.
//
// The function pause_ms(ms) sleeps per row and stops when the query is
// cancelled: SELECT pause_ms(60000) is a slow query for timeout and cancel
// tests.
//
// # Sample data (unless WithoutSampleData)
//
//	sales.public.customers     id integer, name varchar, email varchar (NULLs), country varchar,
//	                           signup_date date, vip boolean, balance decimal(12,2); 5 rows; comments
//	sales.public.orders        id bigint, customer_id integer, ordered_at timestamp(3), amount decimal(10,2),
//	                           status varchar, discount double; 8 rows (one all NULL but id)
//	sales.public.order_totals  view: customer_id, order_count, total_amount
//	sales.public.all_types     one column per common type (c_boolean ... c_row), 3 rows, the last all NULL
//	sales.crm.contacts         id, full_name, phone, notes; 3 rows
//	sales."Odd Schema"."Mixed Case Table"  columns "Column One", "select", "we""ird"
//	sales."Odd Schema"."dotted.name", sales."Odd Schema"."quote""d"
//	warehouse.inventory.products  sku, name, price decimal(10,2), tags array(varchar),
//	                              attributes map(varchar, varchar), dims row(width double, height double)
//	warehouse.inventory.stock     sku, warehouse, qty integer, updated_at timestamp(3)
//	warehouse.inventory.stock_by_product  view joining products and stock
//	warehouse.logs.events      id bigint 1..N, ts timestamp(3), level varchar, message varchar,
//	                           value double; N = LargeTableRows (1,000,000) generated at start
package trinotest
