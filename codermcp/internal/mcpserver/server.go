package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcpfleet/mcpfleet/codermcp/internal/appserver"
	"github.com/mcpfleet/mcpfleet/codermcp/internal/cli"
	"github.com/mcpfleet/mcpfleet/codermcp/internal/cliversion"
	"github.com/mcpfleet/mcpfleet/codermcp/internal/config"
	"github.com/mcpfleet/mcpfleet/codermcp/internal/session"
	"github.com/mcpfleet/mcpfleet/codermcp/internal/workspace"
	"github.com/mcpfleet/mcpfleet/shared/apps"
	"github.com/mcpfleet/mcpfleet/shared/backendcall"
	"github.com/mcpfleet/mcpfleet/shared/httpauth"
	"github.com/mcpfleet/mcpfleet/shared/mcperr"
	"github.com/mcpfleet/mcpfleet/shared/toolcall"
)

// Runner is what the handlers need from the CLI (satisfied by *cli.Client).
type Runner interface {
	Caps(ctx context.Context) (cli.Caps, error)
	Exec(ctx context.Context, req cli.ExecRequest, onEvent func(cli.Event)) (*cli.Result, error)
	Review(ctx context.Context, req cli.ReviewRequest, onEvent func(cli.Event)) (*cli.Result, error)
	Help(ctx context.Context) (string, error)
	// ExecCommand plans a coder turn; Run runs exactly a planned command.
	ExecCommand(caps cli.Caps, req cli.ExecRequest) (cli.Command, error)
	Run(ctx context.Context, cmd cli.Command, onEvent func(cli.Event)) (*cli.Result, error)
	// KnowsThread: the CLI still has the conversation (a resume of one it
	// lost would silently start afresh on some versions).
	KnowsThread(id string) bool
	// SandboxPins are the sandbox settings every run names (the app-server
	// gets them as configuration overrides).
	SandboxPins() cli.Pins
	// Profiles are the profiles the CLI's configuration offers.
	Profiles() []string
}

// Server holds what the tool handlers share.
type Server struct {
	cfg       config.Config
	cli       Runner
	store     *session.Store
	logger    *slog.Logger
	heartbeat time.Duration
	throttle  time.Duration
	ws        workspace.Policy
	features  *cliversion.Detector
	app       Turner             // the app-server path (approvals)
	calls     *toolcall.Pipeline // asks the person and audits the answers (set by Register)
	views     *apps.Views
	recorder  *backendcall.Recorder
	// ownFeatures: New made features (Options.Features nil), so Close
	// ends its probe.
	ownFeatures bool
}

// Options tune progress reporting (tests shorten them).
type Options struct {
	Logger    *slog.Logger
	Heartbeat time.Duration // progress while the CLI is quiet (default 10s; at most 15s by contract)
	Throttle  time.Duration // least time between progress notifications (default 250ms)
	// Features probes what the installed CLI supports (version_info, help,
	// and calls needing a feature); main starts it at start-up and closes
	// it. nil: the server makes one, probing on first need, and Close
	// stops it.
	Features *cliversion.Detector
	// AppServer runs the turns whose approval policy makes the CLI ask a
	// person (default: an appserver.Client for cfg's CLI).
	AppServer Turner
	// Recorder records each app-server turn as a back-end call (operation
	// "app-server"), as cli.Client.Recorder records exec runs; nil: none.
	Recorder *backendcall.Recorder
	// Views are the MCP Apps views; nil: none. The change tools (coder,
	// codex, codex-reply: classified per call) show their dry runs,
	// confirmation previews and results in change-preview.
	Views *apps.Views
}

