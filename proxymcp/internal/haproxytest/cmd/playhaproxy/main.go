// Command playhaproxy starts the test HAProxy (two frontends, backends with
// healthy servers and one failing its check, a map, an ACL, a stick table,
// the runtime API on a Unix socket and a loopback TCP port, and the stats
// page) with every file under -dir, prints one JSON line describing it, and
// stops everything on SIGINT or SIGTERM.
//
//	go run ./proxymcp/internal/haproxytest/cmd/playhaproxy -dir /tmp/play
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/mcpfleet/mcpfleet/proxymcp/internal/haproxytest"
)

// ready is the one line printed when HAProxy answers (field order kept).
type ready struct {
	RuntimeURL    string `json:"runtime_url"`
	RuntimeSocket string `json:"runtime_socket"`
	StatsURL      string `json:"stats_url"`
	StatsUsername string `json:"stats_username"`
	StatsPassword string `json:"stats_password"`
	DrainBackend  string `json:"drain_backend"`
	DrainServer   string `json:"drain_server"`
}

func main() {
	os.Exit(run())
}

func run() int {
	dir := flag.String("dir", "", "directory for the configuration, socket, map and ACL (required)")
	big := flag.Int("servers", 0, "also add backend be_big with this many servers")
	flag.Parse()
	if *dir == "" {
		fmt.Fprintln(os.Stderr, "playhaproxy: -dir is required")
		flag.Usage()
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	// Under "go run", a SIGTERM to the go command is not relayed to us:
	// ask for one when our parent goes away.
	if err := haproxytest.ExitWithParent(); err != nil {
		fmt.Fprintln(os.Stderr, "playhaproxy: cannot follow the parent's exit:", err)
	}
	startCtx, cancel := context.WithTimeout(ctx, 30*time.Second)
	h, err := haproxytest.Start(startCtx, haproxytest.Options{Dir: *dir, BigServers: *big})
	cancel()
	if err != nil {
		fmt.Fprintln(os.Stderr, "playhaproxy:", err)
		return 1
	}
	defer h.Stop()
	line, _ := json.Marshal(ready{
		RuntimeURL:    "tcp://" + h.RuntimeTCP,
		RuntimeSocket: h.Socket,
		StatsURL:      h.StatsURL,
		StatsUsername: haproxytest.StatsUser,
		StatsPassword: haproxytest.StatsPassword,
		DrainBackend:  "be_app",
		DrainServer:   "app1", // healthy: its check target is served by this process
	})
	fmt.Println(string(line))
	fmt.Fprintln(os.Stderr, "playhaproxy: HAProxy", h.Version, "running; config", h.ConfigPath, "; Ctrl-C to stop")
	<-ctx.Done()
	return 0
}
