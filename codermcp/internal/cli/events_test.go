package cli

import (
	"bytes"
	"os"
	"strings"
	"testing"
)

func TestParseRecordedStream(t *testing.T) {
	// testdata/events.jsonl was recorded from codex-cli 0.169.0 running one
	// shell command against codertest.
	b, err := os.ReadFile("testdata/events.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	var types, messages []string
	for _, line := range bytes.Split(bytes.TrimSpace(b), []byte("\n")) {
		ev, ok := ParseEvent(line)
		if !ok {
			t.Fatalf("cannot parse %s", line)
		}
		types = append(types, ev.Type)
		if m := Describe(ev); m != "" {
			messages = append(messages, m)
		}
	}
	want := []string{"thread.started", "item.completed", "turn.started", "item.started", "item.completed", "item.completed", "turn.completed"}
	if strings.Join(types, ",") != strings.Join(want, ",") {
		t.Errorf("event types = %v, want %v", types, want)
	}
	joined := strings.Join(messages, "\n")
	if strings.Contains(joined, "Model metadata") {
		t.Errorf("the model-metadata warning is noise, not a step:\n%s", joined)
	}
	for _, w := range []string{"session started", "running: /bin/bash -lc", "command completed (exit 0)", "assistant: ran:", "turn completed"} {
		if !strings.Contains(joined, w) {
			t.Errorf("progress messages lack %q:\n%s", w, joined)
		}
	}
}

func TestDescribe(t *testing.T) {
	zero := 0
	cases := []struct {
		ev   Event
		want string
	}{
		{Event{Type: "item.completed", Item: &Item{Type: "file_change", Changes: []Change{{"a.go", "add"}, {"b.go", "update"}}}}, "file changed: add a.go update b.go"},
		{Event{Type: "item.completed", Item: &Item{Type: "agent_message", Text: "first line\nsecond"}}, "assistant: first line"},
		{Event{Type: "item.completed", Item: &Item{Type: "command_execution", Command: "ls", Status: "failed", ExitCode: &zero}}, "command failed (exit 0): ls"},
		{Event{Type: "item.started", Item: &Item{Type: "mcp_tool_call", Server: "s", Tool: "t"}}, "tool call: s.t"},
		{Event{Type: "item.started", Item: &Item{Type: "agent_message"}}, ""},
		{Event{Type: "turn.failed", Error: &struct {
			Message string `json:"message"`
		}{"boom"}}, "turn failed: boom"},
		{Event{Type: "unknown.kind"}, ""},
	}
	for _, tc := range cases {
		if got := Describe(tc.ev); got != tc.want {
			t.Errorf("Describe(%+v) = %q, want %q", tc.ev, got, tc.want)
		}
	}
	if _, ok := ParseEvent([]byte("WARNING: not json")); ok {
		t.Error("a text line must not parse as an event")
	}
}

func TestSessionIDFromText(t *testing.T) {
	cases := map[string]string{
		"session id: 01a200db-c994-7c51-92d0-7d17a5658eb0": "01a200db-c994-7c51-92d0-7d17a5658eb0",
		"[ts] Conversation ID: abc-123":                    "abc-123",
		"workdir: /tmp":                                    "",
	}
	for in, want := range cases {
		if got := SessionIDFromText(in); got != want {
			t.Errorf("SessionIDFromText(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestClassify(t *testing.T) {
	b, err := os.ReadFile("testdata/events-401.jsonl") // recorded from codex-cli 0.169.0
	if err != nil {
		t.Fatal(err)
	}
	var failed string
	for _, line := range bytes.Split(bytes.TrimSpace(b), []byte("\n")) {
		if ev, ok := ParseEvent(line); ok && ev.Type == "turn.failed" {
			failed = ev.Error.Message
		}
	}
	cases := []struct {
		texts []string
		kind  FailureKind
		cause string
	}{
		{[]string{failed}, FailAuth, "unexpected status 401"},
		{[]string{"", "Error: Missing environment variable: `FAKE_API_KEY`."}, FailAuth, "Missing environment variable"},
		{[]string{"", "Not logged in"}, FailAuth, "Not logged in"},
		{[]string{"The requested model 'x' does not exist."}, FailModel, "does not exist"},
		{[]string{`{"error":{"code":"model_not_found"}}`}, FailModel, "model_not_found"},
		{[]string{"", "Error: thread/resume: thread/resume failed: no rollout found for thread id T (code -32600)"}, FailUnknownThread, "no rollout found"},
		// The metadata warning for an uncatalogued model is not a model error.
		{[]string{"", "warning: Model metadata for `m` not found.\nError: stream disconnected before completion"}, FailExec, "stream disconnected"},
		{[]string{"", ""}, FailExec, "without saying why"},
	}
	for _, tc := range cases {
		e := classify(tc.texts...)
		if e.Kind != tc.kind || !strings.Contains(e.Cause, tc.cause) {
			t.Errorf("classify(%q) = %v %q, want %v containing %q", tc.texts, e.Kind, e.Cause, tc.kind, tc.cause)
		}
	}
	if got := stderrCause("WARNING: proceeding, even though...\nError: boom\n\nStack backtrace:\n   0: <unknown>\n   1: <unknown>\n"); got != "Error: boom" {
		t.Errorf("stderrCause = %q, want the Error: line, not the backtrace", got)
	}
}

// BenchmarkEventStream measures the hot path of a coder turn on our side:
// parsing the CLI's JSONL events and turning them into progress messages.
func BenchmarkEventStream(b *testing.B) {
	data, err := os.ReadFile("testdata/events.jsonl")
	if err != nil {
		b.Fatal(err)
	}
	lines := bytes.Split(bytes.TrimSpace(data), []byte("\n"))
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		for _, line := range lines {
			ev, ok := ParseEvent(line)
			if ok {
				_ = Describe(ev)
			}
		}
	}
}
