// Command playtrino runs the trinotest engine (a Trino-protocol server on
// an embedded DuckDB with the sample catalogs) on a free loopback port for
// trying sqlmcp by hand. When it is ready it prints one JSON line to stdout:
//
//	{"host":"127.0.0.1","port":40123,"catalog":"sales","schema":"public"}
//
// It stops on SIGINT or SIGTERM. Development only: it needs cgo.
//
//	go run ./sqlmcp/internal/trinotest/cmd/playtrino [-page-size 1000] [-tls] [-user u -password p]
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/mcpfleet/mcpfleet/sqlmcp/internal/trinotest"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "playtrino:", err)
		os.Exit(1)
	}
}

// readyLine is the one line printed on stdout once the engine serves.
type readyLine struct {
	Host    string `json:"host"`
	Port    int    `json:"port"`
	Catalog string `json:"catalog"`
	Schema  string `json:"schema"`
}

// run serves until ctx is done.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("playtrino", flag.ContinueOnError)
	fs.SetOutput(stderr)
	pageSize := fs.Int("page-size", trinotest.DefaultPageSize, "rows per result page")
	largeRows := fs.Int("large-rows", trinotest.LargeTableRows, "rows generated into "+trinotest.LargeTable)
	addr := fs.String("addr", "127.0.0.1:0", "listen address (default: a free loopback port)")
	useTLS := fs.Bool("tls", false, "serve HTTPS with a self-signed certificate (written to -cert-out)")
	certOut := fs.String("cert-out", "", "file to write the certificate PEM to (with -tls)")
	user := fs.String("user", "", "require basic authentication for this user (needs -tls; password from PLAYTRINO_PASSWORD)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	opts := trinotest.Options{PageSize: *pageSize, LargeTableRows: *largeRows, Addr: *addr, TLS: *useTLS}
	if *user != "" {
		pw := os.Getenv("PLAYTRINO_PASSWORD")
		if pw == "" {
			return fmt.Errorf("-user needs the password in PLAYTRINO_PASSWORD")
		}
		opts.Users = map[string]string{*user: pw}
	}
	srv, err := trinotest.New(opts)
	if err != nil {
		return err
	}
	defer srv.Close()
	if *useTLS && *certOut != "" {
		if err := os.WriteFile(*certOut, srv.CACertPEM(), 0o600); err != nil {
			return fmt.Errorf("write certificate: %w", err)
		}
	}
	line, _ := json.Marshal(readyLine{srv.Host(), srv.Port(), trinotest.DefaultCatalog, trinotest.DefaultSchema})
	if _, err := fmt.Fprintln(stdout, string(line)); err != nil {
		return err
	}
	fmt.Fprintf(stderr, "playtrino: serving %s (Ctrl-C to stop)\n", srv.URL())
	<-ctx.Done()
	fmt.Fprintln(stderr, "playtrino: stopping")
	return nil
}
