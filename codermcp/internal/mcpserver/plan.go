package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcpfleet/mcpfleet/codermcp/internal/appserver"
	"github.com/mcpfleet/mcpfleet/codermcp/internal/cli"
	"github.com/mcpfleet/mcpfleet/codermcp/internal/cliversion"
	"github.com/mcpfleet/mcpfleet/codermcp/internal/session"
	"github.com/mcpfleet/mcpfleet/codermcp/internal/workdir"
	"github.com/mcpfleet/mcpfleet/shared/mcperr"
	"github.com/mcpfleet/mcpfleet/shared/toolcall"
)

// coderClass is a coder call's risk class, from the sandbox it runs in:
// read-only changes nothing; workspace-write (or fullAuto) changes files
// under the working directory, which git can undo; danger-full-access may
// change anything on the machine.
func coderClass(in coderInput) toolcall.Class {
	switch {
	case in.Sandbox == cli.SandboxFullAccess:
		return toolcall.Destructive
	case in.FullAuto || in.Sandbox == cli.SandboxWorkspaceWrite:
		return toolcall.Change
	}
	return toolcall.Read
}

// sessionView is what a coder turn depends on in its session, read
// without taking the session.
type sessionView struct {
	exists bool
	data   session.Data
}

func (v sessionView) same(w sessionView) bool {
	return v.exists == w.exists && v.data.TurnCount == w.data.TurnCount &&
		v.data.CoderConversationID == w.data.CoderConversationID && v.data.WorkingDirectory == w.data.WorkingDirectory
}

// coderPlan is one planned coder turn: the commands built once from the
// validated input and the session as it stood, shown, approved, audited
// and run as these values.
type coderPlan struct {
	in       coderInput
	owner    string // whose sessions the turn may use (callerOwner)
	class    toolcall.Class
	view     sessionView // the session before the turn (before a reset)
	dir      string      // where the CLI runs
	primary  cli.Command
	fallback *fallback // when resuming
	resumeID string
	// app is set instead of primary when the turn runs on the app-server
	// (an approval policy other than never); appFresh is its fallback when
	// the CLI no longer knows the thread it resumes.
	app, appFresh *appserver.TurnRequest
}

// fallback is a command that runs only if the primary one fails because
// the CLI no longer knows the conversation it resumes: a new conversation
// carrying the last turns as context. It is a value of its own, so Run
// decides by the failure's kind and never by reading the plan's wording.
type fallback struct {
	unknownThread string // the conversation id whose loss triggers it
	cmd           cli.Command
}

// commands lists what the turn may run, for the preview and the audit
// record: the primary command, then the fallback with its condition in
// words (toolcall.Plan's Commands are text).
func (cp coderPlan) commands() []string {
	if cp.app != nil {
		cmds := []string{appCommand(cp.primary.Path, *cp.app)}
		if cp.appFresh != nil {
			cmds = append(cmds, "only if the CLI no longer knows conversation "+cp.resumeID+": "+appCommand(cp.primary.Path, *cp.appFresh))
		}
		return cmds
	}
	cmds := []string{cp.primary.String()}
	if fb := cp.fallback; fb != nil {
		cmds = append(cmds, "only if the CLI no longer knows conversation "+fb.unknownThread+": "+fb.cmd.String())
	}
	return cmds
}

// planCoder is the coder tool's Planner: it validates, classifies by
// sandbox, probes the CLI's version (cached after the first call), reads the
// session without taking it, and builds the exact commands. Nothing runs and
// no session is created here.
func (s *Server) planCoder(ctx context.Context, a coderArgs) (toolcall.Plan, error) {
	in, err := s.decodeCoder(a, func(in *coderInput) { in.Tool = "coder" })
	if err != nil {
		return toolcall.Plan{}, err
	}
	return s.planTurn(ctx, in)
}

