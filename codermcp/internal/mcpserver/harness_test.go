package mcpserver_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/server"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpfleet/mcpfleet/codermcp/internal/appserver"
	"github.com/mcpfleet/mcpfleet/codermcp/internal/cli"
	"github.com/mcpfleet/mcpfleet/codermcp/internal/cliversion"
	"github.com/mcpfleet/mcpfleet/codermcp/internal/codertest"
	"github.com/mcpfleet/mcpfleet/codermcp/internal/codertest/harness"
	"github.com/mcpfleet/mcpfleet/codermcp/internal/config"
	"github.com/mcpfleet/mcpfleet/codermcp/internal/mcpserver"
	"github.com/mcpfleet/mcpfleet/codermcp/internal/session"
	"github.com/mcpfleet/mcpfleet/codermcp/internal/workspace"
	"github.com/mcpfleet/mcpfleet/shared/serve"
	"github.com/mcpfleet/mcpfleet/shared/tasks"
	"github.com/mcpfleet/mcpfleet/shared/toolcall"
)

// env is one test's stack: the real Codex CLI talking to a codertest
// endpoint, the session store, the MCP server behind the shared streamable
// HTTP handler, and an independent MCP client (the official go-sdk).
type env struct {
	h        *harness.Harness
	cfg      config.Config
	store    *session.Store
	client   *cli.Client
	features *cliversion.Detector
	cs       *mcp.ClientSession
	url      string        // the server's base URL
	keeper   *tasks.Keeper // with envOptions.tasks
	calls    *toolcall.Pipeline
	srv      *server.MCPServer // for in-process clients
	audit    string            // the audit log file
	app      *appserver.Client // the app-server path (approval policies)
	server   *mcpserver.Server

	mu       sync.Mutex
	progress []progressNote
}

type progressNote struct {
	Token    any
	Progress float64
	Message  string
	At       time.Time
}

type envOptions struct {
	cfg       func(*config.Config)
	client    func(*cli.Client)
	heartbeat time.Duration
	cliPath   string        // a fake CLI instead of the real one
	throttle  time.Duration // between progress notifications (default 20ms)
	tasks     *tasks.Config // offer coder and review as tasks
	// calls configures the pipeline (approval policy, audit destination:
	// default a temp file, env.audit).
	calls toolcall.Config
	// clientOpts, when set, replaces the go-sdk client's options (an
	// elicitation handler, for instance); progress is still recorded.
	clientOpts *mcp.ClientOptions
	// protocolVersion pins the go-sdk client's protocol version (default:
	// the client's latest).
	protocolVersion string
	// prober, when set, probes the CLI's features (a fresh cache directory
	// for a cold probe); noFeatureProbe leaves the start-up probe out.
	prober         *cliversion.Prober
	noFeatureProbe bool
	// serverFeatures leaves Options.Features nil: the server makes its own
	// Detector (env.features stays nil) and env.server.Close ends it.
	serverFeatures bool
	// app adjusts the app-server client (its OnStart is the exec client's).
	app func(*appserver.Client)
}

func testConfig() config.Config {
	return config.Config{
		CLIPath:        "codex",
		Models:         []string{codertest.Model, codertest.MissingModel, config.DefaultModel},
		DefaultModel:   codertest.Model,
		SessionLimit:   100,
		SessionTTL:     time.Hour,
		MaxConcurrency: 4,
		Timeout:        60 * time.Second,
	}
}

