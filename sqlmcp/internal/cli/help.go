package cli

import (
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/mattn/go-runewidth"
	"golang.org/x/term"
)

// helpItem is one entry of a definition list (a flag, a command, ...).
type helpItem struct{ term, desc string }

var envHelp = []helpItem{
	{"SQLENGINE_HOST", "Coordinator host (default localhost)."},
	{"SQLENGINE_PORT", "Coordinator port (default 8080)."},
	{"SQLENGINE_USER", "User name (default sqlmcp)."},
	{"SQLENGINE_PASSWORD", "Password (HTTP basic authentication; needs TLS). Never a flag."},
	{"SQLENGINE_CATALOG", "Default catalog."},
	{"SQLENGINE_SCHEMA", "Default schema."},
	{"SQLENGINE_SSL", "true to connect with TLS (https)."},
	{"SQLENGINE_SSL_INSECURE", "true to skip verification of the server certificate."},
	{"SQLENGINE_PROFILE", "Profile to use when --profile is not given."},
	{"SQLENGINE_QUERY_TIMEOUT", "Longest a statement may run, e.g. 300s (the default); it is then cancelled on the engine."},
	{"SQLENGINE_QUERY_MAX_MEMORY", "Memory one statement may use on the engine, e.g. 1GB (the default); beyond it the engine fails the statement."},
	{"SQLENGINE_ALLOW_WRITE_QUERIES", "true to allow statements that change data; by default only read-only statements run."},
	{"SQLENGINE_SOURCE", "Source name sent to the engine (default sqlmcp)."},
	{"XDG_CONFIG_HOME", "Base directory of the configuration file (default ~/.config)."},
	{"COLUMNS", "Help width when standard output is not a terminal."},
}

var configHelp = []string{
	"Connection profiles live in $XDG_CONFIG_HOME/sqlengine/config.json or config.yaml (default ~/.config/sqlengine/). When both exist the JSON file wins. " +
		"Fields: current (the profile used by default); profiles.<name>.{host, port, user, password, catalog, schema, ssl.enabled, ssl.insecure}; output.format (table, json or csv). " +
		"An unknown field or malformed file is an error naming the file, line and field.",
	"Each setting is taken from the first of: a command-line flag; the profile named by --profile; the profile named by SQLENGINE_PROFILE; the profile named by the file's 'current'; a profile named 'default'; the SQLENGINE_* variables; the built-in default. " +
		"Only one profile is used; settings it leaves out come from the environment.",
	"The file is only written by 'sqlmcp config profile add|remove|use'; a new file is JSON with mode 0600. " +
		"The shell's history is kept in the same directory (history).",
}

// printHelp writes the structured help of cmd (nil for the program).
func (a *app) printHelp(cmd *command) error {
	writeHelp(a.stdout, cmd, helpWidth(a.stdout, a.getenv))
	return nil
}

// helpWidth is the terminal's width, else $COLUMNS, else 80.
func helpWidth(w io.Writer, getenv func(string) string) int {
	width := 80
	if f, ok := w.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		if c, _, err := term.GetSize(int(f.Fd())); err == nil && c > 0 {
			width = c
		}
	} else if c, err := strconv.Atoi(getenv("COLUMNS")); err == nil && c > 0 {
		width = c
	}
	return max(width, 40)
}

