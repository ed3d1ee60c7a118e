// Package config reads codermcp's CODER_* settings from the environment.
package config

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/mcpfleet/mcpfleet/codermcp/internal/workspace"
	"github.com/mcpfleet/mcpfleet/shared/envconfig"
)

// DefaultModels is the model catalogue used when CODER_MODELS is unset.
var DefaultModels = []string{"llm-5.2-coder", "llm-5.1-coder", "llm-5.1-coder-max", "llm-5-coder", "llm-4o", "llm-4"}

// DefaultModel is the model used when a call names none and CODER_DEFAULT_MODEL is unset.
const DefaultModel = "llm-5.2-coder"

// Config is codermcp's own configuration (the transport, auth and logging
// variables are read by shared/serve).
type Config struct {
	CLIPath string // CODER_CLI_PATH: the CLI executable (looked up on PATH when it has no slash)
	Home    string // CODER_HOME as set
	// CLIHome is the operator's CLI configuration directory as it really is
	// (CODER_HOME, else ~/.codex, symlinks resolved): the model provider and
	// credentials come from it; no workspace may overlap it.
	CLIHome string
	// StateDir (CODER_STATE_DIR, resolved) holds the CLI home the server
	// makes at start and runs every CLI in; no workspace may overlap it.
	StateDir string
	// MCPServers (CODER_MCP_SERVERS) are the [mcp_servers] entries of
	// CLIHome's config.toml the CLI may start; by default none.
	MCPServers []string
	// WorkspaceRoots (CODER_WORKSPACE_ROOTS, resolved) bound every workingDirectory.
	WorkspaceRoots []string
	Models         []string      // CODER_MODELS: the catalogue of accepted model ids
	DefaultModel   string        // CODER_DEFAULT_MODEL
	SessionLimit   int           // CODER_SESSION_LIMIT
	SessionTTL     time.Duration // CODER_SESSION_TTL
	MaxConcurrency int           // CODER_MAX_CONCURRENCY
	Timeout        time.Duration // CODER_TIMEOUT: bound on each CLI run
	// ApprovalTimeout (CODER_APPROVAL_TIMEOUT) bounds each question the
	// CLI asks a person (approvalPolicy other than never); no answer declines.
	ApprovalTimeout time.Duration
	CallbackURI     string // CODER_MCP_CALLBACK_URI: default callbackUri passed to the CLI's environment
	Structured      bool   // STRUCTURED_CONTENT_ENABLED
}

// Vars documents every variable for --help and the README.
var Vars = []envconfig.Var{
	{Name: "CODER_CLI_PATH", Default: "codex", Description: "Codex CLI executable (name on PATH or a path); 0.36.0 or later"},
	{Name: "CODER_HOME", Description: "the CLI's configuration directory (default: ~/.codex); the server takes only its model and provider settings and its credentials (auth.json) into a configuration of its own, so its MCP servers, profiles, notify, hooks and trusted projects do not apply"},
	{Name: "CODER_STATE_DIR", Description: "directory where the server makes, at start, the CLI configuration directory (CODEX_HOME) every CLI run uses, mode 0700, removed at exit; no workspace may contain it or lie in it (default: $XDG_STATE_HOME/codermcp, else ~/.local/state/codermcp, else $TMPDIR/codermcp-<uid>)"},
	{Name: "CODER_MCP_SERVERS", Description: "comma-separated names of CODER_HOME's [mcp_servers] entries the CLI may start; they run as this server's user, outside the sandbox, on every call (default: none)"},
	{Name: "CODER_WORKSPACE_ROOTS", Description: "comma-separated directories a call's workingDirectory must lie in, symlinks resolved; a workspace never contains or lies in CODER_HOME (default: the server's working directory)"},
	{Name: "CODER_MODELS", Default: strings.Join(DefaultModels, ","), Description: "comma-separated model ids the tools accept; set them to the ids your CLI/provider knows"},
	{Name: "CODER_DEFAULT_MODEL", Default: DefaultModel, Description: "model used when a call names none; must be in CODER_MODELS"},
	{Name: "CODER_SESSION_LIMIT", Default: "100", Description: "most sessions kept in memory; the least recently used is evicted"},
	{Name: "CODER_SESSION_TTL", Default: "24h", Description: "idle time after which a session is removed"},
	{Name: "CODER_MAX_CONCURRENCY", Default: "4", Description: "most CLI runs at the same time (across sessions)"},
	{Name: "CODER_TIMEOUT", Default: "30m", Description: "limit on each CLI run; the CLI and its children are stopped after it"},
	{Name: "CODER_APPROVAL_TIMEOUT", Default: "5m", Description: "how long a person has to answer one of the CLI's approval requests (a command or a patch, with approvalPolicy on-request or untrusted); no answer declines it and the agent is told"},
	{Name: "CODER_MCP_CALLBACK_URI", Description: "callback URI given to the CLI (as CODER_MCP_CALLBACK_URI and CODEX_MCP_CALLBACK_URI) when a call sets no callbackUri"},
	{Name: "STRUCTURED_CONTENT_ENABLED", Default: "false", Description: "1,true,yes,on: return structuredContent and advertise coder's output schema"},
}

