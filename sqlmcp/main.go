// Command sqlmcp runs SQL on a Trino engine for MCP clients (server mode)
// and for people at a terminal (CLI mode).
//
// Mode: "sqlmcp serve" or "--mcp" runs the MCP server, as does no argument
// at all when stdin is not a terminal (MCP clients spawn it that way);
// "--version" prints the version; anything else is the command-line client.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"

	"golang.org/x/term"

	"github.com/mcpfleet/mcpfleet/shared/buildinfo"
	"github.com/mcpfleet/mcpfleet/shared/logging"
	"github.com/mcpfleet/mcpfleet/shared/serve"
	"github.com/mcpfleet/mcpfleet/shared/tasks"

	"github.com/mcpfleet/mcpfleet/sqlmcp/internal/cli"
	"github.com/mcpfleet/mcpfleet/sqlmcp/internal/config"
	"github.com/mcpfleet/mcpfleet/sqlmcp/internal/engine"
	"github.com/mcpfleet/mcpfleet/sqlmcp/internal/mcpserver"
)

// version is set at build time with -ldflags "-X main.version=...".
var version string

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Getenv, os.Stdin, os.Stdout, os.Stderr))
}

// run picks the mode and returns the exit status.
func run(ctx context.Context, args []string, getenv func(string) string, stdin *os.File, stdout, stderr io.Writer) int {
	switch {
	case len(args) == 1 && args[0] == "--version":
		fmt.Fprintf(stdout, "sqlmcp %s\n", buildinfo.Version(version))
		return 0
	case len(args) > 0 && args[0] == "serve":
		return runServer(ctx, args[1:], getenv, stdin, stdout, stderr)
	case slices.Contains(args, "--mcp"):
		return runServer(ctx, slices.DeleteFunc(slices.Clone(args), func(a string) bool { return a == "--mcp" }), getenv, stdin, stdout, stderr)
	case len(args) == 0 && (!isTerminal(stdin) || strings.EqualFold(strings.TrimSpace(getenv("MCP_TRANSPORT")), "http")):
		// MCP clients spawn the server with a pipe; a container started
		// with MCP_TRANSPORT=http serves even when given a TTY.
		return runServer(ctx, nil, getenv, stdin, stdout, stderr)
	}
	return cli.Main(ctx, args, getenv, stdin, stdout, stderr)
}

// isTerminal reports whether f is a terminal (not merely a character
// device: /dev/null is one, and is what a service manager gives a server).
func isTerminal(f *os.File) bool {
	return f != nil && term.IsTerminal(int(f.Fd()))
}

// program describes the server mode for --version and --help.
func program() serve.Program {
	return serve.Program{
		Name:    "sqlmcp",
		Version: buildinfo.Version(version),
		Summary: "run SQL on Trino and discover its catalogs, schemas and tables over MCP",
		Vars:    config.Vars,
	}
}

// runServer runs the MCP server until ctx ends or stdin closes (stdio).
func runServer(ctx context.Context, args []string, getenv func(string) string, stdin io.Reader, stdout, stderr io.Writer) int {
	p := program()
	if status, done := p.HandleArgs(args, stdout, stderr); done {
		return status
	}
	cfg, err := config.FromEnv(getenv)
	if err != nil {
		return p.ConfigError(stderr, err)
	}
	if cfg.Impersonation {
		// A token without the impersonated field is refused with 401 at the
		// door, not later inside a tool.
		cfg.Serve.Auth.RequiredIdentity = cfg.ImpersonationField
	}
	logger := logging.New(cfg.Serve.Log, stderr)
	eng, err := engine.New(cfg.Engine)
	if err != nil {
		return p.ConfigError(stderr, err)
	}
	defer eng.Close()
	logger.Info("engine configured", "url", cfg.Engine.URL(), "user", cfg.Engine.User, "catalog", cfg.Engine.Catalog, "schema", cfg.Engine.Schema,
		"profile", cfg.Profile, "allow_writes", cfg.AllowWrites, "allowed_schemas", len(cfg.AllowedSchemas.Schemas()), "impersonation", cfg.Impersonation)
	go func() {
		// An engine that is down does not stop the server; say so early.
		if err := eng.Ping(ctx); err != nil && ctx.Err() == nil {
			logger.Warn("the engine does not answer yet; calls will fail until it does", "error", err.Error())
		}
	}()
	opts := mcpserver.ServerOptions()
	so := serve.Options{Logger: logger, Stdin: stdin, Stdout: stdout, Ready: eng.Ping}
	var keeper *tasks.Keeper
	if cfg.Serve.Transport == "http" {
		// execute_query is offered as a task over HTTP, where a client's
		// request timeout or a dropped connection would end a long query.
		keeper = tasks.NewKeeper(cfg.Tasks)
		opts = append(opts, keeper.ServerOptions()...)
		so.WrapMCP = keeper.Wrap
	}
	s := serve.NewServer(p.Name, p.Version, opts...)
	// Each query: metric, span and X-Trino-Trace-Token.
	eng.SetRecorder(s.BackendRecorder("trino", ""))
	// Trino's own queued, execution and CPU time of each query, on the same /metrics.
	eng.SetEngineTimes(engine.NewEngineTimes(s.Metrics.Registry(), p.Name))
	calls, err := p.Pipeline(s, cfg.Serve, stderr, logger) // opens MCP_AUDIT_LOG; an unwritable file stops the start
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", p.Name, err)
		return serve.ExitFailure
	}
	defer calls.Close()
	calls.OfferTasks(keeper)
	defer keeper.Stop() // after serving: a task still running is cancelled, its query ended
	mcpserver.New(eng, mcpserver.Options{
		AllowWrites:        cfg.AllowWrites,
		Scope:              cfg.AllowedSchemas,
		MaxRows:            cfg.MaxRows,
		MaxRowsCeiling:     cfg.MaxRowsCeiling,
		Impersonation:      cfg.Impersonation,
		ImpersonationField: cfg.ImpersonationField,
	}, logger).Register(calls)
	// GET /readyz: the engine answers now.
	return p.Serve(ctx, s, cfg.Serve, so, stderr)
}
