// Package mcpserver exposes the engine as MCP tools: execute_query,
// list_catalogs, list_schemas, list_tables, get_table_schema and
// explain_query, registered through the shared tool-call pipeline.
// Handlers translate between MCP and the engine, apply the SQL guard and
// the allowed-schemas rule, and attach the OAuth caller to every query;
// execute_query's planner classifies each statement and describes its dry
// run.
package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/mcpfleet/mcpfleet/shared/audit"
	"github.com/mcpfleet/mcpfleet/shared/httpauth"
	"github.com/mcpfleet/mcpfleet/shared/mcperr"
	"github.com/mcpfleet/mcpfleet/shared/toolcall"

	"github.com/mcpfleet/mcpfleet/sqlmcp/internal/engine"
	"github.com/mcpfleet/mcpfleet/sqlmcp/internal/sqlguard"
)

// Impersonation fields (SQLENGINE_IMPERSONATION_FIELD) and their claims.
const (
	FieldUsername = "username" // preferred_username
	FieldEmail    = "email"    // email
	FieldSubject  = "subject"  // sub
)

// Options are the server's safety settings.
type Options struct {
	AllowWrites    bool
	Scope          *sqlguard.Scope // nil or empty: every schema
	MaxRows        int             // default limit of execute_query
	MaxRowsCeiling int             // the most a call's limit may ask for

	// Impersonation runs each query as the OAuth caller, named by the
	// token claim ImpersonationField selects.
	Impersonation      bool
	ImpersonationField string
}

// Tools serves the engine over MCP.
type Tools struct {
	eng    *engine.Client
	opts   Options
	logger *slog.Logger
}

// New returns the tools over eng.
func New(eng *engine.Client, opts Options, logger *slog.Logger) *Tools {
	if opts.MaxRows <= 0 {
		opts.MaxRows = engine.DefaultMaxRows
	}
	if opts.MaxRowsCeiling < opts.MaxRows {
		opts.MaxRowsCeiling = max(opts.MaxRows, 10000)
	}
	if opts.ImpersonationField == "" {
		opts.ImpersonationField = FieldUsername
	}
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return &Tools{eng: eng, opts: opts, logger: logger}
}

// ServerOptions are the mcp-go options the tools rely on.
func ServerOptions() []server.ServerOption {
	return []server.ServerOption{
		server.WithToolCapabilities(false),
		server.WithInstructions("Run read-only SQL on a Trino engine and discover its catalogs, schemas and tables. " +
			"Discover with list_catalogs, list_schemas, list_tables and get_table_schema before writing queries; " +
			"execute_query returns typed rows capped by a limit; explain_query shows a plan without running anything."),
	}
}

// Register adds the six tools to s behind a pipeline with the default
// approval policy and no audit log (tests). Servers use RegisterWith and
// the pipeline serve configured.
func (t *Tools) Register(s *server.MCPServer) {
	calls, err := toolcall.New(s, toolcall.Config{Audit: audit.Config{Dest: "off"}}, toolcall.Options{Server: "sqlmcp"})
	if err != nil {
		panic(err) // an audit log that is off cannot fail to open
	}
	t.RegisterWith(calls)
}

