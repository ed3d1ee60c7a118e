package cli

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"syscall"

	"github.com/BurntSushi/toml"
)

// providerKeys are the settings of the operator's config.toml that a run
// takes over: which model and provider to use and how to log in. Nothing
// else crosses: no mcp_servers (started outside the sandbox, even on a
// read-only call), no profiles, notify or hooks (commands the CLI runs), no
// projects (a trusted project loads the workspace's own .codex/config.toml,
// which a workspace-write call can write), no sandbox or approval settings
// (pinned on every command line anyway), no shell environment policy.
var providerKeys = []string{
	"model", "model_provider", "model_providers",
	"model_reasoning_effort", "model_reasoning_summary", "model_verbosity",
	"model_supports_reasoning_summaries", "model_context_window", "model_max_output_tokens",
	"model_auto_compact_token_limit",
	"openai_base_url", "chatgpt_base_url",
	"preferred_auth_method", "forced_login_method", "forced_chatgpt_workspace_id",
	"cli_auth_credentials_store",
}

// ProfileName is a profile name a call may select.
var ProfileName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$`)

// providerOnly keeps a table's provider settings.
func providerOnly(table map[string]any) map[string]any {
	out := map[string]any{}
	for _, k := range providerKeys {
		if v, ok := table[k]; ok {
			out[k] = v
		}
	}
	return out
}

// profileFiles copies the operator's layered profiles (CLIs from 0.153:
// $CODEX_HOME/<name>.config.toml) into home, provider settings only.
func profileFiles(opHome, home string) error {
	entries, err := os.ReadDir(opHome)
	if err != nil {
		return nil // no operator home: no profiles
	}
	for _, e := range entries {
		name, ok := strings.CutSuffix(e.Name(), ".config.toml")
		if !ok || !ProfileName.MatchString(name) || !e.Type().IsRegular() {
			continue
		}
		src := filepath.Join(opHome, e.Name())
		var table map[string]any
		if _, err := toml.DecodeFile(src, &table); err != nil {
			return &HomeError{"read " + src, err}
		}
		var out bytes.Buffer
		out.WriteString("# Written by codermcp at start from " + src + ": its model provider settings only.\n")
		if err := toml.NewEncoder(&out).Encode(providerOnly(table)); err != nil {
			return &HomeError{"write profile " + name, err}
		}
		if err := os.WriteFile(filepath.Join(home, e.Name()), out.Bytes(), 0o600); err != nil {
			return &HomeError{"write " + filepath.Join(home, e.Name()), err}
		}
	}
	return nil
}

// Profiles lists the profiles a CLI home offers: its config.toml's
// [profiles] tables and its <name>.config.toml files.
func Profiles(home string) []string {
	seen := map[string]bool{}
	var cfg map[string]any
	if _, err := toml.DecodeFile(filepath.Join(home, "config.toml"), &cfg); err == nil {
		if ps, _ := cfg["profiles"].(map[string]any); ps != nil {
			for name := range ps {
				if ProfileName.MatchString(name) {
					seen[name] = true
				}
			}
		}
	}
	if entries, err := os.ReadDir(home); err == nil {
		for _, e := range entries {
			if name, ok := strings.CutSuffix(e.Name(), ".config.toml"); ok && ProfileName.MatchString(name) {
				seen[name] = true
			}
		}
	}
	out := make([]string, 0, len(seen))
	for name := range seen {
		out = append(out, name)
	}
	sort.Strings(out)
	return out
}

// credentialFiles are linked, not copied, so a token the CLI refreshes is
// the operator's token.
var credentialFiles = []string{"auth.json"}

// HomeError is a server-owned CLI home that could not be made.
type HomeError struct {
	Op  string // what was attempted
	Err error
}

func (e *HomeError) Error() string { return e.Op + ": " + e.Err.Error() }
func (e *HomeError) Unwrap() error { return e.Err }

// OwnHome makes the CLI configuration directory the server runs every CLI
// in (as CODEX_HOME): a new directory under stateDir, mode 0700, whose
// config.toml holds only the provider settings of the operator's
// configuration directory opHome (its active profile's over its top
// level) and the mcp_servers entries named in allowMCP, with opHome's
// credentials linked. No call can write it (it lies outside every
// workspace root), so nothing a call writes changes how a later call runs.
// remove deletes it.
func OwnHome(stateDir, opHome string, allowMCP []string) (home string, remove func() error, err error) {
	cfg, err := ownConfig(opHome, allowMCP)
	if err != nil {
		return "", nil, err
	}
	if err := os.MkdirAll(stateDir, 0o700); err != nil {
		return "", nil, &HomeError{"create CODER_STATE_DIR " + stateDir, err}
	}
	if err := private(stateDir); err != nil {
		return "", nil, &HomeError{"use CODER_STATE_DIR " + stateDir, err}
	}
	home, err = os.MkdirTemp(stateDir, "cli-home-")
	if err != nil {
		return "", nil, &HomeError{"create the CLI's home under " + stateDir, err}
	}
	remove = func() error { return os.RemoveAll(home) }
	fail := func(op string, err error) (string, func() error, error) {
		_ = remove()
		return "", nil, &HomeError{op, err}
	}
	if err := os.Chmod(home, 0o700); err != nil {
		return fail("restrict "+home, err)
	}
	if err := os.WriteFile(filepath.Join(home, "config.toml"), cfg, 0o600); err != nil {
		return fail("write "+filepath.Join(home, "config.toml"), err)
	}
	if err := profileFiles(opHome, home); err != nil {
		_ = remove()
		return "", nil, err
	}
	for _, name := range credentialFiles {
		src := filepath.Join(opHome, name)
		if _, err := os.Stat(src); err != nil {
			continue // not logged in that way: the provider's env_key, or no credentials
		}
		if err := os.Symlink(src, filepath.Join(home, name)); err != nil {
			return fail("link "+src, err)
		}
	}
	return home, remove, nil
}

// private refuses a directory someone else could put things in: not ours,
// or writable by group or others (a shared /tmp, a pre-created path).
func private(dir string) error {
	fi, err := os.Lstat(dir)
	if err != nil {
		return err
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	switch {
	case !fi.IsDir():
		return errors.New("not a directory")
	case ok && int(st.Uid) != os.Getuid():
		return fmt.Errorf("owned by uid %d, not this server's user (uid %d)", st.Uid, os.Getuid())
	case fi.Mode().Perm()&0o022 != 0:
		return fmt.Errorf("writable by group or others (mode %04o); chmod go-w it or choose another directory", fi.Mode().Perm())
	}
	return nil
}

// ownConfig is the config.toml of a server-owned home, from opHome's.
func ownConfig(opHome string, allowMCP []string) ([]byte, error) {
	src := filepath.Join(opHome, "config.toml")
	var op map[string]any
	b, err := os.ReadFile(src)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		op = map[string]any{}
	case err != nil:
		return nil, &HomeError{"read " + src, err}
	default:
		if _, err := toml.Decode(string(b), &op); err != nil {
			return nil, &HomeError{"read " + src, err}
		}
	}
	own := map[string]any{}
	take := func(from map[string]any) {
		for _, k := range providerKeys {
			if v, ok := from[k]; ok {
				own[k] = v
			}
		}
	}
	take(op)
	if name, _ := op["profile"].(string); name != "" {
		profiles, _ := op["profiles"].(map[string]any)
		p, ok := profiles[name].(map[string]any)
		if !ok {
			return nil, &HomeError{"read " + src, fmt.Errorf("profile %q is selected but has no [profiles.%s] table", name, name)}
		}
		take(p)
	}
	servers, _ := op["mcp_servers"].(map[string]any)
	var missing []string
	allowed := map[string]any{}
	for _, name := range allowMCP {
		s, ok := servers[name]
		if !ok {
			missing = append(missing, name)
			continue
		}
		allowed[name] = s
	}
	if len(missing) > 0 {
		have := make([]string, 0, len(servers))
		for name := range servers {
			have = append(have, name)
		}
		sort.Strings(have)
		if len(have) == 0 {
			have = []string{"none"}
		}
		return nil, &HomeError{"CODER_MCP_SERVERS", fmt.Errorf("%s has no [mcp_servers] entry %s (it has: %s)",
			src, strings.Join(missing, ", "), strings.Join(have, ", "))}
	}
	if len(allowed) > 0 {
		own["mcp_servers"] = allowed
	}
	// Profiles a call may select (coder's profile): each of the operator's
	// [profiles.<name>] tables (CLIs before 0.153) with its provider
	// settings only, so a profile can switch model, provider and effort but
	// nothing else.
	if profiles, _ := op["profiles"].(map[string]any); len(profiles) > 0 {
		kept := map[string]any{}
		for name, p := range profiles {
			table, ok := p.(map[string]any)
			if !ok || !ProfileName.MatchString(name) {
				continue
			}
			kept[name] = providerOnly(table)
		}
		if len(kept) > 0 {
			own["profiles"] = kept
		}
	}
	var out bytes.Buffer
	out.WriteString("# Written by codermcp at start from " + src + ": only the model provider and the MCP servers\n# CODER_MCP_SERVERS allows. Every CLI run of this server reads this file; no call can write it.\n")
	if err := toml.NewEncoder(&out).Encode(own); err != nil {
		return nil, &HomeError{"write the CLI's configuration", err}
	}
	return out.Bytes(), nil
}
