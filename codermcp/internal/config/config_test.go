package config

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcpfleet/mcpfleet/shared/envconfig"
)

func read(env map[string]string) (Config, error) {
	r := envconfig.New(func(k string) string { return env[k] })
	c := FromEnv(r)
	return c, r.Err()
}

func TestDefaults(t *testing.T) {
	c, err := read(nil)
	if err != nil {
		t.Fatal(err)
	}
	if c.CLIPath != "codex" || c.DefaultModel != "llm-5.2-coder" || !slices.Equal(c.Models, DefaultModels) ||
		c.SessionLimit != 100 || c.SessionTTL != 24*time.Hour || c.MaxConcurrency != 4 || c.Timeout != 30*time.Minute || c.Structured {
		t.Errorf("defaults = %+v", c)
	}
}

func TestFromEnv(t *testing.T) {
	cases := []struct {
		name    string
		env     map[string]string
		check   func(Config) bool
		problem string
	}{
		{"custom catalogue takes its first model as default", map[string]string{"CODER_MODELS": "gpt-6.1-sol, o9"},
			func(c Config) bool {
				return c.DefaultModel == "gpt-6.1-sol" && slices.Equal(c.Models, []string{"gpt-6.1-sol", "o9"})
			}, ""},
		{"default model from the catalogue", map[string]string{"CODER_MODELS": "a,b", "CODER_DEFAULT_MODEL": "b"},
			func(c Config) bool { return c.DefaultModel == "b" }, ""},
		{"structured content truthy", map[string]string{"STRUCTURED_CONTENT_ENABLED": "on"}, func(c Config) bool { return c.Structured }, ""},
		{"durations and limits", map[string]string{"CODER_TIMEOUT": "90s", "CODER_SESSION_TTL": "2h", "CODER_SESSION_LIMIT": "5", "CODER_MAX_CONCURRENCY": "8", "CODER_HOME": "/h", "CODER_CLI_PATH": "/bin/codex"},
			func(c Config) bool {
				return c.Timeout == 90*time.Second && c.SessionTTL == 2*time.Hour && c.SessionLimit == 5 && c.MaxConcurrency == 8 && c.Home == "/h" && c.CLIPath == "/bin/codex"
			}, ""},
		{"default model outside the catalogue", map[string]string{"CODER_DEFAULT_MODEL": "nope"}, nil, "CODER_DEFAULT_MODEL"},
		{"empty catalogue", map[string]string{"CODER_MODELS": " , "}, nil, "CODER_MODELS"},
		{"bad timeout", map[string]string{"CODER_TIMEOUT": "soon"}, nil, "CODER_TIMEOUT"},
		{"zero concurrency", map[string]string{"CODER_MAX_CONCURRENCY": "0"}, nil, "CODER_MAX_CONCURRENCY"},
		{"bad bool", map[string]string{"STRUCTURED_CONTENT_ENABLED": "maybe"}, nil, "STRUCTURED_CONTENT_ENABLED"},
		{"bad callback", map[string]string{"CODER_MCP_CALLBACK_URI": "not a url"}, nil, "CODER_MCP_CALLBACK_URI"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, err := read(tc.env)
			if tc.problem != "" {
				if err == nil || !strings.Contains(err.Error(), tc.problem) {
					t.Errorf("err = %v, want a problem with %s", err, tc.problem)
				}
				return
			}
			if err != nil || !tc.check(c) {
				t.Errorf("config = %+v, err = %v", c, err)
			}
		})
	}
}

// TestWorkspaceRoots: roots are resolved, must exist and be absolute, and
// never lie inside the CLI's configuration directory.
func TestWorkspaceRoots(t *testing.T) {
	base, _ := filepath.EvalSymlinks(t.TempDir())
	home := filepath.Join(base, "home")
	real := filepath.Join(base, "real")
	for _, d := range []string{filepath.Join(home, ".codex", "x"), real} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	link := filepath.Join(base, "link")
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	wd, _ := os.Getwd()
	wd, _ = filepath.EvalSymlinks(wd)
	c, err := read(map[string]string{"HOME": home})
	if err != nil || !slices.Equal(c.WorkspaceRoots, []string{wd}) || c.CLIHome != filepath.Join(home, ".codex") {
		t.Errorf("default: roots %v, CLI home %q, %v", c.WorkspaceRoots, c.CLIHome, err)
	}
	c, err = read(map[string]string{"HOME": home, "CODER_WORKSPACE_ROOTS": link + "," + home})
	if err != nil || !slices.Equal(c.WorkspaceRoots, []string{real, home}) {
		t.Errorf("roots %v, %v", c.WorkspaceRoots, err)
	}
	for _, bad := range []string{"relative/dir", filepath.Join(base, "missing"), filepath.Join(home, ".codex"), filepath.Join(home, ".codex", "x"), " , "} {
		if _, err := read(map[string]string{"HOME": home, "CODER_WORKSPACE_ROOTS": bad}); err == nil || !strings.Contains(err.Error(), "CODER_WORKSPACE_ROOTS") {
			t.Errorf("CODER_WORKSPACE_ROOTS=%q: err = %v", bad, err)
		}
	}
	if _, err := read(map[string]string{"CODER_HOME": filepath.Join(real, "h"), "CODER_WORKSPACE_ROOTS": filepath.Join(real, "h")}); err == nil {
		t.Error("a root equal to CODER_HOME was accepted")
	}
}

// TestStateDir: the server's own CLI configuration lives outside every
// workspace root, at an absolute path; by default under the user's state
// directory.
func TestStateDir(t *testing.T) {
	base, _ := filepath.EvalSymlinks(t.TempDir())
	home := filepath.Join(base, "home")
	if err := os.MkdirAll(filepath.Join(home, "state", "ws"), 0o755); err != nil {
		t.Fatal(err)
	}
	c, err := read(map[string]string{"HOME": home, "CODER_WORKSPACE_ROOTS": base})
	if err != nil || c.StateDir != filepath.Join(home, ".local", "state", "codermcp") {
		t.Errorf("default state dir %q, %v", c.StateDir, err)
	}
	c, err = read(map[string]string{"HOME": home, "XDG_STATE_HOME": filepath.Join(home, "xdg"), "CODER_WORKSPACE_ROOTS": base})
	if err != nil || c.StateDir != filepath.Join(home, "xdg", "codermcp") {
		t.Errorf("XDG state dir %q, %v", c.StateDir, err)
	}
	if _, err := read(map[string]string{"HOME": home, "CODER_STATE_DIR": "state"}); err == nil || !strings.Contains(err.Error(), "CODER_STATE_DIR") {
		t.Errorf("relative CODER_STATE_DIR: %v", err)
	}
	state := filepath.Join(home, "state")
	if _, err := read(map[string]string{"HOME": home, "CODER_STATE_DIR": state, "CODER_WORKSPACE_ROOTS": filepath.Join(state, "ws")}); err == nil || !strings.Contains(err.Error(), "CODER_STATE_DIR") {
		t.Errorf("a root inside CODER_STATE_DIR: %v", err)
	}
	c, err = read(map[string]string{"HOME": home, "CODER_MCP_SERVERS": "docs, search"})
	if err != nil || !slices.Equal(c.MCPServers, []string{"docs", "search"}) {
		t.Errorf("CODER_MCP_SERVERS: %v, %v", c.MCPServers, err)
	}
}