// RegisterWith adds the six tools through calls: the listing and explain
// tools are reads; execute_query is classified per call (a SELECT is a
// read; INSERT and CREATE are changes; DELETE, UPDATE, MERGE, DROP,
// TRUNCATE, ALTER and anything else writing are destructive) with dry run,
// approval and audit, when writes are allowed, and a read otherwise.
func (t *Tools) RegisterWith(calls *toolcall.Pipeline) {
	readOnly := func(title string) []mcp.ToolOption {
		return []mcp.ToolOption{
			mcp.WithToolTitle(title),
			mcp.WithReadOnlyHintAnnotation(true),
			mcp.WithDestructiveHintAnnotation(false),
			mcp.WithIdempotentHintAnnotation(true),
			mcp.WithOpenWorldHintAnnotation(false),
		}
	}
	writes := t.opts.AllowWrites
	execDesc := "Run one SQL statement on the Trino engine and return its rows (columns in query order, values typed). " +
		"Reading stops at the limit and the rest of the query is cancelled; truncated tells whether more rows existed."
	if writes {
		execDesc += " Statements that change data are allowed on this server. Each call is classified: SELECT, WITH, VALUES, TABLE, SHOW, DESCRIBE and EXPLAIN are read (run at once); " +
			"INSERT and CREATE are change; DELETE, UPDATE, MERGE, DROP, TRUNCATE, ALTER, CREATE OR REPLACE and any other writing statement are destructive."
	} else {
		execDesc += " Only read-only statements run (SELECT, WITH, VALUES, TABLE, SHOW, DESCRIBE, EXPLAIN)."
	}
	execTool := newTool("execute_query", executeInput(t.opts.MaxRows, t.opts.MaxRowsCeiling),
		mcp.WithDescription(execDesc),
		mcp.WithToolTitle("Run SQL"),
		mcp.WithReadOnlyHintAnnotation(!writes),
		mcp.WithDestructiveHintAnnotation(writes),
		mcp.WithIdempotentHintAnnotation(!writes),
		mcp.WithOpenWorldHintAnnotation(false),
		mcp.WithRawOutputSchema(executeOutput),
	)
	// A heavy query can outlast a client's request timeout: it may run as
	// an MCP task where the server offers them (HTTP).
	if writes {
		calls.Change(execTool, toolcall.Destructive, t.planExecute, toolcall.AsTask())
	} else {
		calls.Read(execTool, t.executeQuery, toolcall.AsTask())
	}
	calls.Read(newTool("list_catalogs", emptyInput, append(readOnly("List catalogs"),
		mcp.WithDescription("List the engine's catalogs."),
		mcp.WithRawOutputSchema(catalogsOutput))...), t.listCatalogs)
	calls.Read(newTool("list_schemas", schemasInput, append(readOnly("List schemas"),
		mcp.WithDescription("List the schemas of a catalog."),
		mcp.WithRawOutputSchema(schemasOutput))...), t.listSchemas)
	calls.Read(newTool("list_tables", tablesInput, append(readOnly("List tables"),
		mcp.WithDescription("List the tables and views of a schema, optionally filtered by a SQL LIKE pattern."),
		mcp.WithRawOutputSchema(tablesOutput))...), t.listTables)
	calls.Read(newTool("get_table_schema", tableSchemaInput, append(readOnly("Describe table"),
		mcp.WithDescription("Describe a table's columns: name, type, nullability, comment and extra information, in column order."),
		mcp.WithRawOutputSchema(tableSchemaOutput))...), t.getTableSchema)
	calls.Read(newTool("explain_query", explainInput(engine.ExplainTypes, engine.ExplainFormats), append(readOnly("Explain SQL"),
		mcp.WithDescription("Show the engine's plan for a statement without executing it: LOGICAL, DISTRIBUTED, VALIDATE or IO, as TEXT, JSON or GRAPHVIZ."),
		mcp.WithRawOutputSchema(explainOutput))...), t.explainQuery)
}

// newTool builds a tool whose input schema is the strict raw schema input.
func newTool(name string, input []byte, opts ...mcp.ToolOption) mcp.Tool {
	tool := mcp.NewTool(name, opts...)
	tool.InputSchema = mcp.ToolInputSchema{} // NewTool's default would clash with the raw schema
	tool.RawInputSchema = input
	return tool
}

// result returns v as JSON text plus the same object as structuredContent.
func result(v any) (*mcp.CallToolResult, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return mcperr.ToolResult(mcperr.New(mcperr.Internal, "encode the result", err, "")), nil
	}
	return mcp.NewToolResultStructured(json.RawMessage(b), string(b)), nil
}

// fail logs and returns err as an isError tool result.
func (t *Tools) fail(ctx context.Context, tool string, err error) (*mcp.CallToolResult, error) {
	return mcperr.ToolResult(t.failure(ctx, tool, err)), nil
}

// failure logs err and returns it as an mcperr error (a guard refusal is
// invalid input).
func (t *Tools) failure(ctx context.Context, tool string, err error) error {
	var r *sqlguard.Refusal
	if errors.As(err, &r) {
		err = mcperr.New(mcperr.Invalid, r.Error(), nil, "")
	}
	level := slog.LevelWarn
	if k := mcperr.KindOf(err); k == mcperr.Invalid || k == mcperr.NotFound || k == mcperr.Canceled {
		level = slog.LevelInfo
	}
	t.logger.Log(ctx, level, "tool call failed", "tool", tool, "error", mcperr.Message(err))
	return err
}