func newEnv(t testing.TB, o envOptions) *env {
	t.Helper()
	e := &env{cfg: testConfig()}
	if o.cliPath != "" {
		e.h = harness.NewFor(t, o.cliPath)
	} else {
		e.h = harness.New(t)
	}
	e.cfg.CLIPath = e.h.CLI
	e.cfg.Home = e.h.Home
	e.cfg.CLIHome = workspace.Real(e.h.Home)
	// Tests work in temporary directories, or (without workingDirectory)
	// in this package's directory.
	wd, _ := os.Getwd()
	e.cfg.WorkspaceRoots = []string{workspace.Real(os.TempDir()), workspace.Real(wd)}
	if o.cfg != nil {
		o.cfg(&e.cfg)
	}
	e.client = &cli.Client{Path: e.cfg.CLIPath, Home: e.cfg.Home, Timeout: e.cfg.Timeout, Grace: time.Second, Env: append([]string(nil), e.h.Env...),
		Pins: cli.PinsFor(e.cfg.CLIHome, os.Getenv("TMPDIR"))}
	if o.client != nil {
		o.client(e.client)
	}
	if o.cliPath == "" {
		// The version probe is cached per client. Running it here, under its
		// own 30 s bound, leaves the tests' short CODER_TIMEOUTs to the turn
		// itself: on a loaded 2-core machine the probe alone can take 2 s.
		if _, err := e.client.Caps(context.Background()); err != nil {
			t.Fatalf("probing the Codex CLI: %v", err)
		}
	}
	e.store = session.New(session.Options{Limit: e.cfg.SessionLimit, TTL: e.cfg.SessionTTL, MaxConcurrency: e.cfg.MaxConcurrency})
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	go e.store.RunSweeper(ctx, session.SweepInterval(e.cfg.SessionTTL))

	opts := mcpserver.ServerOptions()
	var so serve.Options
	if o.tasks != nil {
		e.keeper = tasks.NewKeeper(*o.tasks)
		opts = append(opts, e.keeper.ServerOptions()...)
		so.WrapMCP = e.keeper.Wrap
	}
	s := serve.NewServer("codermcp", "test", opts...)
	if o.throttle == 0 {
		o.throttle = 20 * time.Millisecond
	}
	// The pipeline as main.go installs it, auditing to a file of the test's
	// own unless the test says otherwise.
	tc := o.calls
	if tc.Audit.Dest == "" {
		e.audit = filepath.Join(t.TempDir(), "audit.log")
		tc.Audit.Dest = e.audit
	} else {
		e.audit = tc.Audit.Dest
	}
	calls, err := serve.Program{Name: "codermcp", Version: "test"}.Pipeline(s, serve.Config{Transport: "http", Calls: tc}, io.Discard, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatalf("pipeline: %v", err)
	}
	t.Cleanup(func() { calls.Close() })
	e.calls = calls
	e.srv = s.MCPServer
	calls.OfferTasks(e.keeper)
	if !o.serverFeatures {
		e.features = &cliversion.Detector{Path: e.cfg.CLIPath, Prober: o.prober}
		// As main does: the probe ends with the server, before the test's
		// temporary directories (its cache) are removed.
		t.Cleanup(e.features.Close)
		if !o.noFeatureProbe {
			e.features.Start(context.Background())
		}
	}
	// The app-server path as main.go wires it: the same CLI, home and
	// environment, CODER_APPROVAL_TIMEOUT; the pipeline asks the person and
	// audits the answers.
	e.app = &appserver.Client{Path: e.cfg.CLIPath, Home: e.cfg.Home, Env: append([]string(nil), e.h.Env...), Environ: cli.InheritedEnv,
		Grace: time.Second, ApprovalTimeout: e.cfg.ApprovalTimeout, OnStart: e.client.OnStart}
	if o.app != nil {
		o.app(e.app)
	}
	e.server = mcpserver.New(e.cfg, e.client, e.store, mcpserver.Options{Heartbeat: o.heartbeat, Throttle: o.throttle, Features: e.features,
		AppServer: e.app})
	e.server.Register(calls)
	t.Cleanup(e.server.Close)
	scfg := serve.Config{Transport: "http", Host: "127.0.0.1"}
	ts := httptest.NewServer(serve.NewHTTPHandler(serve.Program{Name: "codermcp"}, s, scfg, nil, so))
	t.Cleanup(ts.Close)
	e.url = ts.URL

	copts := &mcp.ClientOptions{}
	if o.clientOpts != nil {
		copts = o.clientOpts
	}
	copts.ProgressNotificationHandler = func(_ context.Context, r *mcp.ProgressNotificationClientRequest) {
		e.mu.Lock()
		e.progress = append(e.progress, progressNote{r.Params.ProgressToken, r.Params.Progress, r.Params.Message, time.Now()})
		e.mu.Unlock()
	}
	c := mcp.NewClient(&mcp.Implementation{Name: "codermcp-test", Version: "test"}, copts)
	cctx, ccancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer ccancel()
	var sopts *mcp.ClientSessionOptions
	if o.protocolVersion != "" {
		sopts = &mcp.ClientSessionOptions{ProtocolVersion: o.protocolVersion}
	}
	cs, err := c.Connect(cctx, &mcp.StreamableClientTransport{Endpoint: ts.URL + "/mcp", MaxRetries: -1}, sopts)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	t.Cleanup(func() { cs.Close() })
	e.cs = cs
	return e
}

