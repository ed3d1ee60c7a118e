// Package cli is the terminal face of sqlmcp: one-shot commands (query,
// catalogs, schemas, tables, describe, explain, config profile ...) and the
// interactive shell, sharing the engine access, safety rules and output
// shapes of the MCP server mode.
package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"slices"
	"strconv"
	"strings"

	"github.com/mcpfleet/mcpfleet/sqlmcp/internal/engine"
	"github.com/mcpfleet/mcpfleet/sqlmcp/internal/profile"
)

// Exit codes of the command-line client.
const (
	ExitOK      = 0 // success
	ExitRuntime = 1 // connection failed, query error, bad configuration file, ...
	ExitUsage   = 2 // unknown command, invalid flag, missing argument
)

// usageError is a mistake on the command line (exit status 2).
type usageError struct {
	msg  string
	help string // the command whose --help to suggest
}

func (e *usageError) Error() string { return e.msg }

func usagef(cmd, format string, args ...any) error {
	return &usageError{msg: fmt.Sprintf(format, args...), help: cmd}
}

// options are the parsed command line.
type options struct {
	help          bool
	interactive   bool
	format        string
	limit         int
	file          string
	replace       bool
	passwordStdin bool
	conn          profile.Flags
	given         []string // flag names given, for applicability checks
	args          []string // positional arguments
}

// flagSpec describes one flag for parsing and for help.
type flagSpec struct {
	name  string
	short string
	arg   string // value placeholder; "" for a boolean flag
	help  string
	only  []string // commands the flag applies to; nil for every command
}

var flagSpecs = []flagSpec{
	{name: "format", arg: "table|json|csv", help: "Output format. Default: output.format from the configuration file, else table."},
	{name: "profile", arg: "NAME", help: "Use this connection profile from the configuration file."},
	{name: "host", arg: "HOST", help: "Trino coordinator host name. For 'config profile add': the profile's host."},
	{name: "port", arg: "PORT", help: "Trino coordinator port."},
	{name: "user", arg: "USER", help: "User name the queries run as. The password is never a flag: set SQLENGINE_PASSWORD or store it in a profile."},
	{name: "catalog", arg: "CATALOG", help: "Default catalog for unqualified names."},
	{name: "schema", arg: "SCHEMA", help: "Default schema for unqualified names."},
	{name: "ssl", help: "Connect with TLS (https). --ssl=false turns it off."},
	{name: "insecure", help: "With --ssl, skip verification of the server certificate (test systems only)."},
	{name: "limit", arg: "N", help: "Stop after N rows and cancel the rest of the query on the engine; 0 (the default) prints every row."},
	{name: "file", short: "f", arg: "FILE", help: "Read the SQL from FILE ('-' for standard input). Several statements separated by ';' run in order.", only: []string{"query"}},
	{name: "interactive", short: "i", help: "Start the interactive SQL shell."},
	{name: "password-stdin", help: "Read the profile's password from the first line of standard input.", only: []string{"config profile add"}},
	{name: "replace", help: "Replace a profile of the same name instead of failing.", only: []string{"config profile add"}},
	{name: "help", short: "h", help: "Print help for sqlmcp or for the command given."},
}

func lookupFlag(name string) *flagSpec {
	for i := range flagSpecs {
		if flagSpecs[i].name == name || (flagSpecs[i].short != "" && flagSpecs[i].short == name) {
			return &flagSpecs[i]
		}
	}
	return nil
}