// caller attaches the verified OAuth caller to ctx for attribution and,
// with impersonation, as the engine user. Without impersonation a call
// with no caller (stdio, OAuth off) runs as the configured user.
func (t *Tools) caller(ctx context.Context) (context.Context, error) {
	id, ok := httpauth.IdentityFromContext(ctx)
	if !ok {
		if t.opts.Impersonation {
			return ctx, mcperr.New(mcperr.Permission, "run the query as the caller", errors.New("the request carries no verified OAuth identity"),
				"impersonation (SQLENGINE_ENABLE_IMPERSONATION) needs OAuth on the HTTP transport")
		}
		return ctx, nil
	}
	principal := firstNonEmpty(id.Username, id.Email, id.Subject)
	eid := engine.Identity{Principal: principal, Subject: id.Subject, Email: id.Email}
	if t.opts.Impersonation {
		var v, claim string
		switch t.opts.ImpersonationField {
		case FieldEmail:
			v, claim = id.Email, "email"
		case FieldSubject:
			v, claim = id.Subject, "sub"
		default:
			v, claim = id.Username, "preferred_username"
		}
		if v == "" {
			return ctx, mcperr.New(mcperr.Permission, "run the query as the caller",
				errors.New("the token has no "+claim+" claim, so the engine user cannot be chosen; refusing rather than running as the service user"),
				"sign in with an identity that has "+claim+", or change SQLENGINE_IMPERSONATION_FIELD")
		}
		eid.RunAs = v
	}
	return engine.WithIdentity(ctx, eid), nil
}

func firstNonEmpty(s ...string) string {
	for _, x := range s {
		if x != "" {
			return x
		}
	}
	return ""
}

// ExecuteResult is the output of execute_query.
type ExecuteResult = engine.Result

func (t *Tools) listCatalogs(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	const tool = "list_catalogs"
	if err := readArgs(tool, req).err; err != nil {
		return t.fail(ctx, tool, err)
	}
	ctx, err := t.caller(ctx)
	if err != nil {
		return t.fail(ctx, tool, err)
	}
	all, err := t.eng.Catalogs(ctx)
	if err != nil {
		return t.fail(ctx, tool, err)
	}
	cats := []string{}
	for _, c := range all {
		if t.opts.Scope.AllowsCatalog(c) {
			cats = append(cats, c)
		}
	}
	return result(map[string]any{"catalogs": cats})
}

func (t *Tools) listSchemas(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	const tool = "list_schemas"
	a := readArgs(tool, req, "catalog")
	catalog := a.name("catalog", false)
	if a.err != nil {
		return t.fail(ctx, tool, a.err)
	}
	catalog = t.eng.DefaultCatalog(catalog)
	if catalog != "" && !t.opts.Scope.AllowsCatalog(catalog) {
		return t.fail(ctx, tool, &sqlguard.Refusal{What: "catalog " + catalog, Why: "no schema of it is in " + sqlguard.SettingAllowedSchemas,
			Allow: "list an allowed catalog (see list_catalogs), or add its schemas to " + sqlguard.SettingAllowedSchemas})
	}
	ctx, err := t.caller(ctx)
	if err != nil {
		return t.fail(ctx, tool, err)
	}
	all, err := t.eng.Schemas(ctx, catalog)
	if err != nil {
		return t.fail(ctx, tool, err)
	}
	schemas := []string{}
	for _, s := range all {
		if t.opts.Scope.AllowsSchema(catalog, s) {
			schemas = append(schemas, s)
		}
	}
	return result(map[string]any{"catalog": catalog, "schemas": schemas})
}

