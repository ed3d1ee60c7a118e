package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcpfleet/mcpfleet/codermcp/internal/codertest"
	"github.com/mcpfleet/mcpfleet/codermcp/internal/codertest/harness"
	"github.com/mcpfleet/mcpfleet/shared/e2e"
	"github.com/mcpfleet/mcpfleet/shared/e2e/lb"
	"github.com/mcpfleet/mcpfleet/shared/e2e/rawmcp"
)

// TestTasksEverywhere: codermcp with the real Codex CLI offers tasks on
// every transport and protocol version, one process each. Over stdio:
// a 2026-07-28 extension task of coder completes with the model's reply
// inline in tasks/get; a workspace-write turn (a change) asks inside the
// task (input_required, tasks/update) and a decline leaves the model
// unasked; a 2025-11-25 task's result comes through tasks/result. Over
// HTTP (OAuth): the extension task completes with the reply inline.
func TestTasksEverywhere(t *testing.T) {
	t.Parallel()
	h := harness.New(t)
	bin := e2e.Build(t, ".")
	env := append(append([]string(nil), h.Env...), "CODER_CLI_PATH="+h.CLI, "CODER_HOME="+h.Home, "CODER_WORKSPACE_ROOTS="+testRoots(),
		"CODER_MODELS="+codertest.Model, "CODER_DEFAULT_MODEL="+codertest.Model)

	t.Run("stdio", func(t *testing.T) {
		// Approval for changes, so that a workspace-write turn asks.
		p := rawmcp.StartStdio(t, bin, append(append([]string(nil), env...), "MCP_APPROVAL=change"))
		create := func(args map[string]any) string { return p.CreateExtensionTask("coder", args) }
		get := p.GetExtensionTask
		id := create(map[string]any{"prompt": "stdio extension task [[reply:Hello over stdio.]]"})
		if done := rawmcp.WaitTaskStatus(t, get(id), "completed"); !strings.Contains(fmt.Sprint(done["result"]), "Hello over stdio.") {
			t.Fatalf("completed without the reply inline: %v", done)
		}

		dir := t.TempDir()
		id = create(map[string]any{"prompt": "asked inside the task [[reply:written]]", "sandbox": "workspace-write", "workingDirectory": dir})
		asked := rawmcp.WaitTaskStatus(t, get(id), "input_required")
		if !strings.Contains(fmt.Sprint(asked["inputRequests"]), "elicitation/create") {
			t.Fatalf("input_required without the approval request: %v", asked)
		}
		if res, e := p.RPC("tasks/update", map[string]any{"taskId": id, "inputResponses": map[string]any{"approve-1": map[string]any{"action": "decline"}}, "_meta": rawmcp.ExtensionMeta()}); e != nil {
			t.Fatalf("tasks/update: %s %s", res, e)
		}
		// The result itself must be the refusal (the word "declined" may also
		// stand in the question the task asked).
		done := rawmcp.WaitTaskStatus(t, get(id), "completed")
		if r, _ := done["result"].(map[string]any); r == nil || r["isError"] != true || !strings.Contains(fmt.Sprint(r["content"]), "declined") {
			t.Fatalf("declined: %v", done)
		}
		if n := len(h.Endpoint.RequestsWith("asked inside the task")); n != 0 {
			t.Fatalf("a declined turn reached the model %d times", n)
		}

		// The CLI's own approval request (approvalPolicy on-request) is asked
		// inside the 2026-07-28 task as well: accepted, the command runs.
		cliDir := t.TempDir()
		cmd := "echo escalated > marker"
		id = create(map[string]any{"prompt": "[[escalate:" + cmd + "]]", "approvalPolicy": "on-request", "workingDirectory": cliDir})
		var cliAsked bool
		for {
			st := rawmcp.WaitTaskStatus(t, func() (json.RawMessage, json.RawMessage) {
				res, e := get(id)()
				var m map[string]any
				if e == nil && json.Unmarshal(res, &m) == nil && m["status"] == "completed" {
					return json.RawMessage(`{"status":"input_required","done":true}`), nil
				}
				return res, e
			}, "input_required")
			if st["done"] == true {
				break
			}
			reqs, _ := st["inputRequests"].(map[string]any)
			answers := map[string]any{}
			for key, r := range reqs {
				if strings.Contains(fmt.Sprint(r), "echo escalated") {
					cliAsked = true
				}
				answers[key] = map[string]any{"action": "accept", "content": map[string]any{}}
			}
			if len(answers) == 0 {
				t.Fatalf("input_required without requests: %v", st)
			}
			if res, e := p.RPC("tasks/update", map[string]any{"taskId": id, "inputResponses": answers, "_meta": rawmcp.ExtensionMeta()}); e != nil {
				t.Fatalf("tasks/update: %s %s", res, e)
			}
		}
		if !cliAsked {
			t.Fatal("the task never asked the CLI's approval request (the command) inside the task")
		}
		done = rawmcp.WaitTaskStatus(t, get(id), "completed")
		if r, _ := done["result"].(map[string]any); r == nil || r["isError"] == true {
			t.Fatalf("accepted CLI approval: %v", done)
		}
		if _, err := os.Stat(filepath.Join(cliDir, "marker")); err != nil {
			t.Fatalf("the accepted command did not run: %v", err)
		}

		// 2025-11-25 on the same process: a session, params.task, tasks/result.
		if _, e := p.RPC("initialize", map[string]any{"protocolVersion": "2025-11-25", "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "tasks-everywhere", "version": "1"}}); e != nil {
			t.Fatalf("initialize: %s", e)
		}
		p.Write([]byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`))
		res, e := p.RPC("tools/call", map[string]any{"name": "coder", "arguments": map[string]any{"prompt": "stdio legacy task [[reply:Hello from 2025.]]"}, "task": map[string]any{}})
		var created struct{ Task struct{ TaskID string } }
		if e != nil || json.Unmarshal(res, &created) != nil || created.Task.TaskID == "" {
			t.Fatalf("create a 2025-11-25 task over stdio: %s %s", res, e)
		}
		res, e = p.RPC("tasks/result", map[string]any{"taskId": created.Task.TaskID})
		if e != nil || !strings.Contains(string(res), "Hello from 2025.") {
			t.Fatalf("tasks/result over stdio: %s %s", res, e)
		}
	})

	t.Run("http", func(t *testing.T) {
		srv := e2e.StartHTTP(t, bin, append(append([]string(nil), env...), e2e.OAuthEnv...))
		c := lb.NewModern(srv.MCPURL())
		c.Token = e2e.OAuthToken("alice")
		c.Capabilities = rawmcp.ExtensionMeta()["io.modelcontextprotocol/clientCapabilities"].(map[string]any)
		ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
		defer cancel()
		a, err := c.Call(ctx, "tools/call", map[string]any{"name": "coder", "arguments": map[string]any{"prompt": "http extension task [[reply:Hello over HTTP.]]"}})
		var tk struct{ ResultType, TaskID string }
		if err != nil || a.Error != nil || json.Unmarshal(a.Result, &tk) != nil || tk.ResultType != "task" {
			t.Fatalf("create an extension task over HTTP: %v %s", err, a.Raw)
		}
		done := rawmcp.WaitTaskStatus(t, func() (json.RawMessage, json.RawMessage) {
			g, err := c.Call(ctx, "tasks/get", map[string]any{"taskId": tk.TaskID})
			if err != nil {
				t.Fatal(err)
			}
			if g.Error != nil {
				return nil, json.RawMessage(g.Raw)
			}
			return g.Result, nil
		}, "completed")
		if !strings.Contains(fmt.Sprint(done["result"]), "Hello over HTTP.") {
			t.Fatalf("completed without the reply inline: %v", done)
		}
	})
}
