package workdir

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// hostileRepo is a repository with one commit (main.go and a .gitattributes
// naming an "evil" filter, diff and merge driver for every file), then the
// hostile configuration, then one modified and one untracked file.
func hostileRepo(t *testing.T, setup func(repo, run string)) string {
	t.Helper()
	repo := t.TempDir()
	gitRun(t, repo, "init", "-q", "-b", "main")
	write(t, filepath.Join(repo, "main.go"), "package main\n")
	write(t, filepath.Join(repo, ".gitattributes"), "* filter=evil diff=evil merge=evil\n")
	gitRun(t, repo, "add", ".")
	gitRun(t, repo, "commit", "-qm", "one")
	setup(repo, filepath.Join(repo, ".git", "evil.sh"))
	write(t, filepath.Join(repo, "main.go"), "package main\n\nfunc main() {}\n")
	write(t, filepath.Join(repo, "new.txt"), "new\n")
	return repo
}

// HostileConfigs are repository configurations that each make the git
// binary run a command (marker-writing script at run): a preview must
// run none of them.
var hostileConfigs = []struct {
	name string
	keys []string // what Hazards must name
	cfg  func(t *testing.T, repo, run string)
}{
	{"filter clean", []string{"filter.evil.clean"}, func(t *testing.T, repo, run string) { gitRun(t, repo, "config", "filter.evil.clean", run) }},
	{"filter smudge", []string{"filter.evil.smudge"}, func(t *testing.T, repo, run string) { gitRun(t, repo, "config", "filter.evil.smudge", run) }},
	{"filter process", []string{"filter.evil.process"}, func(t *testing.T, repo, run string) { gitRun(t, repo, "config", "filter.evil.process", run) }},
	{"required filter", []string{"filter.evil.clean"}, func(t *testing.T, repo, run string) {
		gitRun(t, repo, "config", "filter.evil.clean", run)
		gitRun(t, repo, "config", "filter.evil.required", "true")
	}},
	{"fsmonitor command", []string{"core.fsmonitor"}, func(t *testing.T, repo, run string) { gitRun(t, repo, "config", "core.fsmonitor", run) }},
	{"hooksPath with hooks", []string{"core.hookspath"}, func(t *testing.T, repo, run string) {
		hooks := filepath.Join(repo, ".git", "evil-hooks")
		os.MkdirAll(hooks, 0o755)
		for _, h := range []string{"post-index-change", "pre-commit", "post-checkout", "reference-transaction", "fsmonitor-watchman"} {
			os.WriteFile(filepath.Join(hooks, h), []byte("#!/bin/sh\n"+run+"\n"), 0o755)
		}
		gitRun(t, repo, "config", "core.hooksPath", hooks)
	}},
	{"default hooks dir", []string{"hook post-index-change"}, func(t *testing.T, repo, run string) {
		os.WriteFile(filepath.Join(repo, ".git", "hooks", "post-index-change"), []byte("#!/bin/sh\n"+run+"\n"), 0o755)
	}},
	{"external diff", []string{"diff.external"}, func(t *testing.T, repo, run string) { gitRun(t, repo, "config", "diff.external", run) }},
	{"textconv", []string{"diff.evil.textconv"}, func(t *testing.T, repo, run string) { gitRun(t, repo, "config", "diff.evil.textconv", run) }},
	{"diff driver command", []string{"diff.evil.command"}, func(t *testing.T, repo, run string) { gitRun(t, repo, "config", "diff.evil.command", run) }},
	{"merge driver", []string{"merge.evil.driver"}, func(t *testing.T, repo, run string) { gitRun(t, repo, "config", "merge.evil.driver", run) }},
	{"core.pager", []string{"core.pager"}, func(t *testing.T, repo, run string) { gitRun(t, repo, "config", "core.pager", run) }},
	{"pager.status and pager.diff", []string{"pager.diff", "pager.status"}, func(t *testing.T, repo, run string) {
		gitRun(t, repo, "config", "pager.status", run)
		gitRun(t, repo, "config", "pager.diff", run)
	}},
	{"sshCommand", []string{"core.sshcommand"}, func(t *testing.T, repo, run string) { gitRun(t, repo, "config", "core.sshCommand", run) }},
	{"gitProxy", []string{"core.gitproxy"}, func(t *testing.T, repo, run string) { gitRun(t, repo, "config", "core.gitProxy", run) }},
	{"askPass", []string{"core.askpass"}, func(t *testing.T, repo, run string) { gitRun(t, repo, "config", "core.askPass", run) }},
	{"editor", []string{"core.editor"}, func(t *testing.T, repo, run string) { gitRun(t, repo, "config", "core.editor", run) }},
	{"credential helper", []string{"credential.helper"}, func(t *testing.T, repo, run string) { gitRun(t, repo, "config", "credential.helper", "!"+run) }},
	{"gpg program", []string{"gpg.program"}, func(t *testing.T, repo, run string) { gitRun(t, repo, "config", "gpg.program", run) }},
	{"alternateRefsCommand", []string{"core.alternaterefscommand"}, func(t *testing.T, repo, run string) {
		gitRun(t, repo, "config", "core.alternateRefsCommand", run)
	}},
	{"packObjectsHook", []string{"uploadpack.packobjectshook"}, func(t *testing.T, repo, run string) {
		gitRun(t, repo, "config", "uploadpack.packObjectsHook", run)
	}},
	{"remote uploadpack", []string{"remote.origin.uploadpack"}, func(t *testing.T, repo, run string) {
		gitRun(t, repo, "config", "remote.origin.uploadpack", run)
	}},
	{"include.path to a filter", []string{"include.path"}, func(t *testing.T, repo, run string) {
		inc := filepath.Join(repo, ".git", "included")
		os.WriteFile(inc, []byte("[filter \"evil\"]\n\tclean = "+run+"\n[core]\n\tfsmonitor = "+run+"\n"), 0o644)
		gitRun(t, repo, "config", "include.path", inc)
	}},
	{"includeIf gitdir to textconv", []string{"includeif.gitdir:/**.path"}, func(t *testing.T, repo, run string) {
		inc := filepath.Join(repo, ".git", "included-if")
		os.WriteFile(inc, []byte("[diff \"evil\"]\n\ttextconv = "+run+"\n[filter \"evil\"]\n\tclean = "+run+"\n"), 0o644)
		gitRun(t, repo, "config", "includeIf.gitdir:/**.path", inc)
	}},
	{"alias", []string{"alias.status"}, func(t *testing.T, repo, run string) { gitRun(t, repo, "config", "alias.status", "!"+run) }},
	{"difftool cmd", []string{"difftool.evil.cmd"}, func(t *testing.T, repo, run string) { gitRun(t, repo, "config", "difftool.evil.cmd", run) }},
	{"interactive diffFilter", []string{"interactive.difffilter"}, func(t *testing.T, repo, run string) {
		gitRun(t, repo, "config", "interactive.diffFilter", run)
	}},
	// go-git refuses the extension: the state reads as unreadable (and
	// Hazards refuses the repository) rather than ignoring that config.
	{"worktree config", []string{"unreadable repository"}, func(t *testing.T, repo, run string) {
		gitRun(t, repo, "config", "extensions.worktreeConfig", "true")
		gitRun(t, repo, "config", "--worktree", "filter.evil.clean", run)
	}},
	{"every one at once", []string{"core.fsmonitor", "diff.external", "filter.evil.clean"}, func(t *testing.T, repo, run string) {
		gitRun(t, repo, "config", "filter.evil.clean", run)
		gitRun(t, repo, "config", "filter.evil.smudge", run)
		gitRun(t, repo, "config", "core.fsmonitor", run)
		gitRun(t, repo, "config", "diff.external", run)
		gitRun(t, repo, "config", "diff.evil.textconv", run)
		gitRun(t, repo, "config", "core.pager", run)
	}},
}

