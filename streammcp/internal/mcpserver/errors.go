package mcpserver

import (
	"context"
	"errors"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcpfleet/mcpfleet/shared/mcperr"
	"github.com/mcpfleet/mcpfleet/shared/toolcall"
)

// backendError is err from the kafka package as the pipeline and clients
// see it: the one place its errors are classified. The kafka package's
// errors are errkind's, which mcperr maps as they are; one wrapped on the
// way keeps its outer words and takes the inner error's class.
func backendError(err error) error {
	var ke *mcperr.Error
	if errors.As(err, &ke) && ke != err {
		return &mcperr.Error{Kind: ke.Kind, Err: err}
	}
	return err
}

// toolError is a read tool's isError result for a kafka error.
func toolError(err error) *mcp.CallToolResult {
	return mcperr.ToolResult(backendError(err))
}

// errorText is the one-line text a person reads for a kafka error.
func errorText(err error) string {
	return mcperr.Message(backendError(err))
}

// isNotFound says whether a kafka read failed because what it names does
// not exist.
func isNotFound(err error) bool {
	return mcperr.KindOf(err) == mcperr.NotFound
}

// mapped has a change tool's planner, preview and run return kafka errors
// classified, so the pipeline words and audits them as any other.
func mapped[T any](plan toolcall.PlannerOf[T]) toolcall.PlannerOf[T] {
	return func(ctx context.Context, in T) (toolcall.Plan, error) {
		p, err := plan(ctx, in)
		if err != nil {
			return p, backendError(err)
		}
		if d := p.Describe; d != nil {
			p.Describe = func(ctx context.Context) (toolcall.Preview, error) {
				pv, err := d(ctx)
				return pv, backendError(err)
			}
		}
		if run := p.Run; run != nil {
			p.Run = func(ctx context.Context) (*mcp.CallToolResult, error) {
				res, err := run(ctx)
				return res, backendError(err)
			}
		}
		return p, nil
	}
}
