package mcpserver

import (
	"cmp"
	"context"
	"fmt"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcpfleet/mcpfleet/shared/toolcall"

	"github.com/mcpfleet/mcpfleet/sqlmcp/internal/engine"
)

// The tools' arguments. catalog, schema and table are each one identifier
// taken as it is (never split on dots); they are checked as names before
// any request is made (checkName).

type executeIn struct {
	clusterArg
	Query string `json:"query" jsonschema:"one Trino SQL statement (a single trailing ';' is allowed)" minLength:"1"`
	// The bound and the description name the operator's ceiling (Schema).
	Limit   int    `json:"limit,omitempty" minimum:"1"`
	Catalog string `json:"catalog,omitempty" jsonschema:"catalog for unqualified names in this query (default: the configured catalog)"`
	Schema  string `json:"schema,omitempty" jsonschema:"schema for unqualified names in this query (default: the configured schema)"`
	Format  string `json:"format,omitempty" jsonschema:"result format: json (rows as arrays, the default), csv or markdown (the text of the table, in data)"`
}

type fetchIn struct {
	Cursor string `json:"cursor" jsonschema:"the next_cursor of the previous page (execute_query or fetch_more)" minLength:"1"`
	// The bound and the description name the operator's ceiling (Schema).
	Limit  int    `json:"limit,omitempty" minimum:"1"`
	Format string `json:"format,omitempty" jsonschema:"result format: json, csv or markdown (default: the format the query was started with)"`
}

type schemasIn struct {
	clusterArg
	Catalog string `json:"catalog,omitempty" jsonschema:"catalog to list (default: the configured catalog)"`
}

type tablesIn struct {
	clusterArg
	Catalog string `json:"catalog,omitempty" jsonschema:"catalog (default: the configured catalog)"`
	Schema  string `json:"schema,omitempty" jsonschema:"schema (default: the configured schema)"`
	Pattern string `json:"pattern,omitempty" jsonschema:"SQL LIKE pattern on table names, e.g. order% (default: all)"`
}

type tableSchemaIn struct {
	clusterArg
	Table   string `json:"table" jsonschema:"the table: one name as it is when catalog or schema is given; otherwise table, schema.table or catalog.schema.table, with parts containing dots or quotes in double quotes (\"my.table\")" minLength:"1"`
	Catalog string `json:"catalog,omitempty" jsonschema:"catalog when the table name does not give one (default: the configured catalog); when catalog or schema is given, table is taken as one name"`
	Schema  string `json:"schema,omitempty" jsonschema:"schema when the table name does not give one (default: the configured schema); when catalog or schema is given, table is taken as one name"`
}

type explainIn struct {
	clusterArg
	Query string `json:"query" jsonschema:"the statement to plan; nothing is executed" minLength:"1"`
	// The accepted values are the engine's (Schema).
	Type   string `json:"type,omitempty" jsonschema:"plan type (default LOGICAL)"`
	Format string `json:"format,omitempty" jsonschema:"plan format (default TEXT)"`
}

