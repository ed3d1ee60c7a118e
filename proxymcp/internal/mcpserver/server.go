// Package mcpserver exposes proxymcp's HAProxy operations as MCP tools: it
// declares each tool (title, description, strict input schema,
// annotations), validates arguments, calls package haproxy and shapes JSON
// results with a top-level "source" and matching structuredContent.
package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/mcpfleet/mcpfleet/proxymcp/internal/fleet"
	"github.com/mcpfleet/mcpfleet/proxymcp/internal/haproxy"
	"github.com/mcpfleet/mcpfleet/proxymcp/internal/runtimeapi"
	"github.com/mcpfleet/mcpfleet/proxymcp/internal/statspage"
	"github.com/mcpfleet/mcpfleet/proxymcp/internal/validate"
	"github.com/mcpfleet/mcpfleet/shared/apps"
	"github.com/mcpfleet/mcpfleet/shared/mcperr"
	"github.com/mcpfleet/mcpfleet/shared/toolcall"
)

// Options configure the tools.
type Options struct {
	ReadOnly      bool   // register only tools that change nothing
	ServerVersion string // proxymcp's own version, for version_info
	// Lifecycle are the instances' persistence, reload and certificate
	// settings, by instance name ("default" without PROXY_INSTANCES).
	Lifecycle map[string]*Lifecycle
	// Views are the MCP Apps views; nil: none (the tests that build the
	// surface without them). list_servers owns ViewBackendPool, every
	// change tool the shared change preview.
	Views *apps.Views
}

// ViewBackendPool is list_servers' view: ui://proxymcp/backend-pool.
const ViewBackendPool = "backend-pool"

// effect classifies a tool for its annotations.
type effect int

const (
	read        effect = iota // changes nothing
	write                     // changes state, not destructive
	idempotent                // changes state; repeating it changes nothing more
	destructive               // removes servers, ends sessions, clears or replaces data
)

// result is a tool's JSON answer; text, when set, is the text content
// instead of the JSON (free-text dumps such as help). raw, when set, is the
// JSON answer already encoded (large results built without a map). summary,
// when set, replaces the JSON as text content for clients that read
// structuredContent (see textFor).
type result struct {
	data    map[string]any
	text    string
	raw     []byte
	summary string
	src     haproxy.Source

	// What a fleet needs of one instance's answer, typed:
	// items, for the reads that describe the same objects on every
	// instance, lists them for the comparison (called only in a fleet);
	// table is show_stat's rows as objects (format objects; the default
	// table format is one value in data), which a fleet writes with "instance"
	// (data then holds the rest of the answer); persistence asks the
	// fleet to add whether runtime changes survive a reload there.
	items       func() []fleet.Item
	table       *haproxy.StatTable
	persistence bool

	// failed, when set, makes an otherwise applied change an error result
	// (applied at run time, NOT persisted: ...).
	failed string
}

// verbatim is a value a fleet answer keeps as the instance gave it,
// without an "instance" member (HAProxy's own key/value answers).
type verbatim struct{ v any }

func (v verbatim) MarshalJSON() ([]byte, error) { return json.Marshal(v.v) }

// absentError is a read's error that means the object it describes is
// not on this instance: in a fleet, an answer of absence, compared.
type absentError struct{ err error }

func (e *absentError) Error() string { return e.err.Error() }
func (e *absentError) Unwrap() error { return e.err }

// structuredSince is the first protocol version with structuredContent.
const structuredSince = "2025-06-18"

// textFor picks a result's text content. The spec asks for the JSON as text
// too "for backwards compatibility": clients older than structuredContent
// get it; newer ones get the summary of a large result instead of the same
// data a second time (for show_stat on 1,000 servers, that second copy
// doubled what was written, piped and decoded).
func textFor(ctx context.Context, res result, body []byte) string {
	if res.text != "" {
		return res.text
	}
	if res.summary != "" {
		if v := server.RequestProtocolVersion(ctx); v >= structuredSince {
			return res.summary
		}
	}
	return string(body)
}

func ok(src haproxy.Source, fields map[string]any) result {
	if fields == nil {
		fields = map[string]any{}
	}
	fields["source"] = string(src)
	return result{data: fields, src: src}
}

type tools struct {
	hp    *haproxy.Client
	opts  Options
	calls *toolcall.Pipeline
	// names are the registered tools, for version_info.
	names []string
	// classes are the write tools' classes, for the README's table and tests.
	classes map[string]toolcall.Class
	// specs are the tools as this instance runs them, in order.
	specs []spec
	// ft, when set, is the fleet these tools declare to the pipeline, each
	// call running on the instances it chooses (fleet.go).
	ft *fleetTools
	// locks serialise, per key of the state a call's class depends on,
	// the last check of that state and the command (planned.key).
	locks sync.Map
	// life is this instance's persistence and reload settings (nil: none).
	life *Lifecycle
	// lastInfo is show_info's answer to the latest "show info" exchange.
	lastInfo atomic.Pointer[infoAnswer]
}