// FromEnv reads the configuration, recording every problem in r.
func FromEnv(r *envconfig.Reader) Config {
	c := Config{
		CLIPath:         r.String("CODER_CLI_PATH", "codex"),
		Home:            r.String("CODER_HOME", ""),
		Models:          r.List("CODER_MODELS", DefaultModels),
		SessionLimit:    r.Int("CODER_SESSION_LIMIT", 100, 1, 1_000_000),
		SessionTTL:      r.Duration("CODER_SESSION_TTL", 24*time.Hour, time.Second),
		MaxConcurrency:  r.Int("CODER_MAX_CONCURRENCY", 4, 1, 1024),
		Timeout:         r.Duration("CODER_TIMEOUT", 30*time.Minute, time.Second),
		ApprovalTimeout: r.Duration("CODER_APPROVAL_TIMEOUT", 5*time.Minute, time.Second),
		CallbackURI:     r.String("CODER_MCP_CALLBACK_URI", ""),
		Structured:      r.Bool("STRUCTURED_CONTENT_ENABLED", false),
	}
	c.MCPServers = r.List("CODER_MCP_SERVERS", nil)
	c.CLIHome, c.StateDir, c.WorkspaceRoots = workspaceRoots(r, c.Home)
	if len(c.Models) == 0 {
		r.Fail("CODER_MODELS", r.Lookup("CODER_MODELS"), "a comma-separated list of at least one model id")
		c.Models = DefaultModels
	}
	def := DefaultModel
	if !slices.Contains(c.Models, def) {
		// A custom catalogue without the built-in default: its first entry is the natural default.
		def = c.Models[0]
	}
	c.DefaultModel = r.String("CODER_DEFAULT_MODEL", def)
	if !slices.Contains(c.Models, c.DefaultModel) {
		r.Fail("CODER_DEFAULT_MODEL", c.DefaultModel, "one of the CODER_MODELS entries ("+strings.Join(c.Models, ", ")+")")
	}
	if c.CallbackURI != "" {
		r.URL("CODER_MCP_CALLBACK_URI", "")
	}
	return c
}

// workspaceRoots resolves CODER_WORKSPACE_ROOTS (default: the working
// directory), the CLI's configuration directory and the server's state
// directory. A root inside either would make every workspace a way to
// rewrite how the CLI runs.
func workspaceRoots(r *envconfig.Reader, home string) (cliHome, stateDir string, roots []string) {
	userHome := r.Lookup("HOME")
	if userHome == "" {
		userHome, _ = os.UserHomeDir()
	}
	if home == "" {
		home = r.Lookup("CODEX_HOME") // the CLI's own variable, which the server's runs no longer inherit
	}
	if home == "" && userHome != "" {
		home = filepath.Join(userHome, ".codex")
	}
	if home != "" {
		cliHome = workspace.Real(home)
	}
	state := r.String("CODER_STATE_DIR", "")
	switch {
	case state != "" && !filepath.IsAbs(state):
		r.Fail("CODER_STATE_DIR", state, "an absolute path")
		state = ""
	case state == "" && r.Lookup("XDG_STATE_HOME") != "":
		state = filepath.Join(r.Lookup("XDG_STATE_HOME"), "codermcp")
	case state == "" && userHome != "":
		state = filepath.Join(userHome, ".local", "state", "codermcp")
	case state == "":
		// No home directory (a service account, a bare container): a
		// private directory of this user's; the sandbox then leaves /tmp out.
		state = filepath.Join(os.TempDir(), "codermcp-"+strconv.Itoa(os.Getuid()))
	}
	if state != "" {
		stateDir = workspace.Real(state)
	}
	var def []string
	if wd, err := os.Getwd(); err == nil {
		def = []string{wd}
	}
	failed := false
	for _, root := range r.List("CODER_WORKSPACE_ROOTS", def) {
		real, err := filepath.EvalSymlinks(root)
		if err == nil && filepath.IsAbs(root) {
			if fi, serr := os.Stat(real); serr != nil || !fi.IsDir() {
				err = os.ErrInvalid
			}
		}
		switch {
		case !filepath.IsAbs(root) || err != nil:
			failed = true
			r.Fail("CODER_WORKSPACE_ROOTS", root, "absolute paths of existing directories, comma-separated")
		case cliHome != "" && workspace.Within(real, cliHome):
			failed = true
			r.Fail("CODER_WORKSPACE_ROOTS", root, "directories outside the CLI's configuration directory "+cliHome+" (CODER_HOME)")
		case stateDir != "" && workspace.Within(real, stateDir):
			failed = true
			r.Fail("CODER_WORKSPACE_ROOTS", root, "directories outside the server's state directory "+stateDir+" (CODER_STATE_DIR)")
		default:
			roots = append(roots, real)
		}
	}
	if len(roots) == 0 && !failed {
		r.Fail("CODER_WORKSPACE_ROOTS", r.Lookup("CODER_WORKSPACE_ROOTS"), "at least one absolute directory (the server's working directory is the default)")
	}
	return cliHome, stateDir, roots
}

// KnownModel reports whether m is in the catalogue.
func (c Config) KnownModel(m string) bool { return slices.Contains(c.Models, m) }
