package cli

import (
	"encoding/json"
	"regexp"
	"strconv"
	"strings"
)

// Event is one line of `codex exec --json` output.
type Event struct {
	Type     string `json:"type"`
	ThreadID string `json:"thread_id,omitempty"`
	Item     *Item  `json:"item,omitempty"`
	// Message is set on top-level "error" events.
	Message string `json:"message,omitempty"`
	// Error is set on "turn.failed".
	Error *struct {
		Message string `json:"message"`
	} `json:"error,omitempty"`
}

// Item is the payload of item.started / item.updated / item.completed.
type Item struct {
	ID       string   `json:"id"`
	Type     string   `json:"type"`
	Text     string   `json:"text,omitempty"`
	Message  string   `json:"message,omitempty"`
	Command  string   `json:"command,omitempty"`
	ExitCode *int     `json:"exit_code,omitempty"`
	Status   string   `json:"status,omitempty"`
	Changes  []Change `json:"changes,omitempty"`
	Server   string   `json:"server,omitempty"`
	Tool     string   `json:"tool,omitempty"`
	Query    string   `json:"query,omitempty"`
}

// Change is one file touched by a file_change item.
type Change struct {
	Path string `json:"path"`
	Kind string `json:"kind"`
}

// ParseEvent decodes one JSONL line; ok is false for anything that is not a
// JSON event (the CLI may print stray text).
func ParseEvent(line []byte) (ev Event, ok bool) {
	if len(line) == 0 || line[0] != '{' {
		return Event{}, false
	}
	if err := json.Unmarshal(line, &ev); err != nil || ev.Type == "" {
		return Event{}, false
	}
	return ev, true
}

// Describe turns an event into a short progress message ("" when the event
// is not worth reporting).
func Describe(ev Event) string {
	switch ev.Type {
	case "thread.started":
		return "session started"
	case "turn.started":
		return "turn started"
	case "turn.completed":
		return "turn completed"
	case "turn.failed":
		if ev.Error != nil {
			return "turn failed: " + firstLine(ev.Error.Message, 160)
		}
		return "turn failed"
	case "error":
		return "error: " + firstLine(ev.Message, 160)
	case "log": // a human-mode transcript line (CLIs without --json events)
		return firstLine(ev.Message, 160)
	case "item.started", "item.updated", "item.completed":
		if ev.Item == nil {
			return ""
		}
		return describeItem(ev.Type == "item.completed", ev.Item)
	}
	return ""
}

func describeItem(done bool, it *Item) string {
	switch it.Type {
	case "command_execution":
		if !done {
			return "running: " + firstLine(it.Command, 160)
		}
		status := it.Status
		if it.ExitCode != nil {
			status += " (exit " + strconv.Itoa(*it.ExitCode) + ")"
		}
		return "command " + strings.TrimSpace(status) + ": " + firstLine(it.Command, 140)
	case "file_change":
		if !done {
			return ""
		}
		var b strings.Builder
		b.WriteString("file changed:")
		for i, c := range it.Changes {
			if i == 5 {
				b.WriteString(" …")
				break
			}
			b.WriteString(" ")
			if c.Kind != "" {
				b.WriteString(c.Kind)
				b.WriteString(" ")
			}
			b.WriteString(c.Path)
		}
		return b.String()
	case "agent_message":
		if !done {
			return ""
		}
		return "assistant: " + firstLine(it.Text, 160)
	case "reasoning":
		if !done {
			return ""
		}
		return "reasoning: " + firstLine(it.Text, 160)
	case "mcp_tool_call":
		if done {
			return "tool call " + it.Status + ": " + it.Server + "." + it.Tool
		}
		return "tool call: " + it.Server + "." + it.Tool
	case "web_search":
		return "web search: " + firstLine(it.Query, 160)
	case "todo_list", "plan":
		return "plan updated"
	case "error":
		if strings.Contains(it.Message, "Model metadata for") {
			return "" // printed for every model the CLI has no metadata for; not a step
		}
		return "warning: " + firstLine(it.Message, 160)
	}
	if done {
		return it.Type + " done"
	}
	return ""
}

// firstLine returns the first non-empty line of s, cut to max runes.
func firstLine(s string, max int) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = strings.TrimSpace(s[:i])
	}
	if len(s) > max {
		r := []rune(s)
		if len(r) > max {
			s = string(r[:max]) + "…"
		}
	}
	return s
}

// sessionIDRE finds the conversation id in human-mode output of CLIs
// without --json ("session id: <uuid>", older "conversation id: <uuid>").
var sessionIDRE = regexp.MustCompile(`(?i)\b(?:session|conversation)[ _]id:\s*([0-9A-Za-z][0-9A-Za-z_-]*)`)

// SessionIDFromText extracts a conversation id from a human-mode line.
func SessionIDFromText(line string) string {
	if m := sessionIDRE.FindStringSubmatch(line); m != nil {
		return m[1]
	}
	return ""
}