// HostileSetup writes the marker script and applies the configuration.
func hostileSetup(t *testing.T, cfg func(t *testing.T, repo, run string), marker string) func(repo, run string) {
	return func(repo, run string) {
		os.WriteFile(run, []byte("#!/bin/sh\necho ran >> "+marker+"\ncat\n"), 0o755)
		cfg(t, repo, run)
	}
}

// TestReadRunsNothingTheRepositoryConfigures: for each hostile
// configuration the preview's read shows the right state (1 modified, 1
// untracked, the branch and HEAD) and the marker is never written; Hazards
// names the setting.
func TestReadRunsNothingTheRepositoryConfigures(t *testing.T) {
	for _, tc := range hostileConfigs {
		t.Run(tc.name, func(t *testing.T) {
			marker := filepath.Join(t.TempDir(), "ran")
			repo := hostileRepo(t, hostileSetup(t, tc.cfg, marker))
			os.Remove(marker) // setup's own git commands may have run it
			st := Read(context.Background(), repo)
			if _, err := os.Stat(marker); err == nil {
				t.Fatalf("reading the state ran the repository's command")
			}
			if strings.Contains(tc.keys[0], "unreadable") {
				if st.Error == "" {
					t.Errorf("state = %+v, want it unreadable", st)
				}
			} else if !st.Git || st.Branch != "main" || len(st.Head) != 40 || st.Modified != 1 || st.Untracked != 1 || st.Error != "" {
				t.Errorf("state = %+v (%s), want main@HEAD, 1 modified, 1 untracked", st, st.Words())
			}
			hz := Hazards(repo)
			if _, err := os.Stat(marker); err == nil {
				t.Fatalf("Hazards ran the repository's command")
			}
			for _, k := range tc.keys {
				if !strings.Contains(strings.Join(hz, ","), k) {
					t.Errorf("Hazards = %v, want %s", hz, k)
				}
			}
		})
	}
	if hz := Hazards(hostileRepo(t, func(string, string) {})); len(hz) != 0 {
		t.Errorf("a plain repository has hazards: %v", hz)
	}
}
