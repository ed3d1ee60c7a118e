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

	"github.com/prometheus/client_golang/prometheus"

	"github.com/mcpfleet/mcpfleet/proxymcp/internal/config"
	"github.com/mcpfleet/mcpfleet/proxymcp/internal/fleet"
	"github.com/mcpfleet/mcpfleet/proxymcp/internal/haproxy"
	"github.com/mcpfleet/mcpfleet/proxymcp/internal/master"
	"github.com/mcpfleet/mcpfleet/proxymcp/internal/mcpserver"
	"github.com/mcpfleet/mcpfleet/proxymcp/internal/persist"
	"github.com/mcpfleet/mcpfleet/proxymcp/internal/views"
	"github.com/mcpfleet/mcpfleet/shared/apps"
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
		Vars:    append(append(append([]envconfig.Var(nil), config.Vars...), config.FleetVars[0]), apps.Var),
	}
	var cf config.Fleet
	var viewsOn bool
	cfg, logger, status, ok := p.Configure(args, getenv, stdout, stderr, func(env *envconfig.Reader) {
		cf = config.FleetFromEnv(env)
		viewsOn = apps.Enabled(env)
	})
	if !ok {
		return status
	}

	// Back ends: every HAProxy instance (one without PROXY_INSTANCES).
	// HAProxy being down must not stop the server: calls fail until it answers.
	f, err := fleet.FromConfig(cf)
	if err != nil {
		return p.ConfigError(stderr, err)
	}
	defer f.Close()
	s := serve.NewServer(p.Name, p.Version)
	// MCP Apps views (MCP_APPS): list_servers shows the backend pool, every
	// change tool its preview; clients without the extension see no change.
	v := apps.New(p.Name, viewsOn,
		apps.View{Name: mcpserver.ViewBackendPool, Title: "Backend pool",
			Description: "Servers per backend (and per instance in a fleet) with status, weight, sessions and check; divergence between instances highlighted; drain, ready and weight as tool calls.",
			HTML:        views.BackendPool},
		apps.ChangePreview())
	v.Register(s.MCPServer)
	// Every runtime API command and stats page request is recorded (metrics
	// and a span) under backend="haproxy", or the instance's name.
	f.Record(s.BackendRecorder("haproxy", ""))
	runtime := false
	for i, m := range f.Members() {
		if m.Client.Runtime != nil {
			runtime = true
			go probe(ctx, m.Client, cf.Instances[i].RuntimeTimeout, logger.With("instance", m.Name))
		}
		logger.Info("HAProxy instance", "instance", m.Name, "target", m.Client.Target(), "read_only", cf.ReadOnly)
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
	life := lifecycles(ctx, cf, f, s.Metrics.Registry(), logger)
	mcpserver.New(f, mcpserver.Options{ReadOnly: cf.ReadOnly, ServerVersion: p.Version, Lifecycle: life, Views: v}).Register(calls)
	logger.Debug("tools registered", "count", len(calls.Server().ListTools()), "instances", strings.Join(f.Names(), ","))

	o := serve.Options{
		Logger: logger, Stdin: stdin, Stdout: stdout,
		MethodAliases: map[string]string{"callTool": "tools/call"},
	}
	if runtime {
		// GET /readyz: at least one instance answers "show info"; the error
		// names those that do not.
		o.Ready = func(ctx context.Context) error {
			_, err := fleet.Read(ctx, f.Members(), func(ctx context.Context, m fleet.Member) (map[string]any, haproxy.Source, error) {
				info, err := m.Client.ShowInfo(ctx)
				return info, haproxy.SourceRuntime, err
			})
			return err
		}
	}
	return p.Serve(ctx, s, cfg, o, stderr)
}

// lifecycles builds each instance's persistence, reload and certificate
// settings, says at start where server changes cannot survive a reload,
// and keeps mcpfleet_haproxy_ssl_cert_expiry_seconds{instance,cert} fresh.
func lifecycles(ctx context.Context, cf config.Fleet, f *fleet.Fleet, reg *prometheus.Registry, logger *slog.Logger) map[string]*mcpserver.Lifecycle {
	expiry := prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "mcpfleet_haproxy_ssl_cert_expiry_seconds",
		Help: "Seconds until a TLS certificate HAProxy serves expires (negative once expired), from show ssl cert.",
	}, []string{"instance", "cert"})
	if err := reg.Register(expiry); err != nil {
		logger.Warn("certificate expiry metric not registered", "error", err)
	}
	out := map[string]*mcpserver.Lifecycle{}
	for i, m := range f.Members() {
		c := cf.Instances[i].Config
		name := m.Name
		l := &mcpserver.Lifecycle{
			Persist: c.Persist, ConfigFiles: c.ConfigFileList(), Root: persist.Root{Dir: c.HAProxyDir}, AllAtOnce: c.ReloadAllAtOnce,
			Check:      master.Checker{Command: c.BinCommand(), Files: c.ConfigFileList(), Dir: c.HAProxyDir},
			CertExpiry: func(cert string, sec float64) { expiry.WithLabelValues(name, cert).Set(sec) },
		}
		if c.MasterAddress != "" {
			l.Master = &master.Client{Network: c.MasterNetwork, Address: c.MasterAddress}
		}
		for _, note := range l.StartupNotes() {
			logger.Warn("persistence", "instance", name, "detail", note)
		}
		if c.Persist {
			logger.Info("persistence on", "instance", name, "haproxy_dir", c.HAProxyDir)
		}
		out[name] = l
		if m.Client.Runtime != nil {
			go refreshCertExpiry(ctx, m.Client, l, logger.With("instance", name))
		}
	}
	return out
}

// refreshCertExpiry reads every loaded certificate's expiry now and every
// five minutes.
func refreshCertExpiry(ctx context.Context, hp *haproxy.Client, l *mcpserver.Lifecycle, logger *slog.Logger) {
	for {
		if err := mcpserver.RecordCertExpiry(ctx, hp, l); err != nil {
			logger.Debug("certificate expiry not read", "error", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(5 * time.Minute):
		}
	}
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
