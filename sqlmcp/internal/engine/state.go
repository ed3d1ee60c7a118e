package engine

import (
	"context"
	"fmt"
	"strconv"
	"strings"
)

// SessionNames returns the catalog and schema a query with these per-query
// overrides runs in: a catalog replaces both defaults, a schema alone
// replaces the schema. Unqualified names in its SQL resolve against them.
func (c *Client) SessionNames(catalog, schema string) (string, string) {
	return sessionNames(c.cfg, catalog, schema)
}

// RelationState is what a table or view looks like now, for previews of
// statements that write it. Only reads reach the engine to learn it.
type RelationState struct {
	Exists bool
	// Type is TABLE or VIEW (information_schema.tables), "" when absent.
	Type string
	// Columns are "name type" in ordinal order.
	Columns []string
}

// Relation reads whether catalog.schema.name exists, its type and its
// columns, from information_schema (reads only). A missing schema is
// reported as an absent relation; a missing catalog is an error.
func (c *Client) Relation(ctx context.Context, catalog, schema, name string) (RelationState, error) {
	if err := checkNames("read a table's state", "catalog", catalog, "schema", schema, "table", name); err != nil {
		return RelationState{}, err
	}
	where := " WHERE table_schema = " + QuoteString(schema) + " AND table_name = " + QuoteString(name)
	full := QualifiedName(catalog, schema, name)
	res, err := c.scanSQL(ctx, Query{SQL: "SELECT table_type FROM " + QualifiedName(catalog, "information_schema", "tables") + where, Catalog: catalog})
	if err != nil {
		return RelationState{}, classify(err, "read whether "+full+" exists")
	}
	if len(res.Rows) == 0 {
		return RelationState{}, nil
	}
	st := RelationState{Exists: true, Type: tableType(asString(res.Rows[0][0]))}
	cols, err := c.scanSQL(ctx, Query{SQL: "SELECT column_name, data_type FROM " + QualifiedName(catalog, "information_schema", "columns") + where +
		" ORDER BY ordinal_position", Catalog: catalog})
	if err != nil {
		return RelationState{}, classify(err, "read the columns of "+full)
	}
	for _, r := range cols.Rows {
		if len(r) >= 2 {
			st.Columns = append(st.Columns, asString(r[0])+" "+asString(r[1]))
		}
	}
	return st, nil
}

// CountRows returns SELECT count(*) of catalog.schema.table: a read.
func (c *Client) CountRows(ctx context.Context, catalog, schema, table string) (int64, error) {
	if err := checkNames("count a table's rows", "catalog", catalog, "schema", schema, "table", table); err != nil {
		return 0, err
	}
	full := QualifiedName(catalog, schema, table)
	res, err := c.scanSQL(ctx, Query{SQL: "SELECT count(*) FROM " + full, Catalog: catalog, Schema: schema})
	if err != nil {
		return 0, classify(err, "count the rows of "+full)
	}
	if len(res.Rows) != 1 || len(res.Rows[0]) != 1 {
		return 0, newError(Internal, "count the rows of "+full, fmt.Errorf("the engine answered %d rows", len(res.Rows)), "")
	}
	n, err := strconv.ParseInt(strings.TrimSpace(asString(res.Rows[0][0])), 10, 64)
	if err != nil {
		return 0, newError(Internal, "count the rows of "+full, fmt.Errorf("the engine answered %v", res.Rows[0][0]), "")
	}
	return n, nil
}

// SchemaExists reports whether catalog has schema (SHOW SCHEMAS, a read).
func (c *Client) SchemaExists(ctx context.Context, catalog, schema string) (bool, error) {
	all, err := c.Schemas(ctx, catalog)
	if err != nil {
		return false, err
	}
	for _, s := range all {
		if s == schema {
			return true, nil
		}
	}
	return false, nil
}
