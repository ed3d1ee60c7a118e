package mcpserver_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mcpfleet/mcpfleet/codermcp/internal/cli"
)

func TestPingHelpListSessions(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{})
	if got := mustOK(t, e.call(t, "ping", nil)); got != "pong" {
		t.Errorf("ping = %q, want pong", got)
	}
	if got := mustOK(t, e.call(t, "ping", map[string]any{"message": "hello there"})); got != "hello there" {
		t.Errorf("ping message = %q", got)
	}
	if got := mustOK(t, e.call(t, "listSessions", nil)); got != "[]" {
		t.Errorf("listSessions with no sessions = %q, want []", got)
	}
	help := mustOK(t, e.call(t, "help", nil)) // the real CLI's --help
	for _, want := range []string{"Usage:", "exec", "review"} {
		if !strings.Contains(help, want) {
			t.Errorf("help output lacks %q:\n%s", want, help)
		}
	}
}

// Bad input is refused with an error naming what is wrong, and changes
// nothing: no session, no CLI run.
func TestInvalidInputChangesNothing(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{})
	file := filepath.Join(t.TempDir(), "file.txt")
	if err := os.WriteFile(file, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name  string
		tool  string
		args  map[string]any
		wants []string
	}{
		{"unknown reasoningEffort", "coder", map[string]any{"prompt": "p", "reasoningEffort": "ultra"}, []string{"reasoningEffort"}},
		{"unknown sandbox", "coder", map[string]any{"prompt": "p", "sandbox": "none"}, []string{"sandbox"}},
		{"prompt of the wrong type", "coder", map[string]any{"prompt": 5}, []string{"prompt"}},
		{"resetSession of the wrong type", "coder", map[string]any{"prompt": "p", "resetSession": "yes"}, []string{"resetSession"}},
		{"missing prompt", "coder", map[string]any{}, []string{"prompt"}},
		{"blank prompt", "coder", map[string]any{"prompt": "  "}, []string{"prompt is empty"}},
		{"model outside the catalogue", "coder", map[string]any{"prompt": "p", "model": "gpt-nope"}, []string{"Invalid model: gpt-nope", "Omit model to use the default"}},
		{"missing workingDirectory", "coder", map[string]any{"prompt": "p", "workingDirectory": "/nonexistent/dir"}, []string{"workingDirectory", "does not exist"}},
		{"workingDirectory is a file", "coder", map[string]any{"prompt": "p", "workingDirectory": file}, []string{"workingDirectory", "not a directory"}},
		{"callbackUri not a URI", "coder", map[string]any{"prompt": "p", "callbackUri": "not a uri"}, []string{"callbackUri"}},
		{"review without target", "review", map[string]any{}, []string{"needs a target", cli.ReviewTargets}},
		{"review with two targets", "review", map[string]any{"uncommitted": true, "base": "main"}, []string{"cannot combine uncommitted and base", cli.ReviewTargets}},
		{"review prompt plus commit", "review", map[string]any{"prompt": "look", "commit": "abc123"}, []string{"cannot combine commit and prompt"}},
		{"review title without commit", "review", map[string]any{"uncommitted": true, "title": "T"}, []string{"title applies only to a commit"}},
		{"review model outside the catalogue", "review", map[string]any{"uncommitted": true, "model": "gpt-nope"}, []string{"Invalid model: gpt-nope"}},
		{"review missing workingDirectory", "review", map[string]any{"uncommitted": true, "workingDirectory": "/nonexistent/dir"}, []string{"does not exist"}},
		{"ping message of the wrong type", "ping", map[string]any{"message": 3}, []string{"message"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := mustError(t, e.call(t, tc.tool, tc.args), tc.wants...)
			if strings.HasPrefix(tc.wants[0], "Invalid model:") && !strings.HasPrefix(got, tc.wants[0]) {
				t.Errorf("error %q must start with %q", got, tc.wants[0])
			}
		})
	}
	if n := e.sessionCount(); n != 0 {
		t.Errorf("invalid calls created %d sessions", n)
	}
	if n := len(e.h.Endpoint.Requests()); n != 0 {
		t.Errorf("invalid calls reached the model %d times", n)
	}
}

