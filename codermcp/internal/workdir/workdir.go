// Package workdir reads the state of the directory a coder turn works in —
// whether it exists, and for a git repository its branch, HEAD and how many
// files are modified or untracked — for dry runs and approvals. Every
// workspace is treated as hostile: the repository is read with go-git (the
// index, objects and files themselves), never with the git binary, so
// nothing the repository configures — filters, hooks, fsmonitor, external
// diff or textconv drivers, pagers, includes — can run. Hazards names the
// settings that would make the git binary (which the CLI itself runs for a
// review) execute something.
package workdir

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/format/config"
	"github.com/go-git/go-git/v5/storage/filesystem"
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

// limit bounds one read: a preview must not hang on a huge or stuck
// repository.
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
	ctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	done := make(chan State, 1)
	go func() { done <- readRepo(st) }()
	select {
	case got := <-done:
		return got
	case <-ctx.Done():
		st.Git = true
		st.Error = fmt.Sprintf("reading the repository took longer than %s", limit)
		return st
	}
}

// readRepo reads HEAD, the branch and the status with go-git.
func readRepo(st State) State {
	repo, err := git.PlainOpenWithOptions(st.Path, &git.PlainOpenOptions{DetectDotGit: true, EnableDotGitCommonDir: true})
	if err != nil {
		if !errors.Is(err, git.ErrRepositoryNotExists) {
			st.Error = "git: " + err.Error()
		}
		return st
	}
	st.Git = true
	if head, err := repo.Storer.Reference(plumbing.HEAD); err == nil {
		switch {
		case head.Type() == plumbing.SymbolicReference && head.Target().IsBranch():
			st.Branch = head.Target().Short()
		default:
			st.Branch = "(detached)"
		}
	}
	if h, err := repo.Head(); err == nil {
		st.Head = h.Hash().String()
	} else if !errors.Is(err, plumbing.ErrReferenceNotFound) {
		st.Error = "git HEAD: " + err.Error()
		return st
	}
	wt, err := repo.Worktree()
	if err != nil {
		st.Error = "git worktree: " + err.Error()
		return st
	}
	status, err := wt.Status()
	if err != nil {
		st.Error = "git status: " + err.Error()
		return st
	}
	paths := make([]string, 0, len(status))
	for p, fs := range status {
		switch {
		case fs.Worktree == git.Untracked:
			st.Untracked++
		case fs.Staging != git.Unmodified || fs.Worktree != git.Unmodified:
			st.Modified++
		default:
			continue
		}
		paths = append(paths, p)
	}
	slices.Sort(paths)
	// Names, status codes and content: a file edited again stays
	// "modified" but moves the digest.
	h := sha256.New()
	fmt.Fprintf(h, "head=%s branch=%s\n", st.Head, st.Branch)
	root := wt.Filesystem.Root()
	for _, p := range paths {
		fs := status[p]
		fmt.Fprintf(h, "%c%c %s\x00", fs.Staging, fs.Worktree, p)
		contentHash(h, filepath.Join(root, filepath.FromSlash(p)))
	}
	st.digest = hex.EncodeToString(h.Sum(nil))
	return st
}

