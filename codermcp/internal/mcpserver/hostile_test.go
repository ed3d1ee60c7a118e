package mcpserver_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpfleet/mcpfleet/shared/toolcall"
)

// TestHostileRepositoryRunsNothing: every workspace is hostile. For each
// repository configuration that would make git run a marker-writing script,
// the dry run, the approval preview and its confirmation, a read-only turn
// and a review run nothing the repository configured (no marker), the
// preview still shows the right changed files (1 modified, 1 untracked) and
// names the settings, and no CLI process starts: the CLI's own git (turn
// metadata, a review's diff) would run them outside the sandbox.
func TestHostileRepositoryRunsNothing(t *testing.T) {
	t.Parallel()
	e := newApprovalEnv(t, envOptions{})
	hostile := []struct {
		name string
		cfg  [][2]string // git config key, value ("RUN" is the script)
		hook string      // a hook installed in .git/hooks
		want string      // named in the preview and the refusal
	}{
		{"filter clean", [][2]string{{"filter.evil.clean", "RUN"}}, "", "filter.evil.clean"},
		{"filter smudge", [][2]string{{"filter.evil.smudge", "RUN"}}, "", "filter.evil.smudge"},
		{"filter process", [][2]string{{"filter.evil.process", "RUN"}}, "", "filter.evil.process"},
		{"fsmonitor", [][2]string{{"core.fsmonitor", "RUN"}}, "", "core.fsmonitor"},
		{"hooksPath", [][2]string{{"core.hooksPath", "HOOKS"}}, "", "core.hookspath"},
		{"post-index-change hook", nil, "post-index-change", "hook post-index-change"},
		{"reference-transaction hook", nil, "reference-transaction", "hook reference-transaction"},
		{"external diff", [][2]string{{"diff.external", "RUN"}}, "", "diff.external"},
		{"textconv", [][2]string{{"diff.evil.textconv", "RUN"}}, "", "diff.evil.textconv"},
		{"pager", [][2]string{{"core.pager", "RUN"}, {"pager.status", "RUN"}}, "", "core.pager"},
		{"sshCommand", [][2]string{{"core.sshCommand", "RUN"}}, "", "core.sshcommand"},
		{"gitProxy", [][2]string{{"core.gitProxy", "RUN"}}, "", "core.gitproxy"},
		{"include.path", [][2]string{{"include.path", "INCLUDE"}}, "", "include.path"},
		{"includeIf", [][2]string{{"includeIf.gitdir:/**.path", "INCLUDE"}}, "", "includeif.gitdir:/**.path"},
		{"credential helper", [][2]string{{"credential.helper", "!RUN"}}, "", "credential.helper"},
	}
	for _, tc := range hostile {
		t.Run(tc.name, func(t *testing.T) {
			repo, marker := hostileRepo(t, tc.cfg, tc.hook)
			runs, reqs := e.started.Load(), len(e.h.Endpoint.Requests())
			noMarker := func(step string) {
				t.Helper()
				if b, err := os.ReadFile(marker); err == nil {
					t.Fatalf("%s ran the repository's command: %s", step, b)
				}
			}
			prompt := "hostile " + tc.name + " [[shell:echo x > out.txt]]"

			res := e.call(t, "coder", map[string]any{"prompt": prompt, "workingDirectory": repo, "sandbox": "workspace-write", "dryRun": true})
			got := mustOK(t, res)
			noMarker("the dry run")
			var pv toolcall.PreviewResult
			b, _ := json.Marshal(res.StructuredContent)
			json.Unmarshal(b, &pv)
			st, _ := json.Marshal(pv.State)
			for _, want := range []string{`"modified":1`, `"untracked":1`, `"branch":"main"`, `"gitHazards":[`, tc.want} {
				if !strings.Contains(string(st), want) {
					t.Errorf("dry-run state lacks %s: %s", want, st)
				}
			}
			if !strings.Contains(got, "It will be refused") {
				t.Errorf("the dry run does not say the run will be refused:\n%s", got)
			}

			// danger-full-access needs a person: preview and code, then the confirmed call.
			args := map[string]any{"prompt": prompt, "workingDirectory": repo, "sandbox": "danger-full-access", "sessionId": "hostile"}
			res = e.call(t, "coder", args)
			code := confirmCode(t, res)
			noMarker("the approval preview")
			args["confirm"] = code
			mustError(t, e.call(t, "coder", args), "git configuration", tc.want, "no CLI process was started")
			noMarker("the confirmed call")

			mustError(t, e.call(t, "coder", map[string]any{"prompt": prompt, "workingDirectory": repo}), "git configuration", tc.want)
			noMarker("a read-only turn")
			mustError(t, e.call(t, "review", map[string]any{"uncommitted": true, "workingDirectory": repo}), "git configuration", tc.want)
			noMarker("a review")
			e.nothingRan(t, runs, reqs)
		})
	}
}

// hostileRepo makes a repository with a commit (main.go and a
// .gitattributes sending every file through the "evil" filter and diff
// driver), the hostile configuration, one modified and one untracked
// file; it returns the repository and the marker its script writes.
func hostileRepo(t *testing.T, cfg [][2]string, hook string) (string, string) {
	t.Helper()
	repo := t.TempDir()
	marker := filepath.Join(t.TempDir(), "ran")
	script := filepath.Join(t.TempDir(), "evil.sh")
	if err := os.WriteFile(script, []byte("#!/bin/sh\necho \"$0 $*\" >> "+marker+"\ncat\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	git := func(args ...string) {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-C", repo}, args...)...)
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	git("init", "-q", "-b", "main")
	os.WriteFile(filepath.Join(repo, "main.go"), []byte("package main\n"), 0o644)
	os.WriteFile(filepath.Join(repo, ".gitattributes"), []byte("* filter=evil diff=evil\n"), 0o644)
	git("add", ".")
	git("commit", "-qm", "one")
	for _, kv := range cfg {
		v := strings.ReplaceAll(kv[1], "RUN", script)
		switch v {
		case "HOOKS":
			v = filepath.Join(repo, ".git", "evil-hooks")
			os.MkdirAll(v, 0o755)
			for _, h := range []string{"post-index-change", "reference-transaction"} {
				os.WriteFile(filepath.Join(v, h), []byte("#!/bin/sh\n"+script+"\n"), 0o755)
			}
		case "INCLUDE":
			v = filepath.Join(repo, ".git", "included")
			os.WriteFile(v, []byte("[filter \"evil\"]\n\tclean = "+script+"\n[core]\n\tfsmonitor = "+script+"\n"), 0o644)
		}
		git("config", kv[0], v)
	}
	if hook != "" {
		os.WriteFile(filepath.Join(repo, ".git", "hooks", hook), []byte("#!/bin/sh\n"+script+"\n"), 0o755)
	}
	os.WriteFile(filepath.Join(repo, "main.go"), []byte("package main\n\nfunc main() {}\n"), 0o644)
	os.WriteFile(filepath.Join(repo, "new.txt"), []byte("new\n"), 0o644)
	os.Remove(marker) // setup's own git may have run it
	return repo, marker
}