func TestMalformedSessionIDStartsFresh(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{})
	res := e.call(t, "coder", map[string]any{"prompt": "fresh", "sessionId": "not valid!"})
	mustOK(t, res)
	if sid, _ := contentMeta(t, res)["sessionId"].(string); !strings.HasPrefix(sid, "session-") {
		t.Errorf("sessionId = %q, want a generated one for a malformed id", sid)
	}
	long := strings.Repeat("a", 257)
	res = e.call(t, "coder", map[string]any{"prompt": "fresh again", "sessionId": long})
	mustOK(t, res)
	if sid := contentMeta(t, res)["sessionId"]; sid == long {
		t.Error("a 257-character id must not be adopted")
	}
}

// A fake CLI: the real 0.169.0 cannot behave like a CLI older than 0.50.
func TestOldCLIWithoutJSONFallsBackToContext(t *testing.T) {
	t.Parallel()
	fake, _ := filepath.Abs("../../testdata/fakecli/codex")
	argv := filepath.Join(t.TempDir(), "argv")
	e := newEnv(t, envOptions{cliPath: fake, client: func(c *cli.Client) { c.Env = append(c.Env, "FAKECLI_ARGV="+argv) }})
	res := e.call(t, "coder", map[string]any{"prompt": "old hello", "sessionId": "old-1", "fullAuto": true})
	if got := mustOK(t, res); got != "fake reply to: old hello" {
		t.Errorf("text = %q, want the CLI's stdout", got)
	}
	if tid := contentMeta(t, res)["threadId"]; tid != "0199aaaa-bbbb-7ccc-8ddd-eeeeffff0000" {
		t.Errorf("threadId = %v, want the id from the \"session id:\" line", tid)
	}
	args := readArgs(t, argv)
	if slices.Contains(args, "--json") || !slices.Contains(args, "--full-auto") || !slices.Contains(args, "--skip-git-repo-check") {
		t.Errorf("argv for CLI 0.40 = %q: want --full-auto and --skip-git-repo-check, no --json", args)
	}
	res = e.call(t, "coder", map[string]any{"prompt": "old follow-up", "sessionId": "old-1"})
	got := mustOK(t, res)
	args = readArgs(t, argv)
	if slices.Contains(args, "resume") {
		t.Errorf("argv = %q: CLI 0.40 has no resume", args)
	}
	if !strings.Contains(got, "Context from our previous conversation") || !strings.Contains(got, "old hello") || !strings.Contains(got, "old follow-up") {
		t.Errorf("the follow-up prompt does not carry the last turns: %q", got)
	}
	mustError(t, e.call(t, "review", map[string]any{"uncommitted": true}), "The CLI command failed to execute", "no `exec review`", "upgrade")
}

// Fake or absent CLIs: what the real one cannot show.
func TestCLIUnusable(t *testing.T) {
	t.Parallel()
	fake, _ := filepath.Abs("../../testdata/fakecli/codex")
	noExec := filepath.Join(t.TempDir(), "codex")
	if err := os.WriteFile(noExec, []byte("#!/bin/sh\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name  string
		path  string
		env   []string
		wants []string
	}{
		{"missing binary", "/nonexistent/bin/codex", nil, []string{"The CLI command failed to execute", "/nonexistent/bin/codex", "no such file"}},
		{"not executable", noExec, nil, []string{"The CLI command failed to execute", "permission denied"}},
		{"older than 0.36", fake, []string{"FAKECLI_VERSION=0.30.1"}, []string{"The CLI command failed to execute", "0.30.1", "0.36.0 or later"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, envOptions{cliPath: tc.path, client: func(c *cli.Client) { c.Env = append(c.Env, tc.env...) }})
			mustError(t, e.call(t, "coder", map[string]any{"prompt": "p"}), tc.wants...)
			mustError(t, e.call(t, "review", map[string]any{"uncommitted": true}), tc.wants[0])
			if tc.name != "older than 0.36" { // an old CLI still prints its help
				mustError(t, e.call(t, "help", nil), tc.wants[0])
			}
			if n := e.sessionCount(); n != 0 {
				t.Errorf("a call that could not run the CLI created %d sessions", n)
			}
		})
	}
}

func readArgs(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return strings.Split(strings.TrimRight(string(b), "\n"), "\n")
}