// New returns the handlers' server.
func New(cfg config.Config, runner Runner, store *session.Store, o Options) *Server {
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Heartbeat <= 0 {
		o.Heartbeat = 10 * time.Second
	}
	if o.Throttle <= 0 {
		o.Throttle = 250 * time.Millisecond
	}
	ws := workspace.Policy{Roots: cfg.WorkspaceRoots}
	if cfg.CLIHome != "" {
		ws.Guarded = append(ws.Guarded, workspace.Guard{Path: cfg.CLIHome, What: "the CLI's configuration directory (CODER_HOME)"})
	}
	if cfg.StateDir != "" {
		ws.Guarded = append(ws.Guarded, workspace.Guard{Path: cfg.StateDir, What: "the server's own CLI configuration (CODER_STATE_DIR)"})
	}
	own := o.Features == nil
	if own {
		o.Features = &cliversion.Detector{Path: cfg.CLIPath}
	}
	if o.AppServer == nil {
		o.AppServer = &appserver.Client{Path: cfg.CLIPath, Environ: cli.InheritedEnv, ApprovalTimeout: cfg.ApprovalTimeout}
	}
	return &Server{cfg: cfg, cli: runner, store: store, logger: o.Logger, heartbeat: o.Heartbeat, throttle: o.Throttle, ws: ws,
		features: o.Features, ownFeatures: own, app: o.AppServer, views: o.Views, recorder: o.Recorder}
}

// Close ends what New started, once the server no longer serves: the
// feature probe of a Detector it made (its CLI stopped, its throwaway home
// removed) is stopped and waited for. A Detector passed in Options is its
// creator's to close.
func (s *Server) Close() {
	if s.ownFeatures {
		s.features.Close()
	}
}

// Register adds the five tools through the tool-call pipeline: coder is
// classified per call by its sandbox (read-only: read; workspace-write or
// fullAuto: change; danger-full-access: destructive) and gets dry run,
// approval and audit; review (pinned to the read-only sandbox), ping, help
// and listSessions are read tools.
//
// coder and review may run as MCP tasks (toolcall.AsTask): where the
// pipeline offers tasks (HTTP), a task runs the same pipeline and handler
// as a plain call — validation, approval, audit, session lock, concurrency
// slot, history and result.
func (s *Server) Register(calls *toolcall.Pipeline) {
	s.calls = calls
	toolcall.AddChange(calls, s.coderTool(), s.planCoder, toolcall.AsTask())
	toolcall.AddChange(calls, s.codexTool(), s.planCodex, toolcall.AsTask())
	toolcall.AddChange(calls, s.codexReplyTool(), s.planCodexReply, toolcall.AsTask())
	toolcall.AddRead(calls, s.reviewTool(), s.review, toolcall.AsTask())
	toolcall.AddRead(calls, readTool("ping", "Ping Server", "Check that the server answers; echoes message."), ping)
	toolcall.AddRead(calls, readTool("help", "Get Help", "Show the Codex CLI's help output."), s.help)
	toolcall.AddRead(calls, readTool("version_info", "CLI Version", "The installed Codex CLI's version and, for each feature this server uses, whether it supports it and which release first has it, as JSON."), s.versionInfo)
	toolcall.AddRead(calls, readTool("listSessions", "List Sessions", "List active sessions as a JSON array of {id, createdAt, lastAccessedAt, turnCount}."), s.listSessions)
}

func ping(ctx context.Context, in pingArgs) (*mcp.CallToolResult, error) {
	if in.Message == nil {
		return mcp.NewToolResultText("pong"), nil
	}
	return mcp.NewToolResultText(*in.Message), nil
}

func (s *Server) help(ctx context.Context, _ struct{}) (*mcp.CallToolResult, error) {
	out, err := s.cli.Help(ctx)
	if err != nil {
		return s.failure(err, ""), nil
	}
	text := strings.TrimRight(out, "\n")
	ctx, cancel := context.WithTimeout(ctx, featureWait)
	defer cancel()
	if f, err := s.features.Get(ctx); err == nil {
		text += "\n\n" + featureWords(f)
	} else {
		text += "\n\nFeatures of this CLI: not known yet (" + err.Error() + "); call version_info later."
	}
	return mcp.NewToolResultText(text), nil
}

// featureWait bounds how long help and version_info wait for the
// start-up probe (a first probe of a new CLI takes a few seconds).
const featureWait = 60 * time.Second

// featureReport is version_info's answer.
type featureReport struct {
	Path     string          `json:"path"`
	Version  string          `json:"version"`
	Features []featureStatus `json:"features"`
	Detail   any             `json:"detail"`
}

type featureStatus struct {
	Name      string `json:"name"`
	Supported bool   `json:"supported"`
	Since     string `json:"since,omitempty"` // the oldest release known to have it
}