// planTurn plans a decoded coder, codex or codex-reply turn.
func (s *Server) planTurn(ctx context.Context, in coderInput) (toolcall.Plan, error) {
	arg := "approvalPolicy"
	if in.Codex {
		arg = "approval-policy"
	}
	if err := s.checkApprovals(ctx, arg, in); err != nil {
		return toolcall.Plan{}, err
	}
	if err := s.checkOptions(ctx, &in); err != nil {
		return toolcall.Plan{}, err
	}
	start := time.Now()
	bctx, cancel := s.bound(ctx)
	defer cancel()
	caps, err := s.cli.Caps(bctx)
	if err != nil {
		if class := coderClass(in); class == toolcall.Read {
			// A read call stays on the read path (no audit record of a
			// "refused destructive call"); it fails the same way.
			fail := s.classify(err, in.Model)
			return toolcall.Plan{Class: class, Target: s.target(in.Dir),
				Describe: func(context.Context) (toolcall.Preview, error) { return toolcall.Preview{}, fail },
				Run:      func(context.Context) (*mcp.CallToolResult, error) { return mcperr.ToolResult(fail), nil },
			}, nil
		}
		return toolcall.Plan{}, s.classify(err, in.Model)
	}
	probe := time.Since(start)          // counts against CODER_TIMEOUT with the run
	req, _ := toolcall.CallRequest(ctx) // for the run's progress: its token, its task
	owner := callerOwner(ctx)
	var view sessionView
	if session.ValidID(in.SessionID) {
		// Only the caller's own: another identity's session of that id is
		// not found, and the dry run shows a new one.
		view.data, view.exists = s.store.Get(owner, in.SessionID)
	}
	cp, err := s.buildCoder(caps, in, view)
	if err != nil {
		return toolcall.Plan{}, err
	}
	cp.owner = owner
	return toolcall.Plan{
		Class:    cp.class,
		Target:   s.target(cp.dir),
		Commands: cp.commands(),
		Describe: func(ctx context.Context) (toolcall.Preview, error) { return s.describeCoder(ctx, cp), nil },
		Run: func(ctx context.Context) (*mcp.CallToolResult, error) {
			return s.runCoder(ctx, req, caps, cp, s.cfg.Timeout-probe)
		},
	}, nil
}

// target names the back end a coder call goes to: the CLI and the
// directory it works in.
func (s *Server) target(dir string) string {
	return "Codex CLI " + s.cfg.CLIPath + " in " + dir
}

