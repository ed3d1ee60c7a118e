package state_test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/mcpfleet/mcpfleet/shared/state"
)

const header = "# mcpfleet used-code ledger v1\n"

// TestFileFirstUseOnce: 48 callers in one process, through 4 ledgers on
// one file (as 4 pipelines would), race each of 20 keys; exactly one
// caller wins each key.
func TestFileFirstUseOnce(t *testing.T) {
	path := filepath.Join(t.TempDir(), "codes")
	ledgers := []*state.File{state.NewFile(path), state.NewFile(path), state.NewFile(path), state.NewFile(path)}
	until := time.Now().Add(time.Hour)
	for k := range 20 {
		key := fmt.Sprintf("code:%d", k)
		var wins atomic.Int32
		var wg sync.WaitGroup
		start := make(chan struct{})
		for i := range 48 {
			wg.Go(func() {
				<-start
				first, err := ledgers[i%len(ledgers)].MarkUsed(t.Context(), key, state.Stamp{}, until)
				if err != nil {
					t.Error(err)
				}
				if first {
					wins.Add(1)
				}
			})
		}
		close(start)
		wg.Wait()
		if wins.Load() != 1 {
			t.Fatalf("key %s: %d first uses, want 1", key, wins.Load())
		}
	}
	// The next process (a restart) sees every key.
	next := state.NewFile(path)
	for k := range 20 {
		if first, err := next.MarkUsed(t.Context(), fmt.Sprintf("code:%d", k), state.Stamp{}, until); first || err != nil {
			t.Fatalf("after a restart key %d was a first use (%v)", k, err)
		}
	}
}

// TestFileAcrossProcesses: 4 processes race 40 keys on one file, each with
// 4 goroutines per key; every key is won exactly once over all of them.
func TestFileAcrossProcesses(t *testing.T) {
	if path := os.Getenv("STATE_CHILD_LEDGER"); path != "" {
		l := state.NewFile(path)
		until := time.Now().Add(time.Hour)
		var mu sync.Mutex
		var won []string
		var wg sync.WaitGroup
		for k := range 40 {
			for range 4 {
				wg.Go(func() {
					key := fmt.Sprintf("code:%d", k)
					first, err := l.MarkUsed(context.Background(), key, state.Stamp{}, until)
					if err != nil {
						fmt.Println("error", err)
						return
					}
					if first {
						mu.Lock()
						won = append(won, key)
						mu.Unlock()
					}
				})
			}
		}
		wg.Wait()
		for _, k := range won {
			fmt.Println("won", k)
		}
		return
	}
	path := filepath.Join(t.TempDir(), "codes")
	var cmds []*exec.Cmd
	var outs []*bytes.Buffer
	for range 4 {
		cmd := exec.Command(os.Args[0], "-test.run=^TestFileAcrossProcesses$")
		cmd.Env = append(os.Environ(), "STATE_CHILD_LEDGER="+path)
		out := &bytes.Buffer{}
		cmd.Stdout, cmd.Stderr = out, out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		cmds, outs = append(cmds, cmd), append(outs, out)
	}
	wins := map[string]int{}
	for i, cmd := range cmds {
		if err := cmd.Wait(); err != nil {
			t.Fatalf("child %d: %v\n%s", i, err, outs[i])
		}
		sc := bufio.NewScanner(outs[i])
		for sc.Scan() {
			if k, ok := strings.CutPrefix(sc.Text(), "won "); ok {
				wins[k]++
			} else if strings.HasPrefix(sc.Text(), "error") {
				t.Errorf("child %d: %s", i, sc.Text())
			}
		}
	}
	for k := range 40 {
		if n := wins[fmt.Sprintf("code:%d", k)]; n != 1 {
			t.Errorf("key %d won %d times across processes, want once", k, n)
		}
	}
	if len(wins) != 40 {
		t.Errorf("%d keys won, want 40: %v", len(wins), wins)
	}
}

