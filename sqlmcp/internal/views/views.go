// Package views holds sqlmcp's MCP Apps view: a single self-contained HTML
// file built by views/build.mjs from views/src (edit the sources there and
// rebuild; a test fails when the file here is stale). Registered through
// shared/apps as ui://sqlmcp/query-result.
package views

import _ "embed"

// QueryResult shows execute_query's result: a sortable, typed grid, row
// count and truncation, a chart for two-column numeric results, CSV.
//
//go:embed query-result.html
var QueryResult string
