package mcpserver_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A chatty turn: the model asks the real CLI for 20 commands at once, which
// makes it print ~45 events in a burst. With the production throttle
// (250ms) they are coalesced, and the final step still arrives before the
// result.
func TestProgressIsThrottledAndFlushedBeforeResult(t *testing.T) {
	t.Parallel()
	const throttle = 250 * time.Millisecond
	e := newEnv(t, envOptions{throttle: throttle})
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	start := time.Now()
	res, err := e.cs.CallTool(ctx, &mcp.CallToolParams{Name: "coder",
		Arguments: map[string]any{"prompt": "flood [[burst:20]]", "workingDirectory": t.TempDir(), "sandbox": "workspace-write"},
		Meta:      mcp.Meta{"progressToken": "tok-flood"}})
	if err != nil {
		t.Fatal(err)
	}
	returned := time.Now()
	if got := mustOK(t, res); got != "ran 20 commands" {
		t.Fatalf("reply = %q", got)
	}
	notes := e.notes("tok-flood")
	limit := int(returned.Sub(start)/throttle) + 2
	if len(notes) == 0 || len(notes) > limit || len(notes) >= 40 {
		t.Fatalf("got %d notifications in %s, want at most %d (one per %s)", len(notes), returned.Sub(start), limit, throttle)
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
		// The final flush is not held back by the throttle.
		if i > 0 && i < len(notes)-1 && n.At.Sub(notes[i-1].At) < throttle/5 { // slack for delivery jitter
			t.Errorf("notifications %d and %d only %s apart", i-1, i, n.At.Sub(notes[i-1].At))
		}
	}
	if !coalesced {
		t.Errorf("no notification says how many steps it stands for: %+v", notes)
	}
}
