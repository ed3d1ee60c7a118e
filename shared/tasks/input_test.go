package tasks_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcpfleet/mcpfleet/shared/state/redistest"
	"github.com/mcpfleet/mcpfleet/shared/tasks"
)

// detailed is a 2026-07-28 tasks/get answer.
type detailed struct {
	TaskID        string `json:"taskId"`
	Status        string `json:"status"`
	StatusMessage string `json:"statusMessage"`
	InputRequests map[string]struct {
		Method string `json:"method"`
		Params struct {
			Message string         `json:"message"`
			Schema  map[string]any `json:"requestedSchema"`
		} `json:"params"`
	} `json:"inputRequests"`
	Result json.RawMessage `json:"result"`
}

func (c *caller) detailed(id string) detailed {
	c.t.Helper()
	r := c.rpc("tasks/get", fmt.Sprintf(`{"taskId":%q}`, id))
	var d detailed
	if r.answer.Error != nil || json.Unmarshal(r.answer.Result, &d) != nil {
		c.t.Fatalf("tasks/get %s: %s", id, r.raw)
	}
	return d
}

// waitDetailed polls tasks/get until the task's status is want.
func (c *caller) waitDetailed(id, want string) detailed {
	c.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		d := c.detailed(id)
		if d.Status == want {
			return d
		}
		if time.Now().After(deadline) {
			c.t.Fatalf("task %s: %+v, want %s", id, d, want)
		}
		time.Sleep(10 * time.Millisecond) // polling is the protocol's own wait
	}
}

func (c *caller) createExt(mode string) string {
	c.t.Helper()
	r := c.rpc("tools/call", fmt.Sprintf(`{"name":"job","arguments":{"mode":%q}}`, mode))
	var tk struct{ ResultType, TaskID string }
	if json.Unmarshal(r.answer.Result, &tk) != nil || tk.ResultType != "task" || tk.TaskID == "" {
		c.t.Fatalf("create an extension task: %s", r.raw)
	}
	return tk.TaskID
}