// buildCoder builds the commands for in on a session as view shows it.
func (s *Server) buildCoder(caps cli.Caps, in coderInput, view sessionView) (coderPlan, error) {
	cp := coderPlan{in: in, class: coderClass(in), view: view}
	data := view.data
	if in.Reset {
		data = session.Data{}
	}
	cp.dir = in.Dir
	if cp.dir == "" && data.WorkingDirectory != "" {
		// A follow-up continues where the session worked, if that is still
		// a directory the roots allow (checked anew: it may have changed).
		if real, err := s.ws.Resolve(data.WorkingDirectory); err == nil {
			cp.dir = real
		}
	}
	if cp.dir == "" {
		// Named, so that the preview, the target and the session say where;
		// confined like any other workspace.
		wd, err := os.Getwd()
		if err != nil {
			return cp, mcperr.New(mcperr.Invalid, "the server's own working directory cannot be read", err, "Pass workingDirectory")
		}
		if cp.dir, err = s.ws.Resolve(wd); err != nil {
			return cp, mcperr.New(mcperr.Invalid, "no workingDirectory was given, and the server's own working directory cannot be used: "+err.Error(), nil,
				"Pass workingDirectory: a directory under one of CODER_WORKSPACE_ROOTS ("+strings.Join(s.cfg.WorkspaceRoots, ", ")+"); no CLI process was started")
		}
	}
	run := cli.ExecRequest{
		Prompt: in.Prompt, Model: in.Model, ReasoningEffort: in.ReasoningEffort, Sandbox: in.Sandbox,
		FullAuto: in.FullAuto, Dir: cp.dir, CallbackURI: in.CallbackURI, Overrides: in.Overrides,
		Images: in.Images, AddDirs: in.AddDirs, WebSearch: in.WebSearch, Profile: in.Profile,
	}
	if in.feat != nil {
		run.WebSearchKey = in.feat.WebSearch
	}
	fresh := run
	switch {
	case data.CoderConversationID != "" && caps.Resume:
		run.ResumeID = data.CoderConversationID
		cp.resumeID = run.ResumeID
		fresh.Prompt = session.ContextPrompt(data.Turns, in.Prompt)
	case len(data.Turns) > 0:
		run.Prompt = session.ContextPrompt(data.Turns, in.Prompt)
	}
	if run.ResumeID != "" && len(in.Images) > 0 && in.feat != nil && !in.feat.ResumeImages && !in.asksPerson() {
		err := &cliversion.MissingError{Feature: cliversion.FeatureImages, Installed: in.feat.Version, Since: "0.153.4",
			Detail: "on a continued conversation (exec resume --image)"}
		return cp, mcperr.New(mcperr.Invalid, "images: "+err.Error(), nil, "Pass the images in a new session (or resetSession=true); no CLI process was started")
	}
	var err error
	if cp.primary, err = s.cli.ExecCommand(caps, run); err != nil {
		return cp, invalidInput(err)
	}
	if in.asksPerson() {
		if in.Profile != "" {
			return cp, mcperr.New(mcperr.Invalid, fmt.Sprintf("profile %q cannot be combined with approvalPolicy %q: the app-server, which carries approval requests, takes no profile", in.Profile, in.ApprovalPolicy), nil,
				"Omit profile, or pass approvalPolicy never; no CLI process was started")
		}
		// The app-server: the same prompt, directory, model, sandbox and
		// settings, and the pins as configuration overrides.
		conf := s.cli.SandboxPins().Config(in.AddDirs...)
		for _, o := range in.Overrides {
			conf[o.Key] = o.Value
		}
		switch in.WebSearch {
		case "on":
			conf["web_search"] = "live"
		case "off":
			conf["web_search"] = "disabled"
		}
		req := appserver.TurnRequest{ThreadID: run.ResumeID, Prompt: run.Prompt, Cwd: cp.dir, Model: in.Model, Effort: in.ReasoningEffort,
			Sandbox: run.EffectiveSandbox(), ApprovalPolicy: in.ApprovalPolicy, Config: conf, Env: cli.CallbackEnv(in.CallbackURI), Images: in.Images}
		cp.app = &req
		if run.ResumeID != "" {
			f := req
			f.ThreadID, f.Prompt = "", fresh.Prompt
			cp.appFresh = &f
		}
		return cp, nil
	}
	if run.ResumeID != "" {
		fb, err := s.cli.ExecCommand(caps, fresh)
		if err != nil {
			return cp, invalidInput(err)
		}
		cp.fallback = &fallback{unknownThread: run.ResumeID, cmd: fb}
	}
	return cp, nil
}

