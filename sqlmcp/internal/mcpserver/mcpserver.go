// Package mcpserver exposes the engine as MCP tools: execute_query,
// list_catalogs, list_schemas, list_tables, get_table_schema and
// explain_query, registered through the shared tool-call pipeline.
// Handlers translate between MCP and the engine, apply the SQL guard and
// the allowed-schemas rule, and attach the OAuth caller to every query;
// execute_query's planner classifies each statement and describes its dry
// run.
package mcpserver

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/mcpfleet/mcpfleet/shared/apps"
	"github.com/mcpfleet/mcpfleet/shared/envconfig"
	"github.com/mcpfleet/mcpfleet/shared/httpauth"
	"github.com/mcpfleet/mcpfleet/shared/mcperr"

	"github.com/mcpfleet/mcpfleet/sqlmcp/internal/config"
	"github.com/mcpfleet/mcpfleet/sqlmcp/internal/engine"
	"github.com/mcpfleet/mcpfleet/sqlmcp/internal/sqlguard"
	"github.com/mcpfleet/mcpfleet/sqlmcp/internal/trinoauth"
)

// Options are the server's safety settings.
type Options struct {
	AllowWrites    bool
	Scope          *sqlguard.Scope // nil or empty: every schema
	MaxRows        int             // default limit of execute_query
	MaxRowsCeiling int             // the most a call's limit may ask for

	// Impersonation runs each query as the OAuth caller, named by the
	// token claim ImpersonationField (config.FieldUsername, FieldEmail or
	// FieldSubject) selects.
	Impersonation      bool
	ImpersonationField string

	// CursorTTL is how long an open query waits for fetch_more before it
	// is cancelled on the engine; CursorsPerCaller bounds the open
	// queries of one identity.
	CursorTTL        time.Duration
	CursorsPerCaller int

	// MaxScanBytes and MaxScanRows are the read budgets (0: none): a
	// statement the engine estimates to read more, or whose estimate is
	// unknown, runs only after a person approves it through the pipeline
	// (refused with the estimate when nobody can be asked).
	MaxScanBytes int64
	MaxScanRows  int64

	// Clusters are the Trino clusters of SQLENGINE_CLUSTERS, the default
	// first, and Fleet resolves a call's cluster argument. Without them
	// New's engine and Scope are the one cluster, and tools take no
	// cluster argument.
	Clusters []Cluster
	Fleet    *envconfig.Fleet

	// Views are the MCP Apps views; nil: none. execute_query owns
	// ViewQueryResult (also when writes make it a change tool: a read's
	// rows are what the view shows; a write's preview shows as a card
	// there too).
	Views *apps.Views
}

// ViewQueryResult is the name of execute_query's view
// (ui://sqlmcp/query-result).
const ViewQueryResult = "query-result"

// Cluster is one named Trino cluster the tools serve.
type Cluster struct {
	Name   string
	Engine *engine.Client
	Scope  *sqlguard.Scope // nil or empty: every schema
	Auth   string          // SQLENGINE_<NAME>_AUTH, for list_clusters
	// MaxScanBytes and MaxScanRows are the cluster's read budgets (0:
	// none), as Options' are for one cluster.
	MaxScanBytes int64
	MaxScanRows  int64
}

// Tools serves the engine over MCP.
type Tools struct {
	curs   *cursors
	eng    *engine.Client
	opts   Options
	logger *slog.Logger

	cluster string            // this view's cluster ("" with one unnamed cluster)
	byName  map[string]*Tools // the per-cluster views, when named
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
		opts.ImpersonationField = config.FieldUsername
	}
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	if opts.CursorTTL <= 0 {
		opts.CursorTTL = DefaultCursorTTL
	}
	if opts.CursorsPerCaller <= 0 {
		opts.CursorsPerCaller = DefaultCursorsPerCaller
	}
	// One cursor store for every cluster: a cursor names its own query.
	t := &Tools{eng: eng, opts: opts, logger: logger, curs: newCursors(opts.CursorTTL, opts.CursorsPerCaller)}
	if opts.Fleet != nil && opts.Fleet.Named && len(opts.Clusters) > 0 {
		t.byName = map[string]*Tools{}
		for _, cl := range opts.Clusters {
			o := opts
			o.Scope, o.MaxScanBytes, o.MaxScanRows = cl.Scope, cl.MaxScanBytes, cl.MaxScanRows
			t.byName[cl.Name] = &Tools{eng: cl.Engine, opts: o, logger: logger.With("cluster", cl.Name), cluster: cl.Name, curs: t.curs}
		}
		def := t.byName[opts.Clusters[0].Name]
		t.eng, t.opts.Scope, t.cluster = def.eng, def.opts.Scope, def.cluster
		t.opts.MaxScanBytes, t.opts.MaxScanRows = def.opts.MaxScanBytes, def.opts.MaxScanRows
	}
	return t
}

