package workdir

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func gitRun(t *testing.T, dir string, args ...string) {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
}

func write(t *testing.T, p, s string) {
	t.Helper()
	if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestRead reads real directories and repositories (real git) and checks
// the words a person reads and that the fingerprint moves with HEAD and
// the dirty state, and only with them.
func TestRead(t *testing.T) {
	ctx := context.Background()
	plain := t.TempDir()
	if st := Read(ctx, filepath.Join(plain, "missing")); st.Exists || st.Words() != "does not exist" {
		t.Errorf("missing dir: %+v %q", st, st.Words())
	}
	if st := Read(ctx, plain); !st.Exists || st.Git || st.Words() != "not a git repository" || st.Error != "" {
		t.Errorf("plain dir: %+v %q", st, st.Words())
	}

	repo := t.TempDir()
	gitRun(t, repo, "init", "-q", "-b", "main")
	if st := Read(ctx, repo); !st.Git || st.Head != "" || st.Words() != "git main@no commits yet, clean" {
		t.Errorf("empty repo: %+v %q", st, st.Words())
	}
	write(t, filepath.Join(repo, "a.txt"), "one\n")
	gitRun(t, repo, "add", "a.txt")
	gitRun(t, repo, "commit", "-qm", "one")
	clean := Read(ctx, repo)
	if len(clean.Head) != 40 || !strings.HasSuffix(clean.Words(), ", clean") || !strings.HasPrefix(clean.Words(), "git main@"+clean.Head[:7]) {
		t.Errorf("clean repo: %+v %q", clean, clean.Words())
	}
	if again := Read(ctx, repo); again.Fingerprint() != clean.Fingerprint() {
		t.Error("the fingerprint of an unchanged repository moved")
	}
	index, _ := os.ReadFile(filepath.Join(repo, ".git", "index"))

	write(t, filepath.Join(repo, "a.txt"), "two\n")
	write(t, filepath.Join(repo, "new.txt"), "new\n")
	dirty := Read(ctx, repo)
	if dirty.Modified != 1 || dirty.Untracked != 1 || !strings.HasSuffix(dirty.Words(), ", 1 modified and 1 untracked file") {
		t.Errorf("dirty repo: %+v %q", dirty, dirty.Words())
	}
	// Editing an already modified file again: same status, new content.
	write(t, filepath.Join(repo, "a.txt"), "three\n")
	edited := Read(ctx, repo)
	for name, fp := range map[string]string{"clean": clean.Fingerprint(), "dirty": dirty.Fingerprint()} {
		if edited.Fingerprint() == fp {
			t.Errorf("the fingerprint after a second edit equals the %s one", name)
		}
	}
	// Reading wrote nothing: the index is byte-identical.
	if after, _ := os.ReadFile(filepath.Join(repo, ".git", "index")); string(after) != string(index) {
		t.Error("reading the state rewrote .git/index")
	}
	gitRun(t, repo, "commit", "-qam", "two")
	if moved := Read(ctx, repo); moved.Head == clean.Head || moved.Fingerprint() == edited.Fingerprint() {
		t.Errorf("a commit did not move HEAD or the fingerprint: %+v", moved)
	}

	// A configured fsmonitor command is never run by a preview.
	marker := filepath.Join(t.TempDir(), "fsmonitor-ran")
	gitRun(t, repo, "config", "core.fsmonitor", "touch "+marker+"; false")
	if st := Read(ctx, repo); !st.Git {
		t.Errorf("repo with fsmonitor: %+v", st)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Error("the repository's fsmonitor command ran during a read")
	}
}
