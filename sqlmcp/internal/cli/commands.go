package cli

import (
	"strings"
)

// command is one node of the command tree. Groups (config, config profile)
// have children and no run function.
type command struct {
	path     string // "query", "config profile add"
	name     string // last word of path
	argsHelp string // what the arguments are, for messages
	synopsis []string
	minArgs  int
	maxArgs  int // -1 for any number
	summary  string
	desc     []string // paragraphs
	examples [][2]string
	run      func(a *app, args []string) error
	children []*command
}

func childNames(c *command) []string {
	var out []string
	for _, ch := range c.children {
		out = append(out, ch.name)
	}
	return out
}

// commandTree returns the root of the commands. It is built on each call so
// no package state is shared between runs.
func commandTree() *command {
	profileCmds := []*command{
		{
			name: "list", argsHelp: "no arguments", maxArgs: 0,
			synopsis: []string{"sqlmcp config profile list [--format FORMAT]"},
			summary:  "List the connection profiles; the current one is marked.",
			desc: []string{"Lists every profile of the configuration file with its host, port, user, catalog, schema and TLS setting. " +
				"The column 'current' marks the profile named by the file's 'current' field. Passwords are never shown."},
			examples: [][2]string{{"sqlmcp config profile list", "Show the profiles as a table."}},
			run:      runProfileList,
		},
		{
			name: "use", argsHelp: "a profile name", minArgs: 1, maxArgs: 1,
			synopsis: []string{"sqlmcp config profile use <name>"},
			summary:  "Make a profile the current one (the file's 'current' field).",
			desc:     []string{"Sets the configuration file's 'current' field, so later commands and the MCP server use this profile unless --profile or SQLENGINE_PROFILE name another."},
			examples: [][2]string{{"sqlmcp config profile use prod", "Connect to the 'prod' profile from now on."}},
			run:      runProfileUse,
		},
		{
			name: "show", argsHelp: "at most one profile name", maxArgs: 1,
			synopsis: []string{"sqlmcp config profile show [<name>] [--format FORMAT]"},
			summary:  "Show a profile's settings (password masked), or the resolved connection.",
			desc: []string{"With a name, prints that profile's settings as stored, the password replaced by asterisks. " +
				"Without a name, prints the connection every command would use right now, and for each setting the source that decided it " +
				"(a flag, a profile, a SQLENGINE_* variable or the built-in default)."},
			examples: [][2]string{
				{"sqlmcp config profile show prod", "Show the 'prod' profile."},
				{"sqlmcp config profile show --profile dev --port 9090", "Show where each setting of this command line would come from."},
			},
			run: runProfileShow,
		},
		{
			name: "add", argsHelp: "a profile name", minArgs: 1, maxArgs: 1,
			synopsis: []string{"sqlmcp config profile add <name> [--host HOST] [--port PORT] [--user USER] [--catalog CATALOG] [--schema SCHEMA] [--ssl] [--insecure] [--password-stdin] [--replace]"},
			summary:  "Add a connection profile to the configuration file.",
			desc: []string{"Stores the connection flags given as a new profile. Settings not given are left out of the profile and come from the SQLENGINE_* variables or the defaults when it is used. " +
				"The password is read from standard input with --password-stdin, never from a flag. " +
				"A new configuration file is written as JSON with mode 0600; an existing file keeps its format and mode."},
			examples: [][2]string{
				{"sqlmcp config profile add dev --host localhost --port 8080 --catalog tpch --schema tiny", "A profile for a local engine."},
				{"printf '%s\\n' \"$PW\" | sqlmcp config profile add prod --host trino.example.com --port 443 --ssl --user alice --password-stdin", "A TLS profile with a password."},
			},
			run: runProfileAdd,
		},
		{
			name: "remove", argsHelp: "a profile name", minArgs: 1, maxArgs: 1,
			synopsis: []string{"sqlmcp config profile remove <name>"},
			summary:  "Remove a connection profile from the configuration file.",
			desc:     []string{"Deletes the profile. When it was the current profile, 'current' is cleared too."},
			examples: [][2]string{{"sqlmcp config profile remove old", "Forget the 'old' profile."}},
			run:      runProfileRemove,
		},
	}
	profileGroup := &command{
		name: "profile", synopsis: []string{"sqlmcp config profile list|use|show|add|remove ..."},
		summary:  "Manage connection profiles.",
		desc:     []string{"Connection profiles are named sets of connection settings stored in the configuration file, so that nobody needs to edit it by hand."},
		children: profileCmds,
		examples: [][2]string{{"sqlmcp config profile list", "List the profiles."}},
	}
	root := &command{
		children: []*command{
			{
				name: "query", argsHelp: "one SQL statement, '-' for standard input, or -f FILE", maxArgs: -1,
				synopsis: []string{"sqlmcp query <sql> [flags]", "sqlmcp query - [flags] < script.sql", "sqlmcp query -f script.sql [flags]"},
				summary:  "Run SQL and print the result.",
				desc: []string{"Runs the SQL given as arguments (joined with spaces), read from standard input ('-'), or read from a file (-f). " +
					"Input may hold several statements separated by ';'; they run in order and the first failure stops the run. " +
					"Rows are printed as they arrive from the engine. " +
					"The same safety rules as the MCP server apply: unless SQLENGINE_ALLOW_WRITE_QUERIES=true only read-only statements run."},
				examples: [][2]string{
					{"sqlmcp query 'SELECT * FROM tpch.tiny.nation LIMIT 5'", "Print five rows as a table."},
					{"sqlmcp query --format csv 'SELECT name FROM nation' --catalog tpch --schema tiny > nations.csv", "Export CSV."},
					{"sqlmcp query -f report.sql --format json", "Run the statements of a file, one JSON result each."},
				},
				run: runQuery,
			},
			{
				name: "catalogs", argsHelp: "no arguments", maxArgs: 0,
				synopsis: []string{"sqlmcp catalogs [flags]"},
				summary:  "List the catalogs.",
				desc:     []string{"Lists the engine's catalogs, in the engine's order."},
				examples: [][2]string{{"sqlmcp catalogs", "List the catalogs."}},
				run:      runCatalogs,
			},
			{
				name: "schemas", argsHelp: "a catalog name", minArgs: 0, maxArgs: 1,
				synopsis: []string{"sqlmcp schemas <catalog> [flags]"},
				summary:  "List the schemas of a catalog.",
				desc:     []string{"Lists the schemas of the catalog given, or of the default catalog (--catalog, the profile, SQLENGINE_CATALOG) when none is given."},
				examples: [][2]string{{"sqlmcp schemas tpch", "List the schemas of the tpch catalog."}},
				run:      runSchemas,
			},
			{
				name: "tables", argsHelp: "a catalog and a schema", minArgs: 0, maxArgs: 2,
				synopsis: []string{"sqlmcp tables <catalog> <schema> [flags]"},
				summary:  "List the tables and views of a schema.",
				desc:     []string{"Lists the tables and views of the schema given with their type (TABLE, VIEW, ...). Without arguments the default catalog and schema are used."},
				examples: [][2]string{{"sqlmcp tables tpch tiny", "List the tables of tpch.tiny."}},
				run:      runTables,
			},
			{
				name: "describe", argsHelp: "a table name: catalog.schema.table (or schema.table, or table with the defaults), or the catalog, schema and table as three arguments", minArgs: 1, maxArgs: 3,
				synopsis: []string{"sqlmcp describe <catalog.schema.table> [flags]", "sqlmcp describe <catalog> <schema> <table> [flags]"},
				summary:  "Show the columns of a table.",
				desc: []string{"Prints the columns of a table in ordinal order with their type, nullability, comment and extra information. " +
					"Parts of the name may be double-quoted to contain dots or spaces, as in SQL: 'c.s.\"my table\"'. " +
					"Given as three arguments, each is one name taken as it is (dots and quotes included)."},
				examples: [][2]string{{"sqlmcp describe tpch.tiny.nation", "Describe the nation table."}, {"sqlmcp describe sales 'Odd Schema' 'weird \"name\"'", "Describe a table whose name has a quote."}},
				run:      runDescribe,
			},
			{
				name: "explain", argsHelp: "one SQL statement", minArgs: 1, maxArgs: -1,
				synopsis: []string{"sqlmcp explain <sql> [flags]"},
				summary:  "Show the engine's plan of a statement without running it.",
				desc:     []string{"Prints the engine's logical plan of the statement (EXPLAIN). The statement is not executed."},
				examples: [][2]string{{"sqlmcp explain 'SELECT count(*) FROM tpch.tiny.orders'", "Show the plan."}},
				run:      runExplain,
			},
			{
				name: "config", synopsis: []string{"sqlmcp config profile list|use|show|add|remove ..."},
				summary:  "Manage the configuration file.",
				desc:     []string{"Commands that read and change the configuration file."},
				children: []*command{profileGroup},
				examples: [][2]string{{"sqlmcp config profile list", "List the profiles."}},
			},
		},
	}
	var setPaths func(c *command, prefix string)
	setPaths = func(c *command, prefix string) {
		for _, ch := range c.children {
			ch.path = strings.TrimSpace(prefix + " " + ch.name)
			setPaths(ch, ch.path)
		}
	}
	setPaths(root, "")
	return root
}

// findCommand walks args down the command tree. It returns the deepest
// command found (nil for the root) and the remaining arguments; an unknown
// word is a usage error, returned with the deepest valid command so --help
// can still show something useful.
func findCommand(args []string) (*command, []string, error) {
	root := commandTree()
	var cur *command
	node := root
	for len(args) > 0 {
		if len(node.children) == 0 {
			break
		}
		var next *command
		for _, ch := range node.children {
			if ch.name == args[0] {
				next = ch
			}
		}
		if next == nil {
			if cur == nil {
				if args[0] == "serve" {
					return nil, nil, usagef("", "'serve' takes no arguments when run from here; run 'sqlmcp serve' alone")
				}
				return nil, nil, usagef("", "unknown command %q; commands: %s", args[0], strings.Join(childNames(root), ", "))
			}
			return cur, nil, usagef(cur.path, "unknown command %q for %s; choose one of: %s", args[0], cur.path, strings.Join(childNames(cur), ", "))
		}
		cur, node, args = next, next, args[1:]
	}
	return cur, args, nil
}
