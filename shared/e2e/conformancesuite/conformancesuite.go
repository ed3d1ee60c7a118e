// Package conformancesuite runs the official MCP conformance suite
// (@modelcontextprotocol/conformance, pinned and installed with Node 22 by
// scripts/install/shared.sh) from Go tests: against shared/conformance's
// server, and its protocol-level scenarios against each real server. Only
// _test files import it.
package conformancesuite

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcpfleet/mcpfleet/shared/e2e/toolcache"
)

// ProtocolScenarios are the suite's protocol-level scenarios: they need
// none of the suite's test tools, so they run against the real servers
// (the rest run against shared/conformance's server).
var ProtocolScenarios = []string{"server-stateless", "caching", "http-header-validation", "dns-rebinding-protection", "sep-2164-resource-not-found"}

// Find returns the installed suite's node and CLI; missing, the test
// fails with CI=true and is skipped otherwise.
func Find(t testing.TB) (node, cli string) {
	t.Helper()
	bin := filepath.Join(toolcache.Dir(), "conformance", "node_modules", ".bin")
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

// RunProtocolScenarios runs each of ProtocolScenarios against the server at
// url, one subtest each, with expected (scenario or scenario:check → the
// reason it cannot pass) as the baseline: any other failure, or an entry
// that now passes, fails the subtest.
func RunProtocolScenarios(t *testing.T, url string, expected map[string]string) {
	node, cli := Find(t)
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
	for _, sc := range ProtocolScenarios {
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
