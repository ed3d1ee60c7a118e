// Command sdkping is a bare stdio server on the official Go SDK
// (github.com/modelcontextprotocol/go-sdk): a peer BenchmarkStdioPing
// compares mcpfleet's servers with (PING_BIN=path/to/sdkping).
package main

import (
	"context"
	"fmt"
	"os"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func main() {
	s := mcp.NewServer(&mcp.Implementation{Name: "sdkping", Version: "v0"}, nil)
	if err := s.Run(context.Background(), &mcp.StdioTransport{}); err != nil {
		fmt.Fprintln(os.Stderr, "sdkping:", err)
		os.Exit(1)
	}
}
