package mcpserver_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpfleet/mcpfleet/codermcp/internal/codertest/harness"
	"github.com/mcpfleet/mcpfleet/codermcp/internal/procsweep"
)

// A server given no Detector (Options.Features nil) makes its own, whose
// probe starts with the first call that needs it and serves every call
// after it. Close ends that probe: with the real CLI stalled in the
// probe's last step (a wrapper holds app-server, as a hung CLI would),
// Close returns promptly, the probe's CLI processes are gone, its
// throwaway home removed and nothing cached; the call waiting on it is
// told.
func TestServerCloseEndsItsOwnProbe(t *testing.T) {
	// Not parallel: the probe inherits this process's environment, where
	// the marker and the cache directory are set.
	real := harness.CLI(t)
	dir := t.TempDir()
	log := filepath.Join(dir, "runs.log")
	wrapper := filepath.Join(dir, "codex-hold-app-server")
	script := "#!/bin/sh\n# Test wrapper: logs each run; holds app-server, runs the real CLI otherwise.\n" +
		"echo \"$$ $CODEX_HOME $*\" >> " + strconv.Quote(log) + "\n" +
		"if [ \"$1\" = app-server ]; then sleep 300; fi\nexec " + strconv.Quote(real) + " \"$@\"\n"
	if err := os.WriteFile(wrapper, []byte(script), 0o700); err != nil {
		t.Fatal(err)
	}
	marker := procsweep.NewMarker("MCPSERVER_CLOSE_TEST_RUN")
	k, v, _ := strings.Cut(marker, "=")
	t.Setenv(k, v)
	cache := t.TempDir()
	t.Setenv("XDG_CACHE_HOME", cache)                  // the default Prober's cache: os.UserCacheDir
	t.Cleanup(func() { procsweep.KillMarked(marker) }) // what a failed run left

	e := newEnv(t, envOptions{cliPath: wrapper, serverFeatures: true})
	answered := make(chan *mcp.CallToolResult, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		res, err := e.cs.CallTool(ctx, &mcp.CallToolParams{Name: "version_info", Arguments: map[string]any{}})
		if err != nil {
			res = &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "protocol error: " + err.Error()}}}
		}
		answered <- res
	}()

	// Wait (generously: the earlier steps run the real CLI) for app-server.
	var home string
	deadline := time.Now().Add(2 * time.Minute)
	for home == "" {
		b, _ := os.ReadFile(log)
		for _, line := range strings.Split(string(b), "\n") {
			if f := strings.Fields(line); len(f) == 3 && f[2] == "app-server" {
				home = f[1]
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("the probe never reached app-server; runs:\n%s", b)
		}
		time.Sleep(20 * time.Millisecond) // polling a file the wrapper appends to
	}

	closed := make(chan struct{})
	go func() { e.server.Close(); close(closed) }()
	var closedAt time.Time
	select {
	case <-closed:
		closedAt = time.Now()
	case <-time.After(30 * time.Second): // the stall is 300 s
		t.Fatal("Close did not return within 30 s: it waits for the stalled probe instead of stopping it")
	}
	// The stalled sleep is reaped by init, not by the probe: allow it a
	// moment to die.
	for left := procsweep.Marked(marker); len(left) > 0; left = procsweep.Marked(marker) {
		if time.Now().After(closedAt.Add(10 * time.Second)) {
			for _, pid := range left {
				t.Errorf("process %d (%s) of the server's feature probe outlived Close", pid, harness.Cmdline(pid))
			}
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if _, err := os.Stat(home); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the probe's home %s is still there after Close (%v)", home, err)
	}
	var cached []string
	_ = filepath.WalkDir(cache, func(p string, d os.DirEntry, _ error) error {
		if d != nil && !d.IsDir() {
			cached = append(cached, p)
		}
		return nil
	})
	if len(cached) != 0 {
		t.Errorf("a stopped probe wrote to the cache: %v", cached)
	}
	select {
	case res := <-answered:
		if got := text(res); !res.IsError || !strings.Contains(got, "shutting down") {
			t.Errorf("version_info waiting on the stopped probe: %q, want an error saying the server is shutting down", got)
		}
	case <-time.After(30 * time.Second):
		t.Error("version_info still waits on the probe 30 s after Close")
	}
}
