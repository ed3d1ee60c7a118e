package cli

import (
	"slices"
	"strings"
	"testing"
)

func TestParseVersionAndCaps(t *testing.T) {
	cases := []struct {
		out                                        string
		want                                       Version
		json, resume, review, fullAutoFlag, tooOld bool
	}{
		{"codex-cli 0.169.0\n", Version{0, 169, 0}, true, true, true, false, false},
		{"codex-cli 0.125.3", Version{0, 125, 3}, true, true, true, true, false},
		{"codex-cli 0.60.1", Version{0, 60, 1}, true, true, false, true, false},
		{"codex-cli 0.40.0", Version{0, 40, 0}, false, false, false, true, false},
		{"codex-cli 0.36.0", Version{0, 36, 0}, false, false, false, true, false},
		{"codex-cli 0.30.9", Version{0, 30, 9}, false, false, false, true, true},
		{"codex-cli 1.2.0", Version{1, 2, 0}, true, true, true, false, false},
	}
	for _, tc := range cases {
		v, err := ParseVersion(tc.out)
		if err != nil || v != tc.want {
			t.Errorf("ParseVersion(%q) = %v, %v; want %v", tc.out, v, err, tc.want)
			continue
		}
		c := CapsFor(v, "")
		if c.JSON != tc.json || c.Resume != tc.resume || c.Review != tc.review || c.FullAutoFlag != tc.fullAutoFlag || v.Less(MinVersion) != tc.tooOld {
			t.Errorf("CapsFor(%v) = %+v (too old %v)", v, c, v.Less(MinVersion))
		}
	}
	if _, err := ParseVersion("codex"); err == nil {
		t.Error("ParseVersion without a number must fail")
	}
	// The help text has the last word: a flag it lacks is not used.
	c := CapsFor(Version{0, 100, 0}, "Usage: codex exec [OPTIONS] [PROMPT]\n  -m, --model\n")
	if c.JSON || c.Resume || c.SkipGitRepoCheck || c.FullAutoFlag {
		t.Errorf("CapsFor with a help text lacking the flags = %+v", c)
	}
}

