// Package mcpserver offers the Codex CLI to MCP clients: the coder, review,
// ping, help and listSessions tools. Each tool's arguments are a Go struct
// bound to the tool when it is added (toolcall.AddRead, AddChange); the
// handlers use the session store and the cli package, and shape results;
// they never start processes themselves.
package mcpserver

import (
	"encoding/json"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/mcpfleet/mcpfleet/shared/apps"
	"github.com/mcpfleet/mcpfleet/shared/toolcall"
)

// ServerOptions are the mcp-go options codermcp needs. Every tool's
// arguments are validated against its bound input schema, which refuses
// arguments it does not name: a misspelt workingDirectory or sandbox must
// fail, not run the CLI somewhere else.
func ServerOptions() []server.ServerOption {
	return []server.ServerOption{
		server.WithToolCapabilities(false),
		server.WithInstructions("Run the Codex coding assistant: `coder` for a task (sessions keep context across calls), `review` for a code review, `listSessions` to see sessions."),
	}
}

// coderArgs are the coder tool's arguments.
type coderArgs struct {
	Prompt           string   `json:"prompt" jsonschema:"the task or question for the coding assistant"`
	SessionID        string   `json:"sessionId,omitempty" jsonschema:"session to continue (1-256 of A-Z a-z 0-9 _ -); absent or unknown: a new session"`
	ResetSession     bool     `json:"resetSession,omitempty" jsonschema:"clear the session's history and CLI conversation before this prompt" default:"false"`
	Model            string   `json:"model,omitempty"` // default and description from the configuration: models
	ReasoningEffort  string   `json:"reasoningEffort,omitempty" jsonschema:"how hard the model reasons (none, minimal and xhigh need a CLI and model that take them; an effort the installed CLI refuses is refused naming the release that has it)" enum:"none,minimal,low,medium,high,xhigh"`
	Sandbox          string   `json:"sandbox,omitempty" jsonschema:"what commands run by the assistant may touch (default read-only)" enum:"read-only,workspace-write,danger-full-access"`
	FullAuto         bool     `json:"fullAuto,omitempty" jsonschema:"sandboxed automatic execution (the workspace-write sandbox)" default:"false"`
	WorkingDirectory string   `json:"workingDirectory,omitempty" jsonschema:"directory the CLI works in (must exist)"`
	CallbackURI      string   `json:"callbackUri,omitempty" jsonschema:"URI passed to the CLI's environment as CODER_MCP_CALLBACK_URI / CODEX_MCP_CALLBACK_URI"`
	Images           []string `json:"images,omitempty" jsonschema:"local image files attached to the prompt: paths (absolute, or relative to the server's directory) of regular files under the workspace roots, at most 8, 20 MiB each"`
	AddDirs          []string `json:"addDirs,omitempty" jsonschema:"extra directories the workspace-write sandbox may write, besides workingDirectory: existing directories under the workspace roots, at most 8 (needs Codex CLI 0.153.4 or later)"`
	Profile          string   `json:"profile,omitempty" jsonschema:"one of the CLI configuration's profiles (the operator's [profiles.<name>] or <name>.config.toml, model and provider settings only) for a new conversation"`
	WebSearch        *bool    `json:"webSearch,omitempty" jsonschema:"turn the model's web search on (true) or off (false); absent: the CLI's default"`
	ApprovalPolicy   string   `json:"approvalPolicy,omitempty" jsonschema:"when the CLI asks a person before the agent runs a command or applies a patch: never (the default: the sandbox alone bounds what runs), on-request (the agent asks when it wants to leave the sandbox), untrusted (before any command not known to be safe); the question reaches you through elicitation" enum:"never,on-request,untrusted" default:"never"`
}

// reviewArgs are the review tool's arguments.
type reviewArgs struct {
	Prompt           string `json:"prompt,omitempty" jsonschema:"custom review instructions (a target on its own)"`
	Uncommitted      bool   `json:"uncommitted,omitempty" jsonschema:"review staged, unstaged and untracked changes"`
	Base             string `json:"base,omitempty" jsonschema:"review the changes against this base branch"`
	Commit           string `json:"commit,omitempty" jsonschema:"review the changes introduced by this commit"`
	Title            string `json:"title,omitempty" jsonschema:"title shown in the review summary (with commit)"`
	Model            string `json:"model,omitempty"` // as coder's
	WorkingDirectory string `json:"workingDirectory,omitempty" jsonschema:"repository directory to review (must exist)"`
}

// pingArgs are ping's: a pointer, because an empty message is echoed as
// given while an absent one is "pong".
type pingArgs struct {
	Message *string `json:"message,omitempty" jsonschema:"text to echo back" default:"pong"`
}

// coderOutputSchema is advertised only with structured content enabled: a
// tool that advertises an output schema must return structuredContent.
const coderOutputSchema = `{"type":"object","properties":{"threadId":{"type":"string","description":"the CLI's conversation id"}}}`

func (s *Server) coderTool() toolcall.Tool {
	t := toolcall.Tool{
		Name: "coder",
		Description: "Run the Codex CLI on a task. Pass sessionId to continue a conversation (created when absent or unknown); the reply's _meta carries sessionId, threadId and model. " +
			"The risk class is per call, from the sandbox: read-only (the default) is read and runs at once; workspace-write or fullAuto is change; danger-full-access is destructive.",
		Effect: toolcall.Effect{Title: "Execute CLI", Most: toolcall.Destructive, OpenWorld: true, TitleAnnotation: true},
		Schema: s.models,
	}
	if s.cfg.Structured {
		t.Options = []mcp.ToolOption{mcp.WithRawOutputSchema(json.RawMessage(coderOutputSchema))}
	}
	return s.withPreview(t)
}

// withPreview points a change tool to the change-preview view (MCP Apps;
// clients without the extension never see it).
func (s *Server) withPreview(t toolcall.Tool) toolcall.Tool {
	if v := s.views; v != nil {
		t.Options = append(t.Options, v.Tool(apps.ChangePreviewView)...)
	}
	return t
}

func (s *Server) reviewTool() toolcall.Tool {
	return toolcall.Tool{
		Name:        "review",
		Description: "Run a Codex code review of a git repository, in the read-only sandbox. Give exactly one target: uncommitted=true, base=<branch>, commit=<sha> (optionally with title), or prompt (custom review instructions).",
		Effect:      toolcall.Effect{Title: "Code Review", Most: toolcall.Read, Idempotent: true, OpenWorld: true, TitleAnnotation: true},
		Schema:      s.models,
	}
}

// readTool declares one of the small closed-world read tools.
func readTool(name, title, description string) toolcall.Tool {
	return toolcall.Tool{Name: name, Description: description,
		Effect: toolcall.Effect{Title: title, Most: toolcall.Read, Idempotent: true, TitleAnnotation: true}}
}

// models gives a model argument the configured default and catalogue.
func (s *Server) models(schema *jsonschema.Schema) {
	p := schema.Properties["model"]
	p.Default, _ = json.Marshal(s.cfg.DefaultModel)
	p.Description = "model id, one of: " + joinModels(s.cfg.Models)
}

func joinModels(ms []string) string { return strings.Join(ms, ", ") }
