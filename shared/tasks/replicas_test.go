package tasks_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpfleet/mcpfleet/shared/state"
	"github.com/mcpfleet/mcpfleet/shared/state/redistest"
	"github.com/mcpfleet/mcpfleet/shared/tasks"
)

// TestTasksAcrossReplicas: two servers (real HTTP, OAuth) sharing one real
// Redis through MCP_STATE_URL. A task created on A is read, its result
// fetched and cancelled through B; the cancel reaches A's run; another
// identity still finds nothing; a task whose replica is killed is reported
// failed by B within 3 heartbeats.
func TestTasksAcrossReplicas(t *testing.T) {
	srv := redistest.Start(t, false)
	suite := identitySuites(t)[1] // hmac: both replicas verify the same tokens
	const hb = 200 * time.Millisecond
	tc := tasks.Config{Max: 100, StateURL: srv.URL(), Heartbeat: hb}
	a := newSurface(t, suite.cfg, tc)
	b := newSurface(t, suite.cfg, tc)

	for _, era := range eras {
		t.Run(era, func(t *testing.T) {
			onA, onB := a.dial(t, era, suite.alice), b.dial(t, era, suite.alice)
			// Result fetched on B.
			id := onA.mustCreate("now")
			onB.waitStatus(id, "completed")
			if era != modern {
				r := onB.rpc("tasks/result", fmt.Sprintf(`{"taskId":%q}`, id))
				if r.answer.Error != nil || !strings.Contains(string(r.answer.Result), `"done"`) {
					t.Fatalf("tasks/result on B: %s", r.raw)
				}
			}
			if era == modern {
				// No tasks/result on 2026-07-28: tasks/get carries the
				// outcome inline, on the replica running the task and on
				// the other one.
				for name, c := range map[string]*caller{"A (running it)": onA, "B": onB} {
					if _, r := c.status(id); !strings.Contains(r.raw, `"result":{`) || !strings.Contains(r.raw, `"done"`) {
						t.Errorf("tasks/get on %s without the result inline: %s", name, r.raw)
					}
				}
			}
			// Read, listed and cancelled on B; A's run ends.
			id = onA.mustCreate("wait")
			onB.waitStatus(id, "working")
			if l := onB.rpc("tasks/list", `{}`); !strings.Contains(l.raw, id) {
				t.Fatalf("tasks/list on B misses %s: %s", id, l.raw)
			}
			bob := b.dial(t, era, suite.bob)
			if _, r := bob.status(id); r.answer.Error == nil {
				t.Fatalf("bob reads alice's task on B: %s", r.raw)
			}
			if r := bob.rpc("tasks/cancel", fmt.Sprintf(`{"taskId":%q}`, id)); r.answer.Error == nil {
				t.Fatalf("bob cancels alice's task on B: %s", r.raw)
			}
			before := len(a.ended())
			if r := onB.rpc("tasks/cancel", fmt.Sprintf(`{"taskId":%q}`, id)); r.answer.Error != nil || !strings.Contains(r.raw, "cancelled") {
				t.Fatalf("tasks/cancel on B: %s", r.raw)
			}
			deadline := time.Now().Add(20 * time.Second)
			for !slices.Contains(a.ended()[before:], "cancelled") {
				if time.Now().After(deadline) {
					t.Fatal("the cancel on B did not end the run on A")
				}
				time.Sleep(20 * time.Millisecond)
			}
			onA.waitStatus(id, "cancelled")
			onB.waitStatus(id, "cancelled")
		})
	}

	// A replica killed while running a task: B reports it failed.
	c := newSurface(t, suite.cfg, tc)
	onC, onB := c.dial(t, modern, suite.alice), b.dial(t, modern, suite.alice)
	id := onC.mustCreate("wait")
	onB.waitStatus(id, "working")
	tasks.Crash(c.keeper)
	killed := time.Now()
	onB.waitStatus(id, "failed")
	took := time.Since(killed)
	_, r := onB.status(id)
	if !strings.Contains(r.raw, state.DeadMessage) {
		t.Fatalf("dead replica's task: %s", r.raw)
	}
	bound := 3*hb + hb // three missed heartbeats, plus the one in flight
	t.Logf("dead replica's task reported failed after %v (bound %v, heartbeat %v)", took, bound, hb)
	if took > bound+2*time.Second {
		t.Fatalf("reported failed after %v, bound %v", took, bound)
	}
}

