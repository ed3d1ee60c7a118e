// Package repocheck holds checks over the repository's layout that no module
// can make about itself: docker cannot run on these machines, so each
// server's Dockerfile is at least checked to build the right package into the
// right binary, statically, as a non-root user reachable over HTTP.
package repocheck

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"golang.org/x/mod/modfile"
)

var servers = []string{"streammcp", "proxymcp", "codermcp", "sqlmcp"}

func root(t *testing.T) string {
	t.Helper()
	r, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func read(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestDockerfiles(t *testing.T) {
	for _, m := range servers {
		t.Run(m, func(t *testing.T) {
			df := read(t, filepath.Join(root(t), m, "Dockerfile"))
			checks := []struct {
				what string
				re   string
			}{
				{"multi-stage build", `(?ms)^FROM .*^FROM `},
				{"static binary", `CGO_ENABLED=0`},
				{"builds the " + m + " package", `go build[^\n]*(\./` + m + `\b|[ \t]\.\s*$|[ \t]\.[ \t])`},
				{"binary named " + m, `-o[ =]\S*/?` + m + `\b`},
				{"version stamped from the build", `-X main\.version=`},
				{"entrypoint runs " + m, `(?m)^ENTRYPOINT .*` + m},
				{"listens beyond loopback for MCP_TRANSPORT=http", `MCP_HOST=0\.0\.0\.0`},
				{"non-root user", `(?m)^USER\s+(nonroot|[1-9][0-9]*|[a-z][a-z0-9_-]*)`},
			}
			for _, c := range checks {
				if !regexp.MustCompile(c.re).MatchString(df) {
					t.Errorf("%s/Dockerfile: no %s (pattern %s)", m, c.what, c.re)
				}
			}
			if regexp.MustCompile(`(?m)^USER\s+root\b`).MatchString(df) && !regexp.MustCompile(`(?m)^USER\s+[^r]`).MatchString(df) {
				t.Errorf("%s/Dockerfile runs as root", m)
			}
		})
	}
}

func TestModules(t *testing.T) {
	for _, m := range append([]string{"shared"}, servers...) {
		t.Run(m, func(t *testing.T) {
			path := filepath.Join(root(t), m, "go.mod")
			f, err := modfile.Parse(path, []byte(read(t, path)), nil)
			if err != nil {
				t.Fatal(err)
			}
			if want := "github.com/mcpfleet/mcpfleet/" + m; f.Module.Mod.Path != want {
				t.Errorf("module path %s, want %s", f.Module.Mod.Path, want)
			}
			if f.Go == nil || f.Go.Version != "1.26.0" {
				t.Errorf("go directive %v, want 1.26.0", f.Go)
			}
			if len(f.Replace) > 0 || len(f.Exclude) > 0 {
				t.Errorf("go.mod has replace/exclude directives: users' go install would fail")
			}
			if f.Toolchain != nil {
				t.Errorf("go.mod has a toolchain line; builds use the local toolchain")
			}
			if m == "shared" {
				return
			}
			var shared string
			for _, r := range f.Require {
				if r.Mod.Path == "github.com/mcpfleet/mcpfleet/shared" {
					shared = r.Mod.Version
				}
				if r.Mod.Path == "github.com/mark3labs/mcp-go" && r.Mod.Version != "v1.2.1" {
					t.Errorf("mcp-go %s; every module pins v1.2.1", r.Mod.Version)
				}
			}
			if shared == "" {
				t.Errorf("does not require a version of shared")
			}
			main := read(t, filepath.Join(root(t), m, "main.go"))
			if !strings.Contains(main, "package main") {
				t.Errorf("root package is not package main")
			}
		})
	}
}

func TestReadmes(t *testing.T) {
	top := read(t, filepath.Join(root(t), "README.md"))
	for _, w := range []string{"scripts/playground", "scripts/test"} {
		if !strings.Contains(top, w) {
			t.Errorf("README.md does not give %s", w)
		}
	}
	for _, m := range servers {
		if !strings.Contains(top, m+"/README.md") {
			t.Errorf("README.md does not link %s/README.md", m)
		}
		r := read(t, filepath.Join(root(t), m, "README.md"))
		for _, w := range []string{"mcpServers", "go install github.com/mcpfleet/mcpfleet/" + m + "@", "docker", "MCP_TRANSPORT"} {
			if !strings.Contains(r, w) {
				t.Errorf("%s/README.md lacks %q", m, w)
			}
		}
	}
}
