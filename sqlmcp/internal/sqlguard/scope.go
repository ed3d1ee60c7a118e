package sqlguard

import (
	"errors"
	"fmt"
	"sort"
	"strings"
)

// SchemaName is one catalog.schema pair.
type SchemaName struct {
	Catalog string
	Schema  string
}

func (s SchemaName) String() string { return s.Catalog + "." + s.Schema }

// TableName is one table a statement reads or writes.
type TableName struct {
	Catalog, Schema, Table string
}

func (t TableName) String() string { return t.Catalog + "." + t.Schema + "." + t.Table }

// Scope is the SQLENGINE_ALLOWED_SCHEMAS rule. The zero Scope allows
// everything. Names compare case-insensitively, as Trino folds catalog and
// schema names to lower case.
type Scope struct {
	list    []SchemaName
	schemas map[SchemaName]bool
	catalog map[string]bool
}

// ParseScope reads catalog.schema items (parts may be double-quoted to
// contain dots). No items means no restriction.
func ParseScope(items []string) (*Scope, error) {
	s := &Scope{schemas: map[SchemaName]bool{}, catalog: map[string]bool{}}
	for _, item := range items {
		toks, err := Tokenize(item)
		if err != nil || len(toks) != 3 || !toks[1].IsSymbol(".") || toks[0].Name() == "" || toks[2].Name() == "" {
			return nil, fmt.Errorf("%q is not catalog.schema", item)
		}
		n := SchemaName{Catalog: toks[0].Name(), Schema: toks[2].Name()}
		if !s.schemas[n] {
			s.list = append(s.list, n)
		}
		s.schemas[n] = true
		s.catalog[n.Catalog] = true
	}
	return s, nil
}

// Enabled reports whether the scope restricts anything.
func (s *Scope) Enabled() bool { return s != nil && len(s.list) > 0 }

// Schemas lists the allowed schemas as written, in order.
func (s *Scope) Schemas() []SchemaName {
	if s == nil {
		return nil
	}
	return append([]SchemaName(nil), s.list...)
}

// AllowsCatalog reports whether some allowed schema lies in catalog.
func (s *Scope) AllowsCatalog(catalog string) bool {
	return !s.Enabled() || s.catalog[strings.ToLower(catalog)]
}

// AllowsSchema reports whether catalog.schema is allowed.
func (s *Scope) AllowsSchema(catalog, schema string) bool {
	return !s.Enabled() || s.schemas[SchemaName{strings.ToLower(catalog), strings.ToLower(schema)}]
}

func (s *Scope) describe() string {
	names := make([]string, len(s.list))
	for i, n := range s.list {
		names[i] = n.String()
	}
	sort.Strings(names)
	return strings.Join(names, ", ")
}

// CheckSchema refuses catalog.schema when it lies outside the scope.
func (s *Scope) CheckSchema(catalog, schema string) error {
	if s.AllowsSchema(catalog, schema) {
		return nil
	}
	return &Refusal{What: "schema " + catalog + "." + schema,
		Why:   "it is outside " + SettingAllowedSchemas + " (" + s.describe() + ")",
		Allow: "add it to " + SettingAllowedSchemas + " to allow it"}
}

// Precheck refuses, before the engine is asked anything, statements whose
// tables the engine's IO plan cannot show: table function calls, and SHOW
// and DESCRIBE, which read the engine's metadata of any schema.
func (s *Scope) Precheck(st *Statement) error {
	if !s.Enabled() || st == nil {
		return nil
	}
	if st.TableFunction {
		return &Refusal{What: "the table function call",
			Why:   "with " + SettingAllowedSchemas + " set, table functions are refused: the engine cannot say which tables they read",
			Allow: "query the allowed tables directly"}
	}
	if st.InformationSchema && !s.allowsSchemaNamed("information_schema") {
		// The engine's IO plan should name it too; refusing on sight does
		// not depend on that.
		return &Refusal{What: "information_schema",
			Why:   "with " + SettingAllowedSchemas + " set, information_schema is refused: it describes every schema",
			Allow: "use the list_catalogs, list_schemas, list_tables and get_table_schema tools, which are confined to the allowed schemas"}
	}
	switch st.InnerKeyword {
	case "SHOW", "DESCRIBE", "DESC":
		return &Refusal{What: st.InnerKeyword,
			Why:   "with " + SettingAllowedSchemas + " set, metadata statements are refused: they can read any schema",
			Allow: "use the list_catalogs, list_schemas, list_tables and get_table_schema tools, which are confined to the allowed schemas"}
	}
	return nil
}

