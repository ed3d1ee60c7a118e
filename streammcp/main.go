package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcpfleet/mcpfleet/shared/buildinfo"
	"github.com/mcpfleet/mcpfleet/shared/envconfig"
	"github.com/mcpfleet/mcpfleet/shared/logging"
	"github.com/mcpfleet/mcpfleet/shared/serve"
)

var version string

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Getenv, os.Stdin, os.Stdout, os.Stderr))
}

func run(ctx context.Context, args []string, getenv func(string) string, stdin *os.File, stdout, stderr *os.File) int {
	p := serve.Program{Name: "streammcp", Version: buildinfo.Version(version), Summary: "Kafka reports over MCP"}
	if status, done := p.HandleArgs(args, stdout, stderr); done {
		return status
	}
	env := envconfig.New(getenv)
	cfg := serve.FromEnv(env)
	if err := env.Err(); err != nil {
		return p.ConfigError(stderr, err)
	}
	logger := logging.New(cfg.Log, stderr)
	s := serve.NewServer(p.Name, p.Version)
	s.AddTool(mcp.NewTool("echo", mcp.WithString("text")), func(ctx context.Context, r mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return mcp.NewToolResultText(r.GetString("text", "")), nil
	})
	if err := serve.Run(ctx, p, s, cfg, serve.Options{Logger: logger, Stdin: stdin, Stdout: stdout, MethodAliases: map[string]string{"callTool": "tools/call"}}); err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	return 0
}