// parseArgs splits args into flags and positional arguments. Flags may come
// before or after the command; "--" ends the flags and "-" is positional.
func parseArgs(args []string) (*options, error) {
	o := &options{}
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			o.args = append(o.args, args[i+1:]...)
			break
		}
		if len(a) < 2 || a[0] != '-' {
			o.args = append(o.args, a)
			continue
		}
		name, value, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
		long := strings.HasPrefix(a, "--")
		spec := lookupFlag(name)
		if name == "password" || name == "p" {
			return nil, usagef("", "the password is never a flag (other users can read command lines); set SQLENGINE_PASSWORD or store it in a profile with 'sqlmcp config profile add NAME --password-stdin'")
		}
		if spec == nil || (long && spec.name != name) || (!long && spec.short != name) {
			return nil, usagef("", "unknown flag %s", strings.SplitN(a, "=", 2)[0])
		}
		display := "--" + spec.name
		if spec.arg == "" {
			b := true
			if hasValue {
				var ok bool
				if b, ok = parseBool(value); !ok {
					return nil, usagef("", "flag %s takes true or false, not %q", display, value)
				}
			}
			if err := o.setBool(spec.name, b); err != nil {
				return nil, err
			}
		} else {
			if !hasValue {
				if i+1 >= len(args) {
					return nil, usagef("", "flag %s needs a value: %s %s", display, display, spec.arg)
				}
				i++
				value = args[i]
			}
			if err := o.setValue(spec.name, value); err != nil {
				return nil, err
			}
		}
		o.given = append(o.given, spec.name)
	}
	return o, nil
}

func parseBool(v string) (bool, bool) {
	switch strings.ToLower(v) {
	case "1", "true", "yes", "on":
		return true, true
	case "0", "false", "no", "off":
		return false, true
	}
	return false, false
}

func (o *options) setBool(name string, b bool) error {
	switch name {
	case "ssl":
		o.conn.SSL = &b
	case "insecure":
		o.conn.Insecure = &b
	case "interactive":
		o.interactive = b
	case "help":
		o.help = b
	case "replace":
		o.replace = b
	case "password-stdin":
		o.passwordStdin = b
	}
	return nil
}

func (o *options) setValue(name, v string) error {
	switch name {
	case "format":
		if !slices.Contains(formatNames, v) {
			return usagef("", "flag --format takes table, json or csv, not %q", v)
		}
		o.format = v
	case "profile":
		if v == "" {
			return usagef("", "flag --profile needs a profile name")
		}
		o.conn.Profile = v
	case "host":
		if v == "" {
			return usagef("", "flag --host needs a host name")
		}
		o.conn.Host = &v
	case "port":
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 65535 {
			return usagef("", "flag --port takes a port number from 1 to 65535, not %q", v)
		}
		o.conn.Port = &n
	case "user":
		if v == "" {
			return usagef("", "flag --user needs a user name")
		}
		o.conn.User = &v
	case "catalog":
		o.conn.Catalog = &v
	case "schema":
		o.conn.Schema = &v
	case "limit":
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			return usagef("", "flag --limit takes a number of rows (0 for all), not %q", v)
		}
		o.limit = n
	case "file":
		o.file = v
	}
	return nil
}

// app is one run of the client.
type app struct {
	ctx    context.Context
	getenv func(string) string
	stdin  io.Reader
	stdout io.Writer
	stderr io.Writer
	opts   *options
	cfg    *profile.Config // loaded lazily by config()
}

// Main runs the command-line client with args (without the program name) and
// returns the process exit code. getenv reads the environment (os.Getenv in
// production); stdin, stdout and stderr are the process streams. Results go
// to stdout, errors to stderr as one line. With no arguments it prints the
// help.
func Main(ctx context.Context, args []string, getenv func(string) string, stdin io.Reader, stdout, stderr io.Writer) int {
	if getenv == nil {
		getenv = os.Getenv
	}
	a := &app{ctx: ctx, getenv: getenv, stdin: stdin, stdout: stdout, stderr: stderr}
	err := a.run(args)
	return a.exit(err)
}

// exit prints err as one line on stderr and maps it to an exit status.
func (a *app) exit(err error) int {
	if err == nil {
		return ExitOK
	}
	msg := cliMessage(err)
	var ue *usageError
	var nf *profile.NotFoundError
	switch {
	case errors.As(err, &ue):
		cmd := "sqlmcp"
		if ue.help != "" {
			cmd += " " + ue.help
		}
		fmt.Fprintf(a.stderr, "sqlmcp: %s (run '%s --help' for usage)\n", msg, cmd)
		return ExitUsage
	case errors.As(err, &nf) && (nf.From == profile.FromFlag || nf.From == profile.FromArgument):
		fmt.Fprintf(a.stderr, "sqlmcp: %s\n", msg)
		return ExitUsage
	}
	fmt.Fprintf(a.stderr, "sqlmcp: %s\n", msg)
	return ExitRuntime
}