// Server is proxymcp's tools over a fleet of HAProxy instances; one
// HAProxy (no PROXY_INSTANCES) is a fleet of one.
type Server struct {
	f    *fleet.Fleet
	opts Options
}

// New is the tools of fleet f, configured by opts.
func New(f *fleet.Fleet, opts Options) *Server { return &Server{f: f, opts: opts} }

// Register adds every tool through the tool-call pipeline (or, read-only,
// the tools that change nothing: PROXY_READ_ONLY comes before any approval
// policy), for the fleet's instances.
func (s *Server) Register(calls *toolcall.Pipeline) {
	if !s.f.Named() {
		register(calls, s.f.Members()[0].Name, s.f.Members()[0].Client, s.opts, nil)
		return
	}
	registerFleet(calls, s.f, s.opts)
}

func register(calls *toolcall.Pipeline, name string, hp *haproxy.Client, opts Options, ft *fleetTools) *tools {
	t := &tools{hp: hp, opts: opts, calls: calls, ft: ft, classes: map[string]toolcall.Class{}, life: opts.Lifecycle[name]}
	t.statsTools()
	t.topologyTools()
	t.poolTools()
	t.sessionTools()
	t.mapTools()
	t.healthTools()
	t.miscTools()
	t.sslTools()
	t.lifecycleTools()
	return t
}

// planned is one call of a write tool, planned from validated arguments
// before anything reaches HAProxy: exactly the commands run will send, how
// to read the current state for a preview, and the run itself, closing
// over the same values.
type planned struct {
	// class is this call's class when it follows from the arguments alone;
	// zero means the tool's.
	class toolcall.Class
	// effect, when set, decides the class from the live state instead
	// (read-only reads at plan time): what the call does to traffic, and a
	// sentence saying what that depended on ("other servers of be_app
	// serve: app2"), which the preview shows and its precondition carries.
	effect func(ctx context.Context) (toolcall.Class, string)
	// key names the state effect reads ("backend be_app"): a run decides
	// the effect again under that key's lock, just before sending, and is
	// refused if the call has become destructive since it was planned as a
	// change. Two calls on one key therefore never both pass as changes
	// (two drains of the last two servers at once).
	key      string
	commands []string
	// fallback are the commands of commands that only the stats page
	// fallback sends (haproxy.Commands.Fallback).
	fallback []string
	describe func(ctx context.Context) (toolcall.Preview, error)
	run      func(ctx context.Context) (result, error)
}

// settle decides a planned call's class (reading the live state when the
// class depends on it) and returns the plan with its run guarded and its
// preview saying why.
func (t *tools) settle(ctx context.Context, p planned, most toolcall.Class) (toolcall.Class, planned) {
	c := p.class
	if c == toolcall.Read {
		c = most
	}
	if p.effect == nil {
		return c, p
	}
	effect := p.effect
	c, _ = effect(ctx)
	if run := p.run; p.key != "" && c != toolcall.Destructive {
		p.run = func(ctx context.Context) (result, error) {
			mu := t.lock(p.key)
			mu.Lock()
			defer mu.Unlock()
			if now, why := effect(ctx); now > c {
				return result{}, &staleError{why: why}
			}
			return run(ctx)
		}
	}
	if describe := p.describe; describe != nil {
		p.describe = func(ctx context.Context) (toolcall.Preview, error) {
			pv, err := describe(ctx)
			if err != nil {
				return pv, err
			}
			_, why := effect(ctx)
			pv.Summary += " " + why
			pv.Precondition += "; " + why
			return pv, nil
		}
	}
	return c, p
}

// lock returns the mutex of one key of the state effects read.
func (t *tools) lock(key string) *sync.Mutex {
	mu, _ := t.locks.LoadOrStore(key, new(sync.Mutex))
	return mu.(*sync.Mutex)
}

// staleError refuses a call planned as a change that the live state has
// made destructive before it ran.
type staleError struct{ why string }

func (e *staleError) Error() string {
	return "state changed since the call was planned, and it is no longer a mere change: " + e.why + " Nothing was sent to HAProxy"
}

// shape turns a handler's answer into the tool result.
func shape(ctx context.Context, name string, eff effect, res result, err error) *mcp.CallToolResult {
	if err != nil {
		return toolError(name, eff, err)
	}
	body := res.raw
	if body == nil {
		var merr error
		if body, merr = json.Marshal(res.data); merr != nil {
			return toolError(name, eff, merr)
		}
	}
	// The JSON is encoded once: structuredContent carries these bytes.
	return mcp.NewToolResultStructured(json.RawMessage(body), textFor(ctx, res, body))
}

// toolError maps an error onto an isError result with an actionable message.
func toolError(tool string, eff effect, err error) *mcp.CallToolResult {
	return mcperr.ToolResult(classify(tool, eff != read, err))
}

