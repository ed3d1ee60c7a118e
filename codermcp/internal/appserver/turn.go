package appserver

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"
)

// turnState follows one turn's notifications and answers its server
// requests. handle runs on the Turn's goroutine; approvals run on their own
// (a person may take minutes) and reply when answered.
type turnState struct {
	s       *session
	ctx     context.Context
	res     *Result
	onEvent func(Event)
	approve Approver
	timeout time.Duration

	completed bool
	messages  []string
	items     map[string]item // by id, for what an approval request leaves out

	mu       sync.Mutex
	answered []Answer
	pending  sync.WaitGroup
}

func newTurnState(s *session, res *Result, onEvent func(Event), approve Approver, timeout time.Duration) *turnState {
	return &turnState{s: s, ctx: context.Background(), res: res, onEvent: onEvent, approve: approve,
		timeout: timeout, items: map[string]item{}}
}

func (t *turnState) emit(ev Event) {
	if t.onEvent != nil {
		t.onEvent(ev)
	}
}

func (t *turnState) handle(m *message) {
	if m.isRequest() {
		t.request(m)
		return
	}
	switch m.Method {
	case "turn/started":
		var n turnNotification
		_ = json.Unmarshal(m.Params, &n)
		t.emit(Event{Method: m.Method, ThreadID: n.ThreadID, TurnID: n.Turn.ID, Summary: "turn started", Raw: m.Params})
	case "turn/completed":
		var n turnNotification
		_ = json.Unmarshal(m.Params, &n)
		if t.res.TurnID != "" && n.Turn.ID != "" && n.Turn.ID != t.res.TurnID {
			return // another turn's (a sub-agent's): not ours
		}
		t.completed = true
		t.res.Status = n.Turn.Status
		if n.Turn.Error != nil {
			t.res.Error = n.Turn.Error.Message
		}
		t.emit(Event{Method: m.Method, ThreadID: n.ThreadID, TurnID: n.Turn.ID, Summary: "turn " + n.Turn.Status, Raw: m.Params})
	case "item/started", "item/completed":
		var n itemNotification
		if json.Unmarshal(m.Params, &n) != nil {
			return
		}
		t.items[n.Item.ID] = n.Item
		if m.Method == "item/completed" && n.Item.Type == "agentMessage" {
			t.messages = append(t.messages, n.Item.Text)
		}
		if sum := itemSummary(m.Method, n.Item); sum != "" {
			t.emit(Event{Method: m.Method, ThreadID: n.ThreadID, TurnID: n.TurnID, ItemType: n.Item.Type,
				ItemID: n.Item.ID, Summary: sum, Raw: m.Params})
		}
	case "error":
		var n errorNotification
		_ = json.Unmarshal(m.Params, &n)
		t.emit(Event{Method: m.Method, Summary: "error: " + n.Error.Message, Raw: m.Params})
	case "warning":
		var n struct {
			Message string `json:"message"`
		}
		_ = json.Unmarshal(m.Params, &n)
		t.emit(Event{Method: m.Method, Summary: "warning: " + n.Message, Raw: m.Params})
	}
}

// itemSummary is one line for a person; "" for items not worth a
// progress notification (the user's own message).
func itemSummary(method string, it item) string {
	started := method == "item/started"
	switch it.Type {
	case "userMessage":
		return ""
	case "agentMessage":
		if started {
			return ""
		}
		return "agent: " + firstLine(it.Text)
	case "commandExecution":
		if started {
			return "running: " + it.Command
		}
		if it.ExitCode != nil {
			return fmt.Sprintf("%s (exit %d): %s", it.Status, *it.ExitCode, it.Command)
		}
		return it.Status + ": " + it.Command
	case "fileChange":
		paths := make([]string, 0, len(it.Changes))
		for _, c := range it.Changes {
			paths = append(paths, c.Path)
		}
		if started {
			return "changing: " + strings.Join(paths, ", ")
		}
		return it.Status + ": " + strings.Join(paths, ", ")
	case "reasoning":
		if started {
			return ""
		}
		return "reasoning"
	}
	if started {
		return it.Type + " started"
	}
	return it.Type + " completed"
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	return s
}

