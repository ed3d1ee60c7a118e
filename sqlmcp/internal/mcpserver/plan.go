package mcpserver

import (
	"cmp"
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcpfleet/mcpfleet/shared/mcperr"
	"github.com/mcpfleet/mcpfleet/shared/tasks"
	"github.com/mcpfleet/mcpfleet/shared/toolcall"

	"github.com/mcpfleet/mcpfleet/sqlmcp/internal/engine"
	"github.com/mcpfleet/mcpfleet/sqlmcp/internal/sqlguard"
)

// planExecute checks execute_query's statement with the SQL guard and
// classifies the one statement the guard returns: what is classified,
// previewed, approved and run is that same value. Reads run at once (their
// scope check and the query happen in Run); writes are scope-checked here,
// before anyone is asked.
func (t *Tools) planExecute(ctx context.Context, in executeIn) (toolcall.Plan, error) {
	const tool = "execute_query"
	t, err := t.on(tool, in.clusterArg)
	if err != nil {
		return toolcall.Plan{}, err
	}
	if err := notBlank(tool, "query", in.Query); err != nil {
		return toolcall.Plan{}, t.failure(ctx, tool, err)
	}
	if err := cmp.Or(checkName(tool, "catalog", in.Catalog), checkName(tool, "schema", in.Schema)); err != nil {
		return toolcall.Plan{}, t.failure(ctx, tool, err)
	}
	query, catalog, schema := in.Query, in.Catalog, in.Schema
	format, err := checkFormat(tool, in.Format)
	if err != nil {
		return toolcall.Plan{}, t.failure(ctx, tool, err)
	}
	limit := cmp.Or(in.Limit, t.opts.MaxRows) // the schema bounds a given limit by the ceiling
	st, err := sqlguard.Check(query, sqlguard.Options{AllowWrites: t.opts.AllowWrites})
	if err != nil {
		return toolcall.Plan{}, t.failure(ctx, tool, err)
	}
	q := engine.Query{SQL: st.SQL, Limit: limit, Catalog: catalog, Schema: schema}
	if req, ok := toolcall.CallRequest(ctx); ok {
		if p := tasks.NewProgress(ctx, req); p.Active() {
			// The coordinator's progress, as notifications/progress and as
			// the task's statusMessage.
			q.Progress = func(pr engine.Progress) { p.Send(pr.String()) }
		}
	}
	sessCatalog, sessSchema := t.eng.SessionNames(catalog, schema)
	stmt := classify(st, sessCatalog, sessSchema)
	target := t.eng.Config().URL()
	pl := toolcall.Plan{Class: stmt.Class, Target: target, Commands: []string{st.SQL}}
	if stmt.Class == toolcall.Read {
		// With a read budget the statement is priced before anyone decides:
		// the allowed-schemas check first (no estimate of a table outside
		// them), then the engine's estimate; a read above a budget, or
		// unknown under one, needs a person's approval.
		var est *engine.Estimate
		if t.budgeted() {
			cctx, err := t.caller(ctx)
			if err != nil {
				return toolcall.Plan{}, t.failure(ctx, tool, err)
			}
			if err := t.eng.CheckScope(cctx, t.opts.Scope, st, q); err != nil {
				return toolcall.Plan{}, t.failure(ctx, tool, err)
			}
			if est, err = t.estimate(cctx, st, q); err != nil {
				return toolcall.Plan{}, t.failure(ctx, tool, err)
			}
			if over := t.overBudget(est); over != "" {
				pl.Approve = "this read is over the query budget: " + over + " (" + estimateText(est) + "); to stay within it, filter on partition or key columns or select fewer columns (explain_query type estimate shows the figures)"
			}
		}
		pl.Describe = func(ctx context.Context) (toolcall.Preview, error) {
			ctx, err := t.caller(ctx)
			if err != nil {
				return toolcall.Preview{}, err
			}
			// A dry run shows the engine's estimate and the budgets.
			est := est
			if est == nil {
				if est, err = t.estimate(ctx, st, q); err != nil {
					return toolcall.Preview{}, toMCP(err)
				}
			}
			summary := fmt.Sprintf("Run a read-only %s statement on Trino at %s as user %s; it changes nothing. %s.", stmt.Verb, target, t.engineUser(ctx), estimateText(est))
			if over := t.overBudget(est); over != "" {
				summary += " It is over the query budget (" + over + "), so it runs only with a person's approval."
			}
			return toolcall.Preview{
				Summary: summary,
				State:   map[string]any{"estimate": est, "budget": t.budget(est)},
				Effect:  "none: the statement only reads",
			}, nil
		}
		pl.Run = func(ctx context.Context) (*mcp.CallToolResult, error) {
			// Priced and scope-checked above when budgeted.
			return t.runQuery(ctx, tool, st, q, format, est == nil)
		}
		return pl, nil
	}
	cctx, err := t.caller(ctx)
	if err != nil {
		return toolcall.Plan{}, t.failure(ctx, tool, err)
	}
	if err := t.eng.CheckScope(cctx, t.opts.Scope, st, q); err != nil {
		return toolcall.Plan{}, t.failure(ctx, tool, err)
	}
	pl.Describe = func(ctx context.Context) (toolcall.Preview, error) {
		ctx, err := t.caller(ctx)
		if err != nil {
			return toolcall.Preview{}, err
		}
		pv, err := t.describeWrite(ctx, st, q, stmt, target)
		return pv, toMCP(err)
	}
	pl.Run = func(ctx context.Context) (*mcp.CallToolResult, error) {
		return t.runQuery(ctx, tool, st, q, format, false)
	}
	return pl, nil
}

