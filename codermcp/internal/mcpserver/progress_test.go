package mcpserver_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpfleet/mcpfleet/codermcp/internal/cli"
	"github.com/mcpfleet/mcpfleet/codermcp/internal/mcpserver"
)

// chattyRunner wraps the real CLI client but replaces Exec with a burst of
// events: the real CLI cannot be made to flood on demand, and throttling is
// about what we do with a flood.
type chattyRunner struct {
	*cli.Client
	events int
	spread time.Duration
}

func (r chattyRunner) Exec(ctx context.Context, req cli.ExecRequest, onEvent func(cli.Event)) (*cli.Result, error) {
	for i := range r.events {
		onEvent(cli.Event{Type: "item.started", Item: &cli.Item{Type: "command_execution", Command: "step " + string(rune('a'+i%26))}})
		time.Sleep(r.spread / time.Duration(r.events))
	}
	onEvent(cli.Event{Type: "turn.completed"})
	return &cli.Result{ThreadID: "T-chatty", Text: "done"}, nil
}

func TestProgressIsThrottledAndFlushedBeforeResult(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{runner: func(c *cli.Client) mcpserver.Runner {
		return chattyRunner{Client: c, events: 2000, spread: 400 * time.Millisecond}
	}})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	start := time.Now()
	res, err := e.cs.CallTool(ctx, &mcp.CallToolParams{Name: "coder", Arguments: map[string]any{"prompt": "flood"},
		Meta: mcp.Meta{"progressToken": "tok-flood"}})
	if err != nil {
		t.Fatal(err)
	}
	returned := time.Now()
	mustOK(t, res)
	notes := e.notes("tok-flood")
	// The test server throttles to one notification per 20ms.
	limit := int(returned.Sub(start)/(20*time.Millisecond)) + 3
	if len(notes) == 0 || len(notes) > limit || len(notes) > 1000 {
		t.Fatalf("got %d notifications for 2000 events in %s, want at most %d", len(notes), returned.Sub(start), limit)
	}
	last := notes[len(notes)-1]
	if !strings.HasSuffix(last.Message, "turn completed") {
		t.Errorf("last notification = %q, want the final step flushed", last.Message)
	}
	if last.At.After(returned) {
		t.Error("the final notification arrived after the result")
	}
	coalesced := false
	for i, n := range notes {
		if i > 0 && n.Progress <= notes[i-1].Progress {
			t.Errorf("progress not strictly increasing at %d", i)
		}
		if strings.Contains(n.Message, "earlier steps)") {
			coalesced = true
		}
	}
	if !coalesced {
		t.Error("no notification says how many steps it stands for")
	}
}
