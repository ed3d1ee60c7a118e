// Package mcpserver offers the Codex CLI to MCP clients: the coder, review,
// ping, help and listSessions tools. Handlers decode and validate arguments,
// use the session store and the cli package, and shape results; they never
// start processes themselves.
package mcpserver

import (
	"encoding/json"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/mcpfleet/mcpfleet/codermcp/internal/cli"
)

// ServerOptions are the mcp-go options codermcp needs. Arguments are
// validated against each tool's input schema by serve.NewServer (shared
// argschema), which names the argument, the type wanted and the value
// given; mcp-go's own validation would answer first, in Go's %v.
// Every tool's schema refuses arguments it does not name: a misspelt
// workingDirectory or sandbox must fail, not run the CLI somewhere else.
func ServerOptions() []server.ServerOption {
	return []server.ServerOption{
		server.WithToolCapabilities(false),
		server.WithInstructions("Run the Codex coding assistant: `coder` for a task (sessions keep context across calls), `review` for a code review, `listSessions` to see sessions."),
	}
}

// coderOutputSchema is advertised only with structured content enabled: a
// tool that advertises an output schema must return structuredContent.
const coderOutputSchema = `{"type":"object","properties":{"threadId":{"type":"string","description":"the CLI's conversation id"}}}`

func (s *Server) coderTool() mcp.Tool {
	opts := []mcp.ToolOption{
		mcp.WithDescription("Run the Codex CLI on a task. Pass sessionId to continue a conversation (created when absent or unknown); the reply's _meta carries sessionId, threadId and model. " +
			"The risk class is per call, from the sandbox: read-only (the default) is read and runs at once; workspace-write or fullAuto is change; danger-full-access is destructive."),
		mcp.WithToolTitle("Execute CLI"),
		mcp.WithSchemaAdditionalProperties(false),
		mcp.WithTitleAnnotation("Execute CLI"),
		mcp.WithReadOnlyHintAnnotation(false),
		mcp.WithDestructiveHintAnnotation(true),
		mcp.WithIdempotentHintAnnotation(false),
		mcp.WithOpenWorldHintAnnotation(true),
		mcp.WithString("prompt", mcp.Required(), mcp.Description("the task or question for the coding assistant")),
		mcp.WithString("sessionId", mcp.Description("session to continue (1-256 of A-Z a-z 0-9 _ -); absent or unknown: a new session")),
		mcp.WithBoolean("resetSession", mcp.DefaultBool(false), mcp.Description("clear the session's history and CLI conversation before this prompt")),
		mcp.WithString("model", mcp.DefaultString(s.cfg.DefaultModel), mcp.Description("model id, one of: "+joinModels(s.cfg.Models))),
		mcp.WithString("reasoningEffort", mcp.Enum("low", "medium", "high"), mcp.Description("how hard the model reasons")),
		mcp.WithString("sandbox", mcp.Enum(cli.SandboxReadOnly, cli.SandboxWorkspaceWrite, cli.SandboxFullAccess), mcp.Description("what commands run by the assistant may touch (default read-only)")),
		mcp.WithBoolean("fullAuto", mcp.DefaultBool(false), mcp.Description("sandboxed automatic execution (the workspace-write sandbox)")),
		mcp.WithString("workingDirectory", mcp.Description("directory the CLI works in (must exist)")),
		mcp.WithString("callbackUri", mcp.Description("URI passed to the CLI's environment as CODER_MCP_CALLBACK_URI / CODEX_MCP_CALLBACK_URI")),
	}
	if s.cfg.Structured {
		opts = append(opts, mcp.WithRawOutputSchema(json.RawMessage(coderOutputSchema)))
	}
	return mcp.NewTool("coder", opts...)
}

func (s *Server) reviewTool() mcp.Tool {
	return mcp.NewTool("review",
		mcp.WithDescription("Run a Codex code review of a git repository, in the read-only sandbox. Give exactly one target: uncommitted=true, base=<branch>, commit=<sha> (optionally with title), or prompt (custom review instructions)."),
		mcp.WithToolTitle("Code Review"),
		mcp.WithSchemaAdditionalProperties(false),
		mcp.WithTitleAnnotation("Code Review"),
		mcp.WithReadOnlyHintAnnotation(true),
		mcp.WithDestructiveHintAnnotation(false),
		mcp.WithIdempotentHintAnnotation(true),
		mcp.WithOpenWorldHintAnnotation(true),
		mcp.WithString("prompt", mcp.Description("custom review instructions (a target on its own)")),
		mcp.WithBoolean("uncommitted", mcp.Description("review staged, unstaged and untracked changes")),
		mcp.WithString("base", mcp.Description("review the changes against this base branch")),
		mcp.WithString("commit", mcp.Description("review the changes introduced by this commit")),
		mcp.WithString("title", mcp.Description("title shown in the review summary (with commit)")),
		mcp.WithString("model", mcp.DefaultString(s.cfg.DefaultModel), mcp.Description("model id, one of: "+joinModels(s.cfg.Models))),
		mcp.WithString("workingDirectory", mcp.Description("repository directory to review (must exist)")),
	)
}

func pingTool() mcp.Tool {
	return mcp.NewTool("ping",
		mcp.WithDescription("Check that the server answers; echoes message."),
		mcp.WithToolTitle("Ping Server"),
		mcp.WithSchemaAdditionalProperties(false),
		mcp.WithTitleAnnotation("Ping Server"),
		mcp.WithReadOnlyHintAnnotation(true),
		mcp.WithDestructiveHintAnnotation(false),
		mcp.WithIdempotentHintAnnotation(true),
		mcp.WithOpenWorldHintAnnotation(false),
		mcp.WithString("message", mcp.DefaultString("pong"), mcp.Description("text to echo back")),
	)
}

func helpTool() mcp.Tool {
	return mcp.NewTool("help",
		mcp.WithDescription("Show the Codex CLI's help output."),
		mcp.WithToolTitle("Get Help"),
		mcp.WithSchemaAdditionalProperties(false),
		mcp.WithTitleAnnotation("Get Help"),
		mcp.WithReadOnlyHintAnnotation(true),
		mcp.WithDestructiveHintAnnotation(false),
		mcp.WithIdempotentHintAnnotation(true),
		mcp.WithOpenWorldHintAnnotation(false),
	)
}

func listSessionsTool() mcp.Tool {
	return mcp.NewTool("listSessions",
		mcp.WithDescription("List active sessions as a JSON array of {id, createdAt, lastAccessedAt, turnCount}."),
		mcp.WithToolTitle("List Sessions"),
		mcp.WithSchemaAdditionalProperties(false),
		mcp.WithTitleAnnotation("List Sessions"),
		mcp.WithReadOnlyHintAnnotation(true),
		mcp.WithDestructiveHintAnnotation(false),
		mcp.WithIdempotentHintAnnotation(true),
		mcp.WithOpenWorldHintAnnotation(false),
	)
}

func joinModels(ms []string) string {
	out := ""
	for i, m := range ms {
		if i > 0 {
			out += ", "
		}
		out += m
	}
	return out
}
