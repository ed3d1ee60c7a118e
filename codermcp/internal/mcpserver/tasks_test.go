package mcpserver_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/mcpfleet/mcpfleet/codermcp/internal/codertest"
	"github.com/mcpfleet/mcpfleet/codermcp/internal/codertest/harness"
	"github.com/mcpfleet/mcpfleet/shared/e2e/rawmcp"
	"github.com/mcpfleet/mcpfleet/shared/tasks"
)

// rawSession is an MCP client over plain HTTP requests: every request is a
// new connection with a 2 s timeout, like a client that gives a call 2 s,
// disconnects, and comes back later to poll.
type rawSession struct {
	*rawmcp.Session
	t *testing.T
	// messages are the statusMessages runTask saw while its task worked.
	messages []string
}

func (e *env) rawConnect(t *testing.T) *rawSession {
	t.Helper()
	c := &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	return &rawSession{Session: rawmcp.Connect(t, e.url+"/mcp", c, "raw"), t: t}
}

type rawAnswer = rawmcp.Answer

type taskInfo struct {
	TaskID        string `json:"taskId"`
	Status        string `json:"status"`
	StatusMessage string `json:"statusMessage"`
}

type toolResult struct {
	Content []struct {
		Text string         `json:"text"`
		Meta map[string]any `json:"_meta"`
	} `json:"content"`
	IsError bool `json:"isError"`
}

// runTask creates a task for tool, polls it to a terminal status and
// returns the statuses seen and the result.
func (s *rawSession) runTask(tool string, args map[string]any) ([]string, toolResult) {
	s.t.Helper()
	ab, _ := json.Marshal(args)
	a := s.RPC("tools/call", fmt.Sprintf(`{"name":%q,"arguments":%s,"task":{}}`, tool, ab))
	var created struct{ Task taskInfo }
	if a.Error != nil || json.Unmarshal(a.Result, &created) != nil || created.Task.TaskID == "" {
		s.t.Fatalf("create %s task: %s %+v", tool, a.Result, a.Error)
	}
	seen := []string{created.Task.Status}
	deadline := time.Now().Add(90 * time.Second)
	for {
		var tk taskInfo
		g := s.RPC("tasks/get", fmt.Sprintf(`{"taskId":%q}`, created.Task.TaskID))
		if g.Error != nil || json.Unmarshal(g.Result, &tk) != nil {
			s.t.Fatalf("tasks/get: %s %+v", g.Result, g.Error)
		}
		if tk.Status != seen[len(seen)-1] {
			seen = append(seen, tk.Status)
		}
		if tk.Status == "working" && tk.StatusMessage != "" && (len(s.messages) == 0 || s.messages[len(s.messages)-1] != tk.StatusMessage) {
			s.messages = append(s.messages, tk.StatusMessage)
		}
		if tk.Status != "working" {
			break
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("task still working after 90s")
		}
		time.Sleep(100 * time.Millisecond)
	}
	r := s.RPC("tasks/result", fmt.Sprintf(`{"taskId":%q}`, created.Task.TaskID))
	var res toolResult
	if r.Error != nil || json.Unmarshal(r.Result, &res) != nil {
		s.t.Fatalf("tasks/result: %s %+v", r.Result, r.Error)
	}
	return seen, res
}