func (t *Tools) listTables(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	const tool = "list_tables"
	a := readArgs(tool, req, "catalog", "schema", "pattern")
	catalog, schema, pattern := a.name("catalog", false), a.name("schema", false), a.str("pattern", false)
	if a.err != nil {
		return t.fail(ctx, tool, a.err)
	}
	catalog = t.eng.DefaultCatalog(catalog)
	schema = t.eng.DefaultSchema(catalog, schema)
	if catalog != "" && schema != "" {
		if err := t.opts.Scope.CheckSchema(catalog, schema); err != nil {
			return t.fail(ctx, tool, err)
		}
	}
	ctx, err := t.caller(ctx)
	if err != nil {
		return t.fail(ctx, tool, err)
	}
	tables, err := t.eng.Tables(ctx, catalog, schema, pattern)
	if err != nil {
		return t.fail(ctx, tool, err)
	}
	return result(map[string]any{"catalog": catalog, "schema": schema, "tables": tables})
}

func (t *Tools) getTableSchema(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	const tool = "get_table_schema"
	a := readArgs(tool, req, "table", "catalog", "schema")
	name, catalog, schema := a.str("table", true), a.name("catalog", false), a.name("schema", false)
	if a.err != nil {
		return t.fail(ctx, tool, a.err)
	}
	var table string
	if catalog != "" || schema != "" {
		// The parts come as separate arguments: table is one identifier,
		// whatever dots or quotes it holds, quoted for the engine as it is.
		if err := engine.CheckName(name); err != nil {
			return t.fail(ctx, tool, mcperr.Invalidf("%s: argument \"table\" is not a valid name: %v; give one table name, without line breaks or other control characters", tool, err))
		}
		table = name
	} else {
		parts, err := engine.SplitName(name)
		if err != nil {
			return t.fail(ctx, tool, mcperr.Invalidf("%s: table %q: %v; or pass the catalog and schema arguments, and table is then taken as one name", tool, name, err))
		}
		switch len(parts) {
		case 1:
			table = parts[0]
		case 2:
			schema, table = parts[0], parts[1]
		case 3:
			catalog, schema, table = parts[0], parts[1], parts[2]
		default:
			return t.fail(ctx, tool, mcperr.Invalidf(`%s: table %q has %d parts; give table, schema.table or catalog.schema.table, and quote parts that contain dots ("my.table"), or pass the catalog and schema arguments`, tool, name, len(parts)))
		}
		for i, what := range []string{"catalog", "schema", "table"}[3-len(parts):] {
			if err := engine.CheckName(parts[i]); err != nil {
				return t.fail(ctx, tool, mcperr.Invalidf("%s: the %s part of table %q is not a valid name: %v", tool, what, name, err))
			}
		}
	}
	catalog = t.eng.DefaultCatalog(catalog)
	schema = t.eng.DefaultSchema(catalog, schema)
	if catalog != "" && schema != "" {
		if err := t.opts.Scope.CheckSchema(catalog, schema); err != nil {
			return t.fail(ctx, tool, err)
		}
	}
	ctx, err := t.caller(ctx)
	if err != nil {
		return t.fail(ctx, tool, err)
	}
	info, err := t.eng.TableSchema(ctx, catalog, schema, table)
	if err != nil {
		return t.fail(ctx, tool, err)
	}
	return result(info)
}

func (t *Tools) explainQuery(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	const tool = "explain_query"
	a := readArgs(tool, req, "query", "type", "format")
	query := a.str("query", true)
	typ := a.enum("type", "LOGICAL", engine.ExplainTypes)
	format := a.enum("format", "TEXT", engine.ExplainFormats)
	if a.err != nil {
		return t.fail(ctx, tool, a.err)
	}
	// Judged as "EXPLAIN <query>": planning any statement executes nothing,
	// but an EXPLAIN ANALYZE inside is judged as what it runs, and one
	// statement only.
	st, err := sqlguard.Check("EXPLAIN "+query, sqlguard.Options{AllowWrites: t.opts.AllowWrites})
	if err != nil {
		return t.fail(ctx, tool, err)
	}
	ctx, err = t.caller(ctx)
	if err != nil {
		return t.fail(ctx, tool, err)
	}
	q := engine.Query{SQL: st.Inner}
	if err := t.eng.CheckScope(ctx, t.opts.Scope, st, q); err != nil {
		return t.fail(ctx, tool, err)
	}
	plan, err := t.eng.Explain(ctx, q, typ, format)
	if err != nil {
		return t.fail(ctx, tool, err)
	}
	return result(map[string]any{"type": typ, "format": format, "plan": plan})
}
