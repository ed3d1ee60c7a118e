// Package persist makes runtime changes outlive a reload: it writes the
// files HAProxy loads at start (the server-state file, map and ACL files,
// certificates) atomically and only inside HAProxy's directory, and it
// computes what a reload would lose right now (Status).
package persist

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// Root is the directory HAProxy's files live under (its configuration
// directory, or the shared volume). Every file written must resolve inside
// it, after symbolic links: proxymcp writes where HAProxy reads, nowhere else.
type Root struct {
	Dir string
}

// PathError refuses a path before anything is read or written.
type PathError struct {
	Path   string
	Reason string
}

func (e *PathError) Error() string {
	return fmt.Sprintf("refusing to write %q: %s; nothing was written", e.Path, e.Reason)
}

// Resolve returns the real path of file (following links), or a
// *PathError when the path is relative, contains "..", or resolves outside
// the root. A missing file resolves through its directory.
func (r Root) Resolve(file string) (string, error) {
	if r.Dir == "" {
		return "", &PathError{file, "no HAProxy directory is configured to write into"}
	}
	if !filepath.IsAbs(file) {
		return "", &PathError{file, "the path is not absolute (HAProxy's names for its files are)"}
	}
	for _, el := range strings.Split(file, "/") {
		if el == ".." {
			return "", &PathError{file, `the path contains ".."`}
		}
	}
	root, err := filepath.EvalSymlinks(r.Dir)
	if err != nil {
		return "", &PathError{file, fmt.Sprintf("HAProxy's directory %s cannot be resolved (%v)", r.Dir, err)}
	}
	real, err := filepath.EvalSymlinks(file)
	if errors.Is(err, fs.ErrNotExist) {
		// A missing file is created; a link whose target is missing is
		// not replaced by one (the link is someone's, and may point
		// anywhere).
		if st, lerr := os.Lstat(file); lerr == nil && st.Mode()&fs.ModeSymlink != 0 {
			target, _ := os.Readlink(file)
			return "", &PathError{file, fmt.Sprintf("it is a symbolic link to %s, which does not exist; fix or remove the link", target)}
		}
		dir, derr := filepath.EvalSymlinks(filepath.Dir(file))
		if derr != nil {
			return "", &PathError{file, fmt.Sprintf("its directory cannot be resolved (%v)", derr)}
		}
		real, err = filepath.Join(dir, filepath.Base(file)), nil
	}
	if err != nil {
		return "", &PathError{file, fmt.Sprintf("it cannot be resolved (%v)", err)}
	}
	if real != root && !strings.HasPrefix(real, root+string(filepath.Separator)) {
		return "", &PathError{file, fmt.Sprintf("it resolves to %s, outside HAProxy's directory %s (a symbolic link?)", real, root)}
	}
	if st, err := os.Stat(real); err == nil && !st.Mode().IsRegular() {
		return "", &PathError{file, "it is not a regular file"}
	}
	return real, nil
}

// Digest identifies a file's content: "sha256:<hex>", or "" when the file
// does not exist. A preview records it; Write refuses to replace a file
// whose digest changed since.
func Digest(file string) (string, error) {
	f, err := os.Open(file)
	if errors.Is(err, fs.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil)), nil
}

// DigestOf is Digest of content in memory.
func DigestOf(data []byte) string {
	s := sha256.Sum256(data)
	return "sha256:" + hex.EncodeToString(s[:])
}

// PreconditionError: the file changed between the preview and the write.
type PreconditionError struct {
	Path, Expected, Found string
}

func (e *PreconditionError) Error() string {
	exp, found := e.Expected, e.Found
	if exp == "" {
		exp = "no file"
	}
	if found == "" {
		found = "no file"
	}
	return fmt.Sprintf("%s changed since it was read (expected %s, found %s): someone else wrote it; nothing was written; preview again and retry", e.Path, exp, found)
}

// Written is the audit record of one write.
type Written struct {
	Path   string `json:"path"`   // as asked
	Real   string `json:"real"`   // after links: the file replaced
	Before string `json:"before"` // digest, "" when it did not exist
	After  string `json:"after"`
	Bytes  int    `json:"bytes"`
}

// Write replaces file with data atomically: a temporary file in the same
// directory (so rename stays on one file system), fsync, the old file's
// mode and owner, rename over it, fsync of the directory (so the rename
// itself survives a crash). expect is the Digest read at preview time ("":
// the file must not exist); any other content is a *PreconditionError.
// A link inside the root is followed and the link kept.
func (r Root) Write(file string, data []byte, expect string) (Written, error) {
	real, err := r.Resolve(file)
	if err != nil {
		return Written{}, err
	}
	w := Written{Path: file, Real: real, After: DigestOf(data), Bytes: len(data)}
	if w.Before, err = Digest(real); err != nil {
		return w, fmt.Errorf("read %s before writing: %w; nothing was written", real, err)
	}
	if w.Before != expect {
		return w, &PreconditionError{Path: file, Expected: expect, Found: w.Before}
	}
	mode, uid, gid := fs.FileMode(0o644), -1, -1
	if st, err := os.Stat(real); err == nil {
		mode = st.Mode().Perm()
		if sys, ok := st.Sys().(*syscall.Stat_t); ok {
			uid, gid = int(sys.Uid), int(sys.Gid)
		}
	}
	dir := filepath.Dir(real)
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(real)+".proxymcp-*")
	if err != nil {
		return w, fmt.Errorf("create a temporary file next to %s: %w; nothing was written", real, err)
	}
	done := false
	defer func() {
		if !done {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	if _, err := tmp.Write(data); err != nil {
		return w, fmt.Errorf("write %s: %w; %s was not changed", tmp.Name(), err, real)
	}
	if err := tmp.Chmod(mode); err != nil {
		return w, fmt.Errorf("keep the mode of %s: %w; it was not changed", real, err)
	}
	if uid >= 0 {
		if err := tmp.Chown(uid, gid); err != nil {
			return w, fmt.Errorf("keep the owner %d:%d of %s: %w (proxymcp needs the right to chown, or to run as that owner); it was not changed", uid, gid, real, err)
		}
	}
	if err := tmp.Sync(); err != nil {
		return w, fmt.Errorf("fsync %s: %w; %s was not changed", tmp.Name(), err, real)
	}
	if err := tmp.Close(); err != nil {
		return w, fmt.Errorf("close %s: %w; %s was not changed", tmp.Name(), err, real)
	}
	// Check again just before the rename: the window for a concurrent
	// writer shrinks to this gap.
	if now, err := Digest(real); err != nil || now != expect {
		return w, &PreconditionError{Path: file, Expected: expect, Found: now}
	}
	if err := os.Rename(tmp.Name(), real); err != nil {
		return w, fmt.Errorf("replace %s: %w; it was not changed", real, err)
	}
	done = true
	if d, err := os.Open(dir); err == nil {
		serr := d.Sync()
		d.Close()
		if serr != nil {
			return w, fmt.Errorf("%s was replaced but fsync of %s failed (%v): a crash now could lose the change", real, dir, serr)
		}
	}
	return w, nil
}