// TestFileExpiryAndCompaction: expired entries no longer count and are
// dropped once they are half of the file; live ones survive the rewrite.
func TestFileExpiryAndCompaction(t *testing.T) {
	path := filepath.Join(t.TempDir(), "codes")
	now := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)
	l := state.NewFile(path)
	l.SetClock(func() time.Time { return now })
	mark := func(key string, until time.Time) bool {
		t.Helper()
		first, err := l.MarkUsed(t.Context(), key, state.Stamp{}, until)
		if err != nil {
			t.Fatal(err)
		}
		return first
	}
	for i := range 100 {
		mark(fmt.Sprintf("short:%d", i), now.Add(time.Minute))
	}
	mark("long", now.Add(time.Hour))
	if mark("short:5", now.Add(time.Minute)) {
		t.Fatal("a live key was a first use again")
	}
	now = now.Add(2 * time.Minute)
	if !mark("short:5", now.Add(time.Minute)) {
		t.Fatal("an expired key still counts as used")
	}
	b, _ := os.ReadFile(path)
	if lines := strings.Count(string(b), "\n"); lines != 3 { // header, long, short:5
		t.Fatalf("not compacted: %d lines\n%s", lines, b)
	}
	if mark("long", now.Add(time.Hour)) || mark("short:5", now.Add(time.Minute)) {
		t.Fatal("a live key was lost in compaction")
	}
	if ents, _ := os.ReadDir(filepath.Dir(path)); len(ents) != 1 {
		t.Errorf("compaction left files behind: %v", ents)
	}
}

// TestFileTornLastLine: a crash inside an append leaves a partial last
// line; its fsync never returned, so it is dropped and the file stays usable.
func TestFileTornLastLine(t *testing.T) {
	path := filepath.Join(t.TempDir(), "codes")
	until := time.Now().Add(time.Hour)
	l := state.NewFile(path)
	if first, err := l.MarkUsed(t.Context(), "code:a", state.Stamp{}, until); !first || err != nil {
		t.Fatal(first, err)
	}
	f, _ := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	f.WriteString(strconv.FormatInt(until.UnixMilli(), 10)[:7])
	f.Close()
	if first, err := l.MarkUsed(t.Context(), "code:b", state.Stamp{}, until); !first || err != nil {
		t.Fatal(first, err)
	}
	if first, err := l.MarkUsed(t.Context(), "code:a", state.Stamp{}, until); first || err != nil {
		t.Fatal("code:a forgotten", err)
	}
	b, _ := os.ReadFile(path)
	want := header + strconv.FormatInt(until.UnixMilli(), 10) + " code:a\n" + strconv.FormatInt(until.UnixMilli(), 10) + " code:b\n"
	if string(b) != want {
		t.Fatalf("file\n%q\nwant\n%q", b, want)
	}
	// A header torn before any entry: the file was never used.
	torn := filepath.Join(t.TempDir(), "codes")
	os.WriteFile(torn, []byte(header[:10]), 0o600)
	if first, err := state.NewFile(torn).MarkUsed(t.Context(), "code:a", state.Stamp{}, until); !first || err != nil {
		t.Fatal(first, err)
	}
}

// TestFileRefuses: a ledger that cannot be read, parsed or written fails
// MarkUsed, naming the file, so the caller refuses the code.
func TestFileRefuses(t *testing.T) {
	until := time.Now().Add(time.Hour)
	line := strconv.FormatInt(until.UnixMilli(), 10) + " code:x\n"
	for _, tc := range []struct {
		name  string
		setup func(dir string) string // returns the ledger path
		want  string
	}{
		{"corrupt entry", func(dir string) string {
			return write(t, dir, header+line+"garbage\n"+line)
		}, "line 3 is corrupt"},
		{"expiry not a number", func(dir string) string { return write(t, dir, header+"soon code:y\n") }, "line 2 is corrupt"},
		{"key with a control character", func(dir string) string { return write(t, dir, header+"1 code:\x01\n") }, "line 2 is corrupt"},
		{"empty line", func(dir string) string { return write(t, dir, header+line+"\n") }, "line 3 is corrupt"},
		{"another file (an audit log)", func(dir string) string {
			return write(t, dir, `{"time":"2026-11-24T17:22:05.431Z","event":"intent"}`+"\n")
		}, "not a used-code ledger"},
		{"binary", func(dir string) string { return write(t, dir, "\x00\x01\x02\n") }, "not a used-code ledger"},
		{"a directory", func(dir string) string { p := filepath.Join(dir, "codes"); os.Mkdir(p, 0o700); return p }, "is a directory"},
		{"below a file", func(dir string) string { return filepath.Join(write(t, dir, "x"), "codes") }, "not a directory"},
		{"a device", func(string) string { return "/dev/null" }, "not a regular file"},
		{"a FIFO", func(dir string) string {
			p := filepath.Join(dir, "codes")
			if err := syscall.Mkfifo(p, 0o600); err != nil {
				t.Fatal(err)
			}
			return p
		}, "not a regular file"},
		{"no file configured", func(string) string { return "" }, "no used-code ledger file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := tc.setup(t.TempDir())
			var before []byte
			regular := false
			if fi, err := os.Stat(path); err == nil && fi.Mode().IsRegular() {
				regular = true
				before, _ = os.ReadFile(path) // a FIFO would block
			}
			first, err := state.NewFile(path).MarkUsed(t.Context(), "code:new", state.Stamp{}, until)
			if first || err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), path) {
				t.Fatalf("first=%v err=%v; want a refusal naming %s and saying %q", first, err, path, tc.want)
			}
			if regular {
				if after, _ := os.ReadFile(path); !bytes.Equal(before, after) {
					t.Errorf("a refused ledger was modified:\n%q\n%q", before, after)
				}
			}
		})
	}
	if _, err := state.NewFile(filepath.Join(t.TempDir(), "c")).MarkUsed(t.Context(), "two words", state.Stamp{}, until); err == nil {
		t.Error("accepted a key with a space")
	}
}