// clusterArg is the optional cluster argument every tool takes when
// several clusters are configured (SQLENGINE_CLUSTERS); its enum names
// them. With one unnamed cluster the schema has no cluster.
type clusterArg struct {
	Cluster *string `json:"cluster,omitempty"`
}

// on returns the view of the cluster a call names (the default one when it
// names none). A name that is not configured exactly (case, spaces,
// look-alikes) selects nothing and no request is made.
func (t *Tools) on(tool string, a clusterArg) (*Tools, error) {
	if a.Cluster == nil {
		return t, nil
	}
	if t.byName == nil {
		return nil, mcperr.New(mcperr.Invalid, tool+": this server has one Trino cluster and takes no cluster argument", nil, "omit cluster")
	}
	names, err := t.opts.Fleet.Select(*a.Cluster)
	if err != nil {
		return nil, mcperr.New(mcperr.Invalid, tool+": "+err.Error(), nil, "see list_clusters")
	}
	return t.byName[names[0]], nil
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

// failure logs err and returns it as the MCP error the caller sees
// (toMCP).
func (t *Tools) failure(ctx context.Context, tool string, err error) error {
	err = toMCP(err)
	level := slog.LevelWarn
	if k := mcperr.KindOf(err); k == mcperr.Invalid || k == mcperr.NotFound || k == mcperr.Canceled {
		level = slog.LevelInfo
	}
	t.logger.Log(ctx, level, "tool call failed", "tool", tool, "error", mcperr.Message(err))
	return err
}

// mcpKinds maps the engine's error kinds onto MCP's.
var mcpKinds = map[engine.Kind]mcperr.Kind{
	engine.Internal:    mcperr.Internal,
	engine.Invalid:     mcperr.Invalid,
	engine.NotFound:    mcperr.NotFound,
	engine.Unavailable: mcperr.Unavailable,
	engine.Timeout:     mcperr.Timeout,
	engine.Permission:  mcperr.Permission,
	engine.Canceled:    mcperr.Canceled,
}

// toMCP is the one place the back end's errors become MCP errors: a guard
// refusal is invalid input; an engine error keeps its words and hint under
// the matching kind. Others (the server's own, context errors) pass as
// they are.
func toMCP(err error) error {
	var r *sqlguard.Refusal
	if errors.As(err, &r) {
		return mcperr.New(mcperr.Invalid, r.Error(), nil, "")
	}
	if e, ok := err.(*engine.Error); ok {
		return &mcperr.Error{Kind: mcpKinds[e.Kind], Op: e.Op, Err: e.Err, Hint: e.Hint}
	}
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
	if tok, ok := httpauth.AccessTokenFromContext(ctx); ok {
		// The subject of a token exchange (SQLENGINE_AUTH=token-exchange):
		// only ever sent to the identity provider, never to Trino.
		ctx = trinoauth.WithSubjectToken(ctx, tok)
	}
	principal := cmp.Or(id.Username, id.Email, id.Subject)
	eid := engine.Identity{Principal: principal, Subject: id.Subject, Email: id.Email}
	if t.opts.Impersonation {
		var v, claim string
		switch t.opts.ImpersonationField {
		case config.FieldEmail:
			v, claim = id.Email, "email"
		case config.FieldSubject:
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

// notBlank refuses a required text argument that holds only spaces (the
// schema's minLength admits it).
func notBlank(tool, arg, v string) error {
	if strings.TrimSpace(v) == "" {
		return mcperr.Invalidf("%s: argument %q must not be empty", tool, arg)
	}
	return nil
}

// checkName refuses a catalog, schema or table argument that is no name
// the engine can be sent, before any request is made. An empty value is
// an omitted argument.
func checkName(tool, arg, v string) error {
	if v == "" {
		return nil
	}
	if err := engine.CheckName(v); err != nil {
		return mcperr.Invalidf("%s: argument %q is not a valid name: %v; give one %s name, without line breaks or other control characters", tool, arg, err, arg)
	}
	return nil
}

// inSchema resolves catalog and schema to the configured defaults,
// refuses a schema outside the allowed ones and attaches the caller.
func (t *Tools) inSchema(ctx context.Context, catalog, schema string) (context.Context, string, string, error) {
	catalog = t.eng.DefaultCatalog(catalog)
	schema = t.eng.DefaultSchema(catalog, schema)
	if catalog != "" && schema != "" {
		if err := t.opts.Scope.CheckSchema(catalog, schema); err != nil {
			return ctx, catalog, schema, err
		}
	}
	ctx, err := t.caller(ctx)
	return ctx, catalog, schema, err
}

// budget is the budgets and whether est is within them, as shown in
// explain_query and dry runs.
func (t *Tools) budget(est *engine.Estimate) map[string]any {
	over := t.overBudget(est)
	return map[string]any{"max_scan_bytes": t.opts.MaxScanBytes, "max_scan_rows": t.opts.MaxScanRows, "within": over == "", "over": over}
}

// Close ends every open cursor, cancelling its engine query.
func (t *Tools) Close() { t.curs.closeAll() }

func (t *Tools) listCatalogs(ctx context.Context, in clusterArg) (*mcp.CallToolResult, error) {
	const tool = "list_catalogs"
	t, err := t.on(tool, in)
	if err != nil {
		return mcperr.ToolResult(err), nil
	}
	ctx, err = t.caller(ctx)
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

func (t *Tools) listSchemas(ctx context.Context, in schemasIn) (*mcp.CallToolResult, error) {
	const tool = "list_schemas"
	t, err := t.on(tool, in.clusterArg)
	if err != nil {
		return mcperr.ToolResult(err), nil
	}
	if err := checkName(tool, "catalog", in.Catalog); err != nil {
		return t.fail(ctx, tool, err)
	}
	catalog := t.eng.DefaultCatalog(in.Catalog)
	if catalog != "" && !t.opts.Scope.AllowsCatalog(catalog) {
		return t.fail(ctx, tool, &sqlguard.Refusal{What: "catalog " + catalog, Why: "no schema of it is in " + sqlguard.SettingAllowedSchemas,
			Allow: "list an allowed catalog (see list_catalogs), or add its schemas to " + sqlguard.SettingAllowedSchemas})
	}
	ctx, err = t.caller(ctx)
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

func (t *Tools) listTables(ctx context.Context, in tablesIn) (*mcp.CallToolResult, error) {
	const tool = "list_tables"
	t, err := t.on(tool, in.clusterArg)
	if err != nil {
		return mcperr.ToolResult(err), nil
	}
	if err := cmp.Or(checkName(tool, "catalog", in.Catalog), checkName(tool, "schema", in.Schema)); err != nil {
		return t.fail(ctx, tool, err)
	}
	ctx, catalog, schema, err := t.inSchema(ctx, in.Catalog, in.Schema)
	if err != nil {
		return t.fail(ctx, tool, err)
	}
	tables, err := t.eng.Tables(ctx, catalog, schema, in.Pattern)
	if err != nil {
		return t.fail(ctx, tool, err)
	}
	return result(map[string]any{"catalog": catalog, "schema": schema, "tables": tables})
}

func (t *Tools) getTableSchema(ctx context.Context, in tableSchemaIn) (*mcp.CallToolResult, error) {
	const tool = "get_table_schema"
	t, err := t.on(tool, in.clusterArg)
	if err != nil {
		return mcperr.ToolResult(err), nil
	}
	if err := notBlank(tool, "table", in.Table); err != nil {
		return t.fail(ctx, tool, err)
	}
	if err := cmp.Or(checkName(tool, "catalog", in.Catalog), checkName(tool, "schema", in.Schema)); err != nil {
		return t.fail(ctx, tool, err)
	}
	name, catalog, schema := in.Table, in.Catalog, in.Schema
	var table string
	if catalog != "" || schema != "" {
		// The parts come as separate arguments: table is one identifier,
		// whatever dots or quotes it holds, quoted for the engine as it is.
		if err := checkName(tool, "table", name); err != nil {
			return t.fail(ctx, tool, err)
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
	ctx, catalog, schema, err = t.inSchema(ctx, catalog, schema)
	if err != nil {
		return t.fail(ctx, tool, err)
	}
	info, err := t.eng.TableSchema(ctx, catalog, schema, table)
	if err != nil {
		return t.fail(ctx, tool, err)
	}
	return result(info)
}

func (t *Tools) explainQuery(ctx context.Context, in explainIn) (*mcp.CallToolResult, error) {
	const tool = "explain_query"
	t, err := t.on(tool, in.clusterArg)
	if err != nil {
		return mcperr.ToolResult(err), nil
	}
	if err := notBlank(tool, "query", in.Query); err != nil {
		return t.fail(ctx, tool, err)
	}
	query, typ, format := in.Query, cmp.Or(in.Type, "LOGICAL"), cmp.Or(in.Format, "TEXT")
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
	if strings.EqualFold(typ, ExplainEstimate) {
		est, err := t.eng.Estimate(ctx, q)
		if err != nil {
			return t.fail(ctx, tool, err)
		}
		return result(map[string]any{"type": ExplainEstimate, "format": "JSON", "plan": estimateText(est), "estimate": est, "budget": t.budget(est)})
	}
	plan, err := t.eng.Explain(ctx, q, typ, format)
	if err != nil {
		return t.fail(ctx, tool, err)
	}
	return result(map[string]any{"type": typ, "format": format, "plan": plan})
}
