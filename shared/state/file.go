package state

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"time"
)

// fileHeader is the first line of a ledger file: a file that does not
// start with it (another file named by mistake) is refused, not overwritten.
const fileHeader = "# mcpfleet used-code ledger v1\n"

// compactAt is how many entries a file holds before expired ones are
// dropped (when they are at least half of them).
const compactAt = 64

// File is a Ledger in a local file that every process of one host sees:
// each MarkUsed takes an exclusive flock, reads the live entries, and
// appends the new one and fsyncs it before returning, so a key is first
// used once across processes, restarts and crashes. Expired entries are
// dropped by rewriting the file (write, fsync, rename) once they are half
// of it. The file is created (mode 0600, directories 0700) on first use.
//
// A torn last line (a crash inside the append) was never acknowledged and
// is dropped; any other unreadable line, a foreign file, or an I/O error
// fails MarkUsed, so the caller refuses the key.
type File struct {
	path string
	now  func() time.Time
	// mu serialises this process's callers: flock does not exclude two
	// holders of the same open file, and each call opens its own.
	mu sync.Mutex
}

// NewFile returns a ledger in path. Nothing is touched until MarkUsed.
func NewFile(path string) *File { return &File{path: path, now: time.Now} }

// SetClock replaces the clock deciding which entries expired (tests).
func (f *File) SetClock(now func() time.Time) { f.now = now }

// Where implements Ledger.
func (f *File) Where() string { return f.path }

