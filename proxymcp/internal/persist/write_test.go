package persist_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/mcpfleet/mcpfleet/proxymcp/internal/persist"
)

func TestWriteAtomicKeepsModeAndLink(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "hosts.map")
	if err := os.WriteFile(file, []byte("a b\n"), 0o640); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "current.map")
	if err := os.Symlink("hosts.map", link); err != nil {
		t.Fatal(err)
	}
	r := persist.Root{Dir: dir}
	p, err := r.Plan(persist.KindMap, link)
	if err != nil {
		t.Fatal(err)
	}
	w, err := r.Write(link, []byte("a c\n"), p.Digest)
	if err != nil {
		t.Fatal(err)
	}
	if w.Before != persist.DigestOf([]byte("a b\n")) || w.After != persist.DigestOf([]byte("a c\n")) || w.Real != file {
		t.Fatalf("%+v", w)
	}
	st, _ := os.Stat(file)
	if st.Mode().Perm() != 0o640 {
		t.Errorf("mode %v, want 0640 kept", st.Mode().Perm())
	}
	if target, err := os.Readlink(link); err != nil || target != "hosts.map" {
		t.Errorf("the link was replaced: %q %v", target, err)
	}
	if got, _ := os.ReadFile(file); string(got) != "a c\n" {
		t.Errorf("content %q", got)
	}
	left, _ := filepath.Glob(filepath.Join(dir, ".*proxymcp*"))
	if len(left) != 0 {
		t.Errorf("temporary files left: %v", left)
	}
}

// TestHostile: every refused input changes nothing and says why.
func TestHostile(t *testing.T) {
	base := t.TempDir()
	dir := filepath.Join(base, "haproxy")
	outside := filepath.Join(base, "outside")
	for _, d := range []string{dir, outside} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	secret := filepath.Join(outside, "passwd")
	os.WriteFile(secret, []byte("root:x:0:0\n"), 0o644)
	os.Symlink(secret, filepath.Join(dir, "evil.map"))
	os.Symlink(outside, filepath.Join(dir, "maps"))
	os.Mkdir(filepath.Join(dir, "sub"), 0o755)
	os.Symlink(filepath.Join(outside, "gone.map"), filepath.Join(dir, "dangling-out.map"))
	os.Symlink("missing.map", filepath.Join(dir, "dangling-in.map"))
	syscall.Mkfifo(filepath.Join(dir, "pipe.map"), 0o644)
	good := filepath.Join(dir, "good.map")
	os.WriteFile(good, []byte("k v\n"), 0o644)
	r := persist.Root{Dir: dir}

	for _, tc := range []struct{ name, path, want string }{
		{"dot-dot", dir + "/sub/../../outside/passwd", `".."`},
		{"dot-dot inside", dir + "/sub/../good.map", `".."`},
		{"relative", "good.map", "not absolute"},
		{"symlinked file outside", filepath.Join(dir, "evil.map"), "outside HAProxy's directory"},
		{"symlinked dir outside", filepath.Join(dir, "maps", "passwd"), "outside HAProxy's directory"},
		{"new file via dir outside", filepath.Join(dir, "maps", "new.map"), "outside HAProxy's directory"},
		{"a directory", filepath.Join(dir, "sub"), "not a regular file"},
		{"a named pipe", filepath.Join(dir, "pipe.map"), "not a regular file"},
		{"dangling link outside", filepath.Join(dir, "dangling-out.map"), "which does not exist"},
		{"dangling link inside", filepath.Join(dir, "dangling-in.map"), "which does not exist"},
		{"elsewhere", "/etc/hosts", "outside HAProxy's directory"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := r.Write(tc.path, []byte("x\n"), "")
			var pe *persist.PathError
			if !errors.As(err, &pe) || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "nothing was written") {
				t.Fatalf("err = %v", err)
			}
		})
	}
	if b, _ := os.ReadFile(secret); string(b) != "root:x:0:0\n" {
		t.Fatal("a file outside was changed")
	}
	for _, f := range []string{filepath.Join(outside, "gone.map"), filepath.Join(dir, "missing.map")} {
		if _, err := os.Lstat(f); err == nil {
			t.Errorf("a dangling link's target was created: %s", f)
		}
	}
	for _, l := range []string{"dangling-out.map", "dangling-in.map"} {
		if st, err := os.Lstat(filepath.Join(dir, l)); err != nil || st.Mode()&os.ModeSymlink == 0 {
			t.Errorf("the link %s was replaced", l)
		}
	}
	if _, err := (persist.Root{}).Resolve(good); err == nil {
		t.Error("an empty root accepted")
	}

	t.Run("replaced between preview and write", func(t *testing.T) {
		p, err := r.Plan(persist.KindMap, good)
		if err != nil {
			t.Fatal(err)
		}
		os.WriteFile(good, []byte("k other\n"), 0o644) // someone else's edit
		_, err = r.Write(good, []byte("k mine\n"), p.Digest)
		var pc *persist.PreconditionError
		if !errors.As(err, &pc) || !strings.Contains(err.Error(), "preview again") {
			t.Fatalf("err = %v", err)
		}
		if b, _ := os.ReadFile(good); string(b) != "k other\n" {
			t.Fatalf("the other edit was overwritten: %q", b)
		}
	})
	t.Run("created between preview and write", func(t *testing.T) {
		f := filepath.Join(dir, "late.map")
		p, _ := r.Plan(persist.KindMap, f)
		os.WriteFile(f, []byte("x y\n"), 0o644)
		if _, err := r.Write(f, []byte("k v\n"), p.Digest); !errors.As(err, new(*persist.PreconditionError)) {
			t.Fatalf("err = %v", err)
		}
	})
}

func TestFormats(t *testing.T) {
	m, err := persist.MapFile("0x1 www.example.com be_app\n0x2 api.example.com be api with spaces\n\n")
	if err != nil || string(m) != "www.example.com be_app\napi.example.com be api with spaces\n" {
		t.Fatalf("%q %v", m, err)
	}
	back := persist.ParsePatternFile(string(m), true)
	if len(back) != 2 || back[1].Value != "be api with spaces" {
		t.Fatalf("%+v", back)
	}
	a, err := persist.ACLFile("0x1 192.0.2.10\n0x2 198.51.100.0/24\n")
	if err != nil || string(a) != "192.0.2.10\n198.51.100.0/24\n" {
		t.Fatalf("%q %v", a, err)
	}
	for _, bad := range []string{"0x1 #comment v\n", "0x1 a\x01b v\n"} {
		if _, err := persist.MapFile(bad); err == nil || !strings.Contains(err.Error(), "nothing was written") {
			t.Errorf("%q: %v", bad, err)
		}
	}
	if _, err := persist.StateFile("2\n# be_id\n"); err == nil {
		t.Error("state format 2 accepted")
	}
	if _, err := persist.StateFile("Unknown command\n"); err == nil {
		t.Error("garbage accepted as a state file")
	}
}

func TestParseConfigServers(t *testing.T) {
	cs := persist.ParseConfigServers("global\n    maxconn 10\nbackend be\n    server a 10.0.0.1:80 weight 7\n    server b db.internal:5432 disabled\n    # server c 1.2.3.4:1\nfrontend fe\n    bind :80\n")
	if len(cs) != 2 || !cs[0].AddrIsIP || cs[0].Weight != 7 || cs[0].Port != 80 || cs[1].AddrIsIP || cs[1].Admin != "maint" || cs[1].Weight != 1 {
		t.Fatalf("%+v", cs)
	}
}
