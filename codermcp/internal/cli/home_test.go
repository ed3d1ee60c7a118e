package cli

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/BurntSushi/toml"
)

// TestOwnHome: only the model, provider and login settings cross, the
// selected profile's over the top level; MCP servers only when named, and
// a name the operator's file lacks stops the start; credentials are linked.
func TestOwnHome(t *testing.T) {
	op := t.TempDir()
	cfg := `model = "top-model"
model_provider = "top"
notify = ["/bin/sh", "-c", "touch x"]
profile = "work"
approval_policy = "on-request"
sandbox_mode = "danger-full-access"

[model_providers.work]
name = "work"
base_url = "http://127.0.0.1:1/v1"
env_key = "WORK_KEY"

[profiles.work]
model_provider = "work"
approval_policy = "never"

[profiles.work.mcp_servers.inprofile]
command = "/bin/true"

[projects."/srv"]
trust_level = "trusted"

[sandbox_workspace_write]
writable_roots = ["/"]

[mcp_servers.docs]
command = "/bin/docs"

[mcp_servers.shell]
command = "/bin/sh"

[hooks]
pre = "/bin/sh"
`
	if err := os.WriteFile(filepath.Join(op, "config.toml"), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(op, "auth.json"), []byte(`{}`), 0o600); err != nil {
		t.Fatal(err)
	}
	state := filepath.Join(t.TempDir(), "state")
	home, remove, err := OwnHome(state, op, []string{"docs"})
	if err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(home); err != nil || fi.Mode().Perm() != 0o700 || filepath.Dir(home) != state {
		t.Errorf("home %s: %v, %v", home, fi.Mode(), err)
	}
	var got map[string]any
	if _, err := toml.DecodeFile(filepath.Join(home, "config.toml"), &got); err != nil {
		t.Fatal(err)
	}
	keys := []string{}
	for k := range got {
		keys = append(keys, k)
	}
	if len(got) != 5 || got["model"] != "top-model" || got["model_provider"] != "work" || got["model_providers"] == nil {
		t.Errorf("config keys %v: %v", keys, got)
	}
	// The profile a call may select keeps its provider settings only (its
	// approval policy and MCP server stay behind).
	if ps, _ := got["profiles"].(map[string]any); len(ps) != 1 || !reflect.DeepEqual(ps["work"], map[string]any{"model_provider": "work"}) {
		t.Errorf("profiles = %v, want work with model_provider only", got["profiles"])
	}
	if servers, _ := got["mcp_servers"].(map[string]any); len(servers) != 1 || servers["docs"] == nil {
		t.Errorf("mcp_servers = %v, want only docs", got["mcp_servers"])
	}
	if dst, err := os.Readlink(filepath.Join(home, "auth.json")); err != nil || dst != filepath.Join(op, "auth.json") {
		t.Errorf("auth.json links to %q, %v", dst, err)
	}
	if err := remove(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(home); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("home still there after remove: %v", err)
	}

	_, _, err = OwnHome(state, op, []string{"docs", "nope"})
	var he *HomeError
	if !errors.As(err, &he) || !strings.Contains(err.Error(), "CODER_MCP_SERVERS") || !strings.Contains(err.Error(), "nope") || !strings.Contains(err.Error(), "docs, shell") {
		t.Errorf("unknown allowed server: %v", err)
	}
	// No configuration at all: an empty one; the CLI's defaults apply.
	home, remove, err = OwnHome(state, t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer remove()
	if _, err := toml.DecodeFile(filepath.Join(home, "config.toml"), &got); err != nil {
		t.Fatal(err)
	}
}

// The operator's profiles reach the server's own home with their provider
// settings only, in both spellings ([profiles.<name>] for CLIs before 0.153,
// <name>.config.toml after), and Profiles lists them.
func TestOwnHomeProfiles(t *testing.T) {
	op := t.TempDir()
	cfg := "[profiles.fast]\nmodel = \"fast-model\"\nsandbox_mode = \"danger-full-access\"\nnotify = [\"/bin/sh\"]\n\n[profiles.\"bad name\"]\nmodel = \"x\"\n"
	if err := os.WriteFile(filepath.Join(op, "config.toml"), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	layered := "model_reasoning_effort = \"high\"\napproval_policy = \"never\"\n[mcp_servers.evil]\ncommand = \"/bin/sh\"\n"
	if err := os.WriteFile(filepath.Join(op, "deep.config.toml"), []byte(layered), 0o600); err != nil {
		t.Fatal(err)
	}
	home, remove, err := OwnHome(filepath.Join(t.TempDir(), "state"), op, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer remove()
	if got := Profiles(home); len(got) != 2 || got[0] != "deep" || got[1] != "fast" {
		t.Errorf("Profiles = %v, want [deep fast]", got)
	}
	own, _ := os.ReadFile(filepath.Join(home, "config.toml"))
	deep, _ := os.ReadFile(filepath.Join(home, "deep.config.toml"))
	for _, bad := range []string{"danger-full-access", "notify", "bad name", "approval_policy", "mcp_servers", "evil"} {
		if strings.Contains(string(own), bad) || strings.Contains(string(deep), bad) {
			t.Errorf("%q crossed into the server's home:\n%s\n%s", bad, own, deep)
		}
	}
	if !strings.Contains(string(own), "fast-model") || !strings.Contains(string(deep), `model_reasoning_effort = "high"`) {
		t.Errorf("the provider settings are missing:\n%s\n%s", own, deep)
	}
}
