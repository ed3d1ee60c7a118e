module github.com/mcpfleet/mcpfleet/sqlmcp

go 1.26.0

require github.com/mcpfleet/mcpfleet/shared v0.1.0
