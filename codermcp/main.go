// Command codermcp is an MCP server around the Codex CLI: the coder tool
// runs it on a task with sessions, native resume and live progress; review
// runs a code review; listSessions, ping and help complete the set.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/mcpfleet/mcpfleet/codermcp/internal/appserver"
	"github.com/mcpfleet/mcpfleet/codermcp/internal/cli"
	"github.com/mcpfleet/mcpfleet/codermcp/internal/cliversion"
	"github.com/mcpfleet/mcpfleet/codermcp/internal/config"
	"github.com/mcpfleet/mcpfleet/codermcp/internal/mcpserver"
	"github.com/mcpfleet/mcpfleet/codermcp/internal/session"
	"github.com/mcpfleet/mcpfleet/shared/apps"
	"github.com/mcpfleet/mcpfleet/shared/buildinfo"
	"github.com/mcpfleet/mcpfleet/shared/envconfig"
	"github.com/mcpfleet/mcpfleet/shared/serve"
	"github.com/mcpfleet/mcpfleet/shared/tasks"
)

var version string

// warmLimit bounds the CLI's set-up of its home at start-up (WarmHome):
// a CLI that hangs must not hold up serving for long.
const warmLimit = 3 * time.Second

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Getenv, os.Stdin, os.Stdout, os.Stderr))
}

