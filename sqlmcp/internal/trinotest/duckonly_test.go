package trinotest_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/mcpfleet/mcpfleet/sqlmcp/internal/trinotest"
)

// Every DuckDB-only path is closed, however it is spelled: the test engine
// must not answer what Trino would refuse, or a gap in sqlmcp (which
// trusts the engine's errors and IO plans) would stay hidden.
func TestDuckDBOnlyPathsAreClosed(t *testing.T) {
	t.Parallel()
	srv := trinotest.Start(t, trinotest.WithLargeTableRows(-1))
	db := open(t, srv, "alice", "")
	functions := []string{
		"duckdb_tables()", "duckdb_columns()", "duckdb_views()", "duckdb_databases()", "duckdb_schemas()",
		"duckdb_settings()", "duckdb_functions()", "duckdb_secrets()", "duckdb_extensions()",
		"pragma_table_info('customers')", "pragma_database_list()", "pragma_storage_info('customers')",
		"query_table('sales.crm.contacts')", "query('SELECT * FROM sales.crm.contacts')",
		"read_csv('/etc/passwd')", "read_text('/etc/hostname')", "read_blob('/etc/hostname')", "glob('/*')",
		"read_parquet('/x.parquet')", "read_json_auto('/x.json')", "sniff_csv('/etc/passwd')",
		"json_execute_serialized_sql(json_serialize_sql('SELECT 1'))", "test_all_types()", "range(3)", "generate_series(1, 3)",
		"sqlite_master()", "pg_get_viewdef(1)", "which_secret('x', 'y')",
	}
	var cases []string
	for _, f := range functions {
		name := f[:strings.IndexByte(f, '(')]
		args := f[len(name):]
		for _, spelled := range []string{
			f,
			strings.ToUpper(name) + args,
			`"` + name + `"` + args,
			name + " /* c */ " + args,
			"sales.public." + f,
			"memory.main." + f,
			"system.main." + f,
			"temp.main." + f,
			`"system"."main"."` + name + `"` + args,
			"warehouse.inventory." + f,
			"main." + f,
		} {
			cases = append(cases,
				"SELECT * FROM "+spelled,
				"SELECT count(*) FROM sales.crm.contacts, "+spelled,
				"SELECT * FROM sales.crm.contacts WHERE EXISTS (SELECT * FROM "+spelled+")",
				"EXPLAIN (TYPE IO, FORMAT JSON) SELECT * FROM "+spelled,
			)
		}
		cases = append(cases, "SELECT "+f, "SELECT 1 WHERE "+f+" IS NULL")
	}
	relations := []string{
		"duckdb_tables", "duckdb_columns", "main.duckdb_tables", "system.main.duckdb_tables", `"DUCKDB_TABLES"`,
		"pg_catalog.pg_tables", "system.pg_catalog.pg_class", "sqlite_master", "sqlite_schema", "main.sqlite_master",
		"memory.main.sqlite_master", "system.information_schema.tables", "memory.information_schema.tables",
		"temp.information_schema.columns", "sales.trinotest_information_schema.tables", "pragma_database_list",
	}
	for _, r := range relations {
		cases = append(cases, "SELECT * FROM "+r, "TABLE "+r, "SELECT * FROM sales.crm.contacts c JOIN "+r+" d ON true")
	}
	commands := []string{
		"PRAGMA version", "PRAGMA show_tables", "pragma database_list", "FROM sales.crm.contacts",
		"COPY sales.crm.contacts TO '/tmp/x.csv'", "ATTACH ':memory:' AS x", "DETACH sales", "INSTALL httpfs",
		"LOAD httpfs", "EXPORT DATABASE '/tmp/x'", "IMPORT DATABASE '/tmp/x'", "CHECKPOINT", "VACUUM",
		"SUMMARIZE sales.crm.contacts", "PIVOT sales.crm.contacts ON id", "UNPIVOT sales.crm.contacts ON id INTO NAME k VALUE v",
		"SET threads = 1", "SET memory_limit = '1TB'", "SET VARIABLE x = 1", "RESET threads", "BEGIN", "BEGIN TRANSACTION",
		"CREATE MACRO m(x) AS x", "CREATE OR REPLACE MACRO m(x) AS x", "CREATE TEMP TABLE t (x INTEGER)",
		"CREATE TEMPORARY VIEW v AS SELECT 1", "CREATE SECRET s (TYPE s3)", "CREATE TYPE e AS ENUM ('a')",
		"CREATE SEQUENCE s", "CREATE INDEX i ON sales.crm.contacts (id)", "CREATE UNIQUE INDEX i ON sales.crm.contacts (id)",
		"DROP MACRO m", "DROP SECRET s", "DROP TYPE e", "DROP SEQUENCE s",
		"INSERT OR REPLACE INTO sales.crm.contacts SELECT * FROM sales.crm.contacts",
		"/* /* */ SELECT 1 -- */ FROM duckdb_tables()",
		"/* /* */ SELECT 1 -- */ FROM sales.crm.contacts",
		"CALL pragma_version()", "DESCRIBE SELECT 1", "SHOW ALL TABLES",
	}
	cases = append(cases, commands...)
	for _, c := range cases {
		rows, err := db.QueryContext(ctxT(t), c)
		if err == nil {
			var n int
			for rows.Next() {
				n++
			}
			err = rows.Err()
			rows.Close()
			if err == nil {
				if strings.Contains(c, "/* /* */") && n == 1 {
					continue // read as Trino reads it: SELECT 1, the rest a comment
				}
				t.Errorf("%s: answered %d rows; Trino refuses it", c, n)
				continue
			}
		}
		switch name := trinoErrorName(err); name {
		case "FUNCTION_NOT_FOUND", "SYNTAX_ERROR", "TABLE_NOT_FOUND", "CATALOG_NOT_FOUND", "SCHEMA_NOT_FOUND", "NOT_SUPPORTED", "MISSING_CATALOG_NAME":
		default:
			t.Errorf("%s: error %q (%v), want Trino's function-not-found, not-found or syntax error", c, name, err)
		}
	}
	t.Log(fmt.Sprintf("%d DuckDB-only spellings refused", len(cases)))
}
