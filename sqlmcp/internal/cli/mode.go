package cli

import (
	"os"
	"slices"
	"strings"

	"golang.org/x/term"
)

// ServerArgs tells whether the executable's arguments (without the program
// name) start the MCP server rather than this client, and returns the
// arguments the server reads (its --help, --version). The server runs for
// "sqlmcp serve …", for "--mcp" anywhere, for "--version" alone (the one
// version line both modes share), and for no argument at all when stdin
// is not a terminal (MCP clients spawn the server with a pipe; a service
// manager gives it /dev/null) or MCP_TRANSPORT=http (a container started
// with a TTY still serves). Anything else is the client: Main.
func ServerArgs(args []string, getenv func(string) string, stdin *os.File) ([]string, bool) {
	switch {
	case len(args) == 1 && args[0] == "--version":
		return args, true
	case len(args) > 0 && args[0] == "serve":
		return args[1:], true
	case slices.Contains(args, "--mcp"):
		return slices.DeleteFunc(slices.Clone(args), func(a string) bool { return a == "--mcp" }), true
	case len(args) == 0 && (!isTerminal(stdin) || strings.EqualFold(strings.TrimSpace(getenv("MCP_TRANSPORT")), "http")):
		return nil, true
	}
	return nil, false
}

// isTerminal reports whether f is a terminal (not merely a character
// device: /dev/null is one).
func isTerminal(f *os.File) bool {
	return f != nil && term.IsTerminal(int(f.Fd()))
}