// Register adds the six tools through calls: the listing and explain tools
// are reads; execute_query is classified per call (a SELECT is a read;
// INSERT and CREATE are changes; DELETE, UPDATE, MERGE, DROP, TRUNCATE,
// ALTER and anything else writing are destructive) with dry run, approval
// and audit when writes are allowed, and a read otherwise.
func (t *Tools) Register(calls *toolcall.Pipeline) {
	read := func(title string) toolcall.Effect {
		return toolcall.Effect{Title: title, Most: toolcall.Read, Idempotent: true}
	}
	output := func(schema string) []mcp.ToolOption {
		return []mcp.ToolOption{mcp.WithRawOutputSchema([]byte(schema))}
	}

	exec := toolcall.Tool{
		Name: "execute_query",
		Description: "Run one SQL statement on the Trino engine and return its rows (columns in query order, values typed). " +
			"Reading stops at the limit; when more rows exist, truncated is true and next_cursor holds the engine query open: pass it to fetch_more for the next page (it expires after " + t.opts.CursorTTL.String() + " without a fetch).",
		Effect: read("Run SQL"),
		Schema: func(s *jsonschema.Schema) {
			limit := s.Properties["limit"]
			limit.Maximum = jsonschema.Ptr(float64(t.opts.MaxRowsCeiling))
			limit.Description = fmt.Sprintf("most rows to return (default %d, at most %d, the operator's SQLENGINE_MAX_ROWS_CEILING); when more exist, next_cursor continues the same query with fetch_more", t.opts.MaxRows, t.opts.MaxRowsCeiling)
			s.Properties["format"].Enum = enum(formats)
		},
		Options: output(executeOutput),
	}
	if v := t.opts.Views; v != nil {
		exec.Options = append(exec.Options, v.Tool(ViewQueryResult)...)
	}
	// A heavy query can outlast a client's request timeout: it may run as
	// an MCP task where the server offers them (HTTP).
	if t.opts.AllowWrites {
		exec.Description += " Statements that change data are allowed on this server. Each call is classified: SELECT, WITH, VALUES, TABLE, SHOW, DESCRIBE and EXPLAIN are read (run at once); " +
			"INSERT and CREATE are change; DELETE, UPDATE, MERGE, DROP, TRUNCATE, ALTER, CREATE OR REPLACE and any other writing statement are destructive."
		if t.anyBudget() {
			exec.Description += " A read the engine estimates above the server's query budget (SQLENGINE_MAX_SCAN_BYTES, SQLENGINE_MAX_SCAN_ROWS), or whose estimate is unknown under one, needs a person's approval too."
		}
		exec.Effect = toolcall.Effect{Title: "Run SQL", Most: toolcall.Destructive}
		toolcall.AddChange(calls, t.withCluster(exec), t.planExecute, toolcall.AsTask())
	} else {
		exec.Description += " Only read-only statements run (SELECT, WITH, VALUES, TABLE, SHOW, DESCRIBE, EXPLAIN)."
		if t.anyBudget() {
			// A read priced above a budget needs a person's approval, which
			// only the pipeline's change path can ask: the tool is declared
			// as one (dryRun, confirm), and each call is still a read.
			exec.Description += " A read the engine estimates above the server's query budget (SQLENGINE_MAX_SCAN_BYTES, SQLENGINE_MAX_SCAN_ROWS), or whose estimate is unknown under one, runs only after a person approves it; every call of this tool reads, whatever the risk class below says."
			exec.Effect = toolcall.Effect{Title: "Run SQL", Most: toolcall.Change, Idempotent: true}
			toolcall.AddChange(calls, t.withCluster(exec), t.planExecute, toolcall.AsTask())
		} else {
			toolcall.AddRead(calls, t.withCluster(exec), t.executeQuery, toolcall.AsTask())
		}
	}

	toolcall.AddRead(calls, toolcall.Tool{Name: "fetch_more",
		Description: "Read the next page of a query started by execute_query: the same engine query continues (it is not run again). " +
			"Returns the same fields as execute_query, with next_cursor while rows remain. A cursor belongs to the caller who started the query.",
		Effect:  toolcall.Effect{Title: "Fetch more rows", Most: toolcall.Read},
		Options: output(executeOutput),
		Schema: func(s *jsonschema.Schema) {
			limit := s.Properties["limit"]
			limit.Maximum = jsonschema.Ptr(float64(t.opts.MaxRowsCeiling))
			limit.Description = fmt.Sprintf("most rows to return (default: the limit of the execute_query call, at most %d)", t.opts.MaxRowsCeiling)
			s.Properties["format"].Enum = enum(formats)
		}}, t.fetchMore)
	toolcall.AddRead(calls, t.withCluster(toolcall.Tool{Name: "list_catalogs", Description: "List the engine's catalogs.",
		Effect: read("List catalogs"), Options: output(catalogsOutput)}), t.listCatalogs)
	toolcall.AddRead(calls, t.withCluster(toolcall.Tool{Name: "list_schemas", Description: "List the schemas of a catalog.",
		Effect: read("List schemas"), Options: output(schemasOutput)}), t.listSchemas)
	toolcall.AddRead(calls, t.withCluster(toolcall.Tool{Name: "list_tables", Description: "List the tables and views of a schema, optionally filtered by a SQL LIKE pattern.",
		Effect: read("List tables"), Options: output(tablesOutput)}), t.listTables)
	toolcall.AddRead(calls, t.withCluster(toolcall.Tool{Name: "get_table_schema", Description: "Describe a table's columns: name, type, nullability, comment and extra information, in column order.",
		Effect: read("Describe table"), Options: output(tableSchemaOutput)}), t.getTableSchema)
	if t.byName != nil {
		toolcall.AddRead(calls, toolcall.Tool{Name: "list_clusters", Description: "List the Trino clusters this server can query (the cluster argument of every tool), the default first: coordinator URL, default catalog and schema, how sqlmcp authenticates and the allowed schemas.",
			Effect: read("List clusters"), Options: output(clustersOutput)}, t.listClusters)
	}
	toolcall.AddRead(calls, t.withCluster(toolcall.Tool{Name: "explain_query", Description: "Show the engine's plan for a statement without executing it: LOGICAL, DISTRIBUTED, VALIDATE or IO, as TEXT, JSON or GRAPHVIZ; " +
		"type estimate returns the engine's estimate of the rows and bytes it reads per table and in total (null when the engine does not know) and the server's read budgets.",
		Effect: read("Explain SQL"), Options: output(explainOutput),
		Schema: func(s *jsonschema.Schema) {
			s.Properties["type"].Enum = append(enum(engine.ExplainTypes), ExplainEstimate)
			s.Properties["format"].Enum = enum(engine.ExplainFormats)
		}}), t.explainQuery)
}

