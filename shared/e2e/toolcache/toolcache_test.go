package toolcache_test

import (
	"path/filepath"
	"testing"

	"github.com/mcpfleet/mcpfleet/shared/e2e/toolcache"
)

// The order the install scripts use: ${MCPFLEET_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/mcpfleet}.
func TestDir(t *testing.T) {
	for _, tc := range []struct {
		name, cache, xdg, want string
	}{
		{"MCPFLEET_CACHE first", "/c/fleet", "/c/xdg", "/c/fleet"},
		{"then XDG_CACHE_HOME", "", "/c/xdg", "/c/xdg/mcpfleet"},
		{"then ~/.cache", "", "", "/home/u/.cache/mcpfleet"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("HOME", "/home/u")
			t.Setenv("MCPFLEET_CACHE", tc.cache)
			t.Setenv("XDG_CACHE_HOME", tc.xdg)
			if got := toolcache.Dir(); got != filepath.FromSlash(tc.want) {
				t.Errorf("Dir() = %q, want %q", got, tc.want)
			}
		})
	}
}