func run(ctx context.Context, args []string, getenv func(string) string, stdin io.Reader, stdout, stderr io.Writer) int {
	p := serve.Program{
		Name:    "codermcp",
		Version: buildinfo.Version(version),
		Summary: "the Codex CLI over MCP, with sessions, resume and live progress",
		Vars:    append(append(append([]envconfig.Var{}, config.Vars...), tasks.Vars...), apps.Var),
	}
	var ccfg config.Config
	var tcfg tasks.Config
	var viewsOn bool
	cfg, logger, status, ok := p.Configure(args, getenv, stdout, stderr, func(env *envconfig.Reader) {
		ccfg = config.FromEnv(env)
		tcfg = tasks.FromEnv(env)
		viewsOn = apps.Enabled(env)
	})
	if !ok {
		return status
	}

	// Every CLI run uses a configuration the server owns: the operator's
	// model provider and credentials, none of its MCP servers, profiles,
	// hooks or trusted projects unless CODER_MCP_SERVERS names a server.
	home, removeHome, err := cli.OwnHome(ccfg.StateDir, ccfg.CLIHome, ccfg.MCPServers)
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", p.Name, err)
		return serve.ExitFailure
	}
	defer func() {
		if err := removeHome(); err != nil {
			logger.Warn("the CLI's configuration directory could not be removed", "dir", home, "error", err.Error())
		}
	}()
	logger.Info("CLI configuration", "codex_home", home, "from", ccfg.CLIHome, "mcp_servers", strings.Join(ccfg.MCPServers, ","))
	tmpdir := getenv("TMPDIR")
	client := &cli.Client{Path: ccfg.CLIPath, Home: home, Timeout: ccfg.Timeout, Pins: cli.PinsFor(ccfg.CLIHome, tmpdir).Or(cli.PinsFor(ccfg.StateDir, tmpdir))}
	store := session.New(session.Options{Limit: ccfg.SessionLimit, TTL: ccfg.SessionTTL, MaxConcurrency: ccfg.MaxConcurrency})
	sweepCtx, stopSweep := context.WithCancel(ctx)
	defer stopSweep()
	go store.RunSweeper(sweepCtx, session.SweepInterval(ccfg.SessionTTL))

	// In the background: a CLI that hangs must not hold up start-up (and
	// /readyz reports it meanwhile). The feature probe (cached across
	// restarts, keyed on the binary) runs beside it, off every call's path.
	// A binary probed before (the cache says so: a file read, no CLI run)
	// also gives the version check its answers, so that the first call
	// does not wait for the CLI to print them again; a changed binary is
	// asked anew.
	//
	// The CLI's first run in a new home (this one is new at every start)
	// sets it up: state databases, bundled skills, ~0.3 s. When the binary
	// is known (a restart) that happens here, bounded, before serving;
	// otherwise beside the probe.
	//
	// Shutdown (stdin's end, SIGTERM) stops this background work and waits
	// for its CLI runs to end before the home is removed (this defer runs
	// before removeHome's): a CLI still setting up the home would write
	// into it while it is removed, and outlive the server.
	startup, endStartup := context.WithCancel(ctx)
	var background sync.WaitGroup
	defer func() {
		endStartup()
		background.Wait()
	}()
	prober := &cliversion.Prober{}
	warm := func() {
		start := time.Now()
		if err := cliversion.WarmHome(startup, ccfg.CLIPath, home, ccfg.MCPServers, warmLimit); err != nil {
			if startup.Err() == nil {
				logger.Debug("the Codex CLI did not set up its home ahead of the first call", "error", err.Error())
			}
			return
		}
		logger.Debug("the Codex CLI set up its home", "codex_home", home, "ms", time.Since(start).Milliseconds())
	}
	if prober.SeedCaps(client) {
		logger.Debug("Codex CLI version and capabilities taken from the last probe of this binary", "path", ccfg.CLIPath)
		warm()
	} else {
		background.Go(warm)
	}
	features := &cliversion.Detector{Path: ccfg.CLIPath, Prober: prober}
	features.Start(ctx)
	defer features.Close() // no probe outlives the server: its CLI stopped, its temporary home removed
	background.Go(func() {
		if caps, err := client.Caps(startup); err != nil {
			if startup.Err() != nil {
				return // shutting down: not a problem with the CLI
			}
			// Not fatal: the CLI may be installed later; calls report it meanwhile.
			logger.Warn("Codex CLI not usable yet", "path", ccfg.CLIPath, "error", err.Error())
		} else {
			logger.Info("Codex CLI detected", "path", ccfg.CLIPath, "version", caps.Version.String(), "json", caps.JSON, "resume", caps.Resume)
		}
	})

	opts := mcpserver.ServerOptions()
	// GET /readyz: the CLI answers --version now.
	so := serve.Options{Logger: logger, Stdin: stdin, Stdout: stdout, Ready: client.Ready}
	// Tasks over stdio and HTTP (over stdio the keeper's hooks stand in for Wrap):
	// a client's request timeout or a dropped connection would end a long call.
	keeper := tasks.NewKeeper(tcfg)
	opts = append(opts, keeper.ServerOptions()...)
	so.WrapMCP = keeper.Wrap
	s := serve.NewServer(p.Name, p.Version, opts...)
	// MCP Apps (issue 29): the change tools show their previews and results
	// in change-preview for clients that declare the extension; MCP_APPS=off
	// (or a client without it) sees exactly the tools without views.
	views := apps.New(p.Name, viewsOn, apps.ChangePreview())
	views.Register(s.MCPServer)
	client.Recorder = s.BackendRecorder("codex", "") // each CLI run: metric + span
	// Dry run, approval (MCP_APPROVAL*) and audit (MCP_AUDIT_LOG) around
	// every tool; an audit log that cannot be opened stops the server.
	calls, err := p.Pipeline(s, cfg, stderr, logger)
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", p.Name, err)
		return serve.ExitFailure
	}
	defer calls.Close()
	// coder and review as tasks, over stdio and HTTP.
	calls.OfferTasks(keeper)
	defer keeper.Stop() // after serving: a task still running is cancelled, its CLI stopped
	// Turns whose approval policy makes the CLI ask a person run on its
	// app-server (one process group per turn, the same configuration home
	// and environment as exec); the pipeline asks the person and audits
	// the answers to its own log.
	app := &appserver.Client{Path: ccfg.CLIPath, Home: home, Environ: cli.InheritedEnv, ApprovalTimeout: ccfg.ApprovalTimeout,
		ClientName: p.Name, ClientVersion: p.Version}
	handlers := mcpserver.New(ccfg, client, store, mcpserver.Options{Logger: logger, Features: features, AppServer: app,
		Views: views, Recorder: client.Recorder})
	handlers.Register(calls)
	defer handlers.Close()
	return p.Serve(ctx, s, cfg, so, stderr)
}
