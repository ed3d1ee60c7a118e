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

// Error is a refused workingDirectory (or another path argument: Arg):
// what was asked, why not, what to do.
type Error struct {
	Dir  string // as the caller gave it
	Why  string
	Hint string
	Arg  string // the argument's name; "" is workingDirectory
}

func (e *Error) Error() string {
	arg := e.Arg
	if arg == "" {
		arg = "workingDirectory"
	}
	return fmt.Sprintf("%s %q is refused: %s", arg, e.Dir, e.Why)
}

// ResolveDir is Resolve for another directory argument (addDirs): the
// same confinement, the error naming arg.
func (p Policy) ResolveDir(arg, dir string) (string, error) {
	real, err := p.Resolve(dir)
	var we *Error
	if errors.As(err, &we) {
		we.Arg = arg
	}
	return real, err
}

// ResolveFile checks a file argument (an image): absolute, or relative to
// the server's working directory, symlinks resolved, a regular file of at
// most maxBytes, inside the roots and outside every guarded path. It
// returns the real path the CLI must be given.
func (p Policy) ResolveFile(arg, path string, maxBytes int64) (string, error) {
	roots := "CODER_WORKSPACE_ROOTS (" + strings.Join(p.Roots, ", ") + ")"
	pass := "Pass a file under one of " + roots
	refuse := func(why, hint string) (string, error) { return "", &Error{Dir: path, Why: why, Hint: hint, Arg: arg} }
	switch {
	case path == "":
		return refuse("it is empty", pass)
	case strings.IndexByte(path, 0) >= 0:
		return refuse("it contains a NUL byte", pass)
	case len(path) > MaxPathBytes:
		return refuse(fmt.Sprintf("it is longer than %d bytes", MaxPathBytes), pass)
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return refuse("it is not a usable path: "+err.Error(), pass)
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return refuse("it does not exist or cannot be resolved: "+unwrap(err), pass)
	}
	if !p.inRoots(real) {
		why := "it is outside the workspace roots " + roots
		if real != abs {
			why = fmt.Sprintf("it resolves to %s, outside the workspace roots %s", real, roots)
		}
		return refuse(why, pass+", or ask the operator to add a root")
	}
	for _, g := range p.Guarded {
		if Within(real, g.Path) {
			return refuse(fmt.Sprintf("it lies inside %s %s", g.What, g.Path), pass+" outside "+g.Path)
		}
	}
	fi, err := os.Stat(real)
	switch {
	case err != nil:
		return refuse("it cannot be read: "+unwrap(err), pass)
	case !fi.Mode().IsRegular():
		return refuse("it is not a regular file", "Pass an image file (not a directory, device or pipe) under one of "+roots)
	case fi.Size() > maxBytes:
		return refuse(fmt.Sprintf("it is %d bytes, more than the %d allowed", fi.Size(), maxBytes), "Pass a smaller image")
	}
	return real, nil
}

// Resolve checks dir (absolute, or relative to the server's working
// directory) and returns the real path the CLI must be given.
func (p Policy) Resolve(dir string) (string, error) {
	roots := "CODER_WORKSPACE_ROOTS (" + strings.Join(p.Roots, ", ") + ")"
	pass := "Pass a directory under one of " + roots + ", or ask the operator to add a root"
	switch {
	case strings.IndexByte(dir, 0) >= 0:
		return "", &Error{dir, "it contains a NUL byte", pass, ""}
	case len(dir) > MaxPathBytes:
		return "", &Error{dir, fmt.Sprintf("it is longer than %d bytes", MaxPathBytes), pass, ""}
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", &Error{dir, "it is not a usable path: " + err.Error(), pass, ""}
	}
	// Every symlink resolved (loops fail here): the real directory is what
	// is checked and then run in.
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return "", &Error{dir, "it does not exist or cannot be resolved: " + unwrap(err), "Pass an existing directory under one of " + roots, ""}
	}
	fi, err := os.Stat(real)
	if err != nil {
		return "", &Error{dir, "it cannot be read: " + unwrap(err), "Pass an existing directory under one of " + roots, ""}
	}
	if !fi.IsDir() {
		return "", &Error{dir, "it is not a directory", "Pass a directory, not a file, under one of " + roots, ""}
	}
	if !p.inRoots(real) {
		why := "it is outside the workspace roots " + roots
		if real != abs {
			why = fmt.Sprintf("it resolves to %s, outside the workspace roots %s", real, roots)
		}
		return "", &Error{dir, why, pass, ""}
	}
	for _, g := range p.Guarded {
		switch {
		case Within(g.Path, real):
			return "", &Error{dir, fmt.Sprintf("it contains %s %s, which a run there could rewrite for every later run", g.What, g.Path), "Pass a project directory that does not contain " + g.Path, ""}
		case Within(real, g.Path):
			return "", &Error{dir, fmt.Sprintf("it lies inside %s %s", g.What, g.Path), "Pass a project directory outside " + g.Path, ""}
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