// classify turns err into an error kind, a message and a hint. For a tool
// that changes state (change), it says whether the change was applied.
func classify(tool string, change bool, err error) error {
	var (
		part  *haproxy.PartialError
		notap *haproxy.NotAppliedError
		verr  *validate.Error
		reply *runtimeapi.ReplyError
		conn  *runtimeapi.ConnError
		unsup *haproxy.UnsupportedError
		nf    *haproxy.NotFoundError
		unav  *haproxy.UnavailableError
		sconn *statspage.ConnError
		adm   *statspage.AdminError
		stale *staleError
	)
	op := tool
	switch {
	case errors.As(err, &part):
		return mcperr.New(mcperr.Conflict, op, err, "The steps listed took effect and were not undone; check the current state (get_server, list_servers) before retrying")
	case errors.As(err, &notap):
		if notap.Unverified || notap.ReadErr != nil {
			return mcperr.New(mcperr.Conflict, op, err, "Check the current state with the matching read tool before relying on this change")
		}
		return mcperr.New(mcperr.Conflict, op, err, "Nothing was changed; HAProxy's answer says why")
	case errors.As(err, &verr):
		return mcperr.New(mcperr.Invalid, op, err, "")
	case errors.Is(err, runtimeapi.ErrUnsafeCommand):
		return mcperr.New(mcperr.Invalid, op, err, "Nothing was sent to HAProxy")
	case errors.As(err, &unsup):
		return mcperr.New(mcperr.Invalid, op, err, "Upgrade HAProxy to use this tool")
	case errors.As(err, &nf):
		return mcperr.New(mcperr.NotFound, op, err, notFoundHint(tool))
	case errors.As(err, &unav):
		return mcperr.New(mcperr.Unavailable, op, err, "Check that HAProxy is running and that PROXY_RUNTIME_URL and PROXY_STATS_URL point at it")
	case errors.As(err, &reply):
		if change {
			// HAProxy refused the one command outright: it did nothing.
			op += ": not applied, nothing was changed"
		}
		switch {
		case reply.PermissionDenied():
			return mcperr.New(mcperr.Permission, op, err, "The runtime API socket's level is too low for this command; give it \"level admin\"")
		case reply.UnknownCommand():
			return mcperr.New(mcperr.Invalid, op, fmt.Errorf("HAProxy does not know %q (Unknown command)", reply.Command), "This HAProxy version lacks the command; see version_info")
		case reply.NotFound():
			return mcperr.New(mcperr.NotFound, op, err, notFoundHint(tool))
		case strings.Contains(reply.Message, "maintenance mode"):
			return mcperr.New(mcperr.Conflict, op, err, "Call del_server with drain=true, or set_server_state maint first")
		}
		return mcperr.New(mcperr.Conflict, op, err, "")
	case errors.Is(err, haproxy.ErrRuntimeDisabled):
		return mcperr.New(mcperr.Invalid, op, err, "Set PROXY_RUNTIME_ENABLED=true and point PROXY_RUNTIME_URL at HAProxy's runtime API")
	case errors.As(err, &conn):
		return mcperr.New(mcperr.KindOf(conn.Err), op, err, "Check that HAProxy is running and that PROXY_RUNTIME_URL (or PROXY_HOST/PROXY_PORT, PROXY_RUNTIME_SOCKET) points at its runtime API")
	case errors.As(err, &adm):
		if adm.Denied() {
			return mcperr.New(mcperr.Permission, op, err, "Enable \"stats admin\" on the stats page or make the runtime API reachable")
		}
		return mcperr.New(mcperr.Invalid, op, err, "Check the backend and server names with list_servers")
	case errors.As(err, &sconn):
		return mcperr.New(mcperr.Unavailable, op, err, "Check PROXY_STATS_URL and the stats page credentials")
	case errors.As(err, &stale):
		return mcperr.New(mcperr.Conflict, op, err, "Call it again: it will be previewed with its class now and asked for approval if the policy says so")
	case errors.Is(err, haproxy.ErrStillBusy):
		return mcperr.New(mcperr.Conflict, op, err, "")
	}
	return mcperr.Wrap(err, op, "")
}

// notFoundHint names the tool that lists what exists.
func notFoundHint(tool string) string {
	switch {
	case strings.Contains(tool, "session"):
		return "See show_sessions for the current sessions"
	case strings.Contains(tool, "map"):
		return "See list_maps for the maps and show_map for their entries"
	case strings.Contains(tool, "acl"):
		return "See list_acls for the ACLs and show_acl for their patterns"
	case strings.Contains(tool, "table"):
		return "See list_tables for the stick tables"
	case strings.Contains(tool, "frontend"):
		return "See list_frontends for the frontends"
	}
	return "See list_backends and list_servers for the existing backends and servers"
}
