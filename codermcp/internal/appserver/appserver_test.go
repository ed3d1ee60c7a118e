package appserver_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpfleet/mcpfleet/codermcp/internal/appserver"
	"github.com/mcpfleet/mcpfleet/codermcp/internal/codertest"
	"github.com/mcpfleet/mcpfleet/codermcp/internal/codertest/harness"
)

// The versions whose app-server speaks the v2 protocol this package drives
// (0.153.4 too; left out here to keep CLI runs few: the compatibility suite
// covers it). The real CLI every time, against the test model endpoint.
var v2Versions = []string{codertest.NewestVersion, "0.169.0"}

type fixture struct {
	h      *harness.Harness
	client *appserver.Client
	dir    string
	pids   []int
	mu     sync.Mutex
}

func newFixture(t *testing.T, version string) *fixture {
	t.Helper()
	h := harness.NewFor(t, codertest.CLIVersion(t, version))
	f := &fixture{h: h, dir: t.TempDir()}
	f.client = &appserver.Client{Path: h.CLI, Home: h.Home, Env: h.Env, Grace: 2 * time.Second,
		OnStart: func(pid int) { f.mu.Lock(); f.pids = append(f.pids, pid); f.mu.Unlock() }}
	t.Cleanup(func() {
		// Whatever the test did, nothing it started may still run (a
		// process that was sent SIGKILL exits a moment later: wait for it,
		// boundedly).
		left := harness.Leftovers(h.Marker)
		for deadline := time.Now().Add(10 * time.Second); len(left) > 0 && time.Now().Before(deadline); left = harness.Leftovers(h.Marker) {
			time.Sleep(20 * time.Millisecond)
		}
		if len(left) > 0 {
			var lines []string
			for _, p := range left {
				lines = append(lines, harness.Cmdline(p))
			}
			t.Errorf("processes left behind: %v\n%s", left, strings.Join(lines, "\n"))
		}
	})
	return f
}

func forEachVersion(t *testing.T, fn func(t *testing.T, f *fixture)) {
	for _, v := range v2Versions {
		t.Run(v, func(t *testing.T) { fn(t, newFixture(t, v)) })
	}
}

func TestTurnAndNativeResume(t *testing.T) {
	forEachVersion(t, func(t *testing.T, f *fixture) {
		ctx := context.Background()
		var events []appserver.Event
		res, err := f.client.Turn(ctx, appserver.TurnRequest{Prompt: "[[reply:first answer]]", Cwd: f.dir,
			Sandbox: "read-only"}, func(ev appserver.Event) { events = append(events, ev) }, nil)
		if err != nil {
			t.Fatalf("first turn: %v", err)
		}
		if res.Status != "completed" || res.LastMessage != "first answer" || res.ThreadID == "" {
			t.Fatalf("first turn: %+v", res)
		}
		if len(events) == 0 || events[len(events)-1].Method != "turn/completed" {
			t.Errorf("events: %+v", events)
		}
		res2, err := f.client.Turn(ctx, appserver.TurnRequest{ThreadID: res.ThreadID, Prompt: "second question", Cwd: f.dir,
			Sandbox: "read-only"}, nil, nil)
		if err != nil {
			t.Fatalf("second turn: %v", err)
		}
		if res2.ThreadID != res.ThreadID {
			t.Errorf("resumed thread %q, want %q", res2.ThreadID, res.ThreadID)
		}
		// Native resume: the model is sent the earlier exchange.
		reqs := f.h.Endpoint.RequestsWith("second question")
		if len(reqs) != 1 || !strings.Contains(strings.Join(reqs[0].Texts, "\n"), "first answer") {
			t.Errorf("the second turn's request does not carry the first exchange: %+v", reqs)
		}
	})
}

// The model asks to run a command that writes a marker; under the
// untrusted policy the CLI asks us first.
func approvalTurn(t *testing.T, f *fixture, approve appserver.Approver) (*appserver.Result, string) {
	t.Helper()
	marker := filepath.Join(f.dir, "marker")
	res, err := f.client.Turn(context.Background(), appserver.TurnRequest{
		Prompt:         "[[shell:echo approved > marker]]",
		Cwd:            f.dir,
		Sandbox:        "workspace-write",
		ApprovalPolicy: appserver.PolicyUntrusted,
	}, nil, approve)
	if err != nil {
		t.Fatalf("turn: %v", err)
	}
	return res, marker
}

