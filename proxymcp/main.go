// Command proxymcp is an MCP server for administering and monitoring an
// HAProxy load balancer over its runtime API and its statistics page.
package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/mcpfleet/mcpfleet/proxymcp/internal/config"
	"github.com/mcpfleet/mcpfleet/proxymcp/internal/fleet"
	"github.com/mcpfleet/mcpfleet/proxymcp/internal/haproxy"
	"github.com/mcpfleet/mcpfleet/proxymcp/internal/mcpserver"
	"github.com/mcpfleet/mcpfleet/proxymcp/internal/runtimeapi"
	"github.com/mcpfleet/mcpfleet/proxymcp/internal/statspage"
	"github.com/mcpfleet/mcpfleet/shared/buildinfo"
	"github.com/mcpfleet/mcpfleet/shared/envconfig"
	"github.com/mcpfleet/mcpfleet/shared/serve"
)

var version string

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Getenv, os.Stdin, os.Stdout, os.Stderr))
}

func run(ctx context.Context, args []string, getenv func(string) string, stdin io.Reader, stdout, stderr io.Writer) int {
	p := serve.Program{
		Name:    "proxymcp",
		Version: buildinfo.Version(version),
		Summary: "HAProxy administration and monitoring over MCP (runtime API and stats page)",
		Vars:    append(append([]envconfig.Var(nil), config.Vars...), config.FleetVars[0]),
	}
	var cf config.Fleet
	cfg, logger, status, ok := p.Configure(args, getenv, stdout, stderr, func(env *envconfig.Reader) { cf = config.FleetFromEnv(env) })
	if !ok {
		return status
	}
	if cf.Named {
		return runFleet(ctx, p, cfg, cf, logger, stdin, stdout, stderr)
	}
	// Without PROXY_INSTANCES: one HAProxy, the tools exactly as before.
	pc := cf.Instances[0].Config

	s := serve.NewServer(p.Name, p.Version)
	// Every runtime API command and stats page request is recorded (metrics
	// and a span) under backend="haproxy".
	rec := s.BackendRecorder("haproxy", "")
	var rt *runtimeapi.Client
	if pc.RuntimeEnabled {
		rt = &runtimeapi.Client{Network: pc.RuntimeNetwork, Address: pc.RuntimeAddress, Timeout: pc.RuntimeTimeout, MaxConns: pc.RuntimeMaxConns, Recorder: rec}
		defer rt.Close()
	}
	var st *statspage.Client
	if pc.StatsEnabled {
		st = &statspage.Client{URL: pc.StatsURL, Username: pc.StatsUsername, Password: pc.StatsPassword, Timeout: pc.StatsTimeout, Recorder: rec}
	}
	hp := haproxy.New(rt, st)
	// HAProxy being down must not stop the server: calls fail until it answers.
	logger.Info("HAProxy back ends", "runtime_api", endpoint(rt), "runtime_max_conns", pc.RuntimeMaxConns, "stats_page", pc.StatsURL, "read_only", pc.ReadOnly)

	if rt != nil {
		go probe(ctx, hp, pc.RuntimeTimeout, logger)
	}

	// Every tool goes through the pipeline: validation, then for the tools
	// that change HAProxy the risk class, dry run, approval and audit.
	// PROXY_READ_ONLY comes first: those tools are not registered at all.
	calls, err := p.Pipeline(s, cfg, stderr, logger)
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", p.Name, err)
		return serve.ExitFailure
	}
	defer calls.Close()
	n := mcpserver.Register(calls, hp, mcpserver.Options{ReadOnly: pc.ReadOnly, ServerVersion: p.Version})
	logger.Debug("tools registered", "count", n)
	o := serve.Options{
		Logger: logger, Stdin: stdin, Stdout: stdout,
		MethodAliases: map[string]string{"callTool": "tools/call"},
	}
	if rt != nil {
		// GET /readyz: HAProxy answers "show info" now.
		o.Ready = func(ctx context.Context) error { _, err := hp.ShowInfo(ctx); return err }
	}
	return p.Serve(ctx, s, cfg, o, stderr)
}

// runFleet serves every HAProxy of PROXY_INSTANCES: each tool takes an
// optional instance and runs on every chosen one.
func runFleet(ctx context.Context, p serve.Program, cfg serve.Config, cf config.Fleet, logger *slog.Logger, stdin io.Reader, stdout, stderr io.Writer) int {
	s := serve.NewServer(p.Name, p.Version)
	f, err := fleet.FromConfig(cf)
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", p.Name, err)
		return serve.ExitFailure
	}
	defer f.Close()
	// Every instance's back-end requests are recorded under backend=<instance>.
	f.Record(s.BackendRecorder("haproxy", ""))
	for _, m := range f.Members() {
		if m.Client.Runtime != nil {
			go probe(ctx, m.Client, m.ReadTimeout, logger.With("instance", m.Name))
		}
		logger.Info("HAProxy instance", "instance", m.Name, "target", m.Client.Target())
	}
	calls, err := p.Pipeline(s, cfg, stderr, logger)
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", p.Name, err)
		return serve.ExitFailure
	}
	defer calls.Close()
	n := mcpserver.RegisterFleet(calls, f, mcpserver.Options{ReadOnly: cf.ReadOnly, ServerVersion: p.Version})
	logger.Debug("tools registered", "count", n, "instances", strings.Join(f.Names(), ","))
	o := serve.Options{
		Logger: logger, Stdin: stdin, Stdout: stdout,
		MethodAliases: map[string]string{"callTool": "tools/call"},
		// GET /readyz: at least one instance answers; the error names those that do not.
		Ready: func(ctx context.Context) error {
			_, err := fleet.Read(ctx, f.Members(), func(ctx context.Context, c *haproxy.Client) (map[string]any, haproxy.Source, error) {
				info, err := c.ShowInfo(ctx)
				return info, haproxy.SourceRuntime, err
			})
			return err
		},
	}
	return p.Serve(ctx, s, cfg, o, stderr)
}

// probe logs which HAProxy answers at start-up; a failure is only a warning
// because calls keep trying until HAProxy answers.
func probe(ctx context.Context, hp *haproxy.Client, timeout time.Duration, logger *slog.Logger) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	v, err := hp.Version(ctx)
	if err != nil {
		logger.Warn("HAProxy's runtime API does not answer yet; tools will report it until it does", "error", err)
		return
	}
	logger.Info("HAProxy detected", "version", v.Raw)
}

func endpoint(rt *runtimeapi.Client) string {
	if rt == nil {
		return "disabled"
	}
	return rt.Endpoint()
}