// executeQuery is execute_query on a server that does not allow writes:
// every statement the guard admits is a read.
func (t *Tools) executeQuery(ctx context.Context, in executeIn) (*mcp.CallToolResult, error) {
	pl, err := t.planExecute(ctx, in)
	if err != nil {
		return mcperr.ToolResult(err), nil
	}
	return pl.Run(ctx)
}

// runQuery runs the checked statement; scope says whether the
// allowed-schemas check is still to be done (unbudgeted reads; writes and
// budgeted reads did it when planned).
func (t *Tools) runQuery(ctx context.Context, tool string, st *sqlguard.Statement, q engine.Query, format string, scope bool) (*mcp.CallToolResult, error) {
	ctx, err := t.caller(ctx)
	if err != nil {
		return t.fail(ctx, tool, err)
	}
	if scope {
		if err := t.eng.CheckScope(ctx, t.opts.Scope, st, q); err != nil {
			return t.fail(ctx, tool, err)
		}
	}
	return t.openPage(ctx, tool, q, format)
}

// engineUser is the user the engine runs the call's queries as.
func (t *Tools) engineUser(ctx context.Context) string {
	if id, ok := engine.IdentityFrom(ctx); ok && id.RunAs != "" {
		return id.RunAs
	}
	return t.eng.Config().User
}

// objectState is the current state of one object a statement writes, as
// shown in previews.
type objectState struct {
	Name    string   `json:"name"`
	Kind    string   `json:"kind"`
	Exists  bool     `json:"exists"`
	Rows    *int64   `json:"rows,omitempty"`
	Columns []string `json:"columns,omitempty"`
}

// writeState is the preview's state of a write.
type writeState struct {
	Catalog string `json:"catalog,omitempty"`
	Schema  string `json:"schema,omitempty"`
	User    string `json:"user"`
	// WrittenFrom says where the written objects come from: the engine's
	// EXPLAIN (TYPE IO) plan, or (for statements the engine does not plan,
	// such as DROP, ALTER or TRUNCATE) the name the statement gives.
	WrittenFrom string        `json:"written_from"`
	Written     []objectState `json:"written"`
}