// call runs a tool; a protocol error fails the test.
func (e *env) call(t testing.TB, name string, args map[string]any) *mcp.CallToolResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	res, err := e.cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("tools/call %s: %v", name, err)
	}
	return res
}

func (e *env) notes(token string) []progressNote {
	e.mu.Lock()
	defer e.mu.Unlock()
	var out []progressNote
	for _, n := range e.progress {
		if n.Token == token {
			out = append(out, n)
		}
	}
	return out
}

func text(res *mcp.CallToolResult) string {
	var parts []string
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			parts = append(parts, tc.Text)
		}
	}
	return strings.Join(parts, "\n")
}

func contentMeta(t *testing.T, res *mcp.CallToolResult) map[string]any {
	t.Helper()
	if len(res.Content) != 1 {
		t.Fatalf("want 1 content item, got %d", len(res.Content))
	}
	tc, ok := res.Content[0].(*mcp.TextContent)
	if !ok {
		t.Fatalf("content[0] is %T, want text", res.Content[0])
	}
	return tc.Meta
}

func mustOK(t testing.TB, res *mcp.CallToolResult) string {
	t.Helper()
	if res.IsError {
		t.Fatalf("unexpected tool error: %s", text(res))
	}
	return text(res)
}

func mustError(t *testing.T, res *mcp.CallToolResult, wants ...string) string {
	t.Helper()
	got := text(res)
	if !res.IsError {
		t.Fatalf("want a tool error, got success: %s", got)
	}
	if len(res.Content) != 1 {
		t.Errorf("error result has %d content items, want 1", len(res.Content))
	}
	t.Logf("tool error: %s", got)
	for _, w := range wants {
		if !strings.Contains(got, w) {
			t.Errorf("error %q does not contain %q", got, w)
		}
	}
	return got
}

func (e *env) sessions(t *testing.T) []session.Summary {
	t.Helper()
	var out []session.Summary
	if err := json.Unmarshal([]byte(mustOK(t, e.call(t, "listSessions", nil))), &out); err != nil {
		t.Fatalf("listSessions text is not a JSON array: %v", err)
	}
	return out
}

// waitNoLeftovers fails unless every process carrying the harness marker is
// gone within d.
func waitNoLeftovers(t *testing.T, marker string, d time.Duration) {
	t.Helper()
	deadline := time.Now().Add(d)
	for {
		left := harness.Leftovers(marker)
		if len(left) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("processes left behind by the CLI: %v", left)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// localOwner owns the sessions of callers without OAuth (this process's user).
var localOwner = "local:" + strconv.Itoa(os.Getuid())

// sessionCount is the number of sessions held: every session of these
// tests' calls belongs to the local user (no OAuth).
func (e *env) sessionCount() int { return len(e.store.List(localOwner)) }
