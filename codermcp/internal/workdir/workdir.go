// Package workdir reads the state of the directory a coder turn works in —
// whether it exists, and for a git repository its branch, HEAD and how many
// files are modified or untracked — for dry runs and approvals. It only
// reads: git runs with optional locks off (no index refresh is written) and
// with the repository's fsmonitor, external diff and textconv commands
// disabled, so a preview never runs a command the repository configured.
package workdir

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"time"
)

// State is what a preview shows of a working directory.
type State struct {
	Path      string `json:"path"`
	Exists    bool   `json:"exists"`
	Git       bool   `json:"git"`
	Branch    string `json:"branch,omitempty"` // "(detached)" when HEAD is detached
	Head      string `json:"head,omitempty"`   // full commit id; "" before the first commit
	Modified  int    `json:"modified"`         // tracked files changed, staged or not (conflicts included)
	Untracked int    `json:"untracked"`
	// Error says why the state could not be read (git missing, not
	// readable, a dubious-ownership refusal ...).
	Error string `json:"error,omitempty"`

	digest string // of the status and the tracked changes' content
}

// limit bounds each git command: a preview must not hang on a huge or
// stuck repository.
const limit = 10 * time.Second

// Read reads dir's state. It never fails: what it could not read is in
// State.Error.
func Read(ctx context.Context, dir string) State {
	st := State{Path: dir}
	fi, err := os.Stat(dir)
	if err != nil || !fi.IsDir() {
		return st
	}
	st.Exists = true
	out, err := git(ctx, dir, "rev-parse", "--is-inside-work-tree")
	if err != nil || strings.TrimSpace(string(out)) != "true" {
		if err != nil && !strings.Contains(err.Error(), "not a git repository") {
			st.Error = err.Error()
		}
		return st
	}
	st.Git = true
	status, err := git(ctx, dir, "status", "--porcelain=v2", "--branch", "-z", "--untracked-files=normal", "--ignore-submodules=none")
	if err != nil {
		st.Error = err.Error()
		return st
	}
	for _, rec := range bytes.Split(status, []byte{0}) {
		line := string(rec)
		switch {
		case strings.HasPrefix(line, "# branch.oid "):
			if oid := strings.TrimPrefix(line, "# branch.oid "); oid != "(initial)" {
				st.Head = oid
			}
		case strings.HasPrefix(line, "# branch.head "):
			st.Branch = strings.TrimPrefix(line, "# branch.head ")
		case strings.HasPrefix(line, "1 "), strings.HasPrefix(line, "u "):
			st.Modified++
		case strings.HasPrefix(line, "2 "):
			st.Modified++ // a rename: its original path follows as the next record
		case strings.HasPrefix(line, "? "):
			st.Untracked++
		}
	}
	h := sha256.New()
	h.Write(status)
	if st.Head != "" {
		// Content, not just names: a file edited again stays "modified".
		diff, err := git(ctx, dir, "diff", "--no-ext-diff", "--no-textconv", "--binary", "HEAD")
		if err != nil {
			st.Error = err.Error()
			return st
		}
		h.Write(diff)
	}
	st.digest = hex.EncodeToString(h.Sum(nil))
	return st
}

// Words describes the state in a few words: "git main@1a2b3c4, 3 modified
// files", "not a git repository", "does not exist".
func (s State) Words() string {
	switch {
	case !s.Exists:
		return "does not exist"
	case !s.Git && s.Error != "":
		return "state unreadable: " + s.Error
	case !s.Git:
		return "not a git repository"
	}
	head := "no commits yet"
	if s.Head != "" {
		head = s.Head[:min(7, len(s.Head))]
	}
	w := fmt.Sprintf("git %s@%s", s.Branch, head)
	switch {
	case s.Error != "":
		return w + ", changes unreadable: " + s.Error
	case s.Modified == 0 && s.Untracked == 0:
		return w + ", clean"
	case s.Untracked == 0:
		return w + ", " + plural(s.Modified, "modified file")
	case s.Modified == 0:
		return w + ", " + plural(s.Untracked, "untracked file")
	}
	return fmt.Sprintf("%s, %d modified and %s", w, s.Modified, plural(s.Untracked, "untracked file"))
}

// Fingerprint is what an approval depends on: HEAD and the dirty state
// (the status and the content of tracked changes).
func (s State) Fingerprint() string {
	return fmt.Sprintf("exists=%v git=%v head=%s branch=%s dirty=%s err=%q", s.Exists, s.Git, s.Head, s.Branch, s.digest, s.Error)
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}

// git runs one read-only git command in dir.
func git(ctx context.Context, dir string, args ...string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	full := append([]string{"--no-optional-locks", "-c", "core.fsmonitor=false", "-c", "core.untrackedCache=false", "-C", dir}, args...)
	cmd := exec.CommandContext(ctx, "git", full...)
	cmd.Env = append(os.Environ(), "GIT_OPTIONAL_LOCKS=0", "GIT_TERMINAL_PROMPT=0", "LC_ALL=C")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		msg := strings.TrimSpace(stderr.String())
		if i := strings.IndexByte(msg, '\n'); i >= 0 {
			msg = msg[:i]
		}
		if msg == "" {
			msg = err.Error()
		}
		return nil, fmt.Errorf("git %s: %s", args[0], msg)
	}
	return out, nil
}
