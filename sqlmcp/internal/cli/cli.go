// Package cli is the terminal face of sqlmcp: one-shot commands (query,
// catalogs, schemas, tables, describe, explain, config profile ...) and the
// interactive shell, sharing the engine access and safety rules of the server.
package cli

import (
	"context"
	"fmt"
	"io"
)

// Exit codes of the command-line client.
const (
	ExitOK      = 0 // success
	ExitRuntime = 1 // connection failed, query error, bad configuration file, ...
	ExitUsage   = 2 // unknown command, invalid flag, missing argument
)

// Main runs the command-line client with args (without the program name) and
// returns the process exit code. getenv reads the environment (os.Getenv in
// production); stdin, stdout and stderr are the process streams. Results go
// to stdout, errors to stderr as one line.
func Main(ctx context.Context, args []string, getenv func(string) string, stdin io.Reader, stdout, stderr io.Writer) int {
	_ = ctx
	_ = getenv
	_ = stdin
	_ = stdout
	fmt.Fprintln(stderr, "sqlmcp: the command-line client is not built yet")
	return ExitRuntime
}
