// Package workspace confines the directory a CLI run works in. A
// workspace-write run may change everything under its directory, so the
// caller's workingDirectory is resolved (symlinks followed) and must lie
// under one of the configured roots (CODER_WORKSPACE_ROOTS), and must never
// contain — nor lie inside — a directory that decides how later runs go
// (the CLI's own configuration directory). The resolved path is what the
// CLI is given: the value that was checked is the value that runs.
package workspace

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// MaxPathBytes bounds a workingDirectory (PATH_MAX on Linux).
const MaxPathBytes = 4096

// Policy says where calls may work.
type Policy struct {
	// Roots are resolved absolute directories; a workspace lies in one.
	Roots []string
	// Guarded are resolved absolute paths no workspace may contain or lie
	// in, each with what it is ("the CLI's configuration directory
	// (CODER_HOME)").
	Guarded []Guard
}

// Guard is a path that no workspace may overlap.
type Guard struct {
	Path string
	What string
}

// Error is a refused workingDirectory: what was asked, why not, what to do.
type Error struct {
	Dir  string // as the caller gave it
	Why  string
	Hint string
}

func (e *Error) Error() string {
	return fmt.Sprintf("workingDirectory %q is refused: %s", e.Dir, e.Why)
}

// Resolve checks dir (absolute, or relative to the server's working
// directory) and returns the real path the CLI must be given.
func (p Policy) Resolve(dir string) (string, error) {
	roots := "CODER_WORKSPACE_ROOTS (" + strings.Join(p.Roots, ", ") + ")"
	pass := "Pass a directory under one of " + roots + ", or ask the operator to add a root"
	switch {
	case strings.IndexByte(dir, 0) >= 0:
		return "", &Error{dir, "it contains a NUL byte", pass}
	case len(dir) > MaxPathBytes:
		return "", &Error{dir, fmt.Sprintf("it is longer than %d bytes", MaxPathBytes), pass}
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", &Error{dir, "it is not a usable path: " + err.Error(), pass}
	}
	// Every symlink resolved (loops fail here): the real directory is what
	// is checked and then run in.
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return "", &Error{dir, "it does not exist or cannot be resolved: " + unwrap(err), "Pass an existing directory under one of " + roots}
	}
	fi, err := os.Stat(real)
	if err != nil {
		return "", &Error{dir, "it cannot be read: " + unwrap(err), "Pass an existing directory under one of " + roots}
	}
	if !fi.IsDir() {
		return "", &Error{dir, "it is not a directory", "Pass a directory, not a file, under one of " + roots}
	}
	if !p.inRoots(real) {
		why := "it is outside the workspace roots " + roots
		if real != abs {
			why = fmt.Sprintf("it resolves to %s, outside the workspace roots %s", real, roots)
		}
		return "", &Error{dir, why, pass}
	}
	for _, g := range p.Guarded {
		switch {
		case Within(g.Path, real):
			return "", &Error{dir, fmt.Sprintf("it contains %s %s, which a run there could rewrite for every later run", g.What, g.Path), "Pass a project directory that does not contain " + g.Path}
		case Within(real, g.Path):
			return "", &Error{dir, fmt.Sprintf("it lies inside %s %s", g.What, g.Path), "Pass a project directory outside " + g.Path}
		}
	}
	return real, nil
}

func (p Policy) inRoots(real string) bool {
	for _, r := range p.Roots {
		if Within(real, r) {
			return true
		}
	}
	return false
}

// Within reports whether path is dir or lies under it (both clean and
// absolute).
func Within(path, dir string) bool {
	if dir == "/" {
		return strings.HasPrefix(path, "/")
	}
	return path == dir || strings.HasPrefix(path, dir+"/")
}

// Unchanged reports whether the resolved path real still resolves to
// itself: called just before a CLI starts in it, so that a directory
// swapped for a symlink after the check is refused rather than followed.
func Unchanged(real string) error {
	now, err := filepath.EvalSymlinks(real)
	if err != nil {
		return fmt.Errorf("working directory %s is gone: %s", real, unwrap(err))
	}
	if now != real {
		return fmt.Errorf("working directory %s now resolves to %s (a symlink replaced part of it after it was checked)", real, now)
	}
	return nil
}

// Real resolves an existing path's symlinks; a path that does not exist
// yet is resolved as far as it exists, the rest kept as written.
func Real(path string) string {
	abs, err := filepath.Abs(path)
	if err != nil {
		return filepath.Clean(path)
	}
	if real, err := filepath.EvalSymlinks(abs); err == nil {
		return real
	}
	parent, base := filepath.Split(abs)
	if parent == abs || parent == "" || parent == "/" {
		return abs
	}
	return filepath.Join(Real(strings.TrimSuffix(parent, "/")), base)
}

func unwrap(err error) string {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}