// runCoder takes the session and runs the planned commands. budget is what
// is left of CODER_TIMEOUT after the version probe; it covers waiting for
// the session and a slot, and the runs.
func (s *Server) runCoder(ctx context.Context, req mcp.CallToolRequest, caps cli.Caps, cp coderPlan, budget time.Duration) (*mcp.CallToolResult, error) {
	ctx, cancel := context.WithTimeoutCause(ctx, budget, cli.ErrTimeout)
	defer cancel()
	in := cp.in
	if err := refuseHazards(cp.dir); err != nil {
		return mcperr.ToolResult(err), nil
	}
	lease, err := s.store.Acquire(ctx, cp.owner, in.SessionID)
	if err != nil {
		return s.failure(s.waitFailed(ctx, err), in.Model), nil
	}
	defer lease.Release()
	now := sessionView{exists: !lease.Created, data: lease.Data()}
	if !cp.view.same(now) {
		// Another call on this session ran a turn while this one waited for
		// it: the planned commands continue a conversation that has moved.
		if cp.class != toolcall.Read {
			// Approved and audited as planned: never run something else.
			return mcperr.ToolResult(&mcperr.Error{Kind: mcperr.Conflict,
				Op:   fmt.Sprintf("state changed since the plan: session %s had another turn (now %d) while this call waited for it; nothing was run", lease.ID(), now.data.TurnCount),
				Hint: "call again to continue from the new turn"}), nil
		}
		// A read turn was neither shown nor recorded: plan it again on the
		// session as it is now, so queued calls continue one another.
		owner := cp.owner
		if cp, err = s.buildCoder(caps, in, now); err != nil {
			return mcperr.ToolResult(err), nil
		}
		cp.owner = owner
	}
	if in.Reset {
		lease.Reset()
	}
	lease.SetWorkingDirectory(cp.dir)

	prog := s.startProgress(ctx, req)
	defer prog.done()
	onEvent := func(ev cli.Event) { prog.note(cli.Describe(ev)) }
	var res *cli.Result
	if cp.app != nil {
		res, err = s.runApp(ctx, req, cp, lease, prog)
	} else if cp.fallback != nil && !s.cli.KnowsThread(cp.resumeID) {
		err = &cli.Error{Kind: cli.FailUnknownThread, Cause: "no rollout of conversation " + cp.resumeID + " in the CLI's configuration directory"}
	} else {
		res, err = s.cli.Run(ctx, cp.primary, onEvent)
	}
	var cerr *cli.Error
	if cp.app == nil && cp.fallback != nil && errors.As(err, &cerr) && cerr.Kind == cli.FailUnknownThread {
		// The CLI no longer knows the conversation: carry the context ourselves.
		s.logger.Info("CLI conversation unknown; continuing with the last turns as context", "session", lease.ID(), "thread", cp.resumeID)
		prog.note("conversation " + cp.resumeID + " is unknown to the CLI; continuing with the last 2 turns as context")
		lease.SetConversationID("")
		res, err = s.cli.Run(ctx, cp.fallback.cmd, onEvent)
	}
	prog.done()
	if err != nil {
		msg := mcperr.Message(s.classify(err, in.Model))
		lease.AddTurn(in.Prompt, "error: "+msg)
		return mcp.NewToolResultError(msg), nil
	}
	if res.ThreadID != "" {
		lease.SetConversationID(res.ThreadID)
	}
	lease.AddTurn(in.Prompt, res.Text)
	if in.Codex {
		lease.SetCodex(session.CodexSettings{Model: in.Model, Sandbox: in.Sandbox, Overrides: in.Overrides, ApprovalPolicy: in.ApprovalPolicy})
		thread := res.ThreadID
		if thread == "" {
			// A CLI without thread ids (0.36.0): the session stands for the
			// thread, and codex-reply continues it with the last turns.
			thread = lease.ID()
		}
		return codexResult(thread, res.Text, false), nil
	}

	meta := map[string]any{"model": in.Model, "sessionId": lease.ID()}
	if res.ThreadID != "" {
		meta["threadId"] = res.ThreadID
	}
	if in.CallbackURI != "" {
		meta["callbackUri"] = in.CallbackURI
	}
	return s.result(res.Text, meta), nil
}

