package mcpserver_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpfleet/mcpfleet/codermcp/internal/cli"
)

// fixture is the recorded `codex mcp-server` 0.153.4 (testdata).
type fixture struct {
	CLIVersion string `json:"cliVersion"`
	Tools      []struct {
		Name         string          `json:"name"`
		Title        string          `json:"title"`
		Description  string          `json:"description"`
		InputSchema  json.RawMessage `json:"inputSchema"`
		OutputSchema json.RawMessage `json:"outputSchema"`
	} `json:"tools"`
	Results map[string]struct {
		Arguments map[string]any `json:"arguments"`
		Result    map[string]any `json:"result"`
	} `json:"results"`
}

func readFixture(t *testing.T) fixture {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "testdata", "mcpserver-0.153.4.json"))
	if err != nil {
		t.Fatal(err)
	}
	var f fixture
	if err := json.Unmarshal(b, &f); err != nil {
		t.Fatal(err)
	}
	return f
}

func sameJSON(t *testing.T, what string, got any, want json.RawMessage) {
	t.Helper()
	g, _ := json.Marshal(got)
	var gv, wv any
	_ = json.Unmarshal(g, &gv)
	_ = json.Unmarshal(want, &wv)
	gb, _ := json.Marshal(gv)
	wb, _ := json.Marshal(wv)
	if string(gb) != string(wb) {
		t.Errorf("%s:\n got %s\nwant %s", what, gb, wb)
	}
}

// The tools are listed with the fixture's names, titles, descriptions,
// input and output schemas.
func TestCodexToolsMatchFixture(t *testing.T) {
	t.Parallel()
	f := readFixture(t)
	e := newEnv(t, envOptions{})
	list, err := e.cs.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]*mcp.Tool{}
	for _, tl := range list.Tools {
		byName[tl.Name] = tl
	}
	for _, ft := range f.Tools {
		got := byName[ft.Name]
		if got == nil {
			t.Errorf("tool %s is not listed", ft.Name)
			continue
		}
		// The pipeline appends the risk class and approval to the
		// description, and adds its dryRun and confirm arguments.
		if !strings.HasPrefix(got.Description, ft.Description+"\n\n") || got.Title != ft.Title {
			t.Errorf("%s: title/description = %q/%q, want %q/%q and the pipeline's words", ft.Name, got.Title, got.Description, ft.Title, ft.Description)
		}
		b, _ := json.Marshal(got.InputSchema)
		var in map[string]any
		_ = json.Unmarshal(b, &in)
		props, _ := in["properties"].(map[string]any)
		delete(props, "dryRun")
		delete(props, "confirm")
		sameJSON(t, ft.Name+" inputSchema", in, ft.InputSchema)
		sameJSON(t, ft.Name+" outputSchema", got.OutputSchema, ft.OutputSchema)
	}
}

// codex then codex-reply (threadId, then the deprecated conversationId)
// on the real CLI: the fixture's result shapes, one thread continued
// natively (the endpoint sees every turn on the first turn's thread).
func TestCodexRoundTrip(t *testing.T) {
	t.Parallel()
	f := readFixture(t)
	e := newEnv(t, envOptions{})
	dir := t.TempDir()
	args := f.Results["codex"].Arguments
	args["cwd"] = dir
	res := e.call(t, "codex", args)
	thread := checkCodexShape(t, res, f.Results["codex"].Result, "")
	if reqs := e.h.Endpoint.RequestsWith("[[reply:FIXTURE-ANSWER-1]]"); len(reqs) != 1 || reqs[0].ThreadID != thread {
		t.Fatalf("endpoint saw %+v, want one request on thread %s", reqs, thread)
	}
	for i, name := range []string{"codex-reply", "codex-reply (deprecated conversationId)"} {
		fx := f.Results[name]
		a := map[string]any{}
		for k, v := range fx.Arguments {
			if v == "<threadId>" {
				v = thread
			}
			a[k] = v
		}
		res := e.call(t, "codex-reply", a)
		checkCodexShape(t, res, fx.Result, thread)
		marker := []string{"[[reply:FIXTURE-ANSWER-2]]", "[[reply:FIXTURE-ANSWER-3]]"}[i]
		reqs := e.h.Endpoint.RequestsWith(marker)
		if len(reqs) != 1 || reqs[0].ThreadID != thread {
			t.Fatalf("%s: endpoint saw %+v, want the turn on thread %s (native resume)", name, reqs, thread)
		}
	}
}

