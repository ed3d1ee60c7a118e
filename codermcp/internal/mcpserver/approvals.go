package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"go.opentelemetry.io/otel/attribute"

	"github.com/mcpfleet/mcpfleet/codermcp/internal/appserver"
	"github.com/mcpfleet/mcpfleet/codermcp/internal/cli"
	"github.com/mcpfleet/mcpfleet/codermcp/internal/cliversion"
	"github.com/mcpfleet/mcpfleet/codermcp/internal/workspace"
	"github.com/mcpfleet/mcpfleet/shared/audit"
	"github.com/mcpfleet/mcpfleet/shared/mcperr"
	"github.com/mcpfleet/mcpfleet/shared/toolcall"
)

// The CLI's own approvals reaching a person (issue 28). With an approval
// policy other than never (coder's approvalPolicy, codex's approval-policy)
// the turn runs on the CLI's app-server protocol, which carries the CLI's
// approval requests (`codex exec` has no one to ask, so it pins never).
// Each request — the exact command, its working directory and the agent's
// reason, or a patch's files and diff — is put to the person through MCP
// elicitation on the caller's session; accept lets the CLI run it, decline
// (or cancel) tells the agent it was not run, and no answer within
// CODER_APPROVAL_TIMEOUT declines. Every answer is written to the audit log
// as the pipeline writes its own approvals: an accepted command gets an
// intent record (synced before the CLI is told to run it) and an outcome
// record when the CLI reports it done; a declined or unanswered one an
// outcome record.

// Approval policies a coder call may ask for; the app-server takes the same
// words (AskForApproval: untrusted, on-request, never; on-failure is
// deprecated by the CLI and not offered).
const (
	policyNever     = appserver.PolicyNever
	policyOnRequest = appserver.PolicyOnRequest
	policyUntrusted = appserver.PolicyUntrusted
)

// Turner runs one turn on the CLI's app-server (satisfied by
// *appserver.Client).
type Turner interface {
	Turn(ctx context.Context, req appserver.TurnRequest, onEvent func(appserver.Event), approve appserver.Approver) (*appserver.Result, error)
}

// asksPerson reports whether the turn's policy makes the CLI ask.
func (in coderInput) asksPerson() bool {
	return in.ApprovalPolicy != "" && in.ApprovalPolicy != policyNever
}

// checkApprovals refuses, before anything starts, a call whose approval
// policy cannot be honoured: the CLI has no app-server that carries approval
// requests (the error names the release that has it), or no person can be
// asked in this call. Never a silent "never".
func (s *Server) checkApprovals(ctx context.Context, arg string, in coderInput) error {
	if !in.asksPerson() {
		return nil
	}
	fctx, cancel := context.WithTimeout(ctx, featureWait)
	defer cancel()
	f, err := s.features.Get(fctx)
	if err != nil {
		return mcperr.New(mcperr.Unavailable, fmt.Sprintf("%s %q: whether the Codex CLI at %s can carry approval requests is not known: %v; no CLI process was started", arg, in.ApprovalPolicy, s.cfg.CLIPath, err), nil,
			"Retry in a moment (the CLI's features are probed at start), or check CODER_CLI_PATH")
	}
	if err := f.Require(cliversion.FeatureApprovals); err != nil {
		return mcperr.New(mcperr.Invalid, fmt.Sprintf("%s %q: %v", arg, in.ApprovalPolicy, err), nil,
			fmt.Sprintf("Install Codex CLI %s or later (npm install -g @openai/codex), or pass %s \"never\"; no CLI process was started", cliversion.KnownSince[cliversion.FeatureApprovals], arg))
	}
	if why := s.calls.CannotAsk(ctx); why != "" {
		return mcperr.New(mcperr.Permission,
			fmt.Sprintf("%s %q needs a person to answer the Codex CLI's approval requests, and %s; no CLI process was started", arg, in.ApprovalPolicy, why), nil,
			fmt.Sprintf("Pass %s \"never\" (the sandbox alone then bounds what runs), or call from a client that supports elicitation (on MCP 2026-07-28, as a task)", arg))
	}
	return nil
}

// approvals asks the person and audits the answers of one turn.
type approvals struct {
	s       *Server
	ctx     context.Context // the call's: its session carries the questions
	tool    string
	class   toolcall.Class
	policy  string
	base    audit.Record
	timeout time.Duration

	mu       sync.Mutex
	accepted map[string]audit.Record // by item id: intent written, outcome due
	started  map[string]time.Time
}

