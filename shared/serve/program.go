// Package serve runs an MCP server the way every mcpfleet server runs:
// --version and --help, configuration errors as exit status 2, stdio or
// streamable HTTP (+ legacy SSE and /healthz) chosen by MCP_TRANSPORT, and a
// graceful shutdown on SIGINT/SIGTERM.
package serve

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"text/tabwriter"

	"github.com/mcpfleet/mcpfleet/shared/envconfig"
	"github.com/mcpfleet/mcpfleet/shared/logging"
	"github.com/mcpfleet/mcpfleet/shared/toolcall"
	"github.com/mcpfleet/mcpfleet/shared/traces"
)

// Exit statuses shared by every server.
const (
	ExitOK      = 0
	ExitFailure = 1
	ExitUsage   = 2
)

// Program describes a server executable for --version and --help.
type Program struct {
	Name    string // binary name, e.g. "proxymcp"
	Version string // from buildinfo.Version
	Summary string // one line: what the server does
	// Vars lists the server's own variables; the shared MCP_*, OAUTH_* and
	// LOG_* variables are appended by Usage.
	Vars []envconfig.Var
}

// Usage writes the help text: what the program is, how to run it, and every
// environment variable with its default and meaning.
func (p Program) Usage(w io.Writer) {
	fmt.Fprintf(w, "%s %s — %s\n\n", p.Name, p.Version, p.Summary)
	fmt.Fprintf(w, "Usage:\n  %s            serve MCP (stdio by default; MCP_TRANSPORT=http for HTTP)\n", p.Name)
	fmt.Fprintf(w, "  %s --version  print the version\n  %s --help     print this help\n", p.Name, p.Name)
	fmt.Fprintf(w, "  %s --help=json  the same as JSON, for tools (server.json, bundles)\n\n", p.Name)
	fmt.Fprintln(w, "Configuration is read from the environment:")
	WriteVars(w, p.AllVars())
}

// AllVars returns the server's variables followed by the shared ones.
func (p Program) AllVars() []envconfig.Var {
	vars := append([]envconfig.Var(nil), p.Vars...)
	vars = append(vars, TransportVars...)
	vars = append(vars, toolcall.Vars...)
	vars = append(vars, authVars()...)
	vars = append(vars, logVars()...)
	vars = append(vars, traces.Vars...)
	return vars
}

// WriteJSON writes what --help says as one JSON object: name, version,
// summary and every variable (with required and secret), so tools such as
// the MCP Registry server.json generator read the very table --help prints.
func (p Program) WriteJSON(w io.Writer) {
	b, _ := json.MarshalIndent(struct {
		Name      string          `json:"name"`
		Version   string          `json:"version"`
		Summary   string          `json:"summary"`
		Variables []envconfig.Var `json:"variables"`
	}{p.Name, p.Version, p.Summary, p.AllVars()}, "", "  ")
	fmt.Fprintf(w, "%s\n", b)
}

// WriteVars prints vars as an aligned table.
func WriteVars(w io.Writer, vars []envconfig.Var) {
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "  VARIABLE\tDEFAULT\tMEANING")
	for _, v := range vars {
		def := v.Default
		if def == "" {
			def = "-"
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s\n", v.Name, def, v.Description)
	}
	tw.Flush()
}

// HandleArgs handles the flags every server shares. It returns done=true
// with the exit status when the process should stop (after --version,
// --help, or a usage error), and done=false when the server should run.
func (p Program) HandleArgs(args []string, stdout, stderr io.Writer) (status int, done bool) {
	for _, a := range args {
		switch strings.TrimLeft(a, "-") {
		case "version":
			if strings.HasPrefix(a, "-") {
				fmt.Fprintf(stdout, "%s %s\n", p.Name, p.Version)
				return ExitOK, true
			}
		case "help=json":
			if strings.HasPrefix(a, "-") {
				p.WriteJSON(stdout)
				return ExitOK, true
			}
		case "help", "h":
			if strings.HasPrefix(a, "-") {
				p.Usage(stdout)
				return ExitOK, true
			}
		}
	}
	if len(args) > 0 {
		if strings.HasPrefix(args[0], "-") {
			fmt.Fprintf(stderr, "%s: unknown flag %s\n\n", p.Name, args[0])
		} else {
			fmt.Fprintf(stderr, "%s: unexpected argument %q\n\n", p.Name, args[0])
		}
		p.Usage(stderr)
		return ExitUsage, true
	}
	return ExitOK, false
}

// ConfigError prints a configuration error and returns ExitUsage.
func (p Program) ConfigError(stderr io.Writer, err error) int {
	fmt.Fprintf(stderr, "%s: %v\nRun %s --help for every variable and its accepted values.\n", p.Name, err, p.Name)
	return ExitUsage
}

// Configure does what every server does before it builds anything: it
// handles the shared flags, then reads the shared variables (MCP_*, OAUTH_*,
// LOG_*) and, through own, the server's, reporting every problem at once.
// When ok is false the process should exit with status (after --version,
// --help, a usage error, or a configuration error, exit 2).
func (p Program) Configure(args []string, getenv func(string) string, stdout, stderr io.Writer, own func(*envconfig.Reader)) (cfg Config, logger *slog.Logger, status int, ok bool) {
	if status, done := p.HandleArgs(args, stdout, stderr); done {
		return Config{}, nil, status, false
	}
	env := envconfig.New(getenv)
	cfg = FromEnv(env)
	if own != nil {
		own(env)
	}
	if err := env.Err(); err != nil {
		return Config{}, nil, p.ConfigError(stderr, err), false
	}
	return cfg, logging.New(cfg.Log, stderr), ExitOK, true
}

// Serve runs s (see Run) and turns the outcome into the process's exit
// status, printing a failure to stderr.
func (p Program) Serve(ctx context.Context, s *Server, cfg Config, o Options, stderr io.Writer) int {
	if err := Run(ctx, p, s, cfg, o); err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", p.Name, err)
		return ExitFailure
	}
	return ExitOK
}