func checkCodexShape(t *testing.T, res *mcp.CallToolResult, want map[string]any, thread string) string {
	t.Helper()
	if res.IsError {
		t.Fatalf("error: %s", text(res))
	}
	sc, _ := res.StructuredContent.(map[string]any)
	got, _ := sc["threadId"].(string)
	if thread != "" && got != thread {
		t.Errorf("threadId = %q, want %q", got, thread)
	}
	if len(got) < 32 {
		t.Errorf("threadId = %q, want the CLI's thread id", got)
	}
	wsc := want["structuredContent"].(map[string]any)
	if sc["content"] != wsc["content"] || len(sc) != 2 {
		t.Errorf("structuredContent = %v, want {threadId, content: %v}", sc, wsc["content"])
	}
	wantText := want["content"].([]any)[0].(map[string]any)["text"]
	if len(res.Content) != 1 || text(res) != wantText {
		t.Errorf("content = %v, want one text %q", res.Content, wantText)
	}
	return got
}

// The fixture's failures: an unknown argument, no thread id, an unknown
// thread — and a thread another tool or caller started is unknown too.
func TestCodexFailures(t *testing.T) {
	t.Parallel()
	f := readFixture(t)
	e := newEnv(t, envOptions{})
	mustError(t, e.call(t, "codex", f.Results["codex with an unknown argument"].Arguments), "bogus")
	mustError(t, e.call(t, "codex-reply", f.Results["codex-reply without a thread id"].Arguments), "either threadId or conversationId must be provided")
	res := e.call(t, "codex-reply", f.Results["codex-reply with an unknown thread id"].Arguments)
	mustError(t, res, "Session not found for thread_id: 01a21ba1-0000-7000-8000-000000000000")
	if sc, _ := res.StructuredContent.(map[string]any); sc["threadId"] != "01a21ba1-0000-7000-8000-000000000000" {
		t.Errorf("structuredContent = %v, want the fixture's", res.StructuredContent)
	}
	// A coder session's thread is not a codex thread.
	cres := e.call(t, "coder", map[string]any{"prompt": "coder thread"})
	mustOK(t, cres)
	tid, _ := contentMeta(t, cres)["threadId"].(string)
	mustError(t, e.call(t, "codex-reply", map[string]any{"threadId": tid, "prompt": "hijack"}), "Session not found")
	if reqs := e.h.Endpoint.RequestsWith("hijack"); len(reqs) != 0 {
		t.Errorf("endpoint saw %+v for a refused reply", reqs)
	}
}

