package engine

import (
	"context"

	"github.com/mcpfleet/mcpfleet/sqlmcp/internal/sqlguard"
)

// CheckScope enforces SQLENGINE_ALLOWED_SCHEMAS on a statement that passed
// sqlguard.Check: the engine says which tables it reads and writes
// (EXPLAIN (TYPE IO, FORMAT JSON)); any outside scope, or an answer that does
// not tell, refuses it. Nothing is executed. Both the MCP tools and the CLI
// call it, so the rule is the same in either mode. The statement planned is
// st.Inner, a suffix of st.SQL: the caller runs st.SQL (or explains
// st.Inner) and nothing else; q gives only the session (catalog, schema,
// timeout), its SQL is ignored.
func (c *Client) CheckScope(ctx context.Context, scope *sqlguard.Scope, st *sqlguard.Statement, q Query) error {
	if !scope.Enabled() {
		return nil
	}
	if err := scope.Precheck(st); err != nil {
		return err
	}
	// The names the statement gives, resolved in the query's session,
	// before the engine is asked anything.
	catalog, schema := sessionNames(c.cfg, q.Catalog, q.Schema)
	if err := scope.CheckNamed(st, catalog, schema); err != nil {
		return err
	}
	q.SQL = st.Inner
	plan, err := c.IO(ctx, q)
	if err != nil {
		if k := KindOf(err); k == Canceled || k == Timeout || k == Unavailable {
			return err
		}
		return &sqlguard.Refusal{What: "the statement",
			Why:   "with " + sqlguard.SettingAllowedSchemas + " set, the engine must say which tables it touches, and it could not: " + err.Error(),
			Allow: "query tables of the allowed schemas with a SELECT the engine can plan"}
	}
	in := make([]sqlguard.TableName, 0, len(plan.Inputs))
	for _, r := range plan.Inputs {
		in = append(in, sqlguard.TableName{Catalog: r.Catalog, Schema: r.Schema, Table: r.Table})
	}
	var out *sqlguard.TableName
	if plan.Output != nil {
		out = &sqlguard.TableName{Catalog: plan.Output.Catalog, Schema: plan.Output.Schema, Table: plan.Output.Table}
	}
	return scope.CheckTables(st, in, out)
}