// newApprovals starts the approvals of one turn of the call req (as its
// planner received it), their records starting as the pipeline's own
// record of the call does.
func (s *Server) newApprovals(ctx context.Context, req mcp.CallToolRequest, class toolcall.Class, in coderInput) *approvals {
	return &approvals{s: s, ctx: ctx, tool: in.Tool, class: class, policy: in.ApprovalPolicy, base: s.calls.AuditRecord(ctx, req, class),
		timeout: s.approvalTimeout(), accepted: map[string]audit.Record{}, started: map[string]time.Time{}}
}

func (s *Server) approvalTimeout() time.Duration {
	if s.cfg.ApprovalTimeout > 0 {
		return s.cfg.ApprovalTimeout
	}
	return 5 * time.Minute
}

// record is the audit record of one approval request.
func (a *approvals) record(r appserver.ApprovalRequest) audit.Record {
	rec := a.base
	rec.Arguments = a.base.Arguments
	rec.Target = "Codex CLI " + a.s.cfg.CLIPath + " approval request (" + a.policy + ") in " + r.Cwd
	if r.Kind == appserver.ApprovePatch {
		rec.Commands = []string{"apply a patch to " + strings.Join(r.Files, ", ")}
	} else {
		rec.Commands = []string{r.Command}
	}
	return rec
}

// ask is the turn's Approver: one elicitation per request, answered by the
// person; ctx ends at CODER_APPROVAL_TIMEOUT or with the turn.
func (a *approvals) ask(ctx context.Context, r appserver.ApprovalRequest) (appserver.Decision, error) {
	rec := a.record(r)
	params := mcp.ElicitationParams{
		Message:         a.question(r),
		RequestedSchema: map[string]any{"type": "object", "properties": map[string]any{}},
	}
	// Inside a task the task goes input_required with the question, as
	// the pipeline's own approvals do; outside one, elicitation/create on
	// the caller's session.
	res, err := a.s.calls.Ask(ctx, params)
	switch {
	case a.ctx.Err() != nil:
		a.outcome(rec, audit.Refused, "the call was cancelled before the person answered; the agent's request was declined")
		return appserver.Decline, a.ctx.Err()
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		a.outcome(rec, audit.Timeout, fmt.Sprintf("the person did not answer within %s (CODER_APPROVAL_TIMEOUT); the agent's request was declined", a.timeout))
		return appserver.Decline, ctx.Err()
	case err != nil:
		a.outcome(rec, audit.Refused, "the question could not be put to the person ("+err.Error()+"); the agent's request was declined")
		return appserver.Decline, err
	case res == nil || res.Action != mcp.ElicitationResponseActionAccept:
		action := "declined"
		if res != nil && res.Action == mcp.ElicitationResponseActionCancel {
			action = "cancelled"
		}
		a.outcome(rec, audit.Declined, "the person "+action+" the agent's request; it was not run")
		return appserver.Decline, nil
	}
	// Accepted: no command runs without its record.
	rec.Approval = audit.ByPerson
	intent := rec
	intent.Event = audit.Intent
	if err := a.s.calls.WriteAudit(intent); err != nil {
		a.s.logger.Error("audit record of an accepted approval request could not be written; declining it", "error", err.Error())
		return appserver.Decline, err
	}
	a.mu.Lock()
	a.accepted[r.ItemID] = rec
	a.started[r.ItemID] = time.Now()
	a.mu.Unlock()
	return appserver.Accept, nil
}

func (a *approvals) outcome(rec audit.Record, how, msg string) {
	rec.Event = audit.Outcome
	rec.Approval = how
	rec.Outcome = "error"
	rec.Error = msg
	if err := a.s.calls.WriteAudit(rec); err != nil {
		a.s.logger.Error("audit record of an approval answer could not be written", "error", err.Error())
	}
}

// event writes the outcome of an accepted request when the CLI reports its
// item done (the command's exit, the patch applied or failed).
func (a *approvals) event(ev appserver.Event) {
	if ev.Method != "item/completed" || ev.ItemID == "" {
		return
	}
	a.mu.Lock()
	rec, ok := a.accepted[ev.ItemID]
	start := a.started[ev.ItemID]
	delete(a.accepted, ev.ItemID)
	a.mu.Unlock()
	if !ok {
		return
	}
	rec.Event = audit.Outcome
	rec.Outcome = "ok"
	if s := ev.Summary; !strings.HasPrefix(s, "completed") || strings.Contains(s, "(exit ") && !strings.Contains(s, "(exit 0)") {
		rec.Outcome = "error"
		rec.Error = s
	}
	ms := time.Since(start).Milliseconds()
	rec.DurationMS = &ms
	if err := a.s.calls.WriteAudit(rec); err != nil {
		a.s.logger.Error("audit outcome of an approved command could not be written", "error", err.Error())
	}
}