func TestApprovalAccepted(t *testing.T) {
	forEachVersion(t, func(t *testing.T, f *fixture) {
		var asked []appserver.ApprovalRequest
		res, marker := approvalTurn(t, f, func(ctx context.Context, r appserver.ApprovalRequest) (appserver.Decision, error) {
			asked = append(asked, r)
			return appserver.Accept, nil
		})
		if len(asked) != 1 {
			t.Fatalf("asked %d times: %+v", len(asked), asked)
		}
		r := asked[0]
		if r.Kind != appserver.ApproveCommand || !strings.Contains(r.Command, "echo approved > marker") || r.Cwd != f.dir {
			t.Errorf("request: %+v", r)
		}
		if _, err := os.Stat(marker); err != nil {
			t.Errorf("accepted, but the command did not run: %v", err)
		}
		if len(res.Answers) != 1 || res.Answers[0].Decision != appserver.Accept || res.Answers[0].By != "person" {
			t.Errorf("answers: %+v", res.Answers)
		}
	})
}

func TestApprovalDeclined(t *testing.T) {
	forEachVersion(t, func(t *testing.T, f *fixture) {
		res, marker := approvalTurn(t, f, func(ctx context.Context, r appserver.ApprovalRequest) (appserver.Decision, error) {
			return appserver.Decline, nil
		})
		if _, err := os.Stat(marker); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("declined, but the marker exists (%v)", err)
		}
		if len(res.Answers) != 1 || res.Answers[0].Decision != appserver.Decline || res.Answers[0].By != "person" {
			t.Errorf("answers: %+v", res.Answers)
		}
		assertAgentToldDeclined(t, f)
	})
}

func TestApprovalTimesOut(t *testing.T) {
	forEachVersion(t, func(t *testing.T, f *fixture) {
		f.client.ApprovalTimeout = 300 * time.Millisecond
		start := time.Now()
		res, marker := approvalTurn(t, f, func(ctx context.Context, r appserver.ApprovalRequest) (appserver.Decision, error) {
			<-ctx.Done() // a person who never answers
			return appserver.Accept, ctx.Err()
		})
		if _, err := os.Stat(marker); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("timed out, but the marker exists (%v)", err)
		}
		if len(res.Answers) != 1 || res.Answers[0].Decision != appserver.Decline || res.Answers[0].By != "timeout" {
			t.Errorf("answers: %+v", res.Answers)
		}
		if d := time.Since(start); d > 30*time.Second {
			t.Errorf("turn took %s", d)
		}
		assertAgentToldDeclined(t, f)
	})
}

func TestNoApproverDeclines(t *testing.T) {
	f := newFixture(t, codertest.NewestVersion)
	res, marker := approvalTurn(t, f, nil)
	if _, err := os.Stat(marker); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("no approver, but the marker exists (%v)", err)
	}
	if len(res.Answers) != 1 || res.Answers[0].By != "no-approver" {
		t.Errorf("answers: %+v", res.Answers)
	}
}

// assertAgentToldDeclined checks the CLI sent the model a function output
// saying the command was not run.
func assertAgentToldDeclined(t *testing.T, f *fixture) {
	t.Helper()
	if !f.h.Endpoint.ToldNotRun("[[shell:echo approved > marker]]") {
		t.Errorf("the model was not told the command was declined: %+v", f.h.Endpoint.Requests())
	}
}

func TestCancelMidTurnLeavesNoProcess(t *testing.T) {
	forEachVersion(t, func(t *testing.T, f *fixture) {
		ctx, cancel := context.WithCancel(context.Background())
		started := make(chan struct{}, 1)
		errc := make(chan error, 1)
		go func() {
			_, err := f.client.Turn(ctx, appserver.TurnRequest{Prompt: "[[hang]]", Cwd: f.dir, Sandbox: "read-only"},
				func(ev appserver.Event) {
					if ev.Method == "turn/started" {
						select {
						case started <- struct{}{}:
						default:
						}
					}
				}, nil)
			errc <- err
		}()
		select {
		case <-started:
		case <-time.After(60 * time.Second):
			t.Fatal("the turn did not start")
		}
		// The endpoint holds the request open: the CLI is mid-turn.
		deadline := time.Now().Add(30 * time.Second)
		for len(f.h.Endpoint.RequestsWith("[[hang]]")) == 0 && time.Now().Before(deadline) {
			time.Sleep(20 * time.Millisecond)
		}
		cancel()
		select {
		case err := <-errc:
			if !errors.Is(err, context.Canceled) {
				t.Errorf("err = %v, want context.Canceled", err)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("Turn did not return after cancellation")
		}
		f.mu.Lock()
		pgid := f.pids[len(f.pids)-1]
		f.mu.Unlock()
		// SIGKILL is sent before Turn returns; a killed process exits a
		// moment later (under load, visibly so): wait for it, boundedly.
		deadline = time.Now().Add(10 * time.Second)
		for members := codertest.GroupMembers(pgid); len(members) > 0; members = codertest.GroupMembers(pgid) {
			if time.Now().After(deadline) {
				t.Errorf("process group %d still has members %v", pgid, members)
				break
			}
			time.Sleep(20 * time.Millisecond)
		}
	})
}
