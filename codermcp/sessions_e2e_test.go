package main

import (
	"encoding/json"
	"strings"
	"testing"
)

// toolText calls a tool as c and returns its text and isError.
func (c *caller) toolText(args string) (string, bool) {
	c.t.Helper()
	_, a := c.rpc("tools/call", args)
	if a.Error != nil {
		c.t.Fatalf("tools/call %s: %+v", args, a.Error)
	}
	var r struct {
		Content []struct{ Text string }
		IsError bool
	}
	if err := json.Unmarshal(a.Result, &r); err != nil {
		c.t.Fatalf("result %s: %v", a.Result, err)
	}
	var parts []string
	for _, p := range r.Content {
		parts = append(parts, p.Text)
	}
	return strings.Join(parts, "\n"), r.IsError
}

// TestSessionsBelongToTheirIdentity: a coder session belongs to the OAuth
// identity that created it. Bob, naming Alice's session id, sees nothing
// of it — not in listSessions, not in a dry run, not in the context his
// turn sends to the model — and his turn does not land on it.
func TestSessionsBelongToTheirIdentity(t *testing.T) {
	h, url := taskServer(t)
	alice, bob := dial(t, url, "alice"), dial(t, url, "bob")
	dir := t.TempDir()
	call := func(c *caller, args string) string {
		t.Helper()
		text, isErr := c.toolText(args)
		if isErr {
			t.Fatalf("tool error: %s", text)
		}
		return text
	}
	call(alice, `{"name":"coder","arguments":{"prompt":"alice-secret-prompt","sessionId":"same-name","workingDirectory":"`+dir+`"}}`)
	aliceThread := ""
	for _, r := range h.Endpoint.RequestsWith("alice-secret-prompt") {
		aliceThread = r.ThreadID
	}
	if got := call(alice, `{"name":"listSessions","arguments":{}}`); !strings.Contains(got, `"id":"same-name"`) {
		t.Fatalf("alice's own listSessions lacks her session: %s", got)
	}
	if got := call(bob, `{"name":"listSessions","arguments":{}}`); got != "[]" {
		t.Errorf("bob's listSessions shows another identity's sessions: %s", got)
	}
	preview := call(bob, `{"name":"coder","arguments":{"prompt":"bob-prompt","sessionId":"same-name","sandbox":"workspace-write","dryRun":true,"workingDirectory":"`+dir+`"}}`)
	for _, leak := range []string{"continuing session", "turnCount", aliceThread} {
		if strings.Contains(preview, leak) {
			t.Errorf("bob's dry run shows %q of alice's session:\n%s", leak, preview)
		}
	}
	if !strings.Contains(preview, "new session same-name") {
		t.Errorf("bob's dry run does not show a new session:\n%s", preview)
	}
	call(bob, `{"name":"coder","arguments":{"prompt":"bob-prompt","sessionId":"same-name","workingDirectory":"`+dir+`"}}`)
	for _, r := range h.Endpoint.RequestsWith("bob-prompt") {
		if r.ThreadID == aliceThread || strings.Contains(strings.Join(r.Texts, "\n"), "alice-secret-prompt") {
			t.Errorf("bob's turn continued alice's conversation (thread %s)", r.ThreadID)
		}
	}
	if got := call(alice, `{"name":"listSessions","arguments":{}}`); !strings.Contains(got, `"turnCount":1`) {
		t.Errorf("bob's turn landed on alice's session: %s", got)
	}
	if got := call(bob, `{"name":"listSessions","arguments":{}}`); !strings.Contains(got, `"id":"same-name"`) || !strings.Contains(got, `"turnCount":1`) {
		t.Errorf("bob's own session is missing: %s", got)
	}
}