func TestCoderAndReviewAsTasks(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{tasks: &tasks.Config{}})
	s := e.rawConnect(t)
	repo := harness.GitRepo(t)

	// Slower than the client's 2 s request timeout: the result is fetched
	// in later requests, on new connections.
	prompt := "[[shell:sleep 3; echo slow-task-done]]"
	start := time.Now()
	seen, res := s.runTask("coder", map[string]any{"prompt": prompt, "sessionId": "task-s", "workingDirectory": repo})
	if took := time.Since(start); took < 3*time.Second {
		t.Errorf("the task took %s; the test needs it slower than the 2 s client timeout", took)
	}
	if len(seen) != 2 || seen[0] != "working" || seen[1] != "completed" {
		t.Errorf("statuses %v, want working then completed", seen)
	}
	// While it worked, the task carried the progress a plain call streams:
	// the command the CLI ran.
	var ran bool
	for _, m := range s.messages {
		ran = ran || strings.Contains(m, "sleep 3")
	}
	if !ran {
		t.Errorf("statusMessages while working %q, want the CLI's command (sleep 3)", s.messages)
	}
	// "ran: <output>" is the model's answer after the command; on a loaded
	// machine the CLI may report the command as still running after 10 s.
	if res.IsError || len(res.Content) != 1 || !strings.HasPrefix(res.Content[0].Text, "ran: ") {
		t.Fatalf("task result %+v", res)
	}
	meta := res.Content[0].Meta
	if meta["sessionId"] != "task-s" || meta["model"] != codertest.Model || meta["threadId"] == nil {
		t.Errorf("task result _meta %v", meta)
	}
	// The same input as a task and as a plain call gives the same result
	// (a shell command's output carries timings, so compare a plain reply).
	_, same := s.runTask("coder", map[string]any{"prompt": "identical input check", "sessionId": "same-task"})
	sync := e.call(t, "coder", map[string]any{"prompt": "identical input check", "sessionId": "same-sync"})
	if got := mustOK(t, sync); len(same.Content) != 1 || got != same.Content[0].Text || same.IsError {
		t.Errorf("plain call %q, task %+v", got, same)
	}
	if m := contentMeta(t, sync); m["model"] != same.Content[0].Meta["model"] || m["sessionId"] != "same-sync" || same.Content[0].Meta["sessionId"] != "same-task" {
		t.Errorf("_meta: plain %v, task %v", m, same.Content[0].Meta)
	}
	// The session recorded the task's turn, and a plain call continues it.
	mustOK(t, e.call(t, "coder", map[string]any{"prompt": "follow-up after task", "sessionId": "task-s"}))
	for _, sum := range e.sessions(t) {
		if sum.ID == "task-s" && sum.TurnCount != 2 {
			t.Errorf("session task-s has %d turns, want 2 (task + plain call)", sum.TurnCount)
		}
	}
	if r := e.h.Endpoint.RequestsWith("follow-up after task"); len(r) != 1 || r[0].ThreadID != meta["threadId"] {
		t.Errorf("the follow-up did not resume the task's conversation %v: %+v", meta["threadId"], r)
	}

	_, rres := s.runTask("review", map[string]any{"uncommitted": true, "workingDirectory": repo})
	rsync := mustOK(t, e.call(t, "review", map[string]any{"uncommitted": true, "workingDirectory": repo}))
	if rres.IsError || len(rres.Content) != 1 || rres.Content[0].Text != rsync {
		t.Errorf("review task %+v, plain %q", rres, rsync)
	}
	// A refused argument fails the task the way it fails the call.
	_, bad := s.runTask("review", map[string]any{"base": "--uncommitted", "workingDirectory": repo})
	if !bad.IsError || !strings.Contains(bad.Content[0].Text, "no CLI process was started") {
		t.Errorf("task with a refused base: %+v", bad)
	}
}

func TestCoderTaskSerialisedWithPlainCalls(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{tasks: &tasks.Config{}})
	s := e.rawConnect(t)
	a := s.RPC("tools/call", `{"name":"coder","arguments":{"prompt":"[[shell:sleep 2; echo first]]","sessionId":"ser"},"task":{}}`)
	if a.Error != nil {
		t.Fatalf("create: %+v", a.Error)
	}
	// Wait until the task's turn reached the model, then call on the session.
	deadline := time.Now().Add(60 * time.Second)
	for len(e.h.Endpoint.RequestsWith("echo first")) == 0 {
		if time.Now().After(deadline) {
			t.Fatal("the task never reached the endpoint")
		}
		time.Sleep(50 * time.Millisecond)
	}
	mustOK(t, e.call(t, "coder", map[string]any{"prompt": "second on ser", "sessionId": "ser"}))
	first := e.h.Endpoint.RequestsWith("echo first")
	second := e.h.Endpoint.RequestsWith("second on ser")
	var firstDone time.Time
	for _, r := range e.h.Endpoint.Requests() {
		if len(r.Outputs) > 0 && strings.Contains(strings.Join(r.Outputs, ""), "first") {
			firstDone = r.At
		}
	}
	if len(first) == 0 || len(second) != 1 || firstDone.IsZero() || second[0].At.Before(firstDone) {
		t.Errorf("the plain call reached the model at %v, before the task's turn finished at %v", second, firstDone)
	}
}

func TestCoderTaskCancelStopsEverything(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{tasks: &tasks.Config{}})
	s := e.rawConnect(t)
	a := s.RPC("tools/call", `{"name":"coder","arguments":{"prompt":"task never answered [[hang]]"},"task":{}}`)
	var created struct{ Task taskInfo }
	if a.Error != nil || json.Unmarshal(a.Result, &created) != nil {
		t.Fatalf("create: %s %+v", a.Result, a.Error)
	}
	deadline := time.Now().Add(60 * time.Second)
	for len(e.h.Endpoint.RequestsWith("task never answered")) == 0 {
		if time.Now().After(deadline) {
			t.Fatal("the CLI never reached the endpoint")
		}
		time.Sleep(50 * time.Millisecond)
	}
	if len(harness.Leftovers(e.h.Marker)) == 0 {
		t.Fatal("no CLI process is running for the task")
	}
	if c := s.RPC("tasks/cancel", fmt.Sprintf(`{"taskId":%q}`, created.Task.TaskID)); c.Error != nil {
		t.Fatalf("tasks/cancel: %+v", c.Error)
	}
	waitNoLeftovers(t, e.h.Marker, 10*time.Second)
	var tk taskInfo
	g := s.RPC("tasks/get", fmt.Sprintf(`{"taskId":%q}`, created.Task.TaskID))
	if json.Unmarshal(g.Result, &tk) != nil || tk.Status != "cancelled" {
		t.Errorf("status after cancel: %s %+v", g.Result, g.Error)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for e.keeper.Running() != 0 && ctx.Err() == nil {
		time.Sleep(20 * time.Millisecond)
	}
	if n := e.keeper.Running(); n != 0 {
		t.Errorf("%d task runs still registered after cancel", n)
	}
}
