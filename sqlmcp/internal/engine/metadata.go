package engine

import (
	"context"
	"encoding/json"
	"errors"
	"sort"
	"strings"
)

// Table is one table or view of a schema.
type Table struct {
	Name string `json:"name"`
	Type string `json:"type"` // TABLE, VIEW, ... ("" when the engine does not say)
}

// ColumnInfo describes one column of a table.
type ColumnInfo struct {
	Name     string `json:"name"`
	Type     string `json:"type"`
	Nullable *bool  `json:"nullable"` // nil when the engine does not say
	Comment  string `json:"comment"`
	Extra    string `json:"extra"`
}

// TableInfo is a table's location and columns in ordinal order.
type TableInfo struct {
	Catalog string       `json:"catalog"`
	Schema  string       `json:"schema"`
	Table   string       `json:"table"`
	Columns []ColumnInfo `json:"columns"`
}

// DefaultCatalog returns catalog, or the configured one when it is empty.
func (c *Client) DefaultCatalog(catalog string) string {
	if catalog != "" {
		return catalog
	}
	return c.cfg.Catalog
}

// DefaultSchema returns schema, or the configured one when it is empty and
// catalog is the configured catalog.
func (c *Client) DefaultSchema(catalog, schema string) string {
	if schema != "" {
		return schema
	}
	if catalog == "" || catalog == c.cfg.Catalog {
		return c.cfg.Schema
	}
	return ""
}

func needCatalog(catalog, what string) error {
	if catalog == "" {
		return newError(Invalid, what, errors.New("no catalog given and none configured"), "pass a catalog, or set SQLENGINE_CATALOG")
	}
	return nil
}

func needSchema(schema, what string) error {
	if schema == "" {
		return newError(Invalid, what, errors.New("no schema given and none configured"), "pass a schema, or set SQLENGINE_SCHEMA")
	}
	return nil
}

// firstColumn returns the first column of every row as text.
func firstColumn(res *Result) []string {
	out := make([]string, 0, len(res.Rows))
	for _, r := range res.Rows {
		if len(r) > 0 {
			out = append(out, asString(r[0]))
		}
	}
	return out
}

// Catalogs lists the engine's catalogs (SHOW CATALOGS), sorted.
func (c *Client) Catalogs(ctx context.Context) ([]string, error) {
	res, err := c.scanSQL(ctx, Query{SQL: "SHOW CATALOGS"})
	if err != nil {
		return nil, classify(err, "list catalogs")
	}
	out := firstColumn(res)
	sort.Strings(out)
	return out, nil
}

// Schemas lists the schemas of catalog ("" = the configured catalog), sorted.
func (c *Client) Schemas(ctx context.Context, catalog string) ([]string, error) {
	catalog = c.DefaultCatalog(catalog)
	if err := needCatalog(catalog, "list schemas"); err != nil {
		return nil, err
	}
	if err := checkNames("list schemas", "catalog", catalog); err != nil {
		return nil, err
	}
	res, err := c.scanSQL(ctx, Query{SQL: "SHOW SCHEMAS FROM " + QuoteIdentifier(catalog), Catalog: catalog})
	if err != nil {
		return nil, classify(err, "list schemas of catalog "+QuoteIdentifier(catalog))
	}
	out := firstColumn(res)
	sort.Strings(out)
	return out, nil
}