// toolNames maps the MCP tool names that shared error hints mention to the
// commands a person at the terminal would use instead.
var toolNames = strings.NewReplacer(
	"list_catalogs", "sqlmcp catalogs",
	"list_schemas", "sqlmcp schemas",
	"list_tables", "sqlmcp tables",
	"get_table_schema", "sqlmcp describe",
	"explain_query", "sqlmcp explain",
	"execute_query", "sqlmcp query",
)

// cliMessage renders err on one line, with hints written for the server
// mode's tools translated to the client's commands.
func cliMessage(err error) string {
	var me *engine.Error
	if errors.As(err, &me) && me.Hint != "" && err == error(me) {
		cp := *me
		cp.Hint = toolNames.Replace(cp.Hint)
		return oneLine(cp.Error())
	}
	if errors.As(err, &me) && me.Hint != "" {
		return oneLine(strings.Replace(err.Error(), me.Hint, toolNames.Replace(me.Hint), 1))
	}
	return oneLine(err.Error())
}

func oneLine(s string) string {
	s = strings.TrimSpace(s)
	s = strings.ReplaceAll(s, "\r\n", "\n")
	return strings.Join(strings.FieldsFunc(s, func(r rune) bool { return r == '\n' }), "; ")
}

func (a *app) run(args []string) error {
	o, err := parseArgs(args)
	if err != nil {
		return err
	}
	a.opts = o
	if len(o.args) > 0 && o.args[0] == "help" {
		// "sqlmcp help query" is "sqlmcp query --help".
		o.args, o.help = o.args[1:], true
	}
	cmd, rest, err := findCommand(o.args)
	if err != nil {
		if o.help {
			// Help for the nearest command that exists.
			return a.printHelp(cmd)
		}
		return err
	}
	if o.help {
		return a.printHelp(cmd)
	}
	if o.interactive {
		if cmd != nil {
			return usagef("", "--interactive takes no command; run 'sqlmcp --interactive' or 'sqlmcp %s'", cmd.path)
		}
		for _, f := range o.given {
			if s := lookupFlag(f); s != nil && s.only != nil {
				return usagef("", "flag --%s is only for %s", f, strings.Join(s.only, ", "))
			}
		}
		return a.shell()
	}
	if cmd == nil {
		return a.printHelp(nil)
	}
	if cmd.run == nil {
		return usagef(cmd.path, "%s needs a subcommand: %s", cmd.path, strings.Join(childNames(cmd), ", "))
	}
	for _, f := range o.given {
		if s := lookupFlag(f); s != nil && s.only != nil && !slices.Contains(s.only, cmd.path) {
			return usagef(cmd.path, "flag --%s is only for %s", f, strings.Join(s.only, ", "))
		}
	}
	if len(rest) < cmd.minArgs {
		return usagef(cmd.path, "%s needs %s", cmd.path, cmd.argsHelp)
	}
	if cmd.maxArgs >= 0 && len(rest) > cmd.maxArgs {
		return usagef(cmd.path, "too many arguments for %s: %q; it takes %s", cmd.path, strings.Join(rest[cmd.maxArgs:], " "), cmd.argsHelp)
	}
	// Ctrl-C cancels the running query on the engine instead of killing the
	// process with the query still running there.
	ctx, stop := signal.NotifyContext(a.ctx, os.Interrupt)
	defer stop()
	a.ctx = ctx
	return cmd.run(a, rest)
}

// config loads the configuration file once.
func (a *app) config() (*profile.Config, error) {
	if a.cfg == nil {
		cfg, err := profile.Load(a.getenv)
		if err != nil {
			return nil, err
		}
		a.cfg = cfg
	}
	return a.cfg, nil
}

// format returns the output format: --format, else output.format, else table.
func (a *app) format() string {
	if a.opts.format != "" {
		return a.opts.format
	}
	if cfg, err := a.config(); err == nil && cfg.OutputFormat() != "" {
		return cfg.OutputFormat()
	}
	return "table"
}