// describeCoder is the dry run of a coder turn: where it runs and in what
// state that is, the session it continues, and what the sandbox lets it do.
// It reads only (git with optional locks off); a state it cannot read is
// reported as such rather than failing the preview.
func (s *Server) describeCoder(ctx context.Context, cp coderPlan) toolcall.Preview {
	in := cp.in
	sandbox := cli.ExecRequest{Sandbox: in.Sandbox, FullAuto: in.FullAuto}.EffectiveSandbox()
	g := workdir.Read(ctx, cp.dir)
	sess := map[string]any{"new": true}
	sessWords := "in a new session"
	if cp.view.exists {
		sess = map[string]any{"id": cp.view.data.ID, "new": false, "turnCount": cp.view.data.TurnCount}
		if cp.view.data.CoderConversationID != "" {
			sess["conversationId"] = cp.view.data.CoderConversationID
		}
		sessWords = fmt.Sprintf("continuing session %s (%d turns)", cp.view.data.ID, cp.view.data.TurnCount)
		if in.Reset {
			sess["reset"] = true
			sessWords = fmt.Sprintf("in session %s, whose %d turns are cleared first", cp.view.data.ID, cp.view.data.TurnCount)
		}
	} else if session.ValidID(in.SessionID) {
		sess["id"] = in.SessionID
		sessWords = "in a new session " + in.SessionID
	}
	state := map[string]any{
		"workingDirectory": g,
		"session":          sess,
		"sandbox":          sandbox,
		"approvalPolicy":   approvalWords(in.ApprovalPolicy),
		"model":            in.Model,
	}
	if in.ReasoningEffort != "" {
		state["reasoningEffort"] = in.ReasoningEffort
	}
	if in.CallbackURI != "" {
		state["callbackUri"] = in.CallbackURI
	}
	if len(in.Images) > 0 {
		state["images"] = in.Images
	}
	if len(in.AddDirs) > 0 {
		state["addDirs"] = in.AddDirs
	}
	if in.WebSearch != "" {
		state["webSearch"] = in.WebSearch
	}
	if in.Profile != "" {
		state["profile"] = in.Profile
	}
	hz := workdir.Hazards(cp.dir)
	if len(hz) > 0 {
		state["gitHazards"] = hz
	}
	var summary, effect string
	where := fmt.Sprintf("%s (%s)", cp.dir, g.Words())
	switch sandbox {
	case cli.SandboxFullAccess:
		summary = fmt.Sprintf("Run Codex with full disk access (danger-full-access) in %s: it may change any file on this machine and run any command.", where)
		effect = "the model's commands run unsandboxed as this server's user: any file on the machine may be created, changed or deleted, and these tools cannot undo it"
	case cli.SandboxWorkspaceWrite:
		summary = fmt.Sprintf("Run Codex with write access to its working directory (workspace-write) in %s: it may change files under %s and run commands there; the rest of the machine stays read-only.", where, cp.dir)
		effect = "files under " + cp.dir + " (and temporary directories) may be created, changed or deleted; git shows and can undo the changes to tracked files"
		if len(in.AddDirs) > 0 {
			summary += " It may also write under " + strings.Join(in.AddDirs, ", ") + "."
			effect = "files under " + strings.Join(append([]string{cp.dir}, in.AddDirs...), ", ") + " (and temporary directories) may be created, changed or deleted"
		}
	default:
		summary = fmt.Sprintf("Run Codex read-only (read-only) in %s: it may read files and run commands that change nothing.", where)
		effect = "nothing on disk changes; the model answers"
	}
	summary += fmt.Sprintf(" Model %s, %s. Task: %q", in.Model, sessWords, clipText(in.Prompt, 300))
	if len(hz) > 0 {
		summary += " It will be refused: the repository's git configuration would have the CLI's own git run commands outside the sandbox (" + strings.Join(hz, ", ") + ")."
	}
	return toolcall.Preview{
		Summary: summary,
		State:   state,
		Effect:  effect,
		// What the approval depends on: the working tree and the session's
		// place in its conversation.
		Precondition: fmt.Sprintf("dir=%s %s session=%v turns=%d thread=%s", cp.dir, g.Fingerprint(), cp.view.exists, cp.view.data.TurnCount, cp.view.data.CoderConversationID),
	}
}

func clipText(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n]) + "…"
}
