package tasks_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
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
