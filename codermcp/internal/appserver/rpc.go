// Package appserver drives one Codex CLI turn through `codex app-server`, the
// CLI's JSON-RPC interface over stdio (the one its IDE extensions use, and the
// maintainers' successor to the removed `codex mcp-server`). Unlike `codex
// exec`, it carries the agent's approval requests (run this command, apply
// this patch) to its client, so a person can answer them.
//
// It speaks the v2 protocol (initialize, thread/start or thread/resume,
// turn/start, item and turn notifications, item/*/requestApproval server
// requests), verified against CLI 0.153.4, 0.169.0 and 0.171.0. CLI 0.50.0's
// app-server only has the v1 methods (newConversation, sendUserMessage) and
// 0.36.0 has none: cliversion reports that and callers refuse those versions.
//
// One process group per turn: each Turn starts `codex app-server`, runs one
// turn, and stops the whole group. Threads live on disk (the CLI's rollout
// files), so a later turn continues the thread natively with thread/resume;
// nothing stays running between MCP calls, a cancelled call cannot leave a
// server behind that another call reuses, and each call's working directory,
// sandbox and environment are its own. The price is the app-server's start-up
// (a few hundred milliseconds) on every turn.
//
// It knows nothing about MCP.
package appserver

import (
	"encoding/json"
	"fmt"
)

// message is any JSON-RPC 2.0 message on the wire. The CLI omits "jsonrpc".
type message struct {
	JSONRPC string          `json:"jsonrpc,omitempty"`
	ID      json.RawMessage `json:"id,omitempty"`
	Method  string          `json:"method,omitempty"`
	Params  json.RawMessage `json:"params,omitempty"`
	Result  json.RawMessage `json:"result,omitempty"`
	Error   *RPCError       `json:"error,omitempty"`
}

// RPCError is a JSON-RPC error object returned by the app-server.
type RPCError struct {
	Code    int             `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
}

func (e *RPCError) Error() string { return fmt.Sprintf("%s (code %d)", e.Message, e.Code) }

func (m *message) isRequest() bool  { return m.Method != "" && len(m.ID) > 0 }
func (m *message) isResponse() bool { return m.Method == "" && len(m.ID) > 0 }

// Wire shapes of the v2 protocol this package uses (the CLI's generated
// JSON Schema, `codex app-server generate-json-schema`, is the reference).

type clientInfo struct {
	Name    string `json:"name"`
	Title   string `json:"title,omitempty"`
	Version string `json:"version"`
}

type initializeParams struct {
	ClientInfo clientInfo `json:"clientInfo"`
}

type threadParams struct {
	ThreadID              string         `json:"threadId,omitempty"` // thread/resume only
	Cwd                   string         `json:"cwd,omitempty"`
	Model                 string         `json:"model,omitempty"`
	ApprovalPolicy        string         `json:"approvalPolicy,omitempty"`
	Sandbox               string         `json:"sandbox,omitempty"`
	Config                map[string]any `json:"config,omitempty"`
	BaseInstructions      string         `json:"baseInstructions,omitempty"`
	DeveloperInstructions string         `json:"developerInstructions,omitempty"`
}

type thread struct {
	ID string `json:"id"`
}

type threadResponse struct {
	Thread thread `json:"thread"`
}

type userInput struct {
	Type string `json:"type"`           // text | localImage
	Text string `json:"text,omitempty"` // type text
	Path string `json:"path,omitempty"` // type localImage
}

type turnStartParams struct {
	ThreadID string      `json:"threadId"`
	Input    []userInput `json:"input"`
	Effort   string      `json:"effort,omitempty"`
}

type turnError struct {
	Message string `json:"message"`
}

type turn struct {
	ID     string     `json:"id"`
	Status string     `json:"status"` // completed | interrupted | failed | inProgress
	Error  *turnError `json:"error"`
}

type turnResponse struct {
	Turn turn `json:"turn"`
}

type turnNotification struct {
	ThreadID string `json:"threadId"`
	Turn     turn   `json:"turn"`
}

type fileChange struct {
	Path string `json:"path"`
	Kind any    `json:"kind"` // {"type":"add"} on recent CLIs, a string on older ones
	Diff string `json:"diff"`
}

// item is the subset of a ThreadItem this package reads.
type item struct {
	Type             string       `json:"type"`
	ID               string       `json:"id"`
	Text             string       `json:"text"`    // agentMessage, reasoning
	Command          string       `json:"command"` // commandExecution
	Cwd              string       `json:"cwd"`
	Status           string       `json:"status"`
	ExitCode         *int         `json:"exitCode"`
	AggregatedOutput *string      `json:"aggregatedOutput"`
	Changes          []fileChange `json:"changes"` // fileChange
}

type itemNotification struct {
	ThreadID string `json:"threadId"`
	TurnID   string `json:"turnId"`
	Item     item   `json:"item"`
}

type errorNotification struct {
	Error     turnError `json:"error"`
	WillRetry bool      `json:"willRetry"`
}

// commandApprovalParams is item/commandExecution/requestApproval.
type commandApprovalParams struct {
	ThreadID string  `json:"threadId"`
	TurnID   string  `json:"turnId"`
	ItemID   string  `json:"itemId"`
	Command  *string `json:"command"`
	Cwd      *string `json:"cwd"`
	Reason   *string `json:"reason"`
}

// fileChangeApprovalParams is item/fileChange/requestApproval: the changes
// themselves are in the fileChange item announced before it.
type fileChangeApprovalParams struct {
	ThreadID  string  `json:"threadId"`
	TurnID    string  `json:"turnId"`
	ItemID    string  `json:"itemId"`
	Reason    *string `json:"reason"`
	GrantRoot *string `json:"grantRoot"`
}

// legacyExecApprovalParams is execCommandApproval (the v1 request, still in
// the v2 schema): the command as argv.
type legacyExecApprovalParams struct {
	ConversationID string   `json:"conversationId"`
	CallID         string   `json:"callId"`
	Command        []string `json:"command"`
	Cwd            string   `json:"cwd"`
	Reason         *string  `json:"reason"`
}

// legacyPatchApprovalParams is applyPatchApproval (v1).
type legacyPatchApprovalParams struct {
	ConversationID string                     `json:"conversationId"`
	CallID         string                     `json:"callId"`
	FileChanges    map[string]json.RawMessage `json:"fileChanges"`
	Reason         *string                    `json:"reason"`
	GrantRoot      *string                    `json:"grantRoot"`
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
