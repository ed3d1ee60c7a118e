package toolcall_test

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/mcpfleet/mcpfleet/shared/approval"
	"github.com/mcpfleet/mcpfleet/shared/audit"
	"github.com/mcpfleet/mcpfleet/shared/toolcall"
)

// TestAuditFileReplaced: records went to a deleted inode when the audit
// file was deleted or replaced under a running server. Before each record
// the log compares the file it holds with the one at MCP_AUDIT_LOG's path
// and reopens it; a path it cannot open refuses the change, and nothing is
// sent to the back end.
func TestAuditFileReplaced(t *testing.T) {
	for _, tc := range []struct {
		name   string
		change func(t *testing.T, path string)
		kept   int // records already in the file now at the path
	}{
		{"deleted", func(t *testing.T, p string) { must(t, os.Remove(p)) }, 0},
		{"renamed away", func(t *testing.T, p string) { must(t, os.Rename(p, p+".1")) }, 0},
		{"replaced by another file", func(t *testing.T, p string) {
			must(t, os.WriteFile(p+".new", []byte(`{"event":"outcome","note":"earlier file"}`+"\n"), 0o600))
			must(t, os.Rename(p+".new", p))
		}, 1},
		{"truncated by copy-and-truncate rotation", func(t *testing.T, p string) { must(t, os.Truncate(p, 0)) }, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "audit.log")
			e := newEnv(t, toolcall.Config{Audit: audit.Config{Dest: path}, Approval: approval.Config{Policy: approval.None}})
			if res := e.call("set_value", map[string]any{"key": "a", "value": 3}); res.IsError {
				t.Fatal(text(res))
			}
			tc.change(t, path)
			if res := e.call("set_value", map[string]any{"key": "b", "value": 4}); res.IsError {
				t.Fatal(text(res))
			}
			recs := e.records()
			if len(recs) != tc.kept+2 || recs[tc.kept]["event"] != "intent" || recs[tc.kept]["arguments"].(map[string]any)["key"] != "b" {
				t.Fatalf("records at %s after the file was %s: %v", path, tc.name, recs)
			}
		})
	}
}

// TestAuditPathUnwritableRefuses: when the audit file's path can no longer
// be written — a directory put in its place, or the file gone from a
// directory made read-only — a change is refused naming MCP_AUDIT_LOG, the
// back end is not touched, and changes run again once the path is fixed.
func TestAuditPathUnwritableRefuses(t *testing.T) {
	if os.Getenv("TOOLCALL_CHILD_READONLY") != "" {
		// The child, as an unprivileged user: the directory is its own.
		dir := os.Getenv("TOOLCALL_CHILD_READONLY")
		path := filepath.Join(dir, "audit.log")
		e := newEnv(t, toolcall.Config{Audit: audit.Config{Dest: path}, Approval: approval.Config{Policy: approval.None}})
		e.call("set_value", map[string]any{"key": "a", "value": 3})
		must(t, os.Remove(path))
		must(t, os.Chmod(dir, 0o500))
		res := e.call("set_value", map[string]any{"key": "b", "value": 4})
		data, writes := e.store.snapshot()
		must(t, os.Chmod(dir, 0o700))
		again := e.call("set_value", map[string]any{"key": "b", "value": 5})
		out, _ := json.Marshal(map[string]any{"refused": res.IsError, "text": text(res), "data": data, "writes": writes,
			"again": text(again), "records": len(e.records())})
		fmt.Printf("\nRESULT %s\n", out)
		return
	}
	check := func(t *testing.T, refused bool, msg string, writes []string, path string) {
		t.Helper()
		if !refused || !strings.Contains(msg, "MCP_AUDIT_LOG") || !strings.Contains(msg, path) || !strings.Contains(msg, "nothing was changed") {
			t.Errorf("the change was not refused as it should be: %s", msg)
		}
		if len(writes) != 1 {
			t.Errorf("the back end received %v; want only the first call's write", writes)
		}
	}
	t.Run("a directory in its place", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "audit.log")
		e := newEnv(t, toolcall.Config{Audit: audit.Config{Dest: path}, Approval: approval.Config{Policy: approval.None}})
		e.call("set_value", map[string]any{"key": "a", "value": 3})
		must(t, os.Remove(path))
		must(t, os.Mkdir(path, 0o700))
		res := e.call("delete_value", map[string]any{"key": "b"})
		_, writes := e.store.snapshot()
		check(t, res.IsError, text(res), writes, path)
		must(t, os.Remove(path))
		if res := e.call("delete_value", map[string]any{"key": "b"}); res.IsError {
			t.Fatalf("after the path was fixed: %s", text(res))
		}
		if recs := e.records(); len(recs) != 2 || recs[0]["event"] != "intent" {
			t.Errorf("records after the fix: %v", recs)
		}
	})
	t.Run("read-only directory", func(t *testing.T) {
		dir := unprivilegedDir(t)
		out := runUnprivileged(t, "^TestAuditPathUnwritableRefuses$", "TOOLCALL_CHILD_READONLY="+dir)
		_, line, ok := strings.Cut(out, "\nRESULT ")
		if !ok {
			t.Fatalf("child: %s", out)
		}
		var r struct {
			Refused bool
			Text    string
			Writes  []string
			Again   string
			Records int
		}
		if err := json.Unmarshal([]byte(strings.SplitN(line, "\n", 2)[0]), &r); err != nil {
			t.Fatal(err)
		}
		check(t, r.Refused, r.Text, r.Writes, filepath.Join(dir, "audit.log"))
		if r.Again != "ok: SET b 5" || r.Records != 2 {
			t.Errorf("after the directory was writable again: %q, %d records in the new file", r.Again, r.Records)
		}
	})
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// The uid the containers run as, and whom permission tests run as: root
// is not stopped by permissions.
const unprivileged = 65532

// unprivilegedDir is a fresh directory the unprivileged user owns.
func unprivilegedDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "audit-perm-")
	must(t, err)
	t.Cleanup(func() {
		filepath.WalkDir(dir, func(p string, _ os.DirEntry, _ error) error { os.Chmod(p, 0o700); return nil })
		os.RemoveAll(dir)
	})
	must(t, os.Chmod(dir, 0o755))
	sub := filepath.Join(dir, "home")
	must(t, os.Mkdir(sub, 0o700))
	if os.Geteuid() == 0 {
		must(t, os.Chown(sub, unprivileged, unprivileged))
	}
	return sub
}

// runUnprivileged runs this test binary's tests matching run with env, as
// uid 65532 when this process is root, and returns its output.
func runUnprivileged(t *testing.T, run string, env ...string) string {
	t.Helper()
	bin := os.Args[0]
	var attr *syscall.SysProcAttr
	if os.Geteuid() == 0 {
		// The binary's own directory is root's alone: copy it out.
		dir, err := os.MkdirTemp("", "child-")
		must(t, err)
		t.Cleanup(func() { os.RemoveAll(dir) })
		must(t, os.Chmod(dir, 0o755))
		src, err := os.Open(bin)
		must(t, err)
		defer src.Close()
		bin = filepath.Join(dir, "child.test")
		dst, err := os.OpenFile(bin, os.O_WRONLY|os.O_CREATE, 0o755)
		must(t, err)
		_, err = io.Copy(dst, src)
		must(t, err)
		must(t, dst.Close())
		attr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: unprivileged, Gid: unprivileged}}
	}
	cmd := exec.Command(bin, "-test.run="+run)
	cmd.SysProcAttr = attr
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
	return string(out)
}
