package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mcpfleet/mcpfleet/codermcp/internal/codertest/harness"
)

// TestMaxConcurrencyAcrossTasksAndCalls: CODER_MAX_CONCURRENCY bounds the
// running Codex processes across task-augmented and plain calls together.
// Alice's task holds its turn open at the endpoint ([[gate:task]]) while
// Bob, on another session, makes a plain coder call. With 1, Bob's CLI is
// not started (the endpoint never sees two turns at once and the process
// table holds one run's processes) until the task's turn ends; both finish.
// With 2 both turns reach the endpoint at once, with twice the processes.
func TestMaxConcurrencyAcrossTasksAndCalls(t *testing.T) {
	t.Parallel()
	for _, limit := range []int{1, 2} {
		t.Run("CODER_MAX_CONCURRENCY="+strconv.Itoa(limit), func(t *testing.T) {
			h, url := taskServer(t, "CODER_MAX_CONCURRENCY="+strconv.Itoa(limit))
			alice, bob := dial(t, url, "alice"), dial(t, url, "bob")
			start := time.Now()
			id, a := alice.createTask(`{"prompt":"task turn [[gate:task]]"}`)
			if a.Error != nil || id == "" {
				t.Fatalf("task: %s %+v", a.Result, a.Error)
			}
			waitCLI(t, h, "task turn")
			reached := time.Since(start)
			if n := cliRuns(h); n != 1 {
				t.Fatalf("%d codex exec processes while the task's turn is held, want 1", n)
			}

			plain := make(chan string, 1)
			go func() { plain <- bob.callAsync(`{"name":"coder","arguments":{"prompt":"plain turn [[gate:plain]]"}}`) }()

			if limit == 1 {
				// Give Bob's CLI ample time to start and reach the endpoint, as
				// it would without the limit: twice what the task's took, at
				// least 5 s. It must not.
				hold := max(5*time.Second, 2*reached)
				for deadline := time.Now().Add(hold); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
					if len(h.Endpoint.RequestsWith("plain turn")) > 0 {
						t.Fatal("the plain call's CLI reached the model while the task's turn ran, with CODER_MAX_CONCURRENCY=1")
					}
				}
				if n := cliRuns(h); n != 1 {
					t.Errorf("%d codex exec processes while the plain call waits, want the task's only", n)
				}
				h.Endpoint.Open("task")
				waitCLI(t, h, "plain turn") // started once the task's run ended
			} else {
				waitCLI(t, h, "plain turn")
				if now, _ := h.Endpoint.InFlight(); now != 2 {
					t.Errorf("%d turns at the endpoint, want both at once", now)
				}
				if n := cliRuns(h); n != 2 {
					t.Errorf("%d codex exec processes with both calls running, want 2", n)
				}
				h.Endpoint.Open("task")
			}
			h.Endpoint.Open("plain")

			select {
			case out := <-plain:
				if !strings.Contains(out, "through gate plain") {
					t.Errorf("plain call: %s", out)
				}
			case <-time.After(90 * time.Second):
				t.Fatal("the plain call did not finish")
			}
			waitTask(t, alice, id, "through gate task")
			if _, most := h.Endpoint.InFlight(); most != limit {
				t.Errorf("at most %d turns at the endpoint at once, want %d", most, limit)
			}
			waitOnlyServer(t, h)
		})
	}
}

// cliRuns counts the running Codex CLIs of h's server: the native codex
// exec processes (the npm package's node launcher runs one each; the CLI's
// own short-lived helpers are not runs).
func cliRuns(h *harness.Harness) int {
	n := 0
	for _, pid := range harness.Leftovers(h.Marker) {
		cmd := harness.Cmdline(pid)
		// The start-up feature probe's own exec (against a closed local
		// port, cliversion) is not a turn.
		if strings.Contains(cmd, "/codex exec ") && !strings.HasPrefix(cmd, "node ") && !strings.Contains(cmd, "codermcp_probe") {
			n++
		}
	}
	return n
}

// callAsync is tools/call with params on c's session, for a goroutine: it
// waits up to 2 minutes and returns the answer or what went wrong (never
// failing the test itself).
func (c *caller) callAsync(params string) string {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	body := `{"jsonrpc":"2.0","id":1000,"method":"tools/call","params":` + params + `}`
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, c.URL, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", "2025-11-25")
	req.Header.Set("Authorization", "Bearer "+c.token)
	req.Header.Set("Mcp-Session-Id", c.ID)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return "error: " + err.Error()
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return fmt.Sprintf("HTTP %d %s", res.StatusCode, b)
}

// waitTask polls tasks/get until the task completed, then checks its
// result holds want.
func waitTask(t *testing.T, c *caller, id, want string) {
	t.Helper()
	deadline := time.Now().Add(90 * time.Second)
	for {
		_, g := c.rpc("tasks/get", fmt.Sprintf(`{"taskId":%q}`, id))
		if g.Error != nil {
			t.Fatalf("tasks/get: %+v", g.Error)
		}
		if strings.Contains(string(g.Result), `"status":"completed"`) {
			break
		}
		if !strings.Contains(string(g.Result), `"status":"working"`) || time.Now().After(deadline) {
			t.Fatalf("task %s: %s, want it to complete", id, g.Result)
		}
		time.Sleep(200 * time.Millisecond)
	}
	if _, r := c.rpc("tasks/result", fmt.Sprintf(`{"taskId":%q}`, id)); r.Error != nil || !strings.Contains(string(r.Result), want) {
		t.Errorf("tasks/result: %s %+v, want %q", r.Result, r.Error, want)
	}
}