// Every new argument, hostile: nothing reaches the CLI.
func TestCodexHostileArguments(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{})
	huge := strings.Repeat("x", cli.MaxArgBytes)
	many := map[string]any{}
	for i := range cli.MaxOverrides + 1 {
		many["k"+strings.Repeat("a", i)] = "v"
	}
	cases := []struct {
		name string
		args map[string]any
		want string
	}{
		{"cwd outside the roots", map[string]any{"prompt": "h1", "cwd": "/etc"}, "outside"},
		{"cwd root", map[string]any{"prompt": "h1", "cwd": "/"}, "outside"},
		{"cwd relative escape", map[string]any{"prompt": "h1", "cwd": "../../../../../../etc"}, ""},
		{"cwd missing", map[string]any{"prompt": "h1", "cwd": "/nonexistent-codermcp-dir"}, ""},
		{"cwd option-looking", map[string]any{"prompt": "h1", "cwd": "--sandbox=danger-full-access"}, ""},
		{"cwd NUL", map[string]any{"prompt": "h1", "cwd": "/tmp/\x00x"}, ""},
		{"sandbox not a mode", map[string]any{"prompt": "h1", "sandbox": "none"}, "sandbox"},
		{"sandbox option-looking", map[string]any{"prompt": "h1", "sandbox": "--dangerously-bypass-approvals-and-sandbox"}, "sandbox"},
		{"approval-policy untrusted", map[string]any{"prompt": "h1", "approval-policy": "untrusted"}, "approval-policy"},
		{"approval-policy never-ish", map[string]any{"prompt": "h1", "approval-policy": "never\n"}, "approval-policy"},
		{"model not in catalogue", map[string]any{"prompt": "h1", "model": "gpt-evil"}, "model"},
		{"model option-looking", map[string]any{"prompt": "h1", "model": "--config=sandbox_mode=danger-full-access"}, "model"},
		{"config sandbox_mode", map[string]any{"prompt": "h1", "config": map[string]any{"sandbox_mode": "danger-full-access"}}, "sandbox_mode"},
		{"config approval_policy", map[string]any{"prompt": "h1", "config": map[string]any{"approval_policy": "never"}}, "approval_policy"},
		{"config nested sandbox", map[string]any{"prompt": "h1", "config": map[string]any{"sandbox_workspace_write.writable_roots": []any{"/"}}}, "sandbox_workspace_write"},
		{"config model_providers", map[string]any{"prompt": "h1", "config": map[string]any{"model_providers": map[string]any{"x": map[string]any{"base_url": "http://evil"}}}}, "model_providers"},
		{"config mcp_servers", map[string]any{"prompt": "h1", "config": map[string]any{"mcp_servers": map[string]any{}}}, "mcp_servers"},
		{"config notify hook", map[string]any{"prompt": "h1", "config": map[string]any{"notify": []any{"sh", "-c", "touch /tmp/pwned"}}}, "notify"},
		{"config shell env", map[string]any{"prompt": "h1", "config": map[string]any{"shell_environment_policy.inherit": "all"}}, "shell_environment_policy"},
		{"config key injection", map[string]any{"prompt": "h1", "config": map[string]any{"model_verbosity=\"x\"\nsandbox_mode": "y"}}, "model_verbosity"},
		{"config option-looking key", map[string]any{"prompt": "h1", "config": map[string]any{"--sandbox": "danger-full-access"}}, "--sandbox"},
		{"config wrong type", map[string]any{"prompt": "h1", "config": map[string]any{"hide_agent_reasoning": "yes"}}, "true or false"},
		{"config number", map[string]any{"prompt": "h1", "config": map[string]any{"model_verbosity": 3}}, "model_verbosity"},
		{"config object value", map[string]any{"prompt": "h1", "config": map[string]any{"model_verbosity": map[string]any{"a": 1}}}, "model_verbosity"},
		{"config huge value", map[string]any{"prompt": "h1", "config": map[string]any{"developer_instructions": huge}}, "bytes long"},
		{"config too many", map[string]any{"prompt": "h1", "config": many}, "settings"},
		{"config NUL", map[string]any{"prompt": "h1", "config": map[string]any{"model_verbosity": "a\x00b"}}, "NUL"},
		{"base-instructions huge", map[string]any{"prompt": "h1", "base-instructions": huge}, "bytes long"},
		{"developer-instructions NUL", map[string]any{"prompt": "h1", "developer-instructions": "a\x00"}, "NUL"},
		{"compact-prompt huge", map[string]any{"prompt": "h1", "compact-prompt": huge}, "bytes long"},
		{"instructions twice", map[string]any{"prompt": "h1", "base-instructions": "a", "config": map[string]any{"base_instructions": "b"}}, "twice"},
		{"prompt stdin marker", map[string]any{"prompt": "-"}, "stdin"},
		{"prompt empty", map[string]any{"prompt": "  "}, "prompt"},
		{"prompt not a string", map[string]any{"prompt": 5}, "prompt"},
	}
	for _, c := range cases {
		res := e.call(t, "codex", c.args)
		if n := e.sessionCount(); n != 0 {
			t.Errorf("%s: left %d sessions: %s", c.name, n, text(res))
		}
		if !res.IsError {
			t.Errorf("%s: accepted: %s", c.name, text(res))
			continue
		}
		if c.want != "" && !strings.Contains(text(res), c.want) {
			t.Errorf("%s: error %q does not name %q", c.name, text(res), c.want)
		}
	}
	replies := []map[string]any{
		{"prompt": "h1", "threadId": "--json"},
		{"prompt": "h1", "threadId": "../../etc/passwd"},
		{"prompt": "h1", "conversationId": "x\x00y"},
		{"prompt": "h1", "threadId": strings.Repeat("a", 100000)},
		{"prompt": "-", "threadId": "01a21ba1-0000-7000-8000-000000000000"},
		{"threadId": "01a21ba1-0000-7000-8000-000000000000"},
	}
	for _, a := range replies {
		if res := e.call(t, "codex-reply", a); !res.IsError {
			t.Errorf("codex-reply %v: accepted", a)
		}
	}
	if n := len(e.h.Endpoint.RequestsWith("h1")); n != 0 {
		t.Errorf("the endpoint saw %d requests from refused calls", n)
	}
	if e.sessionCount() != 0 {
		t.Errorf("refused calls left %d sessions", e.sessionCount())
	}
}

// Settings given to codex reach the model (the developer instructions
// are a message the endpoint receives) and are kept for the replies.
func TestCodexConfigReachesCLI(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{})
	res := e.call(t, "codex", map[string]any{"prompt": "[[reply:cfg]]", "developer-instructions": `DEV-INSTR "quoted"`, "config": map[string]any{"hide_agent_reasoning": true}})
	if res.IsError {
		t.Fatal(text(res))
	}
	sc, _ := res.StructuredContent.(map[string]any)
	seen := func(marker string) bool {
		for _, r := range e.h.Endpoint.RequestsWith(marker) {
			for _, x := range r.Texts {
				if strings.Contains(x, `DEV-INSTR "quoted"`) {
					return true
				}
			}
		}
		return false
	}
	if !seen("[[reply:cfg]]") {
		t.Errorf("the endpoint did not receive the developer instructions: %+v", e.h.Endpoint.RequestsWith("[[reply:cfg]]"))
	}
	mustOK(t, e.call(t, "codex-reply", map[string]any{"threadId": sc["threadId"], "prompt": "[[reply:again]]"}))
	if !seen("[[reply:again]]") {
		t.Errorf("the reply lost the thread's developer instructions")
	}
}
