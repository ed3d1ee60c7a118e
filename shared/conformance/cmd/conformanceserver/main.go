// Command conformanceserver is the server the official MCP conformance
// suite (@modelcontextprotocol/conformance) runs its scenarios against: it
// is built exactly as the real servers are (serve's program, HTTP handler
// and guards, the toolcall pipeline, the tasks keeper over stdio and HTTP)
// and registers the suite's test tools, which no production server has.
// Not shipped; the conformance test in shared/conformance builds and runs it.
package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/mcpfleet/mcpfleet/shared/conformance"
	"github.com/mcpfleet/mcpfleet/shared/envconfig"
	"github.com/mcpfleet/mcpfleet/shared/serve"
	"github.com/mcpfleet/mcpfleet/shared/tasks"
	"github.com/mcpfleet/mcpfleet/shared/toolcall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Getenv, os.Stdin, os.Stdout, os.Stderr))
}

func run(ctx context.Context, args []string, getenv func(string) string, stdin io.Reader, stdout, stderr io.Writer) int {
	p := serve.Program{Name: "conformanceserver", Version: "0.0.0", Summary: "the MCP conformance suite's test server (not for production)", Vars: tasks.Vars}
	var tcfg tasks.Config
	cfg, logger, status, ok := p.Configure(args, getenv, stdout, stderr, func(env *envconfig.Reader) { tcfg = tasks.FromEnv(env) })
	if !ok {
		return status
	}
	keeper := tasks.NewKeeper(tcfg)
	opts := append([]server.ServerOption{
		server.WithResourceCapabilities(true, true),
		server.WithPromptCapabilities(true),
		server.WithCompletions(),
		server.WithLogging(),
		server.WithElicitation(),
	}, keeper.ServerOptions()...)
	s := serve.NewServer(p.Name, p.Version, opts...)
	s.MCPServer.EnableSampling()
	calls, err := p.Pipeline(s, cfg, stderr, logger)
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", p.Name, err)
		return serve.ExitFailure
	}
	defer calls.Close()
	calls.OfferTasks(keeper)
	defer keeper.Stop()
	// The suite's task scenarios call a slow tool; it is declared as the
	// real servers declare coder and execute_query.
	toolcall.AddRead(calls, toolcall.Tool{Name: "slow_compute", Description: "Waits the given seconds, then answers (conformance tasks).",
		Effect: toolcall.Effect{Title: "Slow compute", Most: toolcall.Read}}, slowCompute, toolcall.AsTask())
	conformance.Register(s.MCPServer)
	// The tasks extension scenarios' other fixtures.
	s.MCPServer.AddTool(mcp.NewTool("greet", mcp.WithDescription("Greets (sync only)."), mcp.WithString("name")),
		func(_ context.Context, r mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return mcp.NewToolResultText("Hello, " + r.GetString("name", "") + "!"), nil
		})
	s.MCPServer.AddTool(mcp.NewTool("failing_job", mcp.WithDescription("Fails as a tool after about a second (only as a task)."), mcp.WithTaskSupport(mcp.TaskSupportRequired)),
		keeper.Tool(func(ctx context.Context, _ mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			select {
			case <-time.After(time.Second):
				return mcp.NewToolResultError("failing_job failed, as it always does"), nil
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}))
	s.MCPServer.AddTool(mcp.NewTool("protocol_error_job", mcp.WithDescription("Ends in a protocol error."), mcp.WithTaskSupport(mcp.TaskSupportOptional)),
		keeper.Tool(func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return nil, fmt.Errorf("protocol_error_job: an internal failure, as it always has")
		}))
	// Input inside a task (tasks-mrtr-input): the task goes input_required
	// with its questions until tasks/update answers them.
	s.MCPServer.AddTool(mcp.NewTool("confirm_delete", mcp.WithDescription("Asks to confirm deleting a file, inside the task."), mcp.WithString("filename"), mcp.WithTaskSupport(mcp.TaskSupportOptional)),
		keeper.Tool(func(ctx context.Context, r mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			name := r.GetString("filename", "")
			res, err := tasks.Ask(ctx, confirmation("Delete "+name+"?"))
			if err != nil {
				return nil, err
			}
			return mcp.NewToolResultText(fmt.Sprintf("%s: %s", name, res.Action)), nil
		}))
	s.MCPServer.AddTool(mcp.NewTool("multi_input", mcp.WithDescription("Asks two questions at once, inside the task."), mcp.WithTaskSupport(mcp.TaskSupportOptional)),
		keeper.Tool(func(ctx context.Context, _ mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			answers := make([]string, 2)
			errs := make(chan error, 2)
			for i, q := range []string{"First question?", "Second question?"} {
				go func() {
					res, err := tasks.Ask(ctx, confirmation(q))
					if err == nil {
						answers[i] = string(res.Action)
					}
					errs <- err
				}()
			}
			for range 2 {
				if err := <-errs; err != nil {
					return nil, err
				}
			}
			return mcp.NewToolResultText("answers: " + answers[0] + ", " + answers[1]), nil
		}))
	// MRTR before the task (tasks-mrtr-composition): the name is asked
	// synchronously, then the task is created on the retry and greets.
	s.MCPServer.AddTool(mcp.NewTool("test_tool_with_task", mcp.WithDescription("Asks a name (multi round-trip), then greets in a task."), mcp.WithTaskSupport(mcp.TaskSupportRequired)),
		keeper.Tool(func(_ context.Context, r mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			name := ""
			if res := server.ElicitationResponse(r.Params.InputResponses, "user_name"); res != nil {
				if m, ok := res.Content.(map[string]any); ok {
					name = fmt.Sprint(m["name"])
				}
			}
			return mcp.NewToolResultText("Hello, " + name + "!"), nil
		}))
	keeper.BeforeTask("test_tool_with_task", func(_ context.Context, r mcp.CallToolRequest) (*mcp.CallToolResult, bool) {
		if server.ElicitationResponse(r.Params.InputResponses, "user_name") != nil {
			return nil, false
		}
		return server.NewInputRequestBuilder("").Elicit("user_name", mcp.ElicitationParams{Message: "What is your name?",
			RequestedSchema: map[string]any{"type": "object", "properties": map[string]any{"name": map[string]any{"type": "string"}}, "required": []string{"name"}}}).ToolResult(), true
	})
	return p.Serve(ctx, s, cfg, serve.Options{Logger: logger, Stdin: stdin, Stdout: stdout, WrapMCP: func(h http.Handler) http.Handler { return conformance.MissingCapability(keeper.Wrap(h)) }}, stderr)
}

type slowIn struct {
	Seconds float64 `json:"seconds,omitempty" jsonschema:"how long to work, in seconds (0: at once, at most 60)"`
	Label   string  `json:"label,omitempty" jsonschema:"a label echoed in the answer"`
}

func slowCompute(ctx context.Context, in slowIn) (*mcp.CallToolResult, error) {
	d := time.Duration(min(max(in.Seconds, 0), 60) * float64(time.Second))
	select {
	case <-time.After(d):
		return mcp.NewToolResultText(fmt.Sprintf("computed %s after %s", in.Label, d)), nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// confirmation is a yes/no form.
func confirmation(msg string) mcp.ElicitationParams {
	return mcp.ElicitationParams{Message: msg, RequestedSchema: map[string]any{"type": "object",
		"properties": map[string]any{"confirm": map[string]any{"type": "boolean"}}}}
}
