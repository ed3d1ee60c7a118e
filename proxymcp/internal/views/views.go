// Package views holds proxymcp's MCP Apps view: a single self-contained HTML
// file built by views/build.mjs from views/src (edit the sources there and
// rebuild; a test fails when the file here is stale). Registered through
// shared/apps as ui://proxymcp/backend-pool.
package views

import _ "embed"

// BackendPool shows list_servers: servers per backend and per instance,
// divergence highlighted, drain / ready / weight actions as tool calls.
//
//go:embed backend-pool.html
var BackendPool string
