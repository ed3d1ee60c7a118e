// Package toolcall is the one pipeline every mcpfleet server installs around
// its tool handlers:
//
//	validate arguments against the tool's schema → classify the call (read /
//	change / destructive) → dry run, or approve (policy, elicitation,
//	confirmation code) → audit intent (synced) → run → audit outcome
//
// A server declares, per tool, how to classify a call and how to describe
// it; it never re-implements approval or audit in a handler. Read tools keep
// a plain handler (Read) and pay only for argument validation. Tools that
// can change a back end register a Planner (Change): from validated
// arguments it returns a Plan saying the call's class, its target, exactly
// what will be sent, how to describe the current state (for dry runs and
// approvals only), and how to run it. The Plan's Run closes over the values
// the planner validated, so what was previewed and approved is exactly
// what runs.
//
// See shared/README.md, "Changes and approvals", for a worked example.
package toolcall

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"os/user"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/mcpfleet/mcpfleet/shared/approval"
	"github.com/mcpfleet/mcpfleet/shared/argschema"
	"github.com/mcpfleet/mcpfleet/shared/audit"
	"github.com/mcpfleet/mcpfleet/shared/envconfig"
	"github.com/mcpfleet/mcpfleet/shared/tasks"
)

// Class is a call's risk class.
type Class int

// Risk classes, in increasing order of risk.
const (
	// Read changes nothing.
	Read Class = iota
	// Change changes state in a way an operator can undo with the same tools.
	Change
	// Destructive loses data or cuts traffic in a way the tools cannot undo.
	Destructive
)

func (c Class) String() string {
	switch c {
	case Read:
		return "read"
	case Change:
		return "change"
	case Destructive:
		return "destructive"
	}
	return fmt.Sprintf("class(%d)", int(c))
}

// Plan is one call, built from validated arguments before anything reaches
// a back end.
type Plan struct {
	// Class is this call's class (execute_query on a SELECT is Read even
	// though the tool can be Destructive).
	Class Class
	// Target is the back end the call goes to, e.g.
	// "unix:///run/haproxy/admin.sock" or "kafka 127.0.0.1:9092".
	Target string
	// Commands are exactly what would be sent: runtime API commands, the SQL
	// text, the Kafka request, the CLI argv.
	Commands []string
	// Describe reads the current state of what the call touches (read-only
	// back-end calls) and words the preview. It is called for dry runs and
	// approvals only, so a call that needs no approval pays nothing extra.
	// It may be nil when there is no state worth reading.
	Describe func(ctx context.Context) (Preview, error)
	// Run performs exactly what was planned. It must close over the values
	// the planner validated rather than re-read the request.
	Run func(ctx context.Context) (*mcp.CallToolResult, error)
	// Secrets are values the planner knows to be secret that the
	// arguments' shapes do not reveal (a password from the server's own
	// configuration that Commands embed). Audit records never hold them,
	// in any field or spelling; secret-named arguments, secret-named
	// header and config entries, and URL passwords need no listing here.
	Secrets []string
	// Approve, when set, says why this call needs a person's approval
	// whatever its class and MCP_APPROVAL (a read the engine estimates
	// above a cost budget): the pipeline asks as it does for a class the
	// policy covers (elicitation, or the preview and a confirmation code).
	// With MCP_APPROVAL=none nobody can be asked, and the call is refused
	// with these words. A dry run only describes, as for any call.
	Approve string
}

// Preview is the dry run of a call: what a person is shown before approving.
type Preview struct {
	// Summary says in plain, specific words what will happen: "Delete server
	// be_app/app2 (10.0.0.12:8080) from HAProxy at unix:///run/haproxy/admin.sock.
	// It is UP and holds 34 current sessions, which will be cut."
	Summary string
	// State is the current state of what the call touches (any JSON value).
	State any
	// Effect is the expected effect.
	Effect string
	// Precondition, when set, is a fingerprint of the state the approval
	// depends on (the server exists with this address, the map's version,
	// the table's columns). Before an approved call runs, the pipeline
	// describes again and refuses with "state changed since the preview"
	// when the fingerprint differs. Leave volatile figures (session counts,
	// offsets) out of it, or every approval goes stale.
	Precondition string
}

