package main

import (
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcpfleet/mcpfleet/codermcp/internal/codertest/harness"
	"github.com/mcpfleet/mcpfleet/shared/e2e"
)

// TestReadyzFollowsTheCLI: GET /readyz is 200 while the Codex CLI answers
// --version, and 503 with a JSON body naming the CLI and what failed when
// CODER_CLI_PATH points at nothing or at a CLI that hangs (a script: the
// real CLI cannot be made to hang on --version). A hanging CLI does not hold
// up start-up either.
func TestReadyzFollowsTheCLI(t *testing.T) {
	t.Parallel()
	bin := e2e.Build(t, ".")
	hang := filepath.Join(t.TempDir(), "codex-hangs")
	if err := os.WriteFile(hang, []byte("#!/bin/sh\nexec sleep 300\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name  string
		path  string
		code  int
		wants []string
	}{
		{"real CLI", harness.CLI(t), http.StatusOK, []string{`"status":"ready"`}},
		{"nothing there", "/nonexistent/bin/codex", http.StatusServiceUnavailable, []string{"/nonexistent/bin/codex", "no such file", "CODER_CLI_PATH"}},
		{"hangs", hang, http.StatusServiceUnavailable, []string{"codex-hangs", "did not answer --version in time"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := e2e.StartHTTP(t, bin, []string{"CODER_CLI_PATH=" + tc.path, "HOME=" + t.TempDir()})
			client := &http.Client{Timeout: 60 * time.Second}
			resp, err := client.Get(srv.Base + "/readyz")
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			b, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != tc.code {
				t.Fatalf("GET /readyz = HTTP %d %s, want %d", resp.StatusCode, b, tc.code)
			}
			var body map[string]string
			if err := json.Unmarshal(b, &body); err != nil || resp.Header.Get("Content-Type") != "application/json" {
				t.Fatalf("body %q (Content-Type %q) is not JSON: %v", b, resp.Header.Get("Content-Type"), err)
			}
			for _, w := range tc.wants {
				if !strings.Contains(string(b), w) {
					t.Errorf("body %s lacks %q", b, w)
				}
			}
			if tc.code != http.StatusOK && body["status"] != "unavailable" {
				t.Errorf("status = %q, want unavailable", body["status"])
			}
		})
	}
}