func report(f cliversion.Features) featureReport {
	r := featureReport{Path: f.Path, Version: f.Version, Detail: f}
	for _, name := range cliversion.All {
		r.Features = append(r.Features, featureStatus{Name: name, Supported: f.Supports(name), Since: cliversion.KnownSince[name]})
	}
	return r
}

func featureWords(f cliversion.Features) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Codex CLI %s (%s); features this server uses:", f.Version, f.Path)
	for _, st := range report(f).Features {
		yes := "yes"
		if !st.Supported {
			yes = "no (Codex CLI " + st.Since + " or later has it)"
		}
		fmt.Fprintf(&b, "\n- %s: %s", st.Name, yes)
	}
	if len(f.ReasoningEfforts) > 0 {
		fmt.Fprintf(&b, "\nReasoning efforts: %s", strings.Join(f.ReasoningEfforts, ", "))
	}
	return b.String()
}

func (s *Server) versionInfo(ctx context.Context, _ struct{}) (*mcp.CallToolResult, error) {
	ctx, cancel := context.WithTimeout(ctx, featureWait)
	defer cancel()
	f, err := s.features.Get(ctx)
	if err != nil {
		return mcperr.ToolResult(mcperr.New(mcperr.Unavailable, "probing the Codex CLI at "+s.cfg.CLIPath+" failed: "+err.Error(), nil,
			"Check CODER_CLI_PATH and that the CLI runs (npm install -g @openai/codex)")), nil
	}
	b, err := json.Marshal(report(f))
	if err != nil {
		return nil, err
	}
	return mcp.NewToolResultText(string(b)), nil
}

func (s *Server) listSessions(ctx context.Context, _ struct{}) (*mcp.CallToolResult, error) {
	b, err := json.Marshal(s.store.List(callerOwner(ctx)))
	if err != nil {
		return nil, err
	}
	return mcp.NewToolResultText(string(b)), nil
}

// callerOwner is whom a session belongs to: the OAuth identity (issuer and
// subject, as httpauth.Identity.Owner spells them), else — stdio, or HTTP
// without OAuth — the local user running this server. Owner keys start
// with a digit, so "local:" cannot collide with one.
func callerOwner(ctx context.Context) string {
	if id, ok := httpauth.IdentityFromContext(ctx); ok {
		return id.Owner()
	}
	return localOwner
}

var localOwner = "local:" + strconv.Itoa(os.Getuid())

// coderInput is the decoded, validated coder call.
type coderInput struct {
	Prompt          string
	SessionID       string
	Reset           bool
	Model           string
	ReasoningEffort string
	Sandbox         string
	FullAuto        bool
	Dir             string
	CallbackURI     string

	// Codex: a `codex`/`codex-reply` call (the removed `codex mcp-server`'s
	// result shape, and the thread's settings kept for replies).
	Codex     bool
	Overrides []cli.Override
	Tool      string // the tool's name: coder, codex, codex-reply (audit records of approvals)

	// ApprovalPolicy: never ("" too) runs on `codex exec`; on-request and
	// untrusted on the app-server, whose approval requests reach a person.
	ApprovalPolicy string

	// The CLI options (resolved and confined by decodeCoder): images,
	// extra writable directories, web search "on"/"off"/"".
	Images    []string
	AddDirs   []string
	WebSearch string
	Profile   string
	// feat is the installed CLI's features, when an option needs them
	// (planTurn).
	feat *cliversion.Features
}