// Planner classifies a call and plans it. req carries the validated
// arguments without the pipeline's own dryRun and confirm. An error is
// returned to the caller as a tool error (use mcperr kinds) and audited as
// a refusal; nothing has reached the back end.
type Planner func(ctx context.Context, req mcp.CallToolRequest) (Plan, error)

// Config is the pipeline's configuration: the approval policy and where
// audit records go.
type Config struct {
	Approval approval.Config
	Audit    audit.Config
}

// Vars documents every variable FromEnv reads.
var Vars = append(append([]envconfig.Var(nil), approval.Vars...), audit.Vars...)

// FromEnv reads the MCP_APPROVAL* and MCP_AUDIT_LOG variables.
func FromEnv(r *envconfig.Reader) Config {
	return Config{Approval: approval.FromEnv(r), Audit: audit.FromEnv(r)}
}

// Options are the process-level pieces a Pipeline needs.
type Options struct {
	Server  string // server name, for audit records
	Version string // server version, for audit records
	// Stderr receives audit records when MCP_AUDIT_LOG=stderr.
	Stderr io.Writer
	// Logger hears about audit failures that cannot be returned to a caller
	// (an outcome record that could not be written, a failed reopen).
	Logger *slog.Logger
	// Local marks a process serving one local user (stdio): callers without
	// an OAuth identity are recorded as local:<os user>; otherwise as
	// "anonymous".
	Local bool
	// OnDecision, when set, hears every approval decision as the audit
	// outcome record states it (policy, person, confirmation_code,
	// declined, timeout, refused, pending), once per call of a change tool
	// that is not a dry run or a read: serve wires it to
	// mcpfleet_approvals_total. tool is a registered tool's name.
	OnDecision func(tool, decision string)
	// Tracer, when it returns a tracer, gives a change call's slow phases
	// (describe, approve, audit) spans of their own below the tool's span
	// (serve passes Server.Tracing.Tracer).
	Tracer func() trace.Tracer
}

// Pipeline registers tools on an mcp-go server with validation,
// classification, dry run, approval and audit around them. It is safe for
// concurrent use once tools are registered.
type Pipeline struct {
	srv   *server.MCPServer
	cfg   Config
	o     Options
	log   *audit.Log
	codes *approval.Codes
	local approval.Caller
	now   func() time.Time

	mu    sync.RWMutex
	tools map[string]mcp.Tool // as registered (schema with dryRun/confirm)
	// keeper runs task-augmented calls of tools declared AsTask; nil
	// until OfferTasks (then such tools are plain tools).
	keeper *tasks.Keeper
	// taskTools are the tools declared AsTask, as the pipeline built them
	// before task support, so OfferTasks can register them again.
	taskTools map[string]registration
}

// registration is a tool and the pipeline's handler for it.
type registration struct {
	tool mcp.Tool
	h    server.ToolHandlerFunc
}

// ToolOption declares how a tool is offered beyond its handler.
type ToolOption func(*toolOptions)

type toolOptions struct {
	task bool
}

// AsTask declares that a tool's calls may run as MCP tasks (2025-11-25:
// execution.taskSupport "optional"): a plain call behaves exactly as
// before; a task-augmented call returns a task at once, and the whole
// pipeline — validation, classification, dry run, approval, audit, the
// handler — runs inside the task, so its result is what the plain call
// would have returned. It takes effect once the pipeline offers tasks
// (OfferTasks with a non-nil keeper, which servers do on every transport); until
// then the tool is a plain tool. Use it for calls that can outlast a
// client's request timeout (a Codex turn, a heavy query).
func AsTask() ToolOption { return func(o *toolOptions) { o.task = true } }

