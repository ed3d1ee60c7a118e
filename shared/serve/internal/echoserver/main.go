// Command echoserver is the smallest server built on package serve. The
// transport tests run it as a real process: --version/--help, exit 2 on bad
// configuration, stdio, HTTP, and graceful shutdown with calls in flight.
package main

import (
	"context"
	"fmt"
	"github.com/mark3labs/mcp-go/server"
	"github.com/mcpfleet/mcpfleet/shared/argschema"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcpfleet/mcpfleet/shared/buildinfo"
	"github.com/mcpfleet/mcpfleet/shared/envconfig"
	"github.com/mcpfleet/mcpfleet/shared/serve"
)

var version string

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Getenv, os.Stdin, os.Stdout, os.Stderr))
}

func run(ctx context.Context, args []string, getenv func(string) string, stdin io.Reader, stdout, stderr io.Writer) int {
	p := serve.Program{
		Name: "echoserver", Version: buildinfo.Version(version), Summary: "echoes for transport tests",
		Vars: []envconfig.Var{{Name: "ECHO_MARK_FILE", Description: "file that records how sleep calls ended"}, {Name: "ECHO_STARTED_FILE", Description: "file that records that a sleep call started"}},
	}
	var mark, started string
	cfg, logger, status, ok := p.Configure(args, getenv, stdout, stderr, func(env *envconfig.Reader) {
		mark = env.String("ECHO_MARK_FILE", "")
		started = env.String("ECHO_STARTED_FILE", "")
	})
	if !ok {
		return status
	}
	s := serve.NewServer(p.Name, p.Version)
	addTool(s, mcp.NewTool("echo", mcp.WithString("text", mcp.Required())),
		func(ctx context.Context, r mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			// With the request's context, so the line names the trace.
			logger.DebugContext(ctx, "echo called")
			return mcp.NewToolResultText(r.GetString("text", "")), nil
		})
	addTool(s, mcp.NewTool("sleep", mcp.WithNumber("ms", mcp.Required())),
		func(ctx context.Context, r mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			d := time.Duration(r.GetFloat("ms", 0)) * time.Millisecond
			record(started, "started")
			select {
			case <-time.After(d):
				record(mark, "finished")
				return mcp.NewToolResultText("slept " + d.String()), nil
			case <-ctx.Done():
				record(mark, "cancelled")
				return nil, ctx.Err()
			}
		})
	return p.Serve(ctx, s, cfg, serve.Options{Logger: logger, Stdin: stdin, Stdout: stdout}, stderr)
}

func record(path, what string) {
	if path == "" {
		return
	}
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		return
	}
	defer f.Close()
	fmt.Fprintln(f, what)
}

// addTool adds a tool with its arguments checked against its own schema.
func addTool(s *serve.Server, tool mcp.Tool, h server.ToolHandlerFunc) {
	s.AddTool(tool, argschema.Bind(tool, h))
}