func (s *Scope) allowsSchemaNamed(schema string) bool {
	for _, n := range s.list {
		if n.Schema == schema {
			return true
		}
	}
	return false
}

// ErrUndetermined is returned (inside a *Refusal) when the tables a
// statement touches cannot be determined.
var ErrUndetermined = errors.New("which tables the statement touches cannot be determined")

// CheckTables refuses a statement whose inputs or output (from the engine's
// IO plan) lie outside the scope. st is the statement as Check accepted it:
// a table function, whose reads the plan does not show, and a write whose
// target the plan does not name, are refused too.
func (s *Scope) CheckTables(st *Statement, inputs []TableName, output *TableName) error {
	if !s.Enabled() {
		return nil
	}
	if err := s.Precheck(st); err != nil {
		return err
	}
	touched := append([]TableName(nil), inputs...)
	if output != nil {
		touched = append(touched, *output)
	}
	for _, t := range touched {
		if !s.AllowsSchema(t.Catalog, t.Schema) {
			verb := "reads"
			if output != nil && t == *output {
				verb = "writes"
			}
			return &Refusal{What: "the statement",
				Why:   "it " + verb + " " + t.String() + ", outside " + SettingAllowedSchemas + " (" + s.describe() + ")",
				Allow: "use tables of the allowed schemas, or add " + t.Catalog + "." + t.Schema + " to " + SettingAllowedSchemas}
		}
	}
	if st != nil && !st.ReadOnly && !(st.Explain && !st.Analyze) && output == nil {
		return &Refusal{What: "the statement", Why: ErrUndetermined.Error() + " (the engine names no target table)",
			Allow: "with " + SettingAllowedSchemas + " set, only statements whose tables the engine reports run"}
	}
	return nil
}

// CheckNamed refuses a statement that names a relation outside the scope,
// whatever the engine's plan will read: a scan the optimizer prunes (WHERE
// false, LIMIT 0) still returns the table's columns and types. Names
// resolve as Trino resolves them: one part against the session's catalog
// and schema, two parts against its catalog. A name that cannot be
// resolved, or a statement whose names cannot be followed, is refused.
func (s *Scope) CheckNamed(st *Statement, catalog, schema string) error {
	if !s.Enabled() || st == nil {
		return nil
	}
	rels, err := st.Relations()
	if err != nil {
		return &Refusal{What: "the statement",
			Why:   "with " + SettingAllowedSchemas + " set, every table a statement names must be known, and this one cannot be followed: " + err.Error(),
			Allow: "name tables of the allowed schemas as catalog.schema.table in FROM, JOIN or TABLE"}
	}
	for _, r := range rels {
		var cat, sch string
		switch len(r.Parts) {
		case 1:
			cat, sch = catalog, schema
		case 2:
			cat, sch = catalog, r.Parts[0].canonical()
		case 3:
			cat, sch = r.Parts[0].canonical(), r.Parts[1].canonical()
		}
		if cat == "" || sch == "" {
			return &Refusal{What: "the statement",
				Why:   "it names " + r.String() + ", which has no catalog or schema, and the session has no default to resolve it",
				Allow: "write it as catalog.schema.table, or pass the catalog and schema arguments"}
		}
		if !s.AllowsSchema(cat, sch) {
			t := TableName{Catalog: cat, Schema: sch, Table: r.Parts[len(r.Parts)-1].canonical()}
			return &Refusal{What: "the statement",
				Why:   "it names " + t.String() + ", outside " + SettingAllowedSchemas + " (" + s.describe() + "); naming it is refused even when nothing would be read, as its columns would show",
				Allow: "use tables of the allowed schemas, or add " + cat + "." + sch + " to " + SettingAllowedSchemas}
		}
	}
	return nil
}