// OfferTasks makes the tools declared AsTask task-capable, running their
// task-augmented calls through k (which the server must also carry:
// k.ServerOptions() on the MCP server, k.Wrap around its HTTP handler).
// Tools declared before the call are registered again with task support.
// A nil k offers no tasks.
func (p *Pipeline) OfferTasks(k *tasks.Keeper) {
	p.mu.Lock()
	p.keeper = k
	regs := make([]registration, 0, len(p.taskTools))
	for _, r := range p.taskTools {
		regs = append(regs, r)
	}
	p.mu.Unlock()
	for _, r := range regs {
		p.add(r.tool, r.h, toolOptions{task: true})
	}
}

// add registers tool with its pipeline handler h, as a task-capable tool
// when o asks and the pipeline offers tasks.
func (p *Pipeline) add(tool mcp.Tool, h server.ToolHandlerFunc, o toolOptions) {
	p.mu.Lock()
	k := p.keeper
	if o.task {
		if p.taskTools == nil {
			p.taskTools = map[string]registration{}
		}
		p.taskTools[tool.Name] = registration{tool: tool, h: h}
	}
	p.mu.Unlock()
	if o.task && k != nil {
		ex := mcp.ToolExecution{}
		if tool.Execution != nil {
			ex = *tool.Execution
		}
		ex.TaskSupport = mcp.TaskSupportOptional
		tool.Execution = &ex
		h = k.Tool(h)
	}
	p.remember(tool)
	p.srv.AddTool(tool, h)
}

func toolOpts(opts []ToolOption) toolOptions {
	var o toolOptions
	for _, f := range opts {
		if f != nil {
			f(&o)
		}
	}
	return o
}

// New returns a pipeline registering on srv. It opens the audit log (an
// unwritable file is an error: no server without its audit trail) and
// reopens it on SIGHUP until Close.
func New(srv *server.MCPServer, cfg Config, o Options) (*Pipeline, error) {
	if cfg.Approval.Policy == "" {
		cfg.Approval.Policy = approval.Destructive
	}
	if cfg.Approval.Fallback == "" {
		cfg.Approval.Fallback = approval.Confirm
	}
	if cfg.Approval.Timeout <= 0 {
		cfg.Approval.Timeout = 5 * time.Minute
	}
	// Before a random key replaces a missing one: only codes another
	// process can verify need a ledger other processes see.
	used := cfg.Approval.OpenLedger(o.Server)
	if cfg.Audit.Dest != "" && used.Where() == filepath.Clean(cfg.Audit.Dest) {
		return nil, fmt.Errorf("MCP_APPROVAL_LEDGER and MCP_AUDIT_LOG both name %s: the ledger of used confirmation codes needs a file of its own", used.Where())
	}
	if len(cfg.Approval.Secret) == 0 {
		cfg.Approval.Secret = approval.RandomSecret()
	}
	if o.Stderr == nil {
		o.Stderr = io.Discard
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.NewTextHandler(o.Stderr, nil))
	}
	l, err := audit.Open(cfg.Audit, o.Stderr)
	if err != nil {
		return nil, err
	}
	l.ReopenOnSIGHUP(func(err error) {
		o.Logger.Error("audit log reopen failed; changes are refused until it succeeds", "err", err)
	})
	p := &Pipeline{
		srv: srv, cfg: cfg, o: o, log: l,
		codes: approval.NewCodes(cfg.Approval.Secret, cfg.Approval.Timeout, used),
		local: approval.Caller{Kind: approval.CallerLocal, Subject: osUser()},
		now:   time.Now,
		tools: map[string]mcp.Tool{},
	}
	if h := srv.GetHooks(); h != nil {
		h.AddBeforeCallTool(stampRequestID)
	}
	return p, nil
}

// Close stops SIGHUP handling and closes the audit log.
func (p *Pipeline) Close() error { return p.log.Close() }

// Server is the MCP server the pipeline registers tools on, for what a
// server adds beside its tools (resources, prompts, notifications).
func (p *Pipeline) Server() *server.MCPServer { return p.srv }