// TestAskInsideATask: a task's run asks its client (tasks.Ask, as the
// toolcall pipeline asks for an approval). 2026-07-28 extension: the task
// is input_required with the request in inputRequests; tasks/update with
// the answer lets the run go on, to completed with the answer's outcome
// inline; an answer for another key, another identity's update, or a
// malformed one do not reach it; no answer within the caller's bound
// declines; a cancel ends the waiting run. 2025-11-25: the task is
// input_required, and the request reaches the client as an
// elicitation/create on its tasks/result stream, tagged with the task; the
// answer goes back to the run and tasks/result returns the outcome.
func TestAskInsideATask(t *testing.T) {
	suite := identitySuites(t)[1]
	sf := newSurface(t, suite.cfg, tasks.Config{Max: 1000})
	alice := sf.dial(t, modern, suite.alice)
	alice.ext = true
	bob := sf.dial(t, modern, suite.bob)
	bob.ext = true

	for _, action := range []string{"accept", "decline", "cancel"} {
		t.Run("extension/"+action, func(t *testing.T) {
			id := alice.createExt("ask")
			d := alice.waitDetailed(id, "input_required")
			q, ok := d.InputRequests["approve-1"]
			if !ok || q.Method != "elicitation/create" || q.Params.Message != "Drop table sales.t?" || q.Params.Schema["type"] != "object" {
				t.Fatalf("input_required task: %+v", d)
			}
			// Ignored: another key, another identity, a malformed answer.
			if r := alice.rpc("tasks/update", fmt.Sprintf(`{"taskId":%q,"inputResponses":{"approve-9":{"action":"accept"}}}`, id)); r.answer.Error != nil {
				t.Fatalf("tasks/update for an unknown key: %s, want an ack (ignored)", r.raw)
			}
			if r := bob.rpc("tasks/update", fmt.Sprintf(`{"taskId":%q,"inputResponses":{"approve-1":{"action":"accept"}}}`, id)); r.answer.Error == nil || !strings.Contains(r.answer.Error.Message, "not found") {
				t.Fatalf("bob's tasks/update of alice's task: %s, want not found", r.raw)
			}
			for _, bad := range []string{`{"taskId":%q}`, `{"taskId":%q,"inputResponses":[1]}`, `{"taskId":%q,"inputResponses":"accept"}`} {
				if r := alice.rpc("tasks/update", fmt.Sprintf(bad, id)); r.answer.Error == nil || r.answer.Error.Code != -32602 {
					t.Errorf("tasks/update %s: %s, want invalid params", bad, r.raw)
				}
			}
			if d := alice.detailed(id); d.Status != "input_required" {
				t.Fatalf("after ignored answers the task is %+v, want still input_required", d)
			}
			if r := alice.rpc("tasks/update", fmt.Sprintf(`{"taskId":%q,"inputResponses":{"approve-1":{"action":%q}}}`, id, action)); r.answer.Error != nil || !strings.Contains(r.raw, `"resultType":"complete"`) {
				t.Fatalf("tasks/update: %s", r.raw)
			}
			d = alice.waitDetailed(id, "completed")
			if !strings.Contains(string(d.Result), "answer: "+action) {
				t.Fatalf("completed with %s, want the %s answer inline", d.Result, action)
			}
			// A late answer to an answered question is ignored.
			if r := alice.rpc("tasks/update", fmt.Sprintf(`{"taskId":%q,"inputResponses":{"approve-1":{"action":"accept"}}}`, id)); r.answer.Error != nil {
				t.Fatalf("late tasks/update: %s", r.raw)
			}
		})
	}

	t.Run("extension/no answer", func(t *testing.T) {
		id := alice.createExt("ask-briefly")
		d := alice.waitDetailed(id, "completed")
		if !strings.Contains(string(d.Result), "no answer within the approval timeout") || !strings.Contains(string(d.Result), `"isError":true`) {
			t.Fatalf("unanswered: %s", d.Result)
		}
	})

	t.Run("extension/cancel while asking", func(t *testing.T) {
		id := alice.createExt("ask")
		alice.waitDetailed(id, "input_required")
		before := len(sf.ended())
		if r := alice.rpc("tasks/cancel", fmt.Sprintf(`{"taskId":%q}`, id)); r.answer.Error != nil {
			t.Fatalf("cancel: %s", r.raw)
		}
		if d := alice.waitDetailed(id, "cancelled"); len(d.InputRequests) != 0 {
			t.Fatalf("a cancelled task still asks: %+v", d)
		}
		deadline := time.Now().Add(20 * time.Second)
		for len(sf.ended()) == before {
			if time.Now().After(deadline) {
				t.Fatal("the cancel did not end the waiting run")
			}
			time.Sleep(10 * time.Millisecond)
		}
	})

	for _, action := range []string{"accept", "decline"} {
		t.Run("2025-11-25/"+action, func(t *testing.T) {
			c := sf.dial(t, "2025-11-25", suite.alice)
			id := c.mustCreate("ask")
			c.waitStatus(id, "input_required")
			asked, final := c.legacy.TaskResultAnswering(id, action)
			var req struct {
				Method string
				Params struct {
					Message string
					Meta    map[string]map[string]string `json:"_meta"`
				}
			}
			if json.Unmarshal([]byte(asked), &req) != nil || req.Method != "elicitation/create" || req.Params.Message != "Drop table sales.t?" ||
				req.Params.Meta["io.modelcontextprotocol/related-task"]["taskId"] != id {
				t.Fatalf("the request on tasks/result's stream: %s", asked)
			}
			if !strings.Contains(final, "answer: "+action) {
				t.Fatalf("tasks/result: %s, want the %s answer", final, action)
			}
			c.waitStatus(id, "completed")
		})
	}

	t.Run("2025-11-25/another session's tasks/result", func(t *testing.T) {
		c := sf.dial(t, "2025-11-25", suite.alice)
		other := sf.dial(t, "2025-11-25", suite.alice)
		id := c.mustCreate("ask")
		c.waitStatus(id, "input_required")
		if r := other.rpc("tasks/result", fmt.Sprintf(`{"taskId":%q}`, id)); r.answer.Error == nil || !strings.Contains(r.answer.Error.Message, "not found") {
			t.Fatalf("another session's tasks/result: %s, want not found (and nothing asked there)", r.raw)
		}
		if r := c.rpc("tasks/cancel", fmt.Sprintf(`{"taskId":%q}`, id)); r.answer.Error != nil {
			t.Fatalf("cancel: %s", r.raw)
		}
	})
}