// request answers a server request: approvals through the Approver, the
// rest refused (this client offers no tools, no user input, no auth).
func (t *turnState) request(m *message) {
	var (
		req    ApprovalRequest
		legacy bool
	)
	switch m.Method {
	case "item/commandExecution/requestApproval":
		var p commandApprovalParams
		_ = json.Unmarshal(m.Params, &p)
		req = ApprovalRequest{Kind: ApproveCommand, ThreadID: p.ThreadID, TurnID: p.TurnID, ItemID: p.ItemID,
			Command: deref(p.Command), Cwd: deref(p.Cwd), Reason: deref(p.Reason)}
		if it, ok := t.items[p.ItemID]; ok {
			if req.Command == "" {
				req.Command = it.Command
			}
			if req.Cwd == "" {
				req.Cwd = it.Cwd
			}
		}
	case "item/fileChange/requestApproval":
		var p fileChangeApprovalParams
		_ = json.Unmarshal(m.Params, &p)
		req = ApprovalRequest{Kind: ApprovePatch, ThreadID: p.ThreadID, TurnID: p.TurnID, ItemID: p.ItemID,
			Reason: deref(p.Reason), GrantRoot: deref(p.GrantRoot)}
		if it, ok := t.items[p.ItemID]; ok {
			var diffs []string
			for _, c := range it.Changes {
				req.Files = append(req.Files, c.Path)
				if c.Diff != "" {
					diffs = append(diffs, c.Diff)
				}
			}
			req.Diff = strings.Join(diffs, "\n")
		}
	case "execCommandApproval":
		var p legacyExecApprovalParams
		_ = json.Unmarshal(m.Params, &p)
		legacy = true
		req = ApprovalRequest{Kind: ApproveCommand, ThreadID: p.ConversationID, ItemID: p.CallID,
			Command: strings.Join(p.Command, " "), Cwd: p.Cwd, Reason: deref(p.Reason)}
	case "applyPatchApproval":
		var p legacyPatchApprovalParams
		_ = json.Unmarshal(m.Params, &p)
		legacy = true
		req = ApprovalRequest{Kind: ApprovePatch, ThreadID: p.ConversationID, ItemID: p.CallID,
			Reason: deref(p.Reason), GrantRoot: deref(p.GrantRoot)}
		for path := range p.FileChanges {
			req.Files = append(req.Files, path)
		}
		sort.Strings(req.Files)
	default:
		t.s.replyError(m.ID, -32601, "codermcp does not handle "+m.Method)
		return
	}
	t.emit(Event{Method: m.Method, ThreadID: req.ThreadID, TurnID: req.TurnID, ItemID: req.ItemID,
		Summary: "waiting for approval: " + approvalLine(req), Raw: m.Params})
	t.pending.Add(1)
	go func() {
		defer t.pending.Done()
		ans := t.ask(req)
		t.mu.Lock()
		t.answered = append(t.answered, ans)
		t.mu.Unlock()
		t.s.reply(m.ID, map[string]any{"decision": wireDecision(ans.Decision, legacy)})
	}()
}

func approvalLine(r ApprovalRequest) string {
	if r.Kind == ApprovePatch {
		return "apply a patch to " + strings.Join(r.Files, ", ")
	}
	return r.Command + " (in " + r.Cwd + ")"
}

// ask puts the question to the Approver under the approval timeout; any
// doubt declines.
func (t *turnState) ask(req ApprovalRequest) Answer {
	if t.approve == nil {
		return Answer{Request: req, Decision: Decline, By: "no-approver"}
	}
	ctx, cancel := context.WithTimeout(t.ctx, t.timeout)
	defer cancel()
	type out struct {
		d   Decision
		err error
	}
	ch := make(chan out, 1)
	go func() {
		d, err := t.approve(ctx, req)
		ch <- out{d, err}
	}()
	select {
	case o := <-ch:
		if o.err != nil || o.d != Accept {
			return Answer{Request: req, Decision: Decline, By: "person", Err: o.err}
		}
		return Answer{Request: req, Decision: Accept, By: "person"}
	case <-ctx.Done():
		if t.ctx.Err() != nil {
			return Answer{Request: req, Decision: Decline, By: "cancelled", Err: t.ctx.Err()}
		}
		return Answer{Request: req, Decision: Decline, By: "timeout", Err: ctx.Err()}
	}
}

// wireDecision is the decision as the request's method expects it: v2
// item/*/requestApproval takes accept|decline, v1 ReviewDecision takes
// approved|denied.
func wireDecision(d Decision, legacy bool) string {
	switch {
	case legacy && d == Accept:
		return "approved"
	case legacy:
		return "denied"
	}
	return string(d)
}

func (t *turnState) wait() { t.pending.Wait() }

func (t *turnState) answers() []Answer {
	t.mu.Lock()
	defer t.mu.Unlock()
	return append([]Answer(nil), t.answered...)
}

// runMarkerKey marks every app-server child's environment so descendants
// that left the process group are still found and stopped.
const runMarkerKey = "CODERMCP_APPSERVER_RUN"
