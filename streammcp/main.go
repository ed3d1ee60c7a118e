// Command streammcp serves read-only reports about a Kafka cluster — health,
// under-replicated partitions and consumer lag — to MCP clients, with tools
// to describe brokers, topics, groups and configs and to peek at messages.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"slices"
	"syscall"

	"github.com/mcpfleet/mcpfleet/shared/apps"
	"github.com/mcpfleet/mcpfleet/shared/buildinfo"
	"github.com/mcpfleet/mcpfleet/shared/envconfig"
	"github.com/mcpfleet/mcpfleet/shared/serve"
	"github.com/mcpfleet/mcpfleet/streammcp/internal/config"
	"github.com/mcpfleet/mcpfleet/streammcp/internal/kafka"
	"github.com/mcpfleet/mcpfleet/streammcp/internal/kafkametrics"
	"github.com/mcpfleet/mcpfleet/streammcp/internal/mcpserver"
	"github.com/mcpfleet/mcpfleet/streammcp/internal/views"
)

var version string

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Getenv, os.Stdin, os.Stdout, os.Stderr))
}

func program() serve.Program {
	return serve.Program{
		Name:    "streammcp",
		Version: buildinfo.Version(version),
		Summary: "Kafka cluster health, replication and consumer-lag reports over MCP",
		Vars:    append(slices.Clone(config.Vars), apps.Var),
	}
}

func run(ctx context.Context, args []string, getenv func(string) string, stdin io.Reader, stdout, stderr io.Writer) int {
	p := program()
	var cfg config.Config
	var viewsOn bool
	scfg, logger, status, ok := p.Configure(args, getenv, stdout, stderr, func(env *envconfig.Reader) {
		cfg = config.FromEnv(env)
		viewsOn = apps.Enabled(env)
	})
	if !ok {
		return status
	}

	// No network here: a cluster that is down at start-up does not stop the
	// server; each read reports it until the cluster is back.
	var clusters []mcpserver.Cluster
	for _, cc := range cfg.Clusters {
		kc, err := kafka.New(kafka.Options{
			Brokers:       cc.Brokers,
			ClientID:      cfg.ClientID,
			Version:       cfg.KafkaVersion,
			SASLMechanism: cc.SASLMechanism,
			SASLUser:      cc.SASLUsername,
			SASLPassword:  cc.SASLPassword,
			TLS:           cc.TLS,
			Timeout:       cfg.Timeout,
			Expected:      cc.ExpectedBrokers,
			VarPrefix:     cc.VarPrefix,
			Logger:        logger.With("cluster", cc.Name),
		})
		if err != nil {
			return p.ConfigError(stderr, fmt.Errorf("cluster %s: %w", cc.Name, err))
		}
		defer kc.Close()
		clusters = append(clusters, mcpserver.Cluster{Name: cc.Name, Client: kc, LagThreshold: cc.LagThreshold, Writes: &cc.Writes})
	}

	// The MCP Apps views, for clients that declare the extension
	// (MCP_APPS=off: none).
	v := apps.New(p.Name, viewsOn,
		apps.View{Name: mcpserver.ViewConsumerLag, Title: "Consumer lag", Description: "Consumer groups by lag, per-partition lag bars, lag over successive reads; a dry run of an offset reset when writes are allowed.", HTML: views.ConsumerLag},
		apps.View{Name: mcpserver.ViewClusterHealth, Title: "Cluster health", Description: "Per cluster: brokers online and offline, the controller, under-replicated and offline partitions.", HTML: views.ClusterHealth},
		apps.ChangePreview())
	h := mcpserver.New(clusters, mcpserver.Options{WatchInterval: cfg.WatchInterval, Logger: logger, Views: v})
	s := serve.NewServer(p.Name, p.Version, h.ServerOptions()...)
	v.Register(s.MCPServer)
	// Every Kafka request is recorded under its cluster's configured name.
	for _, cl := range clusters {
		cl.Client.SetRecorder(s.BackendRecorder("kafka", cl.Name))
	}
	// The gauges need a place to be scraped: the HTTP listener or
	// MCP_METRICS_ADDR. Without one the watcher stays idle until a
	// subscription.
	if scfg.Transport == "http" || scfg.MetricsAddr != "" {
		h.SetGauges(kafkametrics.New(s.Metrics.Registry(), p.Name))
	}
	calls, err := p.Pipeline(s, scfg, stderr, logger)
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", p.Name, err)
		return serve.ExitFailure
	}
	defer calls.Close()
	h.Register(calls)
	watchCtx, stopWatch := context.WithCancel(ctx)
	defer stopWatch()
	go h.Watch(watchCtx)

	for _, cc := range cfg.Clusters {
		logger.Info("streammcp cluster", "cluster", cc.Name, "brokers", cc.Brokers, "sasl", cc.SASLMechanism, "tls", cc.TLSEnabled,
			"lag_threshold", cc.LagThreshold, "writes", cc.Writes.Allowed)
	}
	logger.Info("streammcp starting", "clusters", len(cfg.Clusters), "default_cluster", cfg.Clusters[0].Name,
		"writes", cfg.AllowWrites, "timeout", cfg.Timeout.String())
	return p.Serve(ctx, s, scfg, serve.Options{Logger: logger, Stdin: stdin, Stdout: stdout, Ready: h.Ready}, stderr)
}
