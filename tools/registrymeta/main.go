// Command registrymeta writes each server's server.json, its entry for the
// MCP Registry, from the variable table the server's --help prints (read
// through --help=json from a freshly built binary), so the two cannot drift.
//
//	go run ./tools/registrymeta            rewrite every server.json
//	go run ./tools/registrymeta -check     exit 1 when one is stale
//
// The tests (go test ./tools/registrymeta) regenerate and compare, validate
// each file against the registry's vendored schema and check that every
// variable the server's code reads is listed.
package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// Project facts shared by every server.json.
const (
	SchemaURL  = "https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json"
	Namespace  = "io.github.mcpfleet" // reverse DNS of github.com/mcpfleet
	RepoURL    = "https://github.com/mcpfleet/mcpfleet"
	ModulePath = "github.com/mcpfleet/mcpfleet"
	ImageBase  = "ghcr.io/mcpfleet" // the release workflow pushes ghcr.io/<owner>/<module>:v<version>
)

// Servers are the modules that ship a server.json.
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

func main() {
	check := flag.Bool("check", false, "report stale server.json files instead of rewriting them")
	flag.Parse()
	root, err := RepoRoot()
	if err != nil {
		fail(err)
	}
	stale := false
	for _, s := range Servers {
		b, err := Generate(root, s)
		if err != nil {
			fail(err)
		}
		path := filepath.Join(root, s, "server.json")
		old, _ := os.ReadFile(path)
		if bytes.Equal(old, b) {
			continue
		}
		if *check {
			fmt.Fprintf(os.Stderr, "%s is stale: run go run ./tools/registrymeta\n", path)
			stale = true
			continue
		}
		if err := os.WriteFile(path, b, 0o644); err != nil {
			fail(err)
		}
		fmt.Fprintf(os.Stderr, "wrote %s\n", path)
	}
	if stale {
		os.Exit(1)
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "registrymeta:", err)
	os.Exit(1)
}

// RepoRoot finds the repository root (the directory holding go.work).
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
	return "", errors.New("run from inside the repository")
}

// ReadHelp builds the server and returns what its --help=json prints.
func ReadHelp(root, server string) (*Help, error) {
	dir, err := os.MkdirTemp("", "registrymeta-")
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
	cmd.Env = []string{"PATH=" + os.Getenv("PATH")} // the table must not depend on the caller's environment
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

// Version is the module's released version from release-please's manifest.
func Version(root, server string) (string, error) {
	b, err := os.ReadFile(filepath.Join(root, ".release-please-manifest.json"))
	if err != nil {
		return "", err
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

// Generate returns the server.json of server.
func Generate(root, server string) ([]byte, error) {
	h, err := ReadHelp(root, server)
	if err != nil {
		return nil, err
	}
	version, err := Version(root, server)
	if err != nil {
		return nil, err
	}
	return Document(h, server, version)
}

// Document renders the server.json for a server's variable table.
func Document(h *Help, server, version string) ([]byte, error) {
	if n := len([]rune(h.Summary)); n == 0 || n > 100 {
		return nil, fmt.Errorf("%s: its --help summary is %d characters; the registry's description takes 1 to 100", server, n)
	}
	install := "go install " + ModulePath + "/" + server + "@v" + version
	env := make([]map[string]any, 0, len(h.Variables))
	for _, v := range h.Variables {
		e := map[string]any{"name": v.Name, "description": v.Description}
		switch {
		case v.Default == "":
		case strings.ContainsAny(v.Default, " \t"):
			// Not a value but a rule ("follows SQLENGINE_SSL"): the
			// schema wants a valid value as the default.
			e["description"] = v.Description + " (default: " + v.Default + ")"
		default:
			e["default"] = v.Default
		}
		if v.Default == "true" || v.Default == "false" {
			e["format"] = "boolean"
		}
		if v.Required {
			e["isRequired"] = true
		}
		if v.Secret {
			e["isSecret"] = true
		}
		env = append(env, e)
	}
	doc := map[string]any{
		"$schema":     SchemaURL,
		"name":        Namespace + "/" + server,
		"title":       server,
		"description": h.Summary,
		"version":     version,
		"repository":  map[string]any{"url": RepoURL, "source": "github", "subfolder": server},
		// The schema has no Go package type: pkg.go.dev shows the
		// go install path, and _meta says it outright.
		"websiteUrl": "https://pkg.go.dev/" + ModulePath + "/" + server,
		"packages": []any{map[string]any{
			"registryType":         "oci",
			"identifier":           ImageBase + "/" + server + ":v" + version,
			"runtimeHint":          "docker",
			"transport":            map[string]any{"type": "stdio"},
			"environmentVariables": env,
		}},
		"_meta": map[string]any{"io.modelcontextprotocol.registry/publisher-provided": map[string]any{
			"goInstall": install,
			"generator": "go run ./tools/registrymeta (from " + server + " --help=json)",
		}},
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}
