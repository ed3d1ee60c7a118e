package cli_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcpfleet/mcpfleet/codermcp/internal/cli"
	"github.com/mcpfleet/mcpfleet/codermcp/internal/codertest/harness"
)

// TestReady: the real CLI is ready; a missing, non-executable, hanging,
// silent or too old CLI is not, and the error names the path and what to
// do. Scripts stand in for what the real CLI cannot show (hanging, an old
// version, no version at all).
func TestReady(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	script := func(name, body string, mode os.FileMode) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte("#!/bin/sh\n"+body+"\n"), mode); err != nil {
			t.Fatal(err)
		}
		return p
	}
	t.Run("real CLI", func(t *testing.T) {
		t.Parallel()
		c := &cli.Client{Path: harness.CLI(t)}
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second) // a loaded machine
		defer cancel()
		if err := c.Ready(ctx); err != nil {
			t.Fatalf("Ready = %v", err)
		}
	})
	cases := []struct {
		name    string
		path    string
		timeout time.Duration
		wants   []string
	}{
		{"missing", "/nonexistent/bin/codex", 10 * time.Second, []string{"/nonexistent/bin/codex", "no such file", "CODER_CLI_PATH"}},
		{"not executable", script("noexec", "echo codex-cli 0.169.0", 0o644), 10 * time.Second, []string{"noexec", "permission denied", "CODER_CLI_PATH"}},
		{"hangs", script("hang", "exec sleep 120", 0o755), 500 * time.Millisecond, []string{"hang", "did not answer --version in time", "deadline exceeded"}},
		{"no version", script("silent", "echo hello", 0o755), 10 * time.Second, []string{"silent", "no version number", "CODER_CLI_PATH"}},
		{"fails", script("fails", "echo broken >&2; exit 3", 0o755), 10 * time.Second, []string{"fails", "exit status 3", "broken"}},
		{"too old", script("old", "echo codex-cli 0.30.1", 0o755), 10 * time.Second, []string{"0.30.1", "0.36.0 or later"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(context.Background(), tc.timeout)
			defer cancel()
			start := time.Now()
			err := (&cli.Client{Path: tc.path}).Ready(ctx)
			if err == nil {
				t.Fatal("Ready = nil, want an error")
			}
			for _, w := range tc.wants {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
			// The hanging CLI was killed, not waited for (it sleeps 120 s).
			if d := time.Since(start); d > 60*time.Second {
				t.Errorf("Ready took %v", d)
			}
		})
	}
}
