// Package toolcache says where scripts/install puts the tests' external
// tools (the Codex CLIs, the conformance suite, mcpb). A package of its own,
// apart from shared/e2e: test back-end commands (codermcp's playmodel) reach
// it through their helpers and must not link the e2e client.
package toolcache

import (
	"os"
	"path/filepath"
)

// Dir is $MCPFLEET_CACHE, else $XDG_CACHE_HOME/mcpfleet, else
// ~/.cache/mcpfleet: the directory the install scripts install into.
func Dir() string {
	if c := os.Getenv("MCPFLEET_CACHE"); c != "" {
		return c
	}
	base := os.Getenv("XDG_CACHE_HOME")
	if base == "" {
		home, _ := os.UserHomeDir()
		base = filepath.Join(home, ".cache")
	}
	return filepath.Join(base, "mcpfleet")
}