// Tables lists the tables and views of catalog.schema ("" = the configured
// ones) whose names match pattern (SQL LIKE; "" for all), sorted by name.
func (c *Client) Tables(ctx context.Context, catalog, schema, pattern string) ([]Table, error) {
	catalog = c.DefaultCatalog(catalog)
	schema = c.DefaultSchema(catalog, schema)
	if err := needCatalog(catalog, "list tables"); err != nil {
		return nil, err
	}
	if err := needSchema(schema, "list tables"); err != nil {
		return nil, err
	}
	if err := checkNames("list tables", "catalog", catalog, "schema", schema); err != nil {
		return nil, err
	}
	where := QualifiedName(catalog, schema)
	q := "SHOW TABLES FROM " + where
	if pattern != "" {
		q += " LIKE " + QuoteString(pattern)
	}
	res, err := c.scanSQL(ctx, Query{SQL: q, Catalog: catalog, Schema: schema})
	if err != nil {
		return nil, classify(err, "list tables of "+where)
	}
	names := firstColumn(res)
	sort.Strings(names)
	// SHOW TABLES does not say which are views; information_schema does.
	types := map[string]string{}
	tq := "SELECT table_name, table_type FROM " + QualifiedName(catalog, "information_schema", "tables") +
		" WHERE table_schema = " + QuoteString(schema)
	if pattern != "" {
		tq += " AND table_name LIKE " + QuoteString(pattern)
	}
	if tr, err := c.scanSQL(ctx, Query{SQL: tq, Catalog: catalog, Schema: schema}); err == nil {
		for _, r := range tr.Rows {
			if len(r) >= 2 {
				types[asString(r[0])] = tableType(asString(r[1]))
			}
		}
	}
	out := make([]Table, len(names))
	for i, n := range names {
		out[i] = Table{Name: n, Type: types[n]}
	}
	return out, nil
}

// tableType maps information_schema's table_type onto TABLE/VIEW/...
func tableType(t string) string {
	t = strings.ToUpper(strings.TrimSpace(t))
	switch t {
	case "BASE TABLE":
		return "TABLE"
	}
	return t
}

// TableSchema describes catalog.schema.table ("" catalog/schema = the
// configured ones): columns in ordinal order with type, nullability,
// comment and extra information.
func (c *Client) TableSchema(ctx context.Context, catalog, schema, table string) (*TableInfo, error) {
	catalog = c.DefaultCatalog(catalog)
	schema = c.DefaultSchema(catalog, schema)
	if err := needCatalog(catalog, "describe table "+QuoteIdentifier(table)); err != nil {
		return nil, err
	}
	if err := needSchema(schema, "describe table "+QuoteIdentifier(table)); err != nil {
		return nil, err
	}
	if err := checkNames("describe a table", "catalog", catalog, "schema", schema, "table", table); err != nil {
		return nil, err
	}
	if table == "" {
		return nil, newError(Invalid, "describe a table", errors.New("no table name given"), "give the table's name")
	}
	name := QualifiedName(catalog, schema, table)
	res, err := c.scanSQL(ctx, Query{SQL: "DESCRIBE " + name, Catalog: catalog, Schema: schema})
	if err != nil {
		return nil, classify(err, "describe table "+name)
	}
	idx := columnIndex(res.Columns)
	info := &TableInfo{Catalog: catalog, Schema: schema, Table: table, Columns: make([]ColumnInfo, 0, len(res.Rows))}
	for _, r := range res.Rows {
		col := ColumnInfo{Name: cell(r, idx, "column", 0), Type: cell(r, idx, "type", 1), Extra: cell(r, idx, "extra", 2), Comment: cell(r, idx, "comment", 3)}
		info.Columns = append(info.Columns, col)
	}
	// DESCRIBE has no nullability; information_schema.columns does.
	nq := "SELECT column_name, is_nullable FROM " + QualifiedName(catalog, "information_schema", "columns") +
		" WHERE table_schema = " + QuoteString(schema) + " AND table_name = " + QuoteString(table)
	if nr, err := c.scanSQL(ctx, Query{SQL: nq, Catalog: catalog, Schema: schema}); err == nil {
		nullable := map[string]bool{}
		for _, r := range nr.Rows {
			if len(r) >= 2 {
				nullable[asString(r[0])] = strings.EqualFold(asString(r[1]), "YES")
			}
		}
		for i := range info.Columns {
			if n, ok := nullable[info.Columns[i].Name]; ok {
				info.Columns[i].Nullable = &n
			}
		}
	}
	return info, nil
}

func columnIndex(cols []Column) map[string]int {
	m := make(map[string]int, len(cols))
	for i, c := range cols {
		m[strings.ToLower(c.Name)] = i
	}
	return m
}

// cell returns the named column of r, or position fallback when the engine
// named its columns differently.
func cell(r []any, idx map[string]int, name string, fallback int) string {
	i, ok := idx[name]
	if !ok {
		i = fallback
	}
	if i < len(r) {
		return asString(r[i])
	}
	return ""
}