// withCluster completes tool's schema with the cluster argument: an enum
// of the configured clusters when SQLENGINE_CLUSTERS names them, and no
// such argument with one unnamed cluster (the surface is then as it was).
func (t *Tools) withCluster(tool toolcall.Tool) toolcall.Tool {
	own := tool.Schema
	tool.Schema = func(s *jsonschema.Schema) {
		if own != nil {
			own(s)
		}
		if t.byName == nil {
			delete(s.Properties, "cluster")
			return
		}
		p := s.Properties["cluster"]
		p.Description = fmt.Sprintf("Trino cluster to use, as named in SQLENGINE_CLUSTERS (see list_clusters); omit for the default cluster (%s)", t.opts.Clusters[0].Name)
		p.Enum = nil
		for _, cl := range t.opts.Clusters {
			p.Enum = append(p.Enum, cl.Name)
		}
	}
	return tool
}

// listClusters answers list_clusters.
func (t *Tools) listClusters(ctx context.Context, _ struct{}) (*mcp.CallToolResult, error) {
	out := []map[string]any{}
	for i, cl := range t.opts.Clusters {
		cfg := cl.Engine.Config()
		schemas := []string{}
		if cl.Scope != nil {
			for _, n := range cl.Scope.Schemas() {
				schemas = append(schemas, n.Catalog+"."+n.Schema)
			}
		}
		out = append(out, map[string]any{
			"name": cl.Name, "default": i == 0, "url": cfg.URL(), "catalog": cfg.Catalog, "schema": cfg.Schema,
			"auth": cmp.Or(cl.Auth, "password"), "allowed_schemas": schemas,
		})
	}
	return result(map[string]any{"clusters": out})
}

const clustersOutput = `{"type": "object", "additionalProperties": false, "required": ["clusters"],
	"properties": {
		"clusters": {"type": "array", "description": "the configured clusters, the default first",
			"items": {"type": "object", "additionalProperties": false,
				"required": ["name", "default", "url", "catalog", "schema", "auth", "allowed_schemas"],
				"properties": {
					"name": {"type": "string", "description": "the value of the cluster argument"},
					"default": {"type": "boolean", "description": "true for the cluster a call without cluster uses"},
					"url": {"type": "string", "description": "the coordinator"},
					"catalog": {"type": "string", "description": "default catalog (empty for none)"},
					"schema": {"type": "string", "description": "default schema (empty for none)"},
					"auth": {"type": "string", "description": "how sqlmcp authenticates: password, jwt or token-exchange"},
					"allowed_schemas": {"type": "array", "items": {"type": "string"}, "description": "catalog.schema names queries are confined to (empty: every schema)"}}}}}}`

