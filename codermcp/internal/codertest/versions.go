package codertest

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/mcpfleet/mcpfleet/shared/e2e/toolcache"
)

// Versions is the CLI version matrix of issue 28, oldest first, as
// scripts/install/codermcp.sh installs it: the seed's minimum, the first
// native resume, the last with `codex mcp-server`, the pinned version and
// the newest release.
var Versions = []string{"0.36.0", "0.50.0", "0.153.4", "0.169.0", NewestVersion}

// NewestVersion is the newest CLI release in the matrix.
const NewestVersion = "0.171.0"

// VersionPath is where the matrix install puts CLI version v.
func VersionPath(v string) string {
	return filepath.Join(toolcache.Dir(), "codex-"+v, "node_modules", ".bin", "codex")
}

// CLIVersion returns the path of the installed CLI version v; when it is
// missing the test is skipped, or fails when CI=true (a missing version in
// the matrix is a broken install, never a pass).
func CLIVersion(t testing.TB, v string) string {
	t.Helper()
	p := VersionPath(v)
	if _, err := os.Stat(p); err != nil {
		msg := "Codex CLI " + v + " not found at " + p + " (run scripts/install/codermcp.sh)"
		if os.Getenv("CI") == "true" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	return p
}
