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
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"slices"
	"syscall"

	"github.com/mcpfleet/mcpfleet/shared/apps"
	"github.com/mcpfleet/mcpfleet/shared/buildinfo"
	"github.com/mcpfleet/mcpfleet/shared/envconfig"
	"github.com/mcpfleet/mcpfleet/shared/httpauth"
	"github.com/mcpfleet/mcpfleet/shared/serve"
	"github.com/mcpfleet/mcpfleet/shared/tasks"

	"github.com/mcpfleet/mcpfleet/sqlmcp/internal/cli"
	"github.com/mcpfleet/mcpfleet/sqlmcp/internal/config"
	"github.com/mcpfleet/mcpfleet/sqlmcp/internal/engine"
	"github.com/mcpfleet/mcpfleet/sqlmcp/internal/mcpserver"
	"github.com/mcpfleet/mcpfleet/sqlmcp/internal/trinoauth"
	"github.com/mcpfleet/mcpfleet/sqlmcp/internal/views"
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
		Vars:    append(slices.Clone(config.Vars), apps.Var),
	}
	var own config.Config
	var profileErr error
	var viewsOn bool
	cfg, logger, status, ok := p.Configure(args, getenv, stdout, stderr, func(r *envconfig.Reader) {
		own, profileErr = config.Read(r, getenv)
		viewsOn = apps.Enabled(r)
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
	for _, cl := range own.Clusters {
		if cl.Auth == trinoauth.ModeTokenExchange && cfg.Auth.Mode == httpauth.ModeProxy {
			// Proxy mode: this server issues the MCP tokens, which the
			// provider cannot exchange; it keeps the provider's access
			// token behind each (sealed), and that is what is exchanged.
			cfg.Auth.UpstreamAccess = true
		}
	}
	var clusters []mcpserver.Cluster
	for _, cl := range own.Clusters {
		eng, err := engine.New(cl.Engine)
		if err != nil {
			if own.Fleet != nil && own.Fleet.Named {
				err = fmt.Errorf("cluster %s: %w", cl.Name, err)
			}
			return p.ConfigError(stderr, err)
		}
		defer eng.Close() // last: waits for the ROLLBACKs still being sent
		clusters = append(clusters, mcpserver.Cluster{Name: cl.Name, Engine: eng, Scope: cl.AllowedSchemas, Auth: string(cl.Auth),
			MaxScanBytes: cl.MaxScanBytes, MaxScanRows: cl.MaxScanRows})
		logger.Info("engine configured", "cluster", cl.Name, "url", cl.Engine.URL(), "user", cl.Engine.User, "catalog", cl.Engine.Catalog, "schema", cl.Engine.Schema,
			"profile", cl.Profile, "allow_writes", own.AllowWrites, "allowed_schemas", len(cl.AllowedSchemas.Schemas()), "impersonation", own.Impersonation, "auth", string(cl.Auth))
		go func() {
			// An engine that is down does not stop the server; say so early.
			if err := eng.Ping(ctx); err != nil && ctx.Err() == nil {
				logger.Warn("the engine does not answer yet; calls will fail until it does", "cluster", cl.Name, "error", err.Error())
			}
		}()
	}
	eng := clusters[0].Engine
	// GET /readyz: every cluster's engine answers now.
	ready := func(ctx context.Context) error {
		var errs []error
		for _, cl := range clusters {
			if err := cl.Engine.Ping(ctx); err != nil {
				if len(clusters) > 1 {
					err = fmt.Errorf("cluster %s: %w", cl.Name, err)
				}
				errs = append(errs, err)
			}
		}
		return errors.Join(errs...)
	}

	opts := mcpserver.ServerOptions()
	// GET /readyz: the engine answers now.
	so := serve.Options{Logger: logger, Stdin: stdin, Stdout: stdout, Ready: ready}
	// Tasks over stdio and HTTP (over stdio the keeper's hooks stand in for Wrap):
	// a client's request timeout or a dropped connection would end a long call.
	keeper := tasks.NewKeeper(own.Tasks)
	opts = append(opts, keeper.ServerOptions()...)
	so.WrapMCP = keeper.Wrap
	s := serve.NewServer(p.Name, p.Version, opts...)
	// MCP Apps views (MCP_APPS): execute_query's rows as a grid and chart;
	// a client without the extension sees today's surface.
	v := apps.New(p.Name, viewsOn,
		apps.View{Name: mcpserver.ViewQueryResult, Title: "Query result",
			Description: "A sortable grid with column types, row count and truncation, a chart for two numeric columns, CSV download, fetch more while a cursor is open.",
			HTML:        views.QueryResult},
		apps.ChangePreview())
	v.Register(s.MCPServer)
	times := engine.NewEngineTimes(s.Metrics.Registry(), p.Name)
	ahead := map[string]*engine.Client{}
	for _, cl := range clusters {
		backend := ""
		if len(clusters) > 1 {
			backend = cl.Name
		}
		ahead[backend] = cl.Engine
		// Each query: metric, span and X-Trino-Trace-Token.
		cl.Engine.SetRecorder(s.BackendRecorder("trino", backend))
		// Trino's own queued, execution and CPU time of each query, on the same /metrics.
		cl.Engine.SetEngineTimes(times)
		// A read-only transaction's ROLLBACK, sent after the answer, reports its failure here.
		cl.Engine.SetLogger(logger)
	}
	engine.RegisterTransactionsAhead(s.Metrics.Registry(), p.Name, ahead)
	calls, err := p.Pipeline(s, cfg, stderr, logger) // opens MCP_AUDIT_LOG; an unwritable file stops the start
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", p.Name, err)
		return serve.ExitFailure
	}
	defer calls.Close()
	calls.OfferTasks(keeper)
	defer keeper.Stop() // after serving: a task still running is cancelled, its query ended
	tools := mcpserver.New(eng, mcpserver.Options{
		AllowWrites:        own.AllowWrites,
		Scope:              own.AllowedSchemas,
		MaxRows:            own.MaxRows,
		MaxRowsCeiling:     own.MaxRowsCeiling,
		Impersonation:      own.Impersonation,
		ImpersonationField: own.ImpersonationField,
		Clusters:           clusters,
		Fleet:              own.Fleet,
		CursorTTL:          own.CursorTTL,
		CursorsPerCaller:   own.CursorsPerCaller,
		MaxScanBytes:       own.MaxScanBytes,
		MaxScanRows:        own.MaxScanRows,
		Views:              v,
	}, logger)
	tools.Register(calls)
	defer tools.Close() // open cursors: their engine queries are cancelled
	return p.Serve(ctx, s, cfg, so, stderr)
}