// MarkUsed implements Ledger. It does not return before the entry is on
// disk. It takes no notice of ctx once the lock is held: the work under
// it is one read, one append and one fsync.
func (f *File) MarkUsed(ctx context.Context, key string, _ Stamp, until time.Time) (bool, error) {
	if err := CheckKey(key); err != nil {
		return false, err
	}
	if err := ctx.Err(); err != nil {
		return false, err
	}
	if f.path == "" {
		return false, errors.New("no used-code ledger file is configured")
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	fh, err := f.lock()
	if err != nil {
		return false, err
	}
	defer fh.Close() // closing releases the flock
	first, err := f.mark(fh, key, until)
	if err != nil {
		return false, fmt.Errorf("used-code ledger %s: %w", f.path, err)
	}
	return first, nil
}

// lock opens the file and takes its flock. Another process may have
// replaced the file (compaction renames a new one over it) while this one
// waited for the lock on the old inode: then it opens the path again.
func (f *File) lock() (*os.File, error) {
	for range 100 {
		if err := os.MkdirAll(filepath.Dir(f.path), 0o700); err != nil {
			return nil, fmt.Errorf("create the directory of the used-code ledger %s: %w", f.path, err)
		}
		fh, err := os.OpenFile(f.path, os.O_RDWR|os.O_CREATE, 0o600)
		if err != nil {
			return nil, fmt.Errorf("open the used-code ledger %s: %w", f.path, err)
		}
		if err := flock(fh); err != nil {
			fh.Close()
			return nil, fmt.Errorf("lock the used-code ledger %s: %w", f.path, err)
		}
		held, err1 := fh.Stat()
		named, err2 := os.Stat(f.path)
		if err := errors.Join(err1, err2); err != nil && !errors.Is(err2, os.ErrNotExist) {
			fh.Close()
			return nil, fmt.Errorf("check the used-code ledger %s: %w", f.path, err)
		}
		if err2 == nil && os.SameFile(held, named) {
			if !held.Mode().IsRegular() {
				// A device or a FIFO (/dev/null would forget every code).
				fh.Close()
				return nil, fmt.Errorf("the used-code ledger %s is not a regular file (%s)", f.path, held.Mode().Type())
			}
			return fh, nil
		}
		fh.Close()
	}
	return nil, fmt.Errorf("lock the used-code ledger %s: the file kept being replaced while waiting for its lock", f.path)
}

func flock(fh *os.File) error {
	for {
		err := syscall.Flock(int(fh.Fd()), syscall.LOCK_EX)
		if !errors.Is(err, syscall.EINTR) {
			return err
		}
	}
}

type entry struct {
	until int64 // unix ms
	key   string
}

func (f *File) mark(fh *os.File, key string, until time.Time) (bool, error) {
	data, err := io.ReadAll(fh)
	if err != nil {
		return false, fmt.Errorf("read: %w", err)
	}
	entries, end, err := parse(data)
	if err != nil {
		return false, err
	}
	if end < len(data) {
		// The tail after the last newline is a torn append: its fsync
		// never returned, so its call never ran.
		if err := fh.Truncate(int64(end)); err != nil {
			return false, fmt.Errorf("drop a torn last line: %w", err)
		}
	}
	now := f.now().UnixMilli()
	live := entries[:0:0]
	for _, e := range entries {
		if e.until > now {
			if e.key == key {
				return false, nil
			}
			live = append(live, e)
		}
	}
	add := entry{until: until.UnixMilli(), key: key}
	if len(entries) >= compactAt && 2*len(live) <= len(entries) {
		return true, f.rewrite(append(live, add))
	}
	var line []byte
	if end == 0 {
		line = append(line, fileHeader...)
	}
	line = appendEntry(line, add)
	if _, err := fh.WriteAt(line, int64(end)); err != nil {
		return false, fmt.Errorf("append: %w", err)
	}
	if err := fh.Sync(); err != nil {
		return false, fmt.Errorf("sync: %w", err)
	}
	if end == 0 {
		// A new file must survive a crash too: its directory entry.
		if err := syncDir(filepath.Dir(f.path)); err != nil {
			return false, err
		}
	}
	return true, nil
}

// parse reads the entries of a ledger file and returns the length of its
// complete lines.
func parse(data []byte) ([]entry, int, error) {
	end := bytes.LastIndexByte(data, '\n') + 1
	if len(data) == 0 {
		return nil, 0, nil
	}
	if !bytes.HasPrefix(data, []byte(fileHeader)) {
		if end == 0 && bytes.HasPrefix([]byte(fileHeader), data) {
			return nil, 0, nil // a torn header: the file was never used
		}
		return nil, 0, errors.New("the file is not a used-code ledger (its first line is not " + strconv.Quote(fileHeader[:len(fileHeader)-1]) + ")")
	}
	var out []entry
	lines := bytes.Split(data[len(fileHeader):end], []byte{'\n'})
	for i, l := range lines[:len(lines)-1] {
		ms, key, ok := bytes.Cut(l, []byte{' '})
		n, err := strconv.ParseInt(string(ms), 10, 64)
		if !ok || err != nil || CheckKey(string(key)) != nil {
			// The line itself is not quoted: a file named by mistake may hold anything.
			return nil, 0, fmt.Errorf("line %d is corrupt", i+2)
		}
		out = append(out, entry{until: n, key: string(key)})
	}
	return out, end, nil
}

func appendEntry(b []byte, e entry) []byte {
	b = strconv.AppendInt(b, e.until, 10)
	b = append(b, ' ')
	b = append(b, e.key...)
	return append(b, '\n')
}

// rewrite replaces the file with one holding only entries: written and
// synced beside it, then renamed over it, so a crash leaves either file
// whole.
func (f *File) rewrite(entries []entry) error {
	b := []byte(fileHeader)
	for _, e := range entries {
		b = appendEntry(b, e)
	}
	n := make([]byte, 6)
	rand.Read(n)
	tmp := f.path + ".tmp-" + hex.EncodeToString(n)
	if err := writeSynced(tmp, b); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("compact: %w", err)
	}
	if err := os.Rename(tmp, f.path); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("compact: %w", err)
	}
	return syncDir(filepath.Dir(f.path))
}

func writeSynced(path string, b []byte) error {
	fh, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	if _, err := fh.Write(b); err != nil {
		fh.Close()
		return err
	}
	if err := fh.Sync(); err != nil {
		fh.Close()
		return err
	}
	return fh.Close()
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("sync directory %s: %w", dir, err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("sync directory %s: %w", dir, err)
	}
	return nil
}
