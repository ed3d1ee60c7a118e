package mcpserver

import (
	"encoding/json"
	"strconv"
)

// obj builds a strict object schema.
func obj(props map[string]any, required ...string) json.RawMessage {
	s := map[string]any{"type": "object", "properties": props, "additionalProperties": false}
	if len(required) > 0 {
		s["required"] = required
	}
	b, err := json.Marshal(s)
	if err != nil {
		panic(err) // static schemas: a failure is a programming error
	}
	return b
}

func str(desc string) map[string]any { return map[string]any{"type": "string", "description": desc} }

func strArray(desc string) map[string]any {
	return map[string]any{"type": "array", "items": map[string]any{"type": "string"}, "description": desc}
}

func enumStr(desc string, values []string) map[string]any {
	return map[string]any{"type": "string", "enum": values, "description": desc}
}

func executeInput(maxRows, ceiling int) json.RawMessage {
	return obj(map[string]any{
		"query": map[string]any{"type": "string", "minLength": 1, "description": "one Trino SQL statement (a single trailing ';' is allowed)"},
		"limit": map[string]any{"type": "integer", "minimum": 1, "maximum": ceiling,
			"description": "most rows to return (default " + strconv.Itoa(maxRows) + ", at most " + strconv.Itoa(ceiling) + ", the operator's SQLENGINE_MAX_ROWS_CEILING)"},
		"catalog": str("catalog for unqualified names in this query (default: the configured catalog)"),
		"schema":  str("schema for unqualified names in this query (default: the configured schema)"),
	}, "query")
}

var columnsSchema = map[string]any{
	"type": "array",
	"items": map[string]any{
		"type":                 "object",
		"properties":           map[string]any{"name": map[string]any{"type": "string"}, "type": map[string]any{"type": "string"}},
		"required":             []string{"name", "type"},
		"additionalProperties": false,
	},
	"description": "result columns in the query's order, with Trino types",
}

var executeOutput = obj(map[string]any{
	"columns":    columnsSchema,
	"rows":       map[string]any{"type": "array", "items": map[string]any{"type": "array"}, "description": "rows as arrays in column order; NULL is null, decimals are exact strings, dates and timestamps ISO 8601"},
	"row_count":  map[string]any{"type": "integer", "description": "rows returned"},
	"truncated":  map[string]any{"type": "boolean", "description": "true when more rows existed than were returned (row limit or byte cap)"},
	"limit":      map[string]any{"type": "integer", "description": "the row limit applied"},
	"query_id":   map[string]any{"type": "string", "description": "the engine's query id"},
	"elapsed_ms": map[string]any{"type": "integer", "description": "wall time of the call in milliseconds"},
}, "columns", "rows", "row_count", "truncated", "limit", "query_id", "elapsed_ms")

var emptyInput = obj(map[string]any{})

var catalogsOutput = obj(map[string]any{"catalogs": strArray("catalog names, sorted")}, "catalogs")

var schemasInput = obj(map[string]any{"catalog": str("catalog to list (default: the configured catalog)")})

var schemasOutput = obj(map[string]any{
	"catalog": str("the catalog listed"),
	"schemas": strArray("schema names, sorted"),
}, "catalog", "schemas")

var tablesInput = obj(map[string]any{
	"catalog": str("catalog (default: the configured catalog)"),
	"schema":  str("schema (default: the configured schema)"),
	"pattern": str("SQL LIKE pattern on table names, e.g. order% (default: all)"),
})

var tablesOutput = obj(map[string]any{
	"catalog": str("the catalog listed"),
	"schema":  str("the schema listed"),
	"tables": map[string]any{
		"type": "array",
		"items": map[string]any{
			"type": "object",
			"properties": map[string]any{
				"name": map[string]any{"type": "string"},
				"type": map[string]any{"type": "string", "description": "TABLE, VIEW, ... (empty when the engine does not say)"},
			},
			"required":             []string{"name", "type"},
			"additionalProperties": false,
		},
	},
}, "catalog", "schema", "tables")

var tableSchemaInput = obj(map[string]any{
	"table":   map[string]any{"type": "string", "minLength": 1, "description": `the table: one name as it is when catalog or schema is given; otherwise table, schema.table or catalog.schema.table, with parts containing dots or quotes in double quotes ("my.table")`},
	"catalog": str("catalog when the table name does not give one (default: the configured catalog); when catalog or schema is given, table is taken as one name"),
	"schema":  str("schema when the table name does not give one (default: the configured schema); when catalog or schema is given, table is taken as one name"),
}, "table")

var tableSchemaOutput = obj(map[string]any{
	"catalog": str("the table's catalog"),
	"schema":  str("the table's schema"),
	"table":   str("the table's name"),
	"columns": map[string]any{
		"type": "array",
		"items": map[string]any{
			"type": "object",
			"properties": map[string]any{
				"name":     map[string]any{"type": "string"},
				"type":     map[string]any{"type": "string"},
				"nullable": map[string]any{"type": []string{"boolean", "null"}, "description": "null when the engine does not say"},
				"comment":  map[string]any{"type": "string"},
				"extra":    map[string]any{"type": "string"},
			},
			"required":             []string{"name", "type", "nullable", "comment", "extra"},
			"additionalProperties": false,
		},
	},
}, "catalog", "schema", "table", "columns")

func explainInput(types, formats []string) json.RawMessage {
	return obj(map[string]any{
		"query":  map[string]any{"type": "string", "minLength": 1, "description": "the statement to plan; nothing is executed"},
		"type":   enumStr("plan type (default LOGICAL)", types),
		"format": enumStr("plan format (default TEXT)", formats),
	}, "query")
}

var explainOutput = obj(map[string]any{
	"type":   str("plan type"),
	"format": str("plan format"),
	"plan":   str("the engine's plan"),
}, "type", "format", "plan")
