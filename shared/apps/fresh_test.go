package apps_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// viewsDir is the repository's views/ folder; outside the repository (the
// module alone) there is nothing to check.
func viewsDir(t *testing.T) string {
	t.Helper()
	d, err := filepath.Abs("../../views")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(d, "views.json")); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("views/views.json not found next to shared: %v", err)
		}
		t.Skip("not in the mcpfleet repository: no views/ to check")
	}
	return d
}

// sourcesHash is views/build.mjs's sourcesHash: sha256 over every file of
// src/ plus build.mjs, views.json and package-lock.json, sorted by path,
// each as path NUL content NUL.
func sourcesHash(t *testing.T, dir string) string {
	t.Helper()
	var list []string
	err := filepath.WalkDir(filepath.Join(dir, "src"), func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		list = append(list, filepath.ToSlash(rel))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	list = append(list, "build.mjs", "views.json", "package-lock.json")
	slices.Sort(list)
	h := sha256.New()
	for _, f := range list {
		b, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(f)))
		if err != nil {
			t.Fatal(err)
		}
		h.Write([]byte(f + "\x00"))
		h.Write(b)
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil))
}

var header = regexp.MustCompile(`^<!doctype html>\n<!-- mcpfleet view ([a-z0-9-]+): built by views/build\.mjs from views/src; do not edit\. sources=([0-9a-f]{64}) output=([0-9a-f]{64}) -->\n`)

// TestBuiltViewsAreFresh fails when a committed view is stale against
// views/src (rebuild with node views/build.mjs), was edited by hand, is
// over 400 KB, or loads anything from the network.
func TestBuiltViewsAreFresh(t *testing.T) {
	dir := viewsDir(t)
	var manifest struct {
		Views map[string]struct{ Out string } `json:"views"`
	}
	b, err := os.ReadFile(filepath.Join(dir, "views.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &manifest); err != nil {
		t.Fatal(err)
	}
	want := sourcesHash(t, dir)
	for name, v := range manifest.Views {
		html, err := os.ReadFile(filepath.Join(dir, "..", filepath.FromSlash(v.Out)))
		if err != nil {
			t.Errorf("%s: %v (run node views/build.mjs)", name, err)
			continue
		}
		m := header.FindSubmatch(html)
		if m == nil {
			t.Errorf("%s: %s has no build header (run node views/build.mjs)", name, v.Out)
			continue
		}
		body := html[len(m[0]):]
		sum := sha256.Sum256(body)
		switch {
		case string(m[1]) != name:
			t.Errorf("%s: %s says it is view %s", name, v.Out, m[1])
		case string(m[2]) != want:
			t.Errorf("%s: %s is stale against views/src: run node views/build.mjs (after scripts/install/views.sh) and commit it", name, v.Out)
		case string(m[3]) != hex.EncodeToString(sum[:]):
			t.Errorf("%s: %s was edited by hand: edit views/src/%s and run node views/build.mjs", name, v.Out, name)
		}
		if len(html) > 400*1024 {
			t.Errorf("%s: %d bytes, over the 400 KB budget", name, len(html))
		}
		// The SVG namespace is a name, not an address: it is never fetched.
		scan := bytes.ReplaceAll(bytes.ToLower(body), []byte("http://www.w3.org/2000/svg"), []byte("svg-namespace"))
		for _, bad := range []string{"http://", "https://", "<link", "@import", " src="} {
			if i := bytes.Index(scan, []byte(bad)); i >= 0 {
				lo := max(0, i-40)
				t.Errorf("%s: %s contains %q (views load nothing): …%s…", name, v.Out, bad, strings.TrimSpace(string(scan[lo:min(len(scan), i+60)])))
			}
		}
	}
}
