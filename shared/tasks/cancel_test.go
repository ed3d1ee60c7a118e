package tasks

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
)

// A tasks/cancel that arrives after the task was created but before its
// handler started (mcp-go starts it on a goroutine of its own) ends the
// handler as soon as it starts; a task not cancelled runs as usual. Either
// way nothing is left waiting. The race is made deterministic here by
// calling the keeper's hooks in that order.
func TestCancelBeforeTheHandlerStarts(t *testing.T) {
	for _, cancelled := range []bool{true, false} {
		k := NewKeeper(Config{})
		ctx := context.WithValue(context.Background(), linkKey{}, &link{ttl: time.Minute})
		k.created(ctx, "task-1")
		if cancelled {
			k.cancel("task-1")
		}
		h := k.Tool(func(ctx context.Context, r mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			select {
			case <-ctx.Done():
				return nil, ctx.Err()
			case <-time.After(100 * time.Millisecond):
				return mcp.NewToolResultText("ran"), nil
			}
		})
		req := mcp.CallToolRequest{}
		req.Params.Task = &mcp.TaskParams{}
		res, err := h(ctx, req)
		if cancelled && !errors.Is(err, context.Canceled) {
			t.Errorf("cancelled before it started: the handler ended with %v %v, want it cancelled at once", res, err)
		}
		if !cancelled && (err != nil || res == nil) {
			t.Errorf("not cancelled: the handler ended with %v %v, want it to run", res, err)
		}
		k.mu.Lock()
		waiting, running := len(k.waiting), len(k.running)
		k.mu.Unlock()
		if waiting != 0 || running != 0 {
			t.Errorf("cancelled=%v: %d tasks left waiting, %d running", cancelled, waiting, running)
		}
	}
}
