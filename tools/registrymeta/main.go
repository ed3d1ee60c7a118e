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
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/mcpfleet/mcpfleet/tools/internal/serverhelp"
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
var Servers = serverhelp.Servers

// Help is what a server's --help=json prints.
type Help = serverhelp.Help

// Variable is one row of the --help table.
type Variable = serverhelp.Variable

func main() {
	check := flag.Bool("check", false, "report stale server.json files instead of rewriting them")
	flag.Parse()
	root, err := serverhelp.RepoRoot()
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

// Generate returns the server.json of server.
func Generate(root, server string) ([]byte, error) {
	h, err := serverhelp.Read(root, server)
	if err != nil {
		return nil, err
	}
	version, err := serverhelp.ReleasedVersion(root, server)
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