// TestTasksAcrossRedisRestart (issue 30): Redis without persistence
// restarts while replica A runs tasks. A's heartbeats write them again, so
// on B a running task is working again and completes with its result
// inline, a 2025-11-25 task likewise, and a task waiting for an approval
// asks again there (the answer sent to B reaches the run on A: nothing is
// declined for an answer lost with Redis). Runs that end while Redis is
// down have their outcome recorded once it is back. A task that had ended before
// the restart is gone from the store: B answers exactly what it answers
// for an id that never existed and for another identity's task, adding
// that the store began anew at the restart.
func TestTasksAcrossRedisRestart(t *testing.T) {
	srv := redistest.Start(t, false)
	suite := identitySuites(t)[1]
	tc := tasks.Config{Max: 100, StateURL: srv.URL(), Heartbeat: 200 * time.Millisecond}
	b := newSurface(t, suite.cfg, tc)
	var mu sync.Mutex
	unrecorded := 0 // runs A could not record the end of
	tc.Logf = func(format string, args ...any) {
		if strings.Contains(format, "recording its end") {
			mu.Lock()
			unrecorded++
			mu.Unlock()
		}
		t.Logf(format, args...)
	}
	a := newSurface(t, suite.cfg, tc)
	onA, onB := a.dial(t, modern, suite.alice), b.dial(t, modern, suite.alice)
	onA.ext, onB.ext = true, true
	legacyA, legacyB := a.dial(t, "2025-11-25", suite.alice), b.dial(t, "2025-11-25", suite.alice)
	bob := b.dial(t, modern, suite.bob)
	bob.ext = true

	running, asking, done := onA.createExt("wait"), onA.createExt("ask"), onA.createExt("now")
	legacy := legacyA.mustCreate("wait")
	onB.waitDetailed(running, "working")
	onB.waitDetailed(asking, "input_required")
	onB.waitDetailed(done, "completed")
	legacyB.waitStatus(legacy, "working")
	srv.Stop()
	srv.Restart()

	for _, id := range []string{running, asking} {
		waitFound(t, onB, id) // until A's next heartbeat
	}
	onB.waitDetailed(running, "working")
	legacyB.waitStatus(legacy, "working")
	if q := onB.waitDetailed(asking, "input_required").InputRequests["approve-1"]; q.Method != "elicitation/create" {
		t.Fatalf("the approval request on B after the restart: %+v", q)
	}
	if r := onB.rpc("tasks/update", fmt.Sprintf(`{"taskId":%q,"inputResponses":{"approve-1":{"action":"accept"}}}`, asking)); r.answer.Error != nil {
		t.Fatalf("tasks/update on B after the restart: %s", r.raw)
	}
	if d := onB.waitDetailed(asking, "completed"); !strings.Contains(string(d.Result), "answer: accept") {
		t.Fatalf("the approved task after the restart: %s", d.Result)
	}
	// Runs that end while Redis is down (it restarts empty again): their
	// outcome is recorded once it is back.
	srv.Stop()
	a.stop() // releases the waiting runs
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		mu.Lock()
		n := unrecorded
		mu.Unlock()
		if n >= 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the released runs did not try to record their end: %v", a.ended())
		}
	}
	srv.Restart()
	waitFound(t, onB, running)
	if d := onB.waitDetailed(running, "completed"); !strings.Contains(string(d.Result), "released") {
		t.Fatalf("the running task after the restart, on B: %s", d.Result)
	}
	legacyB.waitStatus(legacy, "completed")

	// Ended before the restart: lost on B, in the words of an unknown id.
	never := "6f1c1f2e-8c9b-4f0e-9a34-1d2b3c4d5e6f"
	want := onB.rpc("tasks/get", fmt.Sprintf(`{"taskId":%q}`, never)).refusal()
	if !strings.Contains(want, "not found") || !strings.Contains(want, "MCP_STATE_URL") || !strings.Contains(want, "began anew at") {
		t.Fatalf("an unknown id after the restart: %s, want not found naming the store's new beginning", want)
	}
	if got := onB.rpc("tasks/get", fmt.Sprintf(`{"taskId":%q}`, done)).refusal(); got != want {
		t.Errorf("a task ended before the restart: %s; an unknown id gets %s", got, want)
	}
	if got := bob.rpc("tasks/get", fmt.Sprintf(`{"taskId":%q}`, running)).refusal(); got != want {
		t.Errorf("bob reads alice's task after the restart: %s; an unknown id gets %s", got, want)
	}
}

// waitFound polls tasks/get of id until it is found.
func waitFound(t *testing.T, c *caller, id string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		r := c.rpc("tasks/get", fmt.Sprintf(`{"taskId":%q}`, id))
		if r.answer.Error == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("task %s is still not found: %s", id, r.raw)
		}
		time.Sleep(10 * time.Millisecond) // polling is the protocol's own wait
	}
}

// TestTasksStoreDown: with the store unreachable a task is refused with an
// error naming MCP_STATE_URL, and reading one fails the same way; both
// work again once Redis is back.
func TestTasksStoreDown(t *testing.T) {
	srv := redistest.Start(t, false)
	suite := identitySuites(t)[1]
	sf := newSurface(t, suite.cfg, tasks.Config{StateURL: srv.URL(), Heartbeat: 200 * time.Millisecond})
	c := sf.dial(t, modern, suite.alice)
	id := c.mustCreate("now")
	srv.Stop()
	if _, r := c.create("now"); r.answer.Error == nil || !strings.Contains(r.answer.Error.Message, "MCP_STATE_URL") {
		t.Fatalf("create while the store is down: %s", r.raw)
	}
	if _, r := c.status(id); r.answer.Error == nil || !strings.Contains(r.answer.Error.Message, "MCP_STATE_URL") {
		t.Fatalf("tasks/get while the store is down: %s", r.raw)
	}
	srv.Restart()
	deadline := time.Now().Add(20 * time.Second)
	for {
		if _, r := c.create("now"); r.answer.Error == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("no recovery after Redis restarted")
		}
		time.Sleep(50 * time.Millisecond)
	}
	_ = context.Background
	_ = json.Marshal
}
