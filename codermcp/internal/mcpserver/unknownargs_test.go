package mcpserver_test

import (
	"testing"

	"github.com/mcpfleet/mcpfleet/shared/approval"
	"github.com/mcpfleet/mcpfleet/shared/toolcall"
)

// An argument a tool's schema does not name is refused, never ignored: a
// misspelt workingDirectory with fullAuto would otherwise run the CLI with
// write access in the server's own directory, and a misspelt sandbox
// would be read as the default. Nothing runs, and the model is not asked.
func TestUnknownArgumentsAreRefused(t *testing.T) {
	t.Parallel()
	e := newApprovalEnv(t, envOptions{calls: toolcall.Config{Approval: approval.Config{Policy: approval.None}}})
	dir := t.TempDir()
	tests := []struct {
		tool, unknown string
		args          map[string]any
	}{
		{"coder", "cwd", map[string]any{"prompt": "p", "fullAuto": true, "cwd": dir}},
		{"coder", "working_directory", map[string]any{"prompt": "p", "sandbox": "workspace-write", "working_directory": dir}},
		{"coder", "WorkingDirectory", map[string]any{"prompt": "p", "WorkingDirectory": dir}},
		{"coder", "sandbox_mode", map[string]any{"prompt": "p", "sandbox_mode": "read-only", "workingDirectory": dir}},
		{"coder", "approval-policy", map[string]any{"prompt": "p", "approval-policy": "never", "workingDirectory": dir}},
		{"coder", "config", map[string]any{"prompt": "p", "config": map[string]any{"sandbox_mode": "danger-full-access"}, "workingDirectory": dir}},
		{"coder", "", map[string]any{"prompt": "p", "": "x", "workingDirectory": dir}},
		{"coder", "sessionID", map[string]any{"prompt": "p", "sessionID": "s-1", "workingDirectory": dir}},
		{"review", "sandbox", map[string]any{"uncommitted": true, "sandbox": "danger-full-access", "workingDirectory": dir}},
		{"review", "cwd", map[string]any{"uncommitted": true, "cwd": dir}},
		{"ping", "msg", map[string]any{"msg": "hi"}},
		{"help", "topic", map[string]any{"topic": "exec"}},
		{"listSessions", "all", map[string]any{"all": true}},
	}
	for _, tt := range tests {
		t.Run(tt.tool+"/"+tt.unknown, func(t *testing.T) {
			runs, requests := e.started.Load(), len(e.h.Endpoint.Requests())
			mustError(t, e.call(t, tt.tool, tt.args), "unknown argument", `"`+tt.unknown+`"`, "nothing was run")
			e.nothingRan(t, runs, requests)
		})
	}
}
