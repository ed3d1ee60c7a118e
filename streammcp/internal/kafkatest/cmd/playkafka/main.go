// Command playkafka runs the playground's Kafka: a 3-broker in-process
// cluster on loopback seeded with topics, a producer that keeps writing,
// consumer groups (one of them falling behind past the default lag
// threshold of 1000) and one under-replicated partition. When ready it
// prints exactly one JSON line on stdout,
//
//	{"brokers":"127.0.0.1:p1,127.0.0.1:p2,127.0.0.1:p3"}
//
// logs to stderr, and exits cleanly on SIGINT or SIGTERM. With
// -scenario=quiet it runs a second, healthy cluster instead (topic events,
// group events-sink caught up), for the playground's fleet of two.
//
//	go run ./streammcp/internal/kafkatest/cmd/playkafka
//	go run ./streammcp/internal/kafkatest/cmd/playkafka -scenario=quiet
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/mcpfleet/mcpfleet/streammcp/internal/fakekafka"
)

func main() {
	rate := flag.Int("rate", 20, "messages per second the background producer writes")
	scenario := flag.String("scenario", "seeded", "seeded (lagging groups, one under-replicated partition) or quiet (healthy, no lag)")
	flag.Parse()
	log := slog.New(slog.NewTextHandler(os.Stderr, nil))
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	var err error
	switch *scenario {
	case "seeded":
		err = run(ctx, log, *rate)
	case "quiet":
		err = runQuiet(ctx, log)
	default:
		err = fmt.Errorf("unknown -scenario %q: use seeded or quiet", *scenario)
	}
	if err != nil {
		log.Error("playkafka failed", "err", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, log *slog.Logger, rate int) error {
	c, err := fakekafka.Start(fakekafka.Options{})
	if err != nil {
		return err
	}
	defer c.Close()
	seedCtx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	seeded, err := c.SeedScenario(seedCtx)
	if err != nil {
		return fmt.Errorf("seed the cluster: %w", err)
	}
	defer seeded.Close()

	// A healthy group that keeps up with payments, committing as it goes.
	live, err := kgo.NewClient(append(c.ClientOpts(),
		kgo.ConsumerGroup("payments-service"),
		kgo.ConsumeTopics(fakekafka.TopicPayments),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.AutoCommitInterval(time.Second),
	)...)
	if err != nil {
		return err
	}
	defer live.Close()
	go func() {
		for {
			if f := live.PollFetches(ctx); f.IsClientClosed() || ctx.Err() != nil {
				return
			}
		}
	}()

	// payments/0 loses a replica from its ISR: one under-replicated partition.
	if err := c.SetMetadataFault(seedCtx, fakekafka.UnderReplicate(fakekafka.TopicPayments, 0)); err != nil {
		return fmt.Errorf("inject the under-replicated partition: %w", err)
	}

	go produce(ctx, c, log, rate)

	line, _ := json.Marshal(map[string]string{"brokers": strings.Join(c.Addrs(), ",")})
	fmt.Println(string(line))
	log.Info("playground Kafka ready", "brokers", c.Addrs(),
		"topics", []string{fakekafka.TopicOrders, fakekafka.TopicPayments, fakekafka.TopicAudit},
		"lagging_groups", []string{fakekafka.GroupOrdersProcessor, fakekafka.GroupOrdersReplay},
		"under_replicated", fakekafka.TopicPayments+"/0")
	<-ctx.Done()
	log.Info("shutting down")
	return nil
}

// runQuiet runs a healthy cluster: nothing under-replicated, no lag.
func runQuiet(ctx context.Context, log *slog.Logger) error {
	c, err := fakekafka.Start(fakekafka.Options{})
	if err != nil {
		return err
	}
	defer c.Close()
	seedCtx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	if err := c.SeedQuiet(seedCtx); err != nil {
		return fmt.Errorf("seed the cluster: %w", err)
	}
	line, _ := json.Marshal(map[string]string{"brokers": strings.Join(c.Addrs(), ",")})
	fmt.Println(string(line))
	log.Info("playground Kafka ready (quiet)", "brokers", c.Addrs(), "topics", []string{fakekafka.TopicEvents}, "groups", []string{fakekafka.GroupEventsSink})
	<-ctx.Done()
	log.Info("shutting down")
	return nil
}

// produce keeps writing to orders and payments until ctx ends.
func produce(ctx context.Context, c *fakekafka.Cluster, log *slog.Logger, rate int) {
	if rate <= 0 {
		return
	}
	t := time.NewTicker(time.Second / time.Duration(rate))
	defer t.Stop()
	for i := 0; ; i++ {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		topic, part := fakekafka.TopicOrders, int32(i/2)%6
		if i%2 == 1 {
			topic, part = fakekafka.TopicPayments, int32(i/2)%3
		}
		if err := c.Produce(ctx, topic, part, 1); err != nil && ctx.Err() == nil {
			log.Warn("produce failed", "err", err)
		}
	}
}
