// Command playmodel serves a local model endpoint for trying codermcp by
// hand: every answer is a clearly labelled canned reply, and a CODEX_HOME
// under -dir points the Codex CLI at it. When ready it prints one JSON line
// {"codex_home":...,"model":...,"endpoint":...} on stdout; SIGINT or SIGTERM
// stops it.
//
//	go run ./codermcp/internal/codertest/cmd/playmodel -dir /tmp/play
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"

	"github.com/mcpfleet/mcpfleet/codermcp/internal/codertest"
)

// Prefix labels every reply so nobody mistakes it for a real model.
const Prefix = "[playground canned reply] "

func main() {
	os.Exit(run())
}

func run() int {
	dir := flag.String("dir", "", "directory for the generated CODEX_HOME (required)")
	addr := flag.String("addr", "127.0.0.1:0", "address to serve the model endpoint on")
	flag.Parse()
	if *dir == "" {
		fmt.Fprintln(os.Stderr, "playmodel: -dir is required (a directory for the generated CODEX_HOME)")
		return 2
	}
	abs, err := filepath.Abs(*dir)
	if err != nil {
		fmt.Fprintln(os.Stderr, "playmodel:", err)
		return 1
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	ep, err := codertest.Start(*addr, nil)
	if err != nil {
		fmt.Fprintf(os.Stderr, "playmodel: serve the model endpoint on %s: %v\n", *addr, err)
		return 1
	}
	defer ep.Close()
	ep.Prefix = Prefix
	home, err := codertest.WriteHome(abs, ep.URL(), codertest.Model)
	if err != nil {
		fmt.Fprintf(os.Stderr, "playmodel: write CODEX_HOME under %s: %v\n", abs, err)
		return 1
	}
	line, _ := json.Marshal(map[string]string{"codex_home": home, "model": codertest.Model, "endpoint": ep.URL()})
	fmt.Println(string(line))
	fmt.Fprintf(os.Stderr, "playmodel: serving canned replies at %s; run codermcp with CODER_HOME=%s CODER_MODELS=%s CODER_DEFAULT_MODEL=%s\n",
		ep.URL(), home, codertest.Model, codertest.Model)
	<-ctx.Done()
	fmt.Fprintln(os.Stderr, "playmodel: stopping")
	return 0
}
