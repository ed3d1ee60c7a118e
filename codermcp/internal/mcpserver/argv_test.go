package mcpserver_test

import (
	"strings"
	"sync/atomic"
	"testing"

	"github.com/mcpfleet/mcpfleet/codermcp/internal/cli"
	"github.com/mcpfleet/mcpfleet/codermcp/internal/codertest/harness"
)

// TestRefusedArgumentsStartNoProcess calls the tools with values that must
// never reach the CLI: each comes back as an invalid-argument tool error
// naming the parameter, no CLI process starts and the model endpoint hears
// nothing.
func TestRefusedArgumentsStartNoProcess(t *testing.T) {
	t.Parallel()
	var started atomic.Int32
	e := newEnv(t, envOptions{client: func(c *cli.Client) { c.OnStart = func(int) { started.Add(1) } }})
	repo := harness.GitRepo(t)
	cases := []struct {
		tool  string
		args  map[string]any
		param string
	}{
		{"review", map[string]any{"base": "--uncommitted"}, "base"},
		{"review", map[string]any{"base": "-c"}, "base"},
		{"review", map[string]any{"base": "--config=model=\"x\""}, "base"},
		{"review", map[string]any{"base": "-ofoo"}, "base"},
		{"review", map[string]any{"base": "a\nb"}, "base"},
		{"review", map[string]any{"base": "a\rb"}, "base"},
		{"review", map[string]any{"base": "a\x00b"}, "base"},
		{"review", map[string]any{"base": " main"}, "base"},
		{"review", map[string]any{"base": "a..b"}, "base"},
		{"review", map[string]any{"base": "~"}, "base"},
		{"review", map[string]any{"base": "@{-1}"}, "base"},
		{"review", map[string]any{"base": "HEAD"}, "base"},
		{"review", map[string]any{"base": strings.Repeat("b", 300)}, "base"},
		{"review", map[string]any{"commit": "--uncommitted"}, "commit"},
		{"review", map[string]any{"commit": "-abcd"}, "commit"},
		{"review", map[string]any{"commit": "HEAD..main"}, "commit"},
		{"review", map[string]any{"commit": "abc\n"}, "commit"},
		{"review", map[string]any{"commit": "HEAD", "title": "two\nlines"}, "title"},
		{"review", map[string]any{"commit": "HEAD", "title": "cr\rhere"}, "title"},
		{"review", map[string]any{"commit": "HEAD", "title": "esc\x1b[2J"}, "title"},
		{"review", map[string]any{"commit": "HEAD", "title": "nul\x00"}, "title"},
		{"review", map[string]any{"commit": "HEAD", "title": "bidi\u202e"}, "title"},
		{"review", map[string]any{"commit": "HEAD", "title": " padded"}, "title"},
		{"review", map[string]any{"commit": "HEAD", "title": strings.Repeat("t", 201)}, "title"},
		{"review", map[string]any{"prompt": "-"}, "prompt"},
		{"review", map[string]any{"prompt": "x\x00"}, "prompt"},
		{"coder", map[string]any{"prompt": "-"}, "prompt"},
		{"coder", map[string]any{"prompt": "run\x00this"}, "prompt"},
		{"coder", map[string]any{"prompt": strings.Repeat("p", cli.MaxPromptBytes+1)}, "prompt"},
		{"coder", map[string]any{"prompt": "p", "callbackUri": "http://x/a b"}, "callbackUri"},
	}
	for _, tc := range cases {
		args := map[string]any{"workingDirectory": repo}
		for k, v := range tc.args {
			args[k] = v
		}
		res := e.call(t, tc.tool, args)
		got := text(res)
		if !res.IsError || !strings.HasPrefix(got, tc.param+" ") || !strings.Contains(got, "no CLI process was started") {
			t.Errorf("%s %v: %q; want an error about %s saying no CLI process started", tc.tool, tc.args, clip(got), tc.param)
		}
	}
	if n := started.Load(); n != 0 {
		t.Errorf("%d CLI runs started for refused arguments", n)
	}
	if n := len(e.h.Endpoint.Requests()); n != 0 {
		t.Errorf("the model endpoint got %d requests for refused arguments", n)
	}
	waitNoLeftovers(t, e.h.Marker, 0)
}

func clip(s string) string {
	if len(s) > 200 {
		return s[:200] + "…"
	}
	return s
}
