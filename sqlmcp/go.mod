module github.com/mcpfleet/mcpfleet/sqlmcp

go 1.26.0

require github.com/mcpfleet/mcpfleet/shared v0.1.0

require (
	github.com/mark3labs/mcp-go v1.2.1 // indirect
	github.com/trinodb/trino-go-client v1.1.0 // indirect
)