// Read registers a tool that changes nothing. Its handler is called as is,
// after argument validation. Options declare more (AsTask).
func (p *Pipeline) Read(tool mcp.Tool, h server.ToolHandlerFunc, opts ...ToolOption) {
	p.add(tool, argschema.Bind(tool, h), toolOpts(opts))
}

// Change registers a tool whose calls can change a back end. most is the
// highest class a call of this tool can have; it is written into the
// tool's description together with what the policy asks, and the
// pipeline adds dryRun (boolean) and confirm (string) to its input schema.
// The tool's annotations are left as declared. Options declare more
// (AsTask).
func (p *Pipeline) Change(tool mcp.Tool, most Class, plan Planner, opts ...ToolOption) {
	tool = p.augment(tool, most)
	schema, err := argschema.Compile(tool)
	if err != nil {
		panic(fmt.Sprintf("toolcall: Change(%s): %v", tool.Name, err))
	}
	p.add(tool, func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return p.call(ctx, tool, most, plan, req, schema)
	}, toolOpts(opts))
}

// Tool returns a registered tool as clients see it.
func (p *Pipeline) Tool(name string) (mcp.Tool, bool) {
	p.mu.RLock()
	defer p.mu.RUnlock()
	t, ok := p.tools[name]
	return t, ok
}

func (p *Pipeline) remember(tool mcp.Tool) {
	p.mu.Lock()
	p.tools[tool.Name] = tool
	p.mu.Unlock()
}

// augment adds dryRun and confirm to the schema and the class to the
// description.
func (p *Pipeline) augment(tool mcp.Tool, most Class) mcp.Tool {
	dry := map[string]any{"type": "boolean", "description": "Preview only: return the class, the exact commands, the current state and the expected effect, and change nothing."}
	confirm := map[string]any{"type": "string", "description": "The one-time confirmation code from a previous call's preview, after the user approved that preview. Valid only with the same arguments."}
	if len(tool.RawInputSchema) > 0 {
		var s map[string]any
		if err := json.Unmarshal(tool.RawInputSchema, &s); err == nil {
			props, _ := s["properties"].(map[string]any)
			if props == nil {
				props = map[string]any{}
			}
			props["dryRun"], props["confirm"] = dry, confirm
			s["properties"] = props
			if b, err := json.Marshal(s); err == nil {
				tool.RawInputSchema = b
			}
		}
	} else {
		props := maps.Clone(tool.InputSchema.Properties)
		if props == nil {
			props = map[string]any{}
		}
		props["dryRun"], props["confirm"] = dry, confirm
		tool.InputSchema.Properties = props
		if tool.InputSchema.Type == "" {
			tool.InputSchema.Type = "object"
		}
	}
	tool.Description = strings.TrimRight(tool.Description, " \n") + "\n\n" + p.classNote(most)
	return tool
}

func (p *Pipeline) classNote(c Class) string {
	var b strings.Builder
	switch c {
	case Destructive:
		b.WriteString("Risk class: destructive — can lose data or cut traffic in a way these tools cannot undo.")
	case Change:
		b.WriteString("Risk class: change — changes state in a way an operator can undo with these tools.")
	default:
		b.WriteString("Risk class: " + c.String() + ".")
	}
	b.WriteString(" Pass dryRun: true to preview without changing anything.")
	if p.cfg.Approval.Policy.Needs(c.String()) {
		b.WriteString(" A person must approve the call: the client is asked to show the preview to its user")
		if p.cfg.Approval.Fallback == approval.Refuse {
			b.WriteString("; a client that cannot ask a person is refused.")
		} else {
			b.WriteString("; a client that cannot ask gets the preview and a one-time code to pass back as confirm once the user approved it.")
		}
	}
	return b.String()
}

// osUser names the process's user for stdio audit records.
func osUser() string {
	if u, err := user.Current(); err == nil && u.Username != "" {
		return u.Username
	}
	return "unknown"
}
