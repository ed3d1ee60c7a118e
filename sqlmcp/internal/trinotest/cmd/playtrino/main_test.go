package main

import (
	"bufio"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"testing"
	"time"

	_ "github.com/trinodb/trino-go-client/trino"
)

// TestRunPrintsReadyLineAndStops runs the command in-process: one JSON line
// on stdout, the engine answers at that address, and cancelling (what
// SIGINT/SIGTERM do) ends it cleanly.
func TestRunPrintsReadyLineAndStops(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	outR, outW := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"-large-rows", "1000"}, outW, io.Discard)
		_ = outW.Close()
	}()
	sc := bufio.NewScanner(outR)
	if !sc.Scan() {
		t.Fatalf("no ready line: %v", <-done)
	}
	var ready readyLine
	if err := json.Unmarshal(sc.Bytes(), &ready); err != nil {
		t.Fatalf("ready line %q: %v", sc.Text(), err)
	}
	if ready.Host != "127.0.0.1" || ready.Port == 0 || ready.Catalog != "sales" || ready.Schema != "public" {
		t.Fatalf("ready = %+v", ready)
	}
	db, err := sql.Open("trino", fmt.Sprintf("http://play@%s:%d?catalog=%s&schema=%s", ready.Host, ready.Port, ready.Catalog, ready.Schema))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var n int
	if err := db.QueryRow("SELECT count(*) FROM warehouse.logs.events").Scan(&n); err != nil || n != 1000 {
		t.Fatalf("count = %d, %v", n, err)
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("run: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("run did not stop")
	}
	if sc.Scan() {
		t.Errorf("more than one line on stdout: %q", sc.Text())
	}
}