// contentHash adds what a worktree file holds: a regular file's bytes, a
// symlink's target; anything else (a FIFO would block) only its type.
func contentHash(w io.Writer, path string) {
	fi, err := os.Lstat(path)
	switch {
	case err != nil:
		fmt.Fprint(w, "missing\x00")
	case fi.Mode()&os.ModeSymlink != 0:
		target, _ := os.Readlink(path)
		fmt.Fprintf(w, "link %s\x00", target)
	case fi.Mode().IsRegular():
		f, err := os.Open(path)
		if err != nil {
			fmt.Fprintf(w, "unreadable\x00")
			return
		}
		defer f.Close()
		fmt.Fprintf(w, "file %d %o\x00", fi.Size(), fi.Mode().Perm())
		io.Copy(w, f)
	default:
		fmt.Fprintf(w, "%s\x00", fi.Mode().Type())
	}
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

// Hazards lists what in dir's repository would make the git binary run a
// command: settings that name a program (filters, diff and merge drivers,
// fsmonitor, hooks path, pagers, editors, ssh and proxy commands,
// credential helpers), includes (which could pull in any of those from
// elsewhere) and installed hooks. It reads with go-git, running nothing; an
// unreadable repository is a hazard too, as it cannot be shown harmless.
func Hazards(dir string) []string {
	repo, err := git.PlainOpenWithOptions(dir, &git.PlainOpenOptions{DetectDotGit: true, EnableDotGitCommonDir: true})
	if errors.Is(err, git.ErrRepositoryNotExists) {
		return nil
	}
	if err != nil {
		return []string{"an unreadable repository (" + err.Error() + ")"}
	}
	var found []string
	cfg, err := repo.Config()
	if err != nil {
		return []string{"an unreadable .git/config (" + err.Error() + ")"}
	}
	raws := []*config.Config{cfg.Raw}
	gitDir := ""
	if fs, ok := repo.Storer.(*filesystem.Storage); ok {
		gitDir = fs.Filesystem().Root()
		if f, err := os.Open(filepath.Join(gitDir, "config.worktree")); err == nil {
			wc := config.New()
			err = config.NewDecoder(f).Decode(wc)
			f.Close()
			if err != nil {
				return []string{"an unreadable config.worktree (" + err.Error() + ")"}
			}
			raws = append(raws, wc)
		}
	}
	for _, raw := range raws {
		for _, sec := range raw.Sections {
			for _, o := range sec.Options {
				found = append(found, hazard(sec.Name, "", o)...)
			}
			for _, sub := range sec.Subsections {
				for _, o := range sub.Options {
					found = append(found, hazard(sec.Name, sub.Name, o)...)
				}
			}
		}
	}
	if gitDir != "" {
		// The hooks git runs on its own while reading or snapshotting
		// (an index refresh, a ref update); commit hooks and the like run
		// only when someone commits, inside the sandbox.
		for _, name := range []string{"post-index-change", "reference-transaction", "fsmonitor-watchman"} {
			if fi, err := os.Stat(filepath.Join(gitDir, "hooks", name)); err == nil && fi.Mode().IsRegular() && fi.Mode().Perm()&0o111 != 0 {
				found = append(found, "hook "+name)
			}
		}
	}
	slices.Sort(found)
	return slices.Compact(found)
}

// hazard names o when it lets the repository run a command.
func hazard(section, sub string, o *config.Option) []string {
	sec, key := strings.ToLower(section), strings.ToLower(o.Key)
	name := sec + "." + key
	if sub != "" {
		name = sec + "." + sub + "." + key
	}
	runs := false
	switch sec {
	case "include", "includeif", "pager", "alias":
		runs = true
	case "filter":
		runs = key == "clean" || key == "smudge" || key == "process"
	case "diff":
		runs = key == "external" || key == "textconv" || key == "command"
	case "merge", "mergetool", "difftool":
		runs = key == "driver" || key == "cmd" || key == "path"
	case "core":
		switch key {
		case "fsmonitor":
			v := strings.ToLower(strings.TrimSpace(o.Value))
			runs = v != "" && v != "false" && v != "true" && v != "0" && v != "1" && v != "no" && v != "yes" && v != "off" && v != "on"
		case "hookspath", "pager", "sshcommand", "gitproxy", "askpass", "editor", "alternaterefscommand":
			runs = true
		}
	case "credential":
		runs = key == "helper"
	case "gpg":
		runs = key == "program"
	case "sequence":
		runs = key == "editor"
	case "uploadpack":
		runs = key == "packobjectshook"
	case "remote":
		runs = key == "uploadpack" || key == "receivepack"
	case "interactive":
		runs = key == "difffilter"
	}
	if !runs {
		return nil
	}
	return []string{name}
}
