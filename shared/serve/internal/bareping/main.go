// Command bareping is a bare mcp-go stdio server — server.NewMCPServer and
// server.ServeStdio, nothing else — the floor BenchmarkStdioPing compares
// mcpfleet's servers with (PING_BIN=path/to/bareping).
package main

import (
	"fmt"
	"os"

	"github.com/mark3labs/mcp-go/server"
)

func main() {
	if err := server.ServeStdio(server.NewMCPServer("bareping", "v0")); err != nil {
		fmt.Fprintln(os.Stderr, "bareping:", err)
		os.Exit(1)
	}
}
