package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcpfleet/mcpfleet/codermcp/internal/codertest"
	"github.com/mcpfleet/mcpfleet/codermcp/internal/codertest/harness"
	"github.com/mcpfleet/mcpfleet/shared/e2e"
)

// protocolScenarios are the official conformance suite's protocol-level
// scenarios: they need none of the suite's test tools, so they run against
// the real server (the rest run against shared/conformance's server).
var protocolScenarios = []string{"server-stateless", "caching", "http-header-validation", "dns-rebinding-protection", "sep-2164-resource-not-found"}

// conformanceSuite finds the pinned suite scripts/install/shared.sh
// installs (Node 22 beside it).
func conformanceSuite(t *testing.T) (node, cli string) {
	t.Helper()
	cache := os.Getenv("MCPFLEET_CACHE")
	if cache == "" {
		base := os.Getenv("XDG_CACHE_HOME")
		if base == "" {
			home, _ := os.UserHomeDir()
			base = filepath.Join(home, ".cache")
		}
		cache = filepath.Join(base, "mcpfleet")
	}
	bin := filepath.Join(cache, "conformance", "node_modules", ".bin")
	node, cli = filepath.Join(bin, "node"), filepath.Join(bin, "conformance")
	for _, f := range []string{node, cli} {
		if _, err := os.Stat(f); err != nil {
			msg := "the conformance suite is not installed (" + f + "): run scripts/install/shared.sh"
			if os.Getenv("CI") == "true" {
				t.Fatal(msg)
			}
			t.Skip(msg)
		}
	}
	return node, cli
}

// runProtocolScenarios runs each protocol-level scenario against url with
// expected (scenario or scenario:check → reason) as the baseline.
func runProtocolScenarios(t *testing.T, url string, expected map[string]string) {
	node, cli := conformanceSuite(t)
	dir := t.TempDir()
	baseline := "server: []\n"
	if len(expected) > 0 {
		baseline = "server:\n"
		for name, reason := range expected {
			baseline += "  # " + reason + "\n  - " + name + "\n"
		}
	}
	ef := filepath.Join(dir, "expected-failures.yml")
	if err := os.WriteFile(ef, []byte(baseline), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, sc := range protocolScenarios {
		t.Run(sc, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
			defer cancel()
			run := exec.CommandContext(ctx, node, cli, "server", "--url", url, "--scenario", sc, "--expected-failures", ef, "-o", filepath.Join(dir, "results"))
			run.Env = append(os.Environ(), "PATH="+filepath.Dir(node)+string(os.PathListSeparator)+os.Getenv("PATH"))
			out, err := run.CombinedOutput()
			if err != nil {
				t.Fatalf("%s against the real server: %v (a failure outside the baseline, or a baseline entry that now passes)\n%s", sc, err, out)
			}
			if i := strings.Index(string(out), "=== SUMMARY ==="); i >= 0 {
				t.Logf("%s", out[i:])
			}
		})
	}
}

// TestProtocolConformance: the suite's protocol-level scenarios against the
// real codermcp over HTTP with the real Codex CLI; the baseline says why
// each entry's checks cannot pass.
func TestProtocolConformance(t *testing.T) {
	h := harness.New(t)
	env := append(append([]string(nil), h.Env...), "CODER_CLI_PATH="+h.CLI, "CODER_HOME="+h.Home, "CODER_WORKSPACE_ROOTS="+testRoots(),
		"CODER_MODELS="+codertest.Model, "CODER_DEFAULT_MODEL="+codertest.Model)
	srv := e2e.StartHTTP(t, e2e.Build(t, "."), env)
	runProtocolScenarios(t, srv.MCPURL(), map[string]string{
		"caching":                     "codermcp offers no prompts and no resources (no capability declared): prompts/list, resources/list and resources/templates/list are not served, so they carry no caching hints",
		"sep-2164-resource-not-found": "codermcp offers no resources: resources/read of any URI is an unknown method, not -32602 with data.uri (SHOULD)",
		"server-stateless":            "its failing checks call the suite's own test tools (test_missing_capability, test_streaming_elicitation, test_logging_tool), which a production server must not have; shared/conformance runs them against the conformance server",
	})
}
