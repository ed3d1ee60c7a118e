package rawmcp

import (
	"encoding/json"
	"testing"
	"time"
)

// ExtensionMeta is a 2026-07-28 request's _meta declaring the tasks
// extension and form elicitation.
func ExtensionMeta() map[string]any {
	return map[string]any{"io.modelcontextprotocol/protocolVersion": "2026-07-28",
		"io.modelcontextprotocol/clientCapabilities": map[string]any{"extensions": map[string]any{"io.modelcontextprotocol/tasks": map[string]any{}}, "elicitation": map[string]any{}}}
}

// WaitTaskStatus polls get (a tasks/get, on any transport) until the task's
// status is want and returns the task; an error answer, or 120 s without
// that status, fails the test.
func WaitTaskStatus(t testing.TB, get func() (result, errObj json.RawMessage), want string) map[string]any {
	t.Helper()
	deadline := time.Now().Add(120 * time.Second)
	for {
		res, e := get()
		var m map[string]any
		if e != nil || json.Unmarshal(res, &m) != nil {
			t.Fatalf("tasks/get: %s %s", res, e)
		}
		if m["status"] == want {
			return m
		}
		if time.Now().After(deadline) {
			t.Fatalf("task: %s, want %s", res, want)
		}
		time.Sleep(20 * time.Millisecond) // polling is the protocol's own wait
	}
}

// CreateExtensionTask calls tool with args as a 2026-07-28 client that
// declared the tasks extension and returns the task's id; any other answer
// fails the test.
func (p *Stdio) CreateExtensionTask(tool string, args map[string]any) string {
	p.t.Helper()
	res, e := p.RPC("tools/call", map[string]any{"name": tool, "arguments": args, "_meta": ExtensionMeta()})
	var tk struct{ ResultType, TaskID string }
	if e != nil || json.Unmarshal(res, &tk) != nil || tk.ResultType != "task" || tk.TaskID == "" {
		p.t.Fatalf("create an extension task over stdio: %s %s", res, e)
	}
	return tk.TaskID
}

// GetExtensionTask is tasks/get of id as a 2026-07-28 client, for
// WaitTaskStatus.
func (p *Stdio) GetExtensionTask(id string) func() (result, errObj json.RawMessage) {
	return func() (json.RawMessage, json.RawMessage) {
		return p.RPC("tasks/get", map[string]any{"taskId": id, "_meta": ExtensionMeta()})
	}
}
