// Package serverhelp reads what a server documents about itself: the table
// its --help=json prints (name, version, summary, variables), from a binary
// built fresh from the repository. The registry metadata (server.json) and
// the MCPB bundles are generated from it, so neither can drift from the code.
package serverhelp

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// Servers are the modules that ship a server.
var Servers = []string{"streammcp", "proxymcp", "codermcp", "sqlmcp"}

// helpArgs is how each binary prints --help=json (sqlmcp's bare flags go to
// its SQL CLI; "serve" selects the server).
var helpArgs = map[string][]string{"sqlmcp": {"serve", "--help=json"}}

// Help is what a server's --help=json prints.
type Help struct {
	Name      string     `json:"name"`
	Version   string     `json:"version"`
	Summary   string     `json:"summary"`
	Variables []Variable `json:"variables"`
}

// Variable is one row of the --help table.
type Variable struct {
	Name        string `json:"name"`
	Default     string `json:"default"`
	Description string `json:"description"`
	Required    bool   `json:"required"`
	Secret      bool   `json:"secret"`
}

// RepoRoot finds the repository root (the directory holding go.work) from
// the working directory up.
func RepoRoot() (string, error) {
	wd, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("find the repository root: %w", err)
	}
	for d := wd; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.work")); err == nil {
			return d, nil
		}
		if d == filepath.Dir(d) {
			break
		}
	}
	return "", errors.New("find the repository root: no go.work above the working directory; run from inside the repository")
}

// Read builds server for this machine and returns what its --help=json
// prints. The binary runs with PATH only: the table must not depend on the
// caller's environment.
func Read(root, server string) (*Help, error) {
	dir, err := os.MkdirTemp("", "serverhelp-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	bin := filepath.Join(dir, server)
	build := exec.Command("go", "build", "-o", bin, "./"+server)
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("build %s to read its variable table: %v\n%s", server, err, out)
	}
	args := helpArgs[server]
	if args == nil {
		args = []string{"--help=json"}
	}
	cmd := exec.Command(bin, args...)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH")}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("%s %s: %v\n%s", server, strings.Join(args, " "), err, stderr.String())
	}
	var h Help
	if err := json.Unmarshal(out, &h); err != nil {
		return nil, fmt.Errorf("%s %s printed no JSON variable table: %v", server, strings.Join(args, " "), err)
	}
	if h.Name != server || len(h.Variables) == 0 {
		return nil, fmt.Errorf("%s %s: name %q with %d variables", server, strings.Join(args, " "), h.Name, len(h.Variables))
	}
	return &h, nil
}

// ReleasedVersion is the module's released version from release-please's
// manifest (.release-please-manifest.json at root).
func ReleasedVersion(root, server string) (string, error) {
	b, err := os.ReadFile(filepath.Join(root, ".release-please-manifest.json"))
	if err != nil {
		return "", fmt.Errorf("read %s's released version: %w", server, err)
	}
	var m map[string]string
	if err := json.Unmarshal(b, &m); err != nil {
		return "", fmt.Errorf(".release-please-manifest.json: %w", err)
	}
	v := m[server]
	if v == "" {
		return "", fmt.Errorf(".release-please-manifest.json has no version for %s", server)
	}
	return v, nil
}