// TestAskInsideATaskAcrossReplicas: with the store shared, an extension
// task asking on replica A is input_required with its request on B; the
// answer sent to B (tasks/update) reaches the run on A through the store;
// the task completes with the outcome inline on both; a decline does the
// same; B's cancel ends a run waiting on A.
func TestAskInsideATaskAcrossReplicas(t *testing.T) {
	srv := redistest.Start(t, false)
	suite := identitySuites(t)[1]
	tc := tasks.Config{Max: 100, StateURL: srv.URL(), Heartbeat: 200 * time.Millisecond}
	a, b := newSurface(t, suite.cfg, tc), newSurface(t, suite.cfg, tc)
	onA, onB := a.dial(t, modern, suite.alice), b.dial(t, modern, suite.alice)
	onA.ext, onB.ext = true, true
	bob := b.dial(t, modern, suite.bob)
	bob.ext = true
	for _, action := range []string{"accept", "decline"} {
		t.Run(action, func(t *testing.T) {
			id := onA.createExt("ask")
			d := onB.waitDetailed(id, "input_required")
			if q := d.InputRequests["approve-1"]; q.Method != "elicitation/create" || q.Params.Message != "Drop table sales.t?" {
				t.Fatalf("input_required on B: %+v", d)
			}
			if r := bob.rpc("tasks/update", fmt.Sprintf(`{"taskId":%q,"inputResponses":{"approve-1":{"action":"accept"}}}`, id)); r.answer.Error == nil || !strings.Contains(r.answer.Error.Message, "not found") {
				t.Fatalf("bob's tasks/update on B: %s, want not found", r.raw)
			}
			if r := onB.rpc("tasks/update", fmt.Sprintf(`{"taskId":%q,"inputResponses":{"approve-1":{"action":%q}}}`, id, action)); r.answer.Error != nil {
				t.Fatalf("tasks/update on B: %s", r.raw)
			}
			for _, c := range []*caller{onB, onA} {
				if d := c.waitDetailed(id, "completed"); !strings.Contains(string(d.Result), "answer: "+action) {
					t.Fatalf("completed without the %s answer inline: %s", action, d.Result)
				}
			}
		})
	}
	t.Run("cancel on B", func(t *testing.T) {
		id := onA.createExt("ask")
		onB.waitDetailed(id, "input_required")
		before := len(a.ended())
		if r := onB.rpc("tasks/cancel", fmt.Sprintf(`{"taskId":%q}`, id)); r.answer.Error != nil {
			t.Fatalf("cancel on B: %s", r.raw)
		}
		deadline := time.Now().Add(20 * time.Second)
		for !slices.ContainsFunc(a.ended()[before:], func(s string) bool { return strings.HasPrefix(s, "ask ended") }) {
			if time.Now().After(deadline) {
				t.Fatalf("the cancel on B did not end the run waiting on A: %v", a.ended())
			}
			time.Sleep(10 * time.Millisecond)
		}
		onA.waitDetailed(id, "cancelled")
		onB.waitDetailed(id, "cancelled")
	})
}