// decodeCoder checks what the schema cannot: the prompt's content and
// size, the model against the catalogue, the directory against the roots,
// the callback URI, and every value the CLI's argv will carry.
func (s *Server) decodeCoder(a coderArgs, extra ...func(*coderInput)) (coderInput, error) {
	in := coderInput{
		Prompt:          a.Prompt,
		SessionID:       a.SessionID,
		Reset:           a.ResetSession,
		Model:           a.Model,
		ReasoningEffort: a.ReasoningEffort,
		Sandbox:         a.Sandbox,
		FullAuto:        a.FullAuto,
		CallbackURI:     a.CallbackURI,
		ApprovalPolicy:  a.ApprovalPolicy,
	}
	for _, f := range extra {
		f(&in)
	}
	if strings.TrimSpace(in.Prompt) == "" {
		return in, mcperr.New(mcperr.Invalid, "prompt is empty", nil, "Pass the task for the coding assistant in prompt")
	}
	// The caller's prompt gets a tighter bound than one argv item, so the
	// context prepended from earlier turns still fits.
	if err := cli.CheckPrompt("prompt", in.Prompt, cli.MaxPromptBytes); err != nil {
		return in, invalidInput(err)
	}
	var err error
	if in.Model, err = s.model(in.Model); err != nil {
		return in, err
	}
	if in.Dir, err = s.workingDir(a.WorkingDirectory); err != nil {
		return in, err
	}
	if in.Images, err = s.images(a.Images); err != nil {
		return in, err
	}
	if in.AddDirs, err = s.addDirs(a.AddDirs, cli.ExecRequest{Sandbox: in.Sandbox, FullAuto: in.FullAuto}.EffectiveSandbox()); err != nil {
		return in, err
	}
	if in.Profile = a.Profile; in.Profile != "" {
		have := s.cli.Profiles()
		if cli.ProfileName.MatchString(in.Profile) && !slices.Contains(have, in.Profile) {
			words := strings.Join(have, ", ")
			if words == "" {
				words = "none"
			}
			return in, mcperr.New(mcperr.Invalid, fmt.Sprintf("profile %q is not one of the CLI configuration's profiles (%s)", in.Profile, words), nil,
				"Pass one of them, or ask the operator to add it to CODER_HOME (as [profiles."+in.Profile+"] or "+in.Profile+".config.toml); no CLI process was started")
		}
	}
	if a.WebSearch != nil {
		in.WebSearch = "off"
		if *a.WebSearch {
			in.WebSearch = "on"
		}
	}
	if in.CallbackURI == "" {
		in.CallbackURI = s.cfg.CallbackURI
	} else if u, perr := url.Parse(in.CallbackURI); perr != nil || u.Scheme == "" {
		return in, mcperr.New(mcperr.Invalid, fmt.Sprintf("callbackUri %q is not an absolute URI", in.CallbackURI), nil, "Pass a URI such as http://127.0.0.1:9000/callback, or omit it")
	}
	// Everything that reaches the CLI's argv or environment, checked as the
	// cli package will check it again before building the argv.
	check := cli.ExecRequest{Prompt: in.Prompt, Model: in.Model, ReasoningEffort: in.ReasoningEffort,
		Sandbox: in.Sandbox, Dir: in.Dir, CallbackURI: in.CallbackURI, Overrides: in.Overrides,
		Images: in.Images, AddDirs: in.AddDirs, WebSearch: in.WebSearch, Profile: in.Profile}
	if err := check.Validate(); err != nil {
		return in, invalidInput(err)
	}
	return in, nil
}

// MaxImageBytes bounds each image a turn attaches.
const MaxImageBytes = 20 << 20

// images confines each image to the workspace roots (symlinks resolved, a
// regular file, size-capped) and returns the real paths the CLI is given.
func (s *Server) images(paths []string) ([]string, error) {
	if len(paths) > cli.MaxImages {
		return nil, mcperr.New(mcperr.Invalid, fmt.Sprintf("images: %d images, more than %d", len(paths), cli.MaxImages), nil, "Pass fewer images; no CLI process was started")
	}
	var out []string
	for _, p := range paths {
		real, err := s.ws.ResolveFile("images", p, MaxImageBytes)
		if err != nil {
			return nil, workspaceError(err)
		}
		out = append(out, real)
	}
	return out, nil
}

// addDirs confines each extra writable directory as workingDirectory is
// confined; they only mean something to the workspace-write sandbox.
func (s *Server) addDirs(dirs []string, sandbox string) ([]string, error) {
	if len(dirs) == 0 {
		return nil, nil
	}
	if sandbox != cli.SandboxWorkspaceWrite {
		return nil, mcperr.New(mcperr.Invalid, fmt.Sprintf("addDirs needs the workspace-write sandbox; this call's sandbox is %s", sandbox), nil,
			`Pass sandbox "workspace-write" (or fullAuto), or omit addDirs; no CLI process was started`)
	}
	if len(dirs) > cli.MaxAddDirs {
		return nil, mcperr.New(mcperr.Invalid, fmt.Sprintf("addDirs: %d directories, more than %d", len(dirs), cli.MaxAddDirs), nil, "Pass fewer directories; no CLI process was started")
	}
	var out []string
	for _, d := range dirs {
		real, err := s.ws.ResolveDir("addDirs", d)
		if err != nil {
			return nil, workspaceError(err)
		}
		out = append(out, real)
	}
	return out, nil
}

