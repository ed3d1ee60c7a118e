package mcpserver

import (
	"context"
	"errors"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcpfleet/mcpfleet/shared/mcperr"
	"github.com/mcpfleet/mcpfleet/shared/toolcall"
	"github.com/mcpfleet/mcpfleet/streammcp/internal/kafka"
)

// kinds maps the kafka package's error kinds onto the MCP error classes.
var kinds = map[kafka.Kind]mcperr.Kind{
	kafka.Internal:    mcperr.Internal,
	kafka.Invalid:     mcperr.Invalid,
	kafka.NotFound:    mcperr.NotFound,
	kafka.Unavailable: mcperr.Unavailable,
	kafka.Timeout:     mcperr.Timeout,
	kafka.Permission:  mcperr.Permission,
	kafka.Conflict:    mcperr.Conflict,
	kafka.Canceled:    mcperr.Canceled,
}

// backendError is err from the kafka package as the pipeline and clients
// see it: the one place its errors are classified. The words are kept;
// only the class changes hands.
func backendError(err error) error {
	var ke *kafka.Error
	if !errors.As(err, &ke) {
		return err
	}
	if ke != err {
		// The kafka package returns its errors unwrapped; one wrapped on
		// the way keeps its outer words and takes the kafka error's class.
		return &mcperr.Error{Kind: kinds[ke.Kind], Err: err}
	}
	return &mcperr.Error{Kind: kinds[ke.Kind], Op: ke.Op, Err: causeOf(ke), Hint: ke.Hint}
}

// causeOf maps a kafka error's own cause, which may be a kafka error too.
func causeOf(ke *kafka.Error) error {
	if ke.Err == nil {
		return nil
	}
	return backendError(ke.Err)
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
	return kafka.KindOf(err) == kafka.NotFound
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