func TestExecArgs(t *testing.T) {
	current := CapsFor(Version{0, 169, 0}, "")
	old := CapsFor(Version{0, 40, 0}, "")
	mid := CapsFor(Version{0, 100, 0}, "")
	cases := []struct {
		name string
		caps Caps
		req  ExecRequest
		want string
	}{
		{"new turn, every option", current, ExecRequest{Prompt: "-rm -rf? no", Model: "m1", ReasoningEffort: "high", Sandbox: "read-only", Dir: "/w"},
			`exec --json --skip-git-repo-check --model=m1 --config=model_reasoning_effort="high" --config=approval_policy="never" --sandbox=read-only --config=sandbox_workspace_write.writable_roots=[] --config=sandbox_workspace_write.exclude_slash_tmp=false --config=sandbox_workspace_write.exclude_tmpdir_env_var=false --cd=/w -- -rm -rf? no`},
		{"fullAuto on a current CLI is the workspace-write sandbox", current, ExecRequest{Prompt: "p", Model: "m", FullAuto: true},
			`exec --json --skip-git-repo-check --model=m --config=approval_policy="never" --sandbox=workspace-write --config=sandbox_workspace_write.writable_roots=[] --config=sandbox_workspace_write.exclude_slash_tmp=false --config=sandbox_workspace_write.exclude_tmpdir_env_var=false -- p`},
		{"explicit sandbox wins over fullAuto", current, ExecRequest{Prompt: "p", Model: "m", FullAuto: true, Sandbox: "danger-full-access"},
			`exec --json --skip-git-repo-check --model=m --config=approval_policy="never" --sandbox=danger-full-access --config=sandbox_workspace_write.writable_roots=[] --config=sandbox_workspace_write.exclude_slash_tmp=false --config=sandbox_workspace_write.exclude_tmpdir_env_var=false -- p`},
		{"fullAuto on a CLI that still has the flag", mid, ExecRequest{Prompt: "p", Model: "m", FullAuto: true},
			`exec --json --skip-git-repo-check --model=m --config=approval_policy="never" --full-auto --config=sandbox_workspace_write.writable_roots=[] --config=sandbox_workspace_write.exclude_slash_tmp=false --config=sandbox_workspace_write.exclude_tmpdir_env_var=false -- p`},
		{"resume moves sandbox into a config override", current, ExecRequest{Prompt: "p", Model: "m", Sandbox: "workspace-write", ResumeID: "T1", Dir: "/w", ReasoningEffort: "low"},
			`exec resume --json --skip-git-repo-check --model=m --config=model_reasoning_effort="low" --config=approval_policy="never" --config=sandbox_mode="workspace-write" --config=sandbox_workspace_write.writable_roots=[] --config=sandbox_workspace_write.exclude_slash_tmp=false --config=sandbox_workspace_write.exclude_tmpdir_env_var=false -- T1 p`},
		{"resume with fullAuto", current, ExecRequest{Prompt: "p", Model: "m", FullAuto: true, ResumeID: "T1"},
			`exec resume --json --skip-git-repo-check --model=m --config=approval_policy="never" --config=sandbox_mode="workspace-write" --config=sandbox_workspace_write.writable_roots=[] --config=sandbox_workspace_write.exclude_slash_tmp=false --config=sandbox_workspace_write.exclude_tmpdir_env_var=false -- T1 p`},
		{"no sandbox asked: read-only, named", current, ExecRequest{Prompt: "p", Model: "m"},
			`exec --json --skip-git-repo-check --model=m --config=approval_policy="never" --sandbox=read-only --config=sandbox_workspace_write.writable_roots=[] --config=sandbox_workspace_write.exclude_slash_tmp=false --config=sandbox_workspace_write.exclude_tmpdir_env_var=false -- p`},
		{"resume without a sandbox stays read-only", current, ExecRequest{Prompt: "p", Model: "m", ResumeID: "T1"},
			`exec resume --json --skip-git-repo-check --model=m --config=approval_policy="never" --config=sandbox_mode="read-only" --config=sandbox_workspace_write.writable_roots=[] --config=sandbox_workspace_write.exclude_slash_tmp=false --config=sandbox_workspace_write.exclude_tmpdir_env_var=false -- T1 p`},
		{"old CLI: no --json, no resume", old, ExecRequest{Prompt: "p", Model: "m", ResumeID: "T1", FullAuto: true},
			`exec --skip-git-repo-check --model=m --config=approval_policy="never" --full-auto --config=sandbox_workspace_write.writable_roots=[] --config=sandbox_workspace_write.exclude_slash_tmp=false --config=sandbox_workspace_write.exclude_tmpdir_env_var=false -- p`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			argv, err := ExecArgs(tc.caps, tc.req)
			if err != nil {
				t.Fatalf("ExecArgs: %v", err)
			}
			got := strings.Join(argv, " ")
			if got != tc.want {
				t.Errorf("ExecArgs =\n  %s\nwant\n  %s", got, tc.want)
			}
		})
	}
}