func writeHelp(w io.Writer, cmd *command, width int) {
	h := &helpWriter{w: w, width: width}
	root := commandTree()
	if cmd != nil {
		// Use the freshly built node so paths are set.
		c, _, _ := findCommand(strings.Fields(cmd.path))
		cmd = c
	}

	h.section("NAME")
	if cmd == nil {
		h.para(4, "sqlmcp - SQL client and MCP server for the Trino distributed query engine")
	} else {
		h.para(4, "sqlmcp "+cmd.path+" - "+cmd.summary)
	}

	h.section("SYNOPSIS")
	if cmd == nil {
		for _, s := range []string{
			"sqlmcp <command> [arguments] [flags]",
			"sqlmcp --interactive [flags]",
			"sqlmcp serve | sqlmcp --mcp",
			"sqlmcp <command> --help",
		} {
			h.para(4, s)
		}
	} else {
		for _, s := range cmd.synopsis {
			h.para(4, s)
		}
	}

	h.section("DESCRIPTION")
	if cmd == nil {
		h.paras(4, "sqlmcp runs SQL on a Trino coordinator. With a command it is a one-shot client; with --interactive it is a SQL shell with history, multi-line statements ended by ';', and meta-commands. "+
			"Run as 'sqlmcp serve' (or with no arguments and standard input not a terminal) it is a Model Context Protocol server offering the same engine access to assistants.",
			"Results go to standard output, errors to standard error as one line. Exit status: 0 success; 1 runtime error (connection failed, query error, bad configuration file); 2 usage error (unknown command, invalid flag, missing argument).")
	} else {
		h.paras(4, cmd.desc...)
	}

	h.section("COMMANDS")
	var items []helpItem
	switch {
	case cmd == nil:
		var walk func(c *command)
		walk = func(c *command) {
			for _, ch := range c.children {
				if ch.run != nil {
					items = append(items, helpItem{strings.TrimPrefix(ch.synopsis[0], "sqlmcp "), ch.summary})
				}
				walk(ch)
			}
		}
		walk(root)
		items = append(items, helpItem{"serve", "Run the MCP server (stdio or HTTP per MCP_TRANSPORT); see 'sqlmcp serve --help'."})
	case len(cmd.children) > 0:
		for _, ch := range cmd.children {
			items = append(items, helpItem{strings.TrimPrefix(ch.synopsis[0], "sqlmcp "), ch.summary})
		}
	default:
		items = append(items, helpItem{cmd.path, cmd.summary})
	}
	h.items(items)
	if cmd == nil {
		fmt.Fprintln(h.w)
		h.para(4, "In the interactive shell: \\help, \\q (or \\quit, \\exit), \\history, \\catalogs, \\schemas [catalog], \\tables [catalog schema], \\describe <table>, \\format <table|json|csv>, and USE catalog.schema.")
	}

	h.section("FLAGS")
	items = nil
	path := ""
	if cmd != nil {
		path = cmd.path
	}
	for _, f := range flagSpecs {
		if f.only != nil && cmd != nil && !slices.Contains(f.only, path) {
			continue
		}
		term := "--" + f.name
		if f.short != "" {
			term = "-" + f.short + ", " + term
		}
		if f.arg != "" {
			term += " " + f.arg
		}
		desc := f.help
		if f.only != nil && cmd == nil {
			desc += " (" + strings.Join(f.only, ", ") + " only)"
		}
		items = append(items, helpItem{term, desc})
	}
	h.items(items)

	h.section("EXAMPLES")
	items = nil
	if cmd == nil {
		items = []helpItem{
			{"sqlmcp catalogs", "List the catalogs of the engine at SQLENGINE_HOST:SQLENGINE_PORT."},
			{"sqlmcp query 'SELECT * FROM tpch.tiny.nation' --format csv", "Run a query and print CSV."},
			{"sqlmcp --interactive --profile prod", "Open the shell on the 'prod' profile."},
			{"sqlmcp config profile add dev --host localhost --catalog tpch --schema tiny", "Save a profile."},
		}
	} else {
		for _, e := range cmd.examples {
			items = append(items, helpItem{e[0], e[1]})
		}
	}
	h.items(items)

	h.section("ENVIRONMENT")
	h.items(envHelp)

	h.section("CONFIGURATION")
	h.paras(4, configHelp...)
}

// helpWriter wraps text to a width, man-page style.
type helpWriter struct {
	w       io.Writer
	width   int
	started bool
}

func (h *helpWriter) section(title string) {
	if h.started {
		fmt.Fprintln(h.w)
	}
	h.started = true
	fmt.Fprintln(h.w, title)
}

// para writes text wrapped at the width with every line indented.
func (h *helpWriter) para(indent int, text string) {
	for _, line := range wrap(text, h.width-indent) {
		fmt.Fprintln(h.w, strings.Repeat(" ", indent)+line)
	}
}

// paras writes paragraphs separated by blank lines.
func (h *helpWriter) paras(indent int, texts ...string) {
	for i, t := range texts {
		if i > 0 {
			fmt.Fprintln(h.w)
		}
		h.para(indent, t)
	}
}

// term writes a definition-list term; continuation lines are indented
// further so that a long synopsis stays distinct from its description.
func (h *helpWriter) term(text string) {
	for i, line := range wrap(text, h.width-6) {
		ind := 4
		if i > 0 {
			ind = 6
		}
		fmt.Fprintln(h.w, strings.Repeat(" ", ind)+line)
	}
}

// items writes a definition list: the term indented 4, its description
// indented 8 on the following lines.
func (h *helpWriter) items(items []helpItem) {
	for _, it := range items {
		h.term(it.term)
		h.para(8, it.desc)
	}
}

// wrap splits text into lines of at most width display columns, breaking at
// spaces; a word longer than the width gets a line of its own.
func wrap(text string, width int) []string {
	width = max(width, 20)
	var lines []string
	var cur strings.Builder
	curW := 0
	for _, word := range strings.Fields(text) {
		ww := runewidth.StringWidth(word)
		if curW > 0 && curW+1+ww > width {
			lines = append(lines, cur.String())
			cur.Reset()
			curW = 0
		}
		if curW > 0 {
			cur.WriteByte(' ')
			curW++
		}
		cur.WriteString(word)
		curW += ww
	}
	if curW > 0 {
		lines = append(lines, cur.String())
	}
	return lines
}
