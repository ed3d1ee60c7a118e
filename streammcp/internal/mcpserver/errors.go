package mcpserver

import (
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcpfleet/mcpfleet/shared/mcperr"
)

// backendError is err from the kafka package as the pipeline and clients
// see it: the one place its errors are classified.
func backendError(err error) error {
	return err
}

// toolError is a read tool's isError result for a kafka error.
func toolError(err error) *mcp.CallToolResult {
	return mcperr.ToolResult(backendError(err))
}

// isNotFound says whether a kafka read failed because what it names does
// not exist.
func isNotFound(err error) bool {
	return mcperr.KindOf(backendError(err)) == mcperr.NotFound
}
