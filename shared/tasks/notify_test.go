package tasks_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/mcpfleet/mcpfleet/shared/state/redistest"
	"github.com/mcpfleet/mcpfleet/shared/tasks"
)

// listenEvent is one message of a subscriptions/listen stream.
type listenEvent struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params struct {
		Meta          map[string]any `json:"_meta"`
		Notifications struct {
			TaskIDs []string `json:"taskIds"`
		} `json:"notifications"`
		TaskID        string          `json:"taskId"`
		Status        string          `json:"status"`
		InputRequests map[string]any  `json:"inputRequests"`
		Result        json.RawMessage `json:"result"`
	} `json:"params"`
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code int `json:"code"`
	} `json:"error"`
}

// listen opens subscriptions/listen for ids as c and returns its messages
// as they come (the channel closes with the stream).
func (c *caller) listen(t *testing.T, ids ...string) <-chan listenEvent {
	t.Helper()
	caps := `{}`
	if c.ext {
		caps = `{"extensions":{"io.modelcontextprotocol/tasks":{}}}`
	}
	idList, _ := json.Marshal(ids)
	body := fmt.Sprintf(`{"jsonrpc":"2.0","id":"listen-1","method":"subscriptions/listen","params":{"notifications":{"taskIds":%s},"_meta":{"io.modelcontextprotocol/protocolVersion":%q,"io.modelcontextprotocol/clientCapabilities":%s}}}`, idList, modern, caps)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, c.url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", "Bearer "+c.token)
	req.Header.Set("MCP-Protocol-Version", modern)
	req.Header.Set("Mcp-Method", "subscriptions/listen")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	out := make(chan listenEvent, 64)
	go func() {
		defer close(out)
		defer res.Body.Close()
		sc := bufio.NewScanner(res.Body)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			line := sc.Text()
			if d, ok := strings.CutPrefix(line, "data: "); ok {
				var e listenEvent
				json.Unmarshal([]byte(d), &e)
				out <- e
			} else if strings.HasPrefix(line, "{") {
				var e listenEvent
				json.Unmarshal([]byte(line), &e)
				out <- e
			}
		}
	}()
	return out
}

func next(t *testing.T, ev <-chan listenEvent) listenEvent {
	t.Helper()
	select {
	case e, ok := <-ev:
		if !ok {
			t.Fatal("the listen stream ended")
		}
		return e
	case <-time.After(30 * time.Second):
		t.Fatal("no message on the listen stream in 30 s")
		return listenEvent{}
	}
}

// TestStatusNotifications: subscriptions/listen with taskIds acknowledges
// the caller's own tasks only (not bob's, not an unknown id), then sends
// notifications/tasks — the DetailedTask, tagged with the subscription —
// on each change: input_required with the request, completed with the
// result inline; the stream ends once every listed task has ended.
// Without the extension declared, -32021. Across replicas, a listen on B
// follows a task running on A through the store.
func TestStatusNotifications(t *testing.T) {
	srv := redistest.Start(t, false)
	suite := identitySuites(t)[1]
	tc := tasks.Config{Max: 100, StateURL: srv.URL(), Heartbeat: 200 * time.Millisecond}
	a, b := newSurface(t, suite.cfg, tc), newSurface(t, suite.cfg, tc)
	for _, where := range []string{"same replica", "another replica"} {
		t.Run(where, func(t *testing.T) {
			onA := a.dial(t, modern, suite.alice)
			onA.ext = true
			listener := onA
			if where == "another replica" {
				listener = b.dial(t, modern, suite.alice)
				listener.ext = true
			}
			bob := a.dial(t, modern, suite.bob)
			bob.ext = true
			id := onA.createExt("ask")
			bobs := bob.createExt("ask")
			ev := listener.listen(t, id, bobs, "6f1c1f2e-8c9b-4f0e-9a34-1d2b3c4d5e6f")
			ack := next(t, ev)
			if ack.Method != "notifications/subscriptions/acknowledged" || fmt.Sprint(ack.Params.Notifications.TaskIDs) != fmt.Sprint([]string{id}) || ack.Params.Meta["io.modelcontextprotocol/subscriptionId"] != "listen-1" {
				t.Fatalf("acknowledgement: %+v, want alice's task only", ack)
			}
			seen := map[string]bool{}
			for !seen["input_required"] {
				e := next(t, ev)
				if e.Method != "notifications/tasks" || e.Params.TaskID != id || e.Params.Meta["io.modelcontextprotocol/subscriptionId"] != "listen-1" {
					t.Fatalf("notification: %+v", e)
				}
				seen[e.Params.Status] = true
				if e.Params.Status == "input_required" && e.Params.InputRequests["approve-1"] == nil {
					t.Fatalf("input_required without its request: %+v", e)
				}
			}
			if r := onA.rpc("tasks/update", fmt.Sprintf(`{"taskId":%q,"inputResponses":{"approve-1":{"action":"accept"}}}`, id)); r.answer.Error != nil {
				t.Fatalf("tasks/update: %s", r.raw)
			}
			for {
				e := next(t, ev)
				if e.Method == "notifications/tasks" && e.Params.Status == "completed" {
					if !strings.Contains(string(e.Params.Result), "answer: accept") {
						t.Fatalf("completed without the result inline: %s", e.Params.Result)
					}
					break
				}
			}
			if end := next(t, ev); len(end.ID) == 0 || !strings.Contains(string(end.Result), `"resultType":"complete"`) {
				t.Fatalf("the stream's end: %+v", end)
			}
			bob.rpc("tasks/cancel", fmt.Sprintf(`{"taskId":%q}`, bobs))
		})
	}
	t.Run("without the extension", func(t *testing.T) {
		c := a.dial(t, modern, suite.alice)
		e := next(t, c.listen(t, "x"))
		if !strings.Contains(string(e.ID), "listen-1") || e.Error == nil || e.Error.Code != -32021 {
			t.Fatalf("listen without the extension: %+v", e)
		}
	})
}
