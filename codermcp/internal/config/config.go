// Package config reads codermcp's CODER_* settings from the environment.
package config

import (
	"os"
	"path/filepath"
	"slices"
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
	Home    string // CODER_HOME: passed to the CLI as CODEX_HOME when set
	// CLIHome is the CLI's configuration directory as it really is (CODER_HOME,
	// else ~/.codex, symlinks resolved): no workspace may overlap it.
	CLIHome string
	// WorkspaceRoots (CODER_WORKSPACE_ROOTS, resolved) bound every workingDirectory.
	WorkspaceRoots []string
	Models         []string      // CODER_MODELS: the catalogue of accepted model ids
	DefaultModel   string        // CODER_DEFAULT_MODEL
	SessionLimit   int           // CODER_SESSION_LIMIT
	SessionTTL     time.Duration // CODER_SESSION_TTL
	MaxConcurrency int           // CODER_MAX_CONCURRENCY
	Timeout        time.Duration // CODER_TIMEOUT: bound on each CLI run
	CallbackURI    string        // CODER_MCP_CALLBACK_URI: default callbackUri passed to the CLI's environment
	Structured     bool          // STRUCTURED_CONTENT_ENABLED
}

// Vars documents every variable for --help and the README.
var Vars = []envconfig.Var{
	{Name: "CODER_CLI_PATH", Default: "codex", Description: "Codex CLI executable (name on PATH or a path); 0.36.0 or later"},
	{Name: "CODER_HOME", Description: "config directory handed to the CLI as CODEX_HOME (default: the CLI's own, ~/.codex)"},
	{Name: "CODER_WORKSPACE_ROOTS", Description: "comma-separated directories a call's workingDirectory must lie in, symlinks resolved; a workspace never contains or lies in CODER_HOME (default: the server's working directory)"},
	{Name: "CODER_MODELS", Default: strings.Join(DefaultModels, ","), Description: "comma-separated model ids the tools accept; set them to the ids your CLI/provider knows"},
	{Name: "CODER_DEFAULT_MODEL", Default: DefaultModel, Description: "model used when a call names none; must be in CODER_MODELS"},
	{Name: "CODER_SESSION_LIMIT", Default: "100", Description: "most sessions kept in memory; the least recently used is evicted"},
	{Name: "CODER_SESSION_TTL", Default: "24h", Description: "idle time after which a session is removed"},
	{Name: "CODER_MAX_CONCURRENCY", Default: "4", Description: "most CLI runs at the same time (across sessions)"},
	{Name: "CODER_TIMEOUT", Default: "30m", Description: "limit on each CLI run; the CLI and its children are stopped after it"},
	{Name: "CODER_MCP_CALLBACK_URI", Description: "callback URI given to the CLI (as CODER_MCP_CALLBACK_URI and CODEX_MCP_CALLBACK_URI) when a call sets no callbackUri"},
	{Name: "STRUCTURED_CONTENT_ENABLED", Default: "false", Description: "1,true,yes,on: return structuredContent and advertise coder's output schema"},
}

// FromEnv reads the configuration, recording every problem in r.
func FromEnv(r *envconfig.Reader) Config {
	c := Config{
		CLIPath:        r.String("CODER_CLI_PATH", "codex"),
		Home:           r.String("CODER_HOME", ""),
		Models:         r.List("CODER_MODELS", DefaultModels),
		SessionLimit:   r.Int("CODER_SESSION_LIMIT", 100, 1, 1_000_000),
		SessionTTL:     r.Duration("CODER_SESSION_TTL", 24*time.Hour, time.Second),
		MaxConcurrency: r.Int("CODER_MAX_CONCURRENCY", 4, 1, 1024),
		Timeout:        r.Duration("CODER_TIMEOUT", 30*time.Minute, time.Second),
		CallbackURI:    r.String("CODER_MCP_CALLBACK_URI", ""),
		Structured:     r.Bool("STRUCTURED_CONTENT_ENABLED", false),
	}
	c.CLIHome, c.WorkspaceRoots = workspaceRoots(r, c.Home)
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
// directory) and the CLI's configuration directory. A root inside that
// directory would make every workspace a way to rewrite the CLI's config.
func workspaceRoots(r *envconfig.Reader, home string) (string, []string) {
	if home == "" {
		if h := r.Lookup("HOME"); h != "" {
			home = filepath.Join(h, ".codex")
		} else if h, err := os.UserHomeDir(); err == nil {
			home = filepath.Join(h, ".codex")
		}
	}
	cliHome := ""
	if home != "" {
		cliHome = workspace.Real(home)
	}
	var def []string
	if wd, err := os.Getwd(); err == nil {
		def = []string{wd}
	}
	var roots []string
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
		default:
			roots = append(roots, real)
		}
	}
	if len(roots) == 0 && !failed {
		r.Fail("CODER_WORKSPACE_ROOTS", r.Lookup("CODER_WORKSPACE_ROOTS"), "at least one absolute directory (the server's working directory is the default)")
	}
	return cliHome, roots
}

// KnownModel reports whether m is in the catalogue.
func (c Config) KnownModel(m string) bool { return slices.Contains(c.Models, m) }
