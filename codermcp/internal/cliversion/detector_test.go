package cliversion_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mcpfleet/mcpfleet/codermcp/internal/cliversion"
	"github.com/mcpfleet/mcpfleet/codermcp/internal/codertest"
	"github.com/mcpfleet/mcpfleet/codermcp/internal/procsweep"
)

// A probe does not outlive its server: Close, with the real CLI stalled in
// the probe's last step (a shim holds app-server, as a hung CLI would),
// returns promptly, and by then the probe's CLI processes are gone,
// the probe's throwaway home is removed and nothing was cached; Get then
// says the probe was stopped instead of waiting.
func TestDetectorCloseEndsTheProbe(t *testing.T) {
	real := codertest.CLIVersion(t, codertest.NewestVersion)
	dir := t.TempDir()
	log := filepath.Join(dir, "runs.log")
	shim := filepath.Join(dir, "bin", "codex")
	if err := os.MkdirAll(filepath.Dir(shim), 0o755); err != nil {
		t.Fatal(err)
	}
	script := "#!/bin/sh\necho \"$$ $CODEX_HOME $*\" >> " + log + "\n" +
		"if [ \"$1\" = app-server ]; then sleep 300; fi\nexec " + real + " \"$@\"\n"
	if err := os.WriteFile(shim, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	// Every process the probe starts inherits this marker.
	marker := procsweep.NewMarker("CLIVERSION_TEST_RUN")
	k, v, _ := strings.Cut(marker, "=")
	t.Setenv(k, v)
	cache := t.TempDir()
	d := &cliversion.Detector{Path: shim, Prober: &cliversion.Prober{CacheDir: cache, Limit: 4 * time.Minute}}
	d.Start(context.Background())

	// Wait (generously: the earlier steps run the real CLI) for app-server.
	var pid int
	var home string
	deadline := time.Now().Add(2 * time.Minute)
	for pid == 0 {
		b, _ := os.ReadFile(log)
		for _, line := range strings.Split(string(b), "\n") {
			if f := strings.Fields(line); len(f) == 3 && f[2] == "app-server" {
				pid, _ = strconv.Atoi(f[0])
				home = f[1]
			}
		}
		if time.Now().After(deadline) {
			d.Close()
			t.Fatalf("the probe never reached app-server; runs:\n%s", b)
		}
		time.Sleep(20 * time.Millisecond) // polling a file the shim appends to
	}

	var closedAt time.Time
	closed := make(chan struct{})
	go func() { d.Close(); close(closed) }()
	select {
	case <-closed:
		closedAt = time.Now()
	case <-time.After(30 * time.Second): // the stall is 300 s, the probe's limit 4 min
		t.Fatal("Close did not return within 30 s: it waits for the stalled probe instead of stopping it")
	}
	// Its sleep is reaped by init, not by the probe: allow it a moment to die.
	for left := procsweep.Marked(marker); len(left) > 0; left = procsweep.Marked(marker) {
		if time.Now().After(closedAt.Add(10 * time.Second)) {
			t.Errorf("the probe's CLI processes %v (the stalled one: %d) are still running after Close", left, pid)
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if _, err := os.Stat(home); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the probe's home %s is still there after Close (%v)", home, err)
	}
	if ents, _ := os.ReadDir(cache); len(ents) != 0 {
		t.Errorf("a stopped probe wrote to the cache: %v", ents)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := d.Get(ctx); err == nil || !strings.Contains(err.Error(), "shutting down") {
		t.Errorf("Get after Close: %v, want the probe stopped for shutdown", err)
	}
}