// describeWrite reads (only reads and EXPLAIN reach the engine) the state
// of what the statement writes and words the preview.
func (t *Tools) describeWrite(ctx context.Context, st *sqlguard.Statement, q engine.Query, stmt statement, target string) (toolcall.Preview, error) {
	catalog, schema := t.eng.SessionNames(q.Catalog, q.Schema)
	state := writeState{Catalog: catalog, Schema: schema, User: t.engineUser(ctx), Written: []objectState{}}
	if stmt.Verb == "PASS-THROUGH" {
		// Planning a pass-through function may already reach the other
		// system; a preview sends nothing at all.
		state.WrittenFrom = "unknown: a pass-through table function writes in another system"
		w := words(stmt, nil)
		return toolcall.Preview{
			Summary: fmt.Sprintf("%s on Trino at %s as user %s. %s.", w.action, target, state.User, w.remark),
			State:   state,
			Effect:  w.effect,
		}, nil
	}
	var objs []object
	plan, err := t.eng.IO(ctx, engine.Query{SQL: st.Inner, Catalog: q.Catalog, Schema: q.Schema})
	switch k := engine.KindOf(err); {
	case err != nil && (k == engine.Canceled || k == engine.Timeout || k == engine.Unavailable || k == engine.Permission):
		return toolcall.Preview{}, err
	case err == nil && plan.Output != nil:
		o := object{Kind: kindTable, Catalog: plan.Output.Catalog, Schema: plan.Output.Schema, Name: plan.Output.Table}
		if stmt.Target != nil && stmt.Target.String() == o.String() {
			o.Kind = stmt.Target.Kind
		}
		objs, state.WrittenFrom = []object{o}, "EXPLAIN (TYPE IO)"
	case stmt.Target != nil:
		objs, state.WrittenFrom = []object{*stmt.Target}, "the statement"
	default:
		state.WrittenFrom = "unknown: the engine's IO plan names no written table and the statement names none the server can read"
	}
	var pre []string
	for _, o := range objs {
		cur, err := t.objectState(ctx, o)
		if err != nil {
			return toolcall.Preview{}, err
		}
		state.Written = append(state.Written, cur)
		// Existence and columns are what the approval depends on; row
		// counts move under concurrent writers and stay out.
		p := cur.Name + ": absent"
		if cur.Exists {
			p = cur.Name + ": " + cur.Kind + " (" + strings.Join(cur.Columns, ", ") + ")"
		}
		pre = append(pre, p)
	}
	w := words(stmt, state.Written)
	head, tail, effect := w.action, w.remark, w.effect
	if tail != "" {
		tail = " " + tail + "."
	}
	return toolcall.Preview{
		Summary:      fmt.Sprintf("%s on Trino at %s as user %s.%s", head, target, state.User, tail),
		State:        state,
		Effect:       effect,
		Precondition: strings.Join(pre, "; "),
	}, nil
}

// objectState reads whether o exists, its columns and (for a table) its
// row count, with SELECTs only.
func (t *Tools) objectState(ctx context.Context, o object) (objectState, error) {
	s := objectState{Name: o.String(), Kind: o.Kind}
	if o.Kind == kindSchema {
		ok, err := t.eng.SchemaExists(ctx, o.Catalog, o.Schema)
		s.Exists = ok
		return s, err
	}
	rel, err := t.eng.Relation(ctx, o.Catalog, o.Schema, o.Name)
	if err != nil || !rel.Exists {
		return s, err
	}
	s.Exists, s.Columns = true, rel.Columns
	if rel.Type == "VIEW" {
		if o.Kind == kindTable {
			s.Kind = kindView
		}
		return s, nil
	}
	n, err := t.eng.CountRows(ctx, o.Catalog, o.Schema, o.Name)
	if err != nil {
		return s, err
	}
	s.Rows = &n
	return s, nil
}