// TestFilePermissions: a ledger the server's user cannot read or write
// refuses (as uid 65532, the containers' user, when the test runs as root,
// whom permissions do not stop).
func TestFilePermissions(t *testing.T) {
	until := time.Now().Add(time.Hour)
	if path := os.Getenv("STATE_CHILD_PERM"); path != "" {
		first, err := state.NewFile(path).MarkUsed(context.Background(), "code:new", state.Stamp{}, until)
		fmt.Printf("first=%v err=%v\n", first, err)
		return
	}
	for _, tc := range []struct {
		name  string
		setup func(dir string) string
	}{
		{"unreadable file", func(dir string) string { p := write(t, dir, header); os.Chmod(p, 0o200); return p }},
		{"read-only file", func(dir string) string { p := write(t, dir, header); os.Chmod(p, 0o400); return p }},
		{"read-only directory, no file yet", func(dir string) string { os.Chmod(dir, 0o500); return filepath.Join(dir, "codes") }},
		{"directory not reachable", func(dir string) string {
			sub := filepath.Join(dir, "sub")
			os.Mkdir(sub, 0o700)
			os.Chmod(sub, 0o000)
			return filepath.Join(sub, "codes")
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := unprivilegedDir(t)
			path := tc.setup(dir)
			out := runUnprivileged(t, "^TestFilePermissions$", "STATE_CHILD_PERM="+path)
			if !strings.Contains(out, "first=false err=") || strings.Contains(out, "err=<nil>") || !strings.Contains(out, path) || !strings.Contains(out, "permission denied") {
				t.Fatalf("child: %s", out)
			}
		})
	}
}

func write(t *testing.T, dir, content string) string {
	t.Helper()
	p := filepath.Join(dir, "codes")
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// The uid the containers run as, and whom the permission tests run as.
const unprivileged = 65532

// unprivilegedDir is a directory owned by the test's unprivileged user.
func unprivilegedDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "ledger-perm-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		os.Chmod(dir, 0o700)
		filepath.WalkDir(dir, func(p string, _ os.DirEntry, _ error) error { os.Chmod(p, 0o700); return nil })
		os.RemoveAll(dir)
	})
	os.Chmod(dir, 0o755)
	if os.Geteuid() == 0 {
		sub := filepath.Join(dir, "home")
		os.Mkdir(sub, 0o700)
		os.Chown(sub, unprivileged, unprivileged)
		return sub
	}
	return dir
}

// runUnprivileged runs the test binary's test named by run with env, as
// uid 65532 when this process is root, and returns its output.
func runUnprivileged(t *testing.T, run string, env ...string) string {
	t.Helper()
	bin := os.Args[0]
	cmd := exec.Command(bin, "-test.run="+run)
	if os.Geteuid() == 0 {
		// The test binary's own directory is root's alone: copy it where
		// the unprivileged user can run it.
		dir := t.TempDir()
		os.Chmod(dir, 0o755)
		src, err := os.Open(bin)
		if err != nil {
			t.Fatal(err)
		}
		defer src.Close()
		bin = filepath.Join(dir, "child.test")
		dst, err := os.OpenFile(bin, os.O_WRONLY|os.O_CREATE, 0o755)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := io.Copy(dst, src); err != nil {
			t.Fatal(err)
		}
		dst.Close()
		for d := dir; d != "/" && d != "."; d = filepath.Dir(d) {
			if fi, err := os.Stat(d); err == nil && fi.Mode().Perm()&0o001 == 0 && strings.HasPrefix(d, os.TempDir()) && d != os.TempDir() {
				os.Chmod(d, fi.Mode().Perm()|0o011)
			}
		}
		cmd = exec.Command(bin, "-test.run="+run)
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: unprivileged, Gid: unprivileged}}
	}
	cmd.Env = append(slices.Clone(os.Environ()), env...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
	return string(out)
}