func workspaceError(err error) error {
	var we *workspace.Error
	if errors.As(err, &we) {
		return mcperr.New(mcperr.Invalid, we.Error(), nil, we.Hint+"; no CLI process was started")
	}
	return err
}

// model applies the default and checks the catalogue.
func (s *Server) model(m string) (string, error) {
	if m == "" {
		return s.cfg.DefaultModel, nil
	}
	if !s.cfg.KnownModel(m) {
		return m, s.invalidModel(m, "not in this server's model catalogue (CODER_MODELS)")
	}
	return m, nil
}

// workingDir confines dir to the workspace roots and returns its real
// path, which is what the CLI is then given; "" stays "" (the caller picks
// the default).
func (s *Server) workingDir(dir string) (string, error) {
	if dir == "" {
		return "", nil
	}
	real, err := s.ws.Resolve(dir)
	if err != nil {
		var we *workspace.Error
		if errors.As(err, &we) {
			return "", mcperr.New(mcperr.Invalid, we.Error(), nil, we.Hint+"; no CLI process was started")
		}
		return "", err
	}
	return real, nil
}

// bound applies CODER_TIMEOUT to a whole call: waiting for its session and
// slot, and every CLI run it makes.
func (s *Server) bound(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeoutCause(ctx, s.cfg.Timeout, cli.ErrTimeout)
}

func (s *Server) review(ctx context.Context, a reviewArgs) (*mcp.CallToolResult, error) {
	rr := cli.ReviewRequest{Prompt: a.Prompt, Uncommitted: a.Uncommitted, Base: a.Base, Commit: a.Commit, Title: a.Title}
	var te *cli.TargetError
	if err := rr.Validate(); errors.As(err, &te) {
		// Which targets were given decides what else is checked: say that first.
		return mcperr.ToolResult(invalidInput(err)), nil
	}
	var err error
	if rr.Model, err = s.model(a.Model); err != nil {
		return mcperr.ToolResult(err), nil
	}
	if rr.Dir, err = s.workingDir(a.WorkingDirectory); err != nil {
		return mcperr.ToolResult(err), nil
	}
	if err := rr.Validate(); err != nil {
		return mcperr.ToolResult(invalidInput(err)), nil
	}
	if err := refuseHazards(rr.Dir); err != nil {
		return mcperr.ToolResult(err), nil
	}
	ctx, cancel := s.bound(ctx)
	defer cancel()
	if _, err := s.cli.Caps(ctx); err != nil {
		return s.failure(err, rr.Model), nil
	}
	release, err := s.store.Slot(ctx)
	if err != nil {
		return s.failure(s.waitFailed(ctx, err), rr.Model), nil
	}
	defer release()
	req, _ := toolcall.CallRequest(ctx) // its progress token, its task
	prog := s.startProgress(ctx, req)
	defer prog.done()
	res, err := s.cli.Review(ctx, rr, func(ev cli.Event) { prog.note(cli.Describe(ev)) })
	prog.done()
	if err != nil {
		return s.failure(err, rr.Model), nil
	}
	meta := map[string]any{"model": rr.Model}
	if rr.Base != "" {
		meta["base"] = rr.Base
	}
	if rr.Commit != "" {
		meta["commit"] = rr.Commit
	}
	return s.result(res.Text, meta), nil
}

// result is the success shape: one text item carrying _meta (where clients
// that ignore structuredContent still see it), the same _meta on the result,
// and structuredContent when enabled.
func (s *Server) result(text string, meta map[string]any) *mcp.CallToolResult {
	if strings.TrimSpace(text) == "" {
		text = "(the CLI finished without a message)"
	}
	res := &mcp.CallToolResult{Content: []mcp.Content{mcp.TextContent{
		Type: "text", Text: text, Meta: &mcp.Meta{AdditionalFields: meta},
	}}}
	// Separate maps: mcp-go adds its own keys to the result-level _meta.
	res.Meta = &mcp.Meta{AdditionalFields: maps.Clone(meta)}
	if s.cfg.Structured {
		res.StructuredContent = maps.Clone(meta)
	}
	return res
}
