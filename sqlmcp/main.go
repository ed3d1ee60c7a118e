// Command sqlmcp runs SQL on a Trino engine for MCP clients (server mode)
// and for people at a terminal (CLI mode).
//
// Mode: cli.ServerArgs chooses; "sqlmcp serve" or "--mcp" runs the MCP
// server, as does no argument at all when stdin is not a terminal (MCP
// clients spawn it that way); "--version" prints the version; anything else
// is the command-line client.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/mcpfleet/mcpfleet/shared/buildinfo"
	"github.com/mcpfleet/mcpfleet/shared/envconfig"
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

// run starts the mode the arguments choose (cli.ServerArgs) and returns
// the exit status.
func run(ctx context.Context, args []string, getenv func(string) string, stdin *os.File, stdout, stderr io.Writer) int {
	serverArgs, server := cli.ServerArgs(args, getenv, stdin)
	if !server {
		return cli.Main(ctx, args, getenv, stdin, stdout, stderr)
	}
	return runServer(ctx, serverArgs, getenv, stdin, stdout, stderr)
}

// runServer runs the MCP server until ctx ends or stdin closes (stdio).
func runServer(ctx context.Context, args []string, getenv func(string) string, stdin io.Reader, stdout, stderr io.Writer) int {
	p := serve.Program{
		Name:    "sqlmcp",
		Version: buildinfo.Version(version),
		Summary: "run SQL on Trino and discover its catalogs, schemas and tables over MCP",
		Vars:    config.Vars,
	}
	var own config.Config
	var profileErr error
	cfg, logger, status, ok := p.Configure(args, getenv, stdout, stderr, func(r *envconfig.Reader) {
		own, profileErr = config.Read(r, getenv)
	})
	if !ok {
		return status
	}
	if profileErr != nil {
		return p.ConfigError(stderr, profileErr)
	}
	if own.Impersonation {
		// A token without the impersonated field is refused with 401 at the
		// door, not later inside a tool.
		cfg.Auth.RequiredIdentity = own.ImpersonationField
	}
	eng, err := engine.New(own.Engine)
	if err != nil {
		return p.ConfigError(stderr, err)
	}
	defer eng.Close()
	logger.Info("engine configured", "url", own.Engine.URL(), "user", own.Engine.User, "catalog", own.Engine.Catalog, "schema", own.Engine.Schema,
		"profile", own.Profile, "allow_writes", own.AllowWrites, "allowed_schemas", len(own.AllowedSchemas.Schemas()), "impersonation", own.Impersonation)
	go func() {
		// An engine that is down does not stop the server; say so early.
		if err := eng.Ping(ctx); err != nil && ctx.Err() == nil {
			logger.Warn("the engine does not answer yet; calls will fail until it does", "error", err.Error())
		}
	}()

	opts := mcpserver.ServerOptions()
	// GET /readyz: the engine answers now.
	so := serve.Options{Logger: logger, Stdin: stdin, Stdout: stdout, Ready: eng.Ping}
	// Tasks over stdio and HTTP (over stdio the keeper's hooks stand in for Wrap):
	// a client's request timeout or a dropped connection would end a long call.
	keeper := tasks.NewKeeper(own.Tasks)
	opts = append(opts, keeper.ServerOptions()...)
	so.WrapMCP = keeper.Wrap
	s := serve.NewServer(p.Name, p.Version, opts...)
	// Each query: metric, span and X-Trino-Trace-Token.
	eng.SetRecorder(s.BackendRecorder("trino", ""))
	// Trino's own queued, execution and CPU time of each query, on the same /metrics.
	eng.SetEngineTimes(engine.NewEngineTimes(s.Metrics.Registry(), p.Name))
	calls, err := p.Pipeline(s, cfg, stderr, logger) // opens MCP_AUDIT_LOG; an unwritable file stops the start
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", p.Name, err)
		return serve.ExitFailure
	}
	defer calls.Close()
	calls.OfferTasks(keeper)
	defer keeper.Stop() // after serving: a task still running is cancelled, its query ended
	mcpserver.New(eng, mcpserver.Options{
		AllowWrites:        own.AllowWrites,
		Scope:              own.AllowedSchemas,
		MaxRows:            own.MaxRows,
		MaxRowsCeiling:     own.MaxRowsCeiling,
		Impersonation:      own.Impersonation,
		ImpersonationField: own.ImpersonationField,
	}, logger).Register(calls)
	return p.Serve(ctx, s, cfg, so, stderr)
}