// words says in plain words what the statement will do to the objects in
// their current state, and its expected effect.
func words(stmt statement, objs []objectState) wording {
	if stmt.Verb == "PASS-THROUGH" {
		return wd("Run a statement that calls a pass-through table function\x00It sends SQL to another system, and the server cannot preview what that changes there",
			"unknown: whatever the SQL passed through does in the other system")
	}
	if len(objs) == 0 {
		return wd("Run a "+stmt.Verb+" statement\x00The server cannot tell which tables it changes",
			"unknown: the statement may change data, definitions or permissions in ways the server cannot preview")
	}
	o := objs[0]
	name := o.Name
	now := name
	if o.Rows != nil {
		now = fmt.Sprintf("%s (%s rows now)", name, thousands(*o.Rows))
	}
	if !o.Exists {
		switch {
		case stmt.Verb == "CREATE":
			return wd(fmt.Sprintf("Create %s %s%s (it does not exist now)", o.Kind, name, ternary(stmt.AsQuery, " from the query's rows", "")),
				"the "+o.Kind+" exists; it can be dropped again with DROP "+strings.ToUpper(o.Kind))
		case stmt.IfGuard:
			return wd(fmt.Sprintf("%s %s %s if it exists\x00It does not exist now, so nothing changes", title(stmt.Verb), o.Kind, name), "none")
		default:
			return wd(fmt.Sprintf("Run the %s statement for %s\x00The %s does not exist, so the engine will refuse the statement and nothing changes", stmt.Verb, name, o.Kind), "none: the engine refuses the statement")
		}
	}
	switch stmt.Verb {
	case "DELETE":
		if stmt.Where == "" {
			return wd("Delete every row from "+now, "the table is empty; its rows cannot be restored with these tools")
		}
		return wd("Delete rows from "+now+" where "+stmt.Where, "the rows matching the condition are removed; they cannot be restored with these tools")
	case "UPDATE":
		where := " every row of " + now
		if stmt.Where != "" {
			where = " rows of " + now + " where " + stmt.Where
		}
		return wd("Update"+where+", setting "+stmt.Set, "the matching rows get the new values; the old values cannot be restored with these tools")
	case "MERGE":
		return wd("Merge rows into "+now+": matching rows are updated or deleted and the others inserted, as the statement's WHEN clauses say",
			"rows of "+name+" are updated, deleted or inserted; changed or deleted values cannot be restored with these tools")
	case "INSERT":
		return wd("Insert rows into "+now, "new rows are added to "+name+"; they can be deleted again")
	case "TRUNCATE":
		return wd("Remove every row of "+now, "the table is empty; its rows cannot be restored with these tools")
	case "CREATE":
		if stmt.Replace {
			return wd(fmt.Sprintf("Replace %s %s\x00Its current definition%s will be lost", o.Kind, now, ternary(o.Rows != nil, " and rows", "")),
				"the "+o.Kind+" is replaced; what it held cannot be restored with these tools")
		}
		if stmt.IfGuard {
			return wd(fmt.Sprintf("Create %s %s if it does not exist\x00It exists now, so nothing changes", o.Kind, now), "none")
		}
		return wd(fmt.Sprintf("Create %s %s\x00It already exists, so the engine will refuse the statement and nothing changes", o.Kind, now), "none: the engine refuses the statement")
	case "DROP":
		if o.Kind == kindSchema {
			return wd("Drop schema "+name+ternary(stmt.Cascade, " and every table and view in it", "\x00The engine refuses if the schema is not empty"),
				"the schema no longer exists; what it held cannot be restored with these tools")
		}
		return wd(fmt.Sprintf("Drop %s %s%s", o.Kind, now, ternary(o.Rows != nil, "\x00Its rows cannot be recovered", "")),
			"the "+o.Kind+" no longer exists; it cannot be restored with these tools")
	case "ALTER":
		return wd(fmt.Sprintf("Alter %s %s: %s", o.Kind, now, stmt.Rest),
			"the "+o.Kind+"'s definition changes; dropped columns and their values cannot be restored with these tools")
	}
	return wd("Run a "+stmt.Verb+" statement touching "+now+"\x00The server cannot preview what it changes",
		"unknown: the statement may change data, definitions or permissions in ways the server cannot preview")
}

// wording is a preview's words: the action (followed by where and as whom
// it runs), a remark after that, and the expected effect.
type wording struct{ action, remark, effect string }

// wd builds a wording from "action\x00remark" and the effect.
func wd(summary, effect string) wording {
	action, remark, _ := strings.Cut(summary, "\x00")
	return wording{action, remark, effect}
}

func ternary(c bool, a, b string) string {
	if c {
		return a
	}
	return b
}

func title(verb string) string {
	if verb == "" {
		return ""
	}
	return verb[:1] + strings.ToLower(verb[1:])
}

// thousands formats n with comma separators: 12408 → "12,408".
func thousands(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}
