package mcpserver_test

import (
	"context"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpfleet/mcpfleet/codermcp/internal/codertest/testdata/harness"
	"github.com/mcpfleet/mcpfleet/codermcp/internal/session"
)

// BenchmarkCoderTurn is one full coder call on one session: MCP client →
// streamable HTTP → handler → real Codex CLI (native resume from the second
// turn on) → codertest endpoint, with progress notifications. The time is
// dominated by the CLI's start-up; B/op covers only this process.
func BenchmarkCoderTurn(b *testing.B) {
	e := newEnv(b, envOptions{})
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		res, err := e.cs.CallTool(ctx, &mcp.CallToolParams{Name: "coder",
			Arguments: map[string]any{"prompt": "bench turn", "sessionId": "bench"},
			Meta:      mcp.Meta{"progressToken": "bench"}})
		if err != nil || res.IsError {
			b.Fatalf("coder: %v %v", err, res)
		}
	}
}

// BenchmarkSessionAcquire is the per-call bookkeeping: acquire (session lock
// and concurrency slot), add a turn, release.
func BenchmarkSessionAcquire(b *testing.B) {
	s := session.New(session.Options{})
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		l, err := s.Acquire(ctx, "o", "bench")
		if err != nil {
			b.Fatal(err)
		}
		l.AddTurn("p", "r")
		l.Release()
	}
}

// BenchmarkCoderDryRun is a danger-full-access dry run in a small git
// repository: MCP round trip, planning (argv) and the preview's read-only
// git commands (rev-parse, status, diff). No CLI process starts. This is
// what every approval adds before the person is asked; a call that needs
// no approval never pays it.
func BenchmarkCoderDryRun(b *testing.B) {
	e := newEnv(b, envOptions{})
	repo := harness.GitRepo(b)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		res, err := e.cs.CallTool(ctx, &mcp.CallToolParams{Name: "coder",
			Arguments: map[string]any{"prompt": "bench dry run", "workingDirectory": repo, "sandbox": "danger-full-access", "dryRun": true}})
		if err != nil || res.IsError {
			b.Fatalf("coder dry run: %v %v", err, res)
		}
	}
}