func enum(values []string) []any {
	out := make([]any, len(values))
	for i, v := range values {
		out[i] = v
	}
	return out
}

// The tools' output schemas: what structuredContent holds.

const executeOutput = `{"type": "object", "additionalProperties": false,
	"required": ["columns", "row_count", "truncated", "limit", "query_id", "elapsed_ms"],
	"properties": {
		"columns": {"type": "array", "description": "result columns in the query's order, with Trino types",
			"items": {"type": "object", "additionalProperties": false, "required": ["name", "type"],
				"properties": {"name": {"type": "string"}, "type": {"type": "string"}}}},
		"rows": {"type": "array", "items": {"type": "array"},
			"description": "rows as arrays in column order; NULL is null, decimals are exact strings, dates and timestamps ISO 8601 (format json)"},
		"format": {"type": "string", "enum": ["csv", "markdown"], "description": "the format of data (absent for json)"},
		"data": {"type": "string", "description": "the rows as a CSV or markdown table with a header line (format csv or markdown)"},
		"next_cursor": {"type": "string", "description": "present when more rows exist: pass it to fetch_more to continue the same engine query"},
		"row_count": {"type": "integer", "description": "rows returned"},
		"truncated": {"type": "boolean", "description": "true when more rows exist than were returned (row limit or byte cap); next_cursor then continues"},
		"limit": {"type": "integer", "description": "the row limit applied"},
		"query_id": {"type": "string", "description": "the engine's query id"},
		"elapsed_ms": {"type": "integer", "description": "wall time of the call in milliseconds"}}}`

const catalogsOutput = `{"type": "object", "additionalProperties": false, "required": ["catalogs"],
	"properties": {
		"catalogs": {"type": "array", "items": {"type": "string"}, "description": "catalog names, sorted"}}}`

const schemasOutput = `{"type": "object", "additionalProperties": false, "required": ["catalog", "schemas"],
	"properties": {
		"catalog": {"type": "string", "description": "the catalog listed"},
		"schemas": {"type": "array", "items": {"type": "string"}, "description": "schema names, sorted"}}}`

const tablesOutput = `{"type": "object", "additionalProperties": false, "required": ["catalog", "schema", "tables"],
	"properties": {
		"catalog": {"type": "string", "description": "the catalog listed"},
		"schema": {"type": "string", "description": "the schema listed"},
		"tables": {"type": "array",
			"items": {"type": "object", "additionalProperties": false, "required": ["name", "type"],
				"properties": {
					"name": {"type": "string"},
					"type": {"type": "string", "description": "TABLE, VIEW, ... (empty when the engine does not say)"}}}}}}`

const tableSchemaOutput = `{"type": "object", "additionalProperties": false, "required": ["catalog", "schema", "table", "columns"],
	"properties": {
		"catalog": {"type": "string", "description": "the table's catalog"},
		"schema": {"type": "string", "description": "the table's schema"},
		"table": {"type": "string", "description": "the table's name"},
		"columns": {"type": "array",
			"items": {"type": "object", "additionalProperties": false, "required": ["name", "type", "nullable", "comment", "extra"],
				"properties": {
					"name": {"type": "string"},
					"type": {"type": "string"},
					"nullable": {"type": ["boolean", "null"], "description": "null when the engine does not say"},
					"comment": {"type": "string"},
					"extra": {"type": "string"}}}}}}`

const explainOutput = `{"type": "object", "additionalProperties": false, "required": ["type", "format", "plan"],
	"properties": {
		"type": {"type": "string", "description": "plan type"},
		"format": {"type": "string", "description": "plan format"},
		"plan": {"type": "string", "description": "the engine's plan (type estimate: the estimate in words)"},
		"estimate": {"type": "object", "description": "type estimate: rows and bytes read per table and in total; null figures are unknown, never zero"},
		"budget": {"type": "object", "description": "type estimate: SQLENGINE_MAX_SCAN_BYTES and SQLENGINE_MAX_SCAN_ROWS (0: none) and whether the estimate is within them"}}}`
