package engine_test

import (
	"context"
	"strings"
	"testing"

	"github.com/mcpfleet/mcpfleet/sqlmcp/internal/engine"
	"github.com/mcpfleet/mcpfleet/sqlmcp/internal/trinotest"
)

// TestRelationState reads a table's existence, type, columns and row
// count with reads only; absent tables and schemas are absent, not errors;
// a missing catalog and a bad name are errors saying what was attempted.
func TestRelationState(t *testing.T) {
	s := trinotest.Start(t, trinotest.WithLargeTableRows(-1))
	ctx := context.Background()
	for _, q := range []string{
		"CREATE SCHEMA sales.st",
		"CREATE TABLE sales.st.orders (id INTEGER, status VARCHAR)",
		"INSERT INTO sales.st.orders VALUES (1, 'a'), (2, 'b')",
		"CREATE VIEW sales.st.v AS SELECT id FROM sales.st.orders",
	} {
		if err := s.Exec(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	c := newClient(t, s, nil)
	rel, err := c.Relation(ctx, "sales", "st", "orders")
	if err != nil || !rel.Exists || rel.Type != "TABLE" || strings.Join(rel.Columns, ", ") != "id integer, status varchar" {
		t.Errorf("orders: %+v %v", rel, err)
	}
	if n, err := c.CountRows(ctx, "sales", "st", "orders"); err != nil || n != 2 {
		t.Errorf("count: %d %v", n, err)
	}
	if rel, err := c.Relation(ctx, "sales", "st", "v"); err != nil || !rel.Exists || rel.Type != "VIEW" {
		t.Errorf("view: %+v %v", rel, err)
	}
	for _, name := range [][2]string{{"st", "nothing"}, {"no_such_schema", "orders"}} {
		if rel, err := c.Relation(ctx, "sales", name[0], name[1]); err != nil || rel.Exists {
			t.Errorf("%v: %+v %v", name, rel, err)
		}
	}
	if ok, err := c.SchemaExists(ctx, "sales", "st"); err != nil || !ok {
		t.Errorf("schema st: %v %v", ok, err)
	}
	if ok, err := c.SchemaExists(ctx, "sales", "nope"); err != nil || ok {
		t.Errorf("schema nope: %v %v", ok, err)
	}
	if _, err := c.Relation(ctx, "no_catalog", "st", "orders"); err == nil || !strings.Contains(err.Error(), "no_catalog") {
		t.Errorf("missing catalog: %v", err)
	}
	if _, err := c.CountRows(ctx, "sales", "st", "nothing"); err == nil || !strings.Contains(err.Error(), "count the rows of") {
		t.Errorf("count of a missing table: %v", err)
	}
	if _, err := c.Relation(ctx, "sales", "st", "bad\nname"); engine.KindOf(err) != engine.Invalid {
		t.Errorf("bad name: %v", err)
	}
	if _, err := c.CountRows(ctx, "sales", "st\x00", "orders"); engine.KindOf(err) != engine.Invalid {
		t.Errorf("bad name: %v", err)
	}
	if cat, sch := c.SessionNames("", ""); cat != trinotest.DefaultCatalog || sch != trinotest.DefaultSchema {
		t.Errorf("session names %s %s", cat, sch)
	}
	if cat, sch := c.SessionNames("warehouse", ""); cat != "warehouse" || sch != "" {
		t.Errorf("a catalog alone replaces both: %s %s", cat, sch)
	}
	for _, r := range s.Statements() {
		if !strings.HasPrefix(r.Body, "SELECT") && !strings.HasPrefix(r.Body, "SHOW") {
			t.Errorf("not a read: %q", r.Body)
		}
	}
}