func TestReviewArgsAndValidate(t *testing.T) {
	caps := CapsFor(Version{0, 169, 0}, "")
	cases := []struct {
		req     ReviewRequest
		want    string
		invalid string
	}{
		{ReviewRequest{Uncommitted: true, Model: "m", Dir: "/r"}, `exec --config=approval_policy="never" --sandbox=read-only --config=sandbox_workspace_write.writable_roots=[] --config=sandbox_workspace_write.exclude_slash_tmp=false --config=sandbox_workspace_write.exclude_tmpdir_env_var=false --config=model="m" --cd=/r review --json --skip-git-repo-check --uncommitted`, ""},
		{ReviewRequest{Base: "main", Model: "m"}, `exec --config=approval_policy="never" --sandbox=read-only --config=sandbox_workspace_write.writable_roots=[] --config=sandbox_workspace_write.exclude_slash_tmp=false --config=sandbox_workspace_write.exclude_tmpdir_env_var=false --config=model="m" review --json --skip-git-repo-check --base=main`, ""},
		{ReviewRequest{Commit: "abc1", Title: "T", Model: "m"}, `exec --config=approval_policy="never" --sandbox=read-only --config=sandbox_workspace_write.writable_roots=[] --config=sandbox_workspace_write.exclude_slash_tmp=false --config=sandbox_workspace_write.exclude_tmpdir_env_var=false --config=model="m" review --json --skip-git-repo-check --commit=abc1 --title=T`, ""},
		{ReviewRequest{Prompt: "-check errors", Model: "m"}, `exec --config=approval_policy="never" --sandbox=read-only --config=sandbox_workspace_write.writable_roots=[] --config=sandbox_workspace_write.exclude_slash_tmp=false --config=sandbox_workspace_write.exclude_tmpdir_env_var=false --config=model="m" review --json --skip-git-repo-check -- -check errors`, ""},
		{ReviewRequest{}, "", "needs a target"},
		{ReviewRequest{Uncommitted: true, Base: "main"}, "", "cannot combine uncommitted and base"},
		{ReviewRequest{Prompt: "p", Commit: "abc1"}, "", "cannot combine commit and prompt"},
		{ReviewRequest{Base: "main", Title: "T"}, "", "title applies only to a commit"},
	}
	for _, tc := range cases {
		err := tc.req.Validate()
		if tc.invalid != "" {
			if err == nil || !strings.Contains(err.Error(), tc.invalid) || !strings.Contains(err.Error(), ReviewTargets) {
				t.Errorf("Validate(%+v) = %v, want %q and the allowed combinations", tc.req, err, tc.invalid)
			}
			continue
		}
		if err != nil {
			t.Errorf("Validate(%+v) = %v", tc.req, err)
		}
		argv, err := ReviewArgs(caps, tc.req)
		if err != nil {
			t.Errorf("ReviewArgs(%+v): %v", tc.req, err)
			continue
		}
		if got := strings.Join(argv, " "); got != tc.want {
			t.Errorf("ReviewArgs =\n  %s\nwant\n  %s", got, tc.want)
		}
	}
}

// TestPinsFor: /tmp and $TMPDIR leave the workspace-write sandbox exactly
// when the CLI's configuration directory lies in them, and the pins name
// both either way.
func TestPinsFor(t *testing.T) {
	for _, tc := range []struct {
		home, tmpdir string
		want         Pins
	}{
		{"/root/.codex", "", Pins{}},
		{"/tmp/h/codex-home", "", Pins{ExcludeSlashTmp: true}},
		{"/var/tmp/x/.codex", "/var/tmp", Pins{ExcludeTmpdir: true}},
		{"/tmp/x", "/tmp", Pins{ExcludeSlashTmp: true, ExcludeTmpdir: true}},
		{"/tmpfoo/.codex", "/tmpfoo/", Pins{ExcludeTmpdir: true}},
		{"/tmpfoo/.codex", "", Pins{}},
	} {
		if got := PinsFor(tc.home, tc.tmpdir); got != tc.want {
			t.Errorf("PinsFor(%q, %q) = %+v, want %+v", tc.home, tc.tmpdir, got, tc.want)
		}
	}
}

func TestChildEnvironment(t *testing.T) {
	t.Setenv("JWT_SECRET", "do-not-leak")
	t.Setenv("OAUTH_CLIENT_SECRET", "do-not-leak")
	t.Setenv("CODER_MCP_CALLBACK_URI", "http://server-default")
	t.Setenv("KEEP_ME", "1")
	c := &Client{Home: "/h", Env: []string{"EXTRA=1"}}
	env := c.env("http://cb")
	for _, want := range []string{"KEEP_ME=1", "EXTRA=1", "CODEX_HOME=/h", "CODER_MCP_CALLBACK_URI=http://cb", "CODEX_MCP_CALLBACK_URI=http://cb"} {
		if !slices.Contains(env, want) {
			t.Errorf("child env lacks %s", want)
		}
	}
	for _, kv := range env {
		if strings.Contains(kv, "do-not-leak") || kv == "CODER_MCP_CALLBACK_URI=http://server-default" {
			t.Errorf("child env carries %s", kv)
		}
	}
}