// question is what the person reads: what the agent asks to do, exactly,
// where, and why; and what each answer does.
func (a *approvals) question(r appserver.ApprovalRequest) string {
	var b strings.Builder
	switch r.Kind {
	case appserver.ApprovePatch:
		b.WriteString("The Codex agent asks to change files.\n\n")
		fmt.Fprintf(&b, "Files: %s\n", strings.Join(sortedCopy(r.Files), ", "))
		if r.GrantRoot != "" {
			fmt.Fprintf(&b, "It also asks to write under %s for the rest of the session.\n", r.GrantRoot)
		}
	default:
		b.WriteString("The Codex agent asks to run a command.\n\n")
		fmt.Fprintf(&b, "Command: %s\n", r.Command)
		fmt.Fprintf(&b, "Working directory: %s\n", r.Cwd)
	}
	reason := r.Reason
	if strings.TrimSpace(reason) == "" {
		reason = "(the agent gave none)"
	}
	fmt.Fprintf(&b, "Reason: %s\n", reason)
	if r.Kind == appserver.ApprovePatch && r.Diff != "" {
		fmt.Fprintf(&b, "\nDiff:\n%s\n", clipText(r.Diff, 8000))
	}
	fmt.Fprintf(&b, "\nCall: %s (approval policy %s). Accept lets the CLI do it; decline tells the agent it was not done. No answer within %s (CODER_APPROVAL_TIMEOUT) declines.",
		a.tool, a.policy, a.timeout)
	return b.String()
}

func sortedCopy(s []string) []string {
	out := append([]string(nil), s...)
	sort.Strings(out)
	return out
}

// appCommand words an app-server turn for the preview and the audit record,
// as the exec path shows its argv: the program, then the requests it is
// sent.
func appCommand(path string, r appserver.TurnRequest) string {
	var b strings.Builder
	b.WriteString(cli.ShellQuote(path) + " app-server: ")
	if r.ThreadID != "" {
		b.WriteString("thread/resume threadId=" + r.ThreadID)
	} else {
		b.WriteString("thread/start")
	}
	fmt.Fprintf(&b, " cwd=%s sandbox=%s approvalPolicy=%s", cli.ShellQuote(r.Cwd), r.Sandbox, r.ApprovalPolicy)
	if r.Model != "" {
		b.WriteString(" model=" + cli.ShellQuote(r.Model))
	}
	keys := make([]string, 0, len(r.Config))
	for k := range r.Config {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		fmt.Fprintf(&b, " config.%s=%v", k, r.Config[k])
	}
	b.WriteString("; turn/start")
	if r.Effort != "" {
		b.WriteString(" effort=" + r.Effort)
	}
	for _, img := range r.Images {
		b.WriteString(" image=" + cli.ShellQuote(img))
	}
	b.WriteString(" prompt=" + strconv.Quote(r.Prompt))
	return b.String()
}

// appTurn runs one app-server turn, recorded as a back-end call
// (mcpfleet_backend_*{operation="app-server"} and its span) with the exit
// class exec runs use.
func (s *Server) appTurn(ctx context.Context, req appserver.TurnRequest, onEvent func(appserver.Event), approve appserver.Approver) (*appserver.Result, error) {
	ctx, rec := s.recorder.Start(ctx, "app-server")
	res, err := s.app.Turn(ctx, req, onEvent, approve)
	class := cli.RunOK
	switch {
	case err != nil && ctx.Err() != nil && errors.Is(context.Cause(ctx), cli.ErrTimeout):
		class = cli.RunTimeout
	case err != nil && ctx.Err() != nil:
		class = cli.RunCancelled
	case err != nil:
		class = cli.RunError
	case res.Status == "failed":
		class = cli.RunModel
	}
	if rec.Traced() && res != nil {
		rec.SetAttributes(attribute.String("codex.exit_class", class), attribute.String("codex.thread_id", res.ThreadID))
	}
	rec.SetOutcome(class)
	rec.End(err)
	return res, err
}