// Explain types and formats Trino accepts.
var (
	ExplainTypes   = []string{"LOGICAL", "DISTRIBUTED", "VALIDATE", "IO"}
	ExplainFormats = []string{"TEXT", "JSON", "GRAPHVIZ"}
)

// Explain returns the engine's plan of statement: EXPLAIN (TYPE typ, FORMAT
// format). Empty typ/format use the engine's defaults (LOGICAL, TEXT). A
// VALIDATE plan is "true" or the validation error.
func (c *Client) Explain(ctx context.Context, q Query, typ, format string) (string, error) {
	typ, format = strings.ToUpper(typ), strings.ToUpper(format)
	var opts []string
	if typ != "" {
		opts = append(opts, "TYPE "+typ)
	}
	if format != "" && typ != "VALIDATE" {
		opts = append(opts, "FORMAT "+format)
	}
	stmt := "EXPLAIN "
	if len(opts) > 0 {
		stmt += "(" + strings.Join(opts, ", ") + ") "
	}
	q.SQL = stmt + strings.TrimSpace(q.SQL)
	q.metadata = true // planning executes nothing; no transaction needed
	q.MaxBytes = -1
	q.Limit = 1000
	res, err := c.Query(ctx, q)
	if err != nil {
		return "", classify(err, "explain the query")
	}
	var lines []string
	for _, r := range res.Rows {
		if len(r) > 0 {
			lines = append(lines, asString(r[0]))
		}
	}
	return strings.Join(lines, "\n"), nil
}

// TableRef names one table a statement reads or writes.
type TableRef struct {
	Catalog string `json:"catalog"`
	Schema  string `json:"schema"`
	Table   string `json:"table"`
}

// IOPlan is what EXPLAIN (TYPE IO) says a statement touches.
type IOPlan struct {
	Inputs []TableRef `json:"inputs"`
	Output *TableRef  `json:"output,omitempty"`
}

// IO asks the engine which tables q reads and writes, with
// EXPLAIN (TYPE IO, FORMAT JSON). Nothing is executed.
func (c *Client) IO(ctx context.Context, q Query) (*IOPlan, error) {
	plan, err := c.Explain(ctx, q, "IO", "JSON")
	if err != nil {
		return nil, err
	}
	return ParseIOPlan(plan)
}

// ParseIOPlan reads Trino's EXPLAIN (TYPE IO, FORMAT JSON) document.
func ParseIOPlan(plan string) (*IOPlan, error) {
	type schemaTable struct {
		Schema string `json:"schema"`
		Table  string `json:"table"`
	}
	type table struct {
		Catalog     string       `json:"catalog"`
		SchemaTable *schemaTable `json:"schemaTable"`
	}
	var doc struct {
		Inputs []struct {
			Table *table `json:"table"`
		} `json:"inputTableColumnInfos"`
		Output *table `json:"outputTable"`
	}
	dec := json.NewDecoder(strings.NewReader(plan))
	if err := dec.Decode(&doc); err != nil {
		return nil, newError(Internal, "read the engine's IO plan", err, "")
	}
	ref := func(t *table) (TableRef, error) {
		if t == nil || t.SchemaTable == nil || t.Catalog == "" || t.SchemaTable.Schema == "" || t.SchemaTable.Table == "" {
			return TableRef{}, newError(Internal, "read the engine's IO plan", errors.New("a table entry lacks its catalog, schema or name"), "")
		}
		return TableRef{Catalog: t.Catalog, Schema: t.SchemaTable.Schema, Table: t.SchemaTable.Table}, nil
	}
	out := &IOPlan{Inputs: []TableRef{}}
	for _, in := range doc.Inputs {
		r, err := ref(in.Table)
		if err != nil {
			return nil, err
		}
		out.Inputs = append(out.Inputs, r)
	}
	if doc.Output != nil {
		r, err := ref(doc.Output)
		if err != nil {
			return nil, err
		}
		out.Output = &r
	}
	return out, nil
}
