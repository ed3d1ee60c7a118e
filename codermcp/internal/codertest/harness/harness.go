// Package harness is what codermcp's tests add to codertest: the pinned CLI,
// one test's back end (an endpoint that records what it was sent, a
// CODEX_HOME for it, a marker to find what a run left behind), and a git
// repository to work in. Only tests import it; it is a normal package, so go
// vet and scripts/deadcode check it like the rest of the test back end.
package harness

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/mcpfleet/mcpfleet/codermcp/internal/codertest"
	"github.com/mcpfleet/mcpfleet/codermcp/internal/procsweep"
	"github.com/mcpfleet/mcpfleet/shared/e2e/toolcache"
)

// PinnedVersion is the Codex CLI the tests run (scripts/install/codermcp.sh).
const PinnedVersion = "0.171.0"

// CLI returns the path of the real Codex CLI: $CODER_TEST_CLI, else the
// cache directory scripts/install/codermcp.sh installs into. When it is
// missing the test is skipped, or fails when CI=true.
func CLI(t testing.TB) string {
	t.Helper()
	if p := os.Getenv("CODER_TEST_CLI"); p != "" {
		return p
	}
	p := filepath.Join(toolcache.Dir(), "codex", "node_modules", ".bin", "codex")
	if _, err := os.Stat(p); err != nil {
		msg := "Codex CLI " + PinnedVersion + " not found at " + p + " (run scripts/install/codermcp.sh or set CODER_TEST_CLI)"
		if os.Getenv("CI") == "true" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	return p
}

// Harness is one test's back end: the endpoint, a CODEX_HOME pointing the
// CLI at it, the CLI path, and a marker put into every child's environment
// so leftover processes can be found.
type Harness struct {
	Endpoint *Endpoint
	Home     string
	CLI      string
	Marker   string // CODERTEST_RUN=<uuid>
	// Env is what every test adds to the CLI's environment (cli.Client.Env,
	// or a server's environment): the marker, and a throwaway HOME with no
	// shell start-up files. The CLI runs the model's commands with
	// `bash -lc`, which would otherwise load the machine's ~/.profile and
	// ~/.bashrc (pyenv init and rehash waiting on a lock, seen on CI):
	// slow commands, their output mixed into the command's, and children
	// of their own.
	Env []string
}

// New starts an endpoint and writes a CODEX_HOME for it under t.TempDir().
func New(t testing.TB) *Harness {
	t.Helper()
	return NewFor(t, CLI(t))
}

// Leftovers returns the pids of live processes whose environment holds
// marker (a "KEY=value" entry), i.e. what a run left behind.
func Leftovers(marker string) []int {
	var pids []int
	for _, pid := range procsweep.Marked(marker) {
		if !zombie(strconv.Itoa(pid)) {
			pids = append(pids, pid)
		}
	}
	return pids
}

func zombie(pid string) bool {
	b, err := os.ReadFile(filepath.Join("/proc", pid, "stat"))
	if err != nil {
		return true
	}
	s := string(b)
	if i := strings.LastIndexByte(s, ')'); i >= 0 && i+2 < len(s) {
		return s[i+2] == 'Z'
	}
	return false
}

// GitRepo makes a git repository in a temp dir with one commit and an
// uncommitted change, and returns its path.
func GitRepo(t testing.TB) string {
	t.Helper()
	dir := t.TempDir()
	run := func(args ...string) {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	run("init", "-q")
	if err := os.WriteFile(filepath.Join(dir, "main.go"), []byte("package main\n\nfunc main() {}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	run("add", "main.go")
	run("commit", "-qm", "init")
	if err := os.WriteFile(filepath.Join(dir, "main.go"), []byte("package main\n\nfunc main() { panic(1) }\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// NewFor is New with a given CLI (a fake one, for what the real CLI cannot show).
func NewFor(t testing.TB, cliPath string) *Harness {
	t.Helper()
	rec := &recorder{}
	served, err := codertest.Start("127.0.0.1:0", rec)
	if err != nil {
		t.Fatal(err)
	}
	ep := &Endpoint{Endpoint: served, recorder: rec}
	t.Cleanup(func() { ep.Close() })
	home, err := codertest.WriteHome(t.TempDir(), ep.URL(), codertest.Model)
	if err != nil {
		t.Fatal(err)
	}
	marker := "CODERTEST_RUN=" + uuid.NewString()
	return &Harness{Endpoint: ep, Home: home, CLI: cliPath, Marker: marker,
		Env: []string{marker, "HOME=" + t.TempDir(), "BASH_ENV=", "ENV="}}
}

// Cmdline returns a process's command line with spaces between arguments.
func Cmdline(pid int) string {
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "cmdline"))
	if err != nil {
		return ""
	}
	return strings.TrimSpace(strings.ReplaceAll(string(b), "\x00", " "))
}