// approvalWords is the policy a preview shows.
func approvalWords(p string) string {
	if p == "" {
		return policyNever
	}
	return p
}

// runApp runs a planned app-server turn: one process group for the turn
// (appserver.Client), native resume of the session's thread (a new thread
// with the last turns as context when the CLI no longer knows it),
// progress from the CLI's events, and the person asked for each approval
// request. Its failures come back as the cli package's, so they read as an
// exec turn's do.
func (s *Server) runApp(ctx context.Context, call mcp.CallToolRequest, cp coderPlan, lease interface{ SetConversationID(string) }, prog *progress) (*cli.Result, error) {
	req := *cp.app
	if cp.appFresh != nil && !s.cli.KnowsThread(cp.resumeID) {
		s.logger.Info("CLI conversation unknown; continuing with the last turns as context", "thread", cp.resumeID)
		prog.note("conversation " + cp.resumeID + " is unknown to the CLI; continuing with the last 2 turns as context")
		lease.SetConversationID("")
		req = *cp.appFresh
	}
	// The directory was checked when the call was planned; a symlink
	// swapped in since would move the run (and its sandbox) elsewhere.
	if err := workspace.Unchanged(req.Cwd); err != nil {
		return nil, &cli.Error{Kind: cli.FailExec, Err: err, Cause: err.Error() + "; nothing was run: call again to have the directory checked anew"}
	}
	ask := s.newApprovals(ctx, call, cp.class, cp.in)
	res, err := s.appTurn(ctx, req, func(ev appserver.Event) {
		ask.event(ev)
		if ev.Summary != "" {
			prog.note(ev.Summary)
		}
	}, ask.ask)
	if err != nil {
		if ctx.Err() != nil {
			if errors.Is(context.Cause(ctx), cli.ErrTimeout) {
				return nil, &cli.Error{Kind: cli.FailTimeout, Limit: s.cfg.Timeout, Err: err}
			}
			return nil, &cli.Error{Kind: cli.FailCanceled, Err: err}
		}
		return nil, &cli.Error{Kind: cli.FailExec, Err: err, Cause: "codex app-server: " + err.Error()}
	}
	if res.Status == "failed" {
		return nil, &cli.Error{Kind: cli.FailExec, Cause: "the turn failed: " + res.Error}
	}
	text := res.Text
	if cp.in.Codex {
		text = res.LastMessage // what `codex mcp-server` returned
	}
	return &cli.Result{ThreadID: res.ThreadID, Text: text}, nil
}

// checkOptions checks the CLI options a call passes against what the
// installed CLI supports; a missing one is refused naming the release that
// has it, before anything starts.
func (s *Server) checkOptions(ctx context.Context, in *coderInput) error {
	needs := map[string]bool{
		cliversion.FeatureImages:    len(in.Images) > 0,
		cliversion.FeatureAddDir:    len(in.AddDirs) > 0,
		cliversion.FeatureWebSearch: in.WebSearch != "",
		cliversion.FeatureEffort:    in.ReasoningEffort != "",
	}
	if !needs[cliversion.FeatureImages] && !needs[cliversion.FeatureAddDir] && !needs[cliversion.FeatureWebSearch] && !needs[cliversion.FeatureEffort] {
		return nil
	}
	fctx, cancel := context.WithTimeout(ctx, featureWait)
	defer cancel()
	f, err := s.features.Get(fctx)
	if err != nil {
		return mcperr.New(mcperr.Unavailable, fmt.Sprintf("what the Codex CLI at %s supports is not known: %v; no CLI process was started", s.cfg.CLIPath, err), nil,
			"Retry in a moment (the CLI's features are probed at start), or check CODER_CLI_PATH")
	}
	missing := func(arg string, err error) error {
		return mcperr.New(mcperr.Invalid, arg+": "+err.Error(), nil, "Omit "+arg+", or install that release; no CLI process was started")
	}
	for _, c := range []struct{ arg, feature string }{{"images", cliversion.FeatureImages}, {"addDirs", cliversion.FeatureAddDir}, {"webSearch", cliversion.FeatureWebSearch}} {
		if needs[c.feature] {
			if err := f.Require(c.feature); err != nil {
				return missing(c.arg, err)
			}
		}
	}
	if in.ReasoningEffort != "" {
		if err := f.RequireEffort(in.ReasoningEffort); err != nil {
			return missing("reasoningEffort", err)
		}
	}
	in.feat = &f
	return nil
}
