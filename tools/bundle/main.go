// Command bundle builds an MCP Bundle (.mcpb, for one-click installs in
// Claude Desktop and other MCPB hosts) of one server for one platform: the
// server's static binary, and a manifest.json of server type "binary" whose
// user_config asks the desktop user for what they must set (host, socket or
// URL, credentials as sensitive fields), each mapped to the server's
// environment variable. The manifest is generated from the server's
// --help=json, the same table --help prints, so names, descriptions,
// defaults and secrecy cannot drift. mcpb (npm @anthropic-ai/mcpb) validates
// and packs it. scripts/bundle wraps this command.
//
//	go run ./tools/bundle -server proxymcp -platform linux/amd64 -out dist -mcpb PATH
package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/mcpfleet/mcpfleet/tools/internal/serverhelp"
)

// Project facts shared by every bundle manifest.
const (
	RepoURL    = "https://github.com/mcpfleet/mcpfleet"
	ModulePath = "github.com/mcpfleet/mcpfleet"
)

// Field declares one user_config entry: the variable it sets and how a
// desktop user is asked for it. Description, default, required and
// sensitive come from the server's variable table.
type Field struct {
	Var   string
	Title string
	Type  string // string, number, boolean, directory or file
}

// Fields are what a desktop user of each server must or may set.
var Fields = map[string][]Field{
	"streammcp": {
		{"STREAM_BROKERS", "Kafka bootstrap brokers", "string"},
		{"STREAM_SASL_MECHANISM", "SASL mechanism", "string"},
		{"STREAM_SASL_USERNAME", "SASL user", "string"},
		{"STREAM_SASL_PASSWORD", "SASL password", "string"},
		{"STREAM_TLS_ENABLED", "Use TLS", "boolean"},
		{"STREAM_ALLOW_WRITES", "Allow write tools", "boolean"},
	},
	"proxymcp": {
		{"PROXY_RUNTIME_URL", "HAProxy runtime API (tcp://host:port or socket path)", "string"},
		{"PROXY_STATS_URL", "HAProxy stats page URL", "string"},
		{"PROXY_STATS_USERNAME", "Stats page user", "string"},
		{"PROXY_STATS_PASSWORD", "Stats page password", "string"},
		{"PROXY_READ_ONLY", "Read-only tools only", "boolean"},
	},
	"codermcp": {
		{"CODER_CLI_PATH", "Codex CLI executable", "string"},
		{"CODER_HOME", "Codex configuration directory", "directory"},
		{"CODER_MODELS", "Models the tools accept", "string"},
		{"CODER_DEFAULT_MODEL", "Default model", "string"},
	},
	"sqlmcp": {
		{"SQLENGINE_HOST", "Trino host", "string"},
		{"SQLENGINE_PORT", "Trino port", "number"},
		{"SQLENGINE_USER", "Trino user", "string"},
		{"SQLENGINE_PASSWORD", "Trino password", "string"},
		{"SQLENGINE_CATALOG", "Default catalog", "string"},
		{"SQLENGINE_SCHEMA", "Default schema", "string"},
		{"SQLENGINE_SSL", "Use TLS (https)", "boolean"},
		{"SQLENGINE_ALLOW_WRITE_QUERIES", "Allow statements that change data", "boolean"},
	},
}

// helpArgs is how each binary prints --help=json, and serveArgs how the
// bundle starts it as an MCP server over stdio.
var (
	helpArgs  = map[string][]string{"sqlmcp": {"serve", "--help=json"}}
	serveArgs = map[string][]string{"sqlmcp": {"serve"}}
)

// Help is what a server's --help=json prints.
type Help = serverhelp.Help

// Platform is a GOOS/GOARCH pair and the MCPB platform name of its GOOS.
type Platform struct{ GOOS, GOARCH string }

// MCPB returns the manifest's platform name (darwin, win32 or linux).
func (p Platform) MCPB() string {
	if p.GOOS == "windows" {
		return "win32"
	}
	return p.GOOS
}

// Exe is the binary's file name on the platform.
func (p Platform) Exe(server string) string {
	if p.GOOS == "windows" {
		return server + ".exe"
	}
	return server
}

// ParsePlatform reads "linux/amd64".
func ParsePlatform(s string) (Platform, error) {
	goos, goarch, ok := strings.Cut(s, "/")
	switch {
	case !ok:
	case goos != "linux" && goos != "darwin" && goos != "windows":
	case goarch != "amd64" && goarch != "arm64":
	default:
		return Platform{goos, goarch}, nil
	}
	return Platform{}, fmt.Errorf("platform %q: want linux, darwin or windows / amd64 or arm64, e.g. linux/amd64", s)
}

func main() {
	server := flag.String("server", "", "server to bundle (streammcp, proxymcp, codermcp, sqlmcp)")
	platform := flag.String("platform", "linux/amd64", "GOOS/GOARCH of the binary in the bundle")
	version := flag.String("version", "", "version (default: the module's in .release-please-manifest.json)")
	out := flag.String("out", "dist", "directory for the .mcpb")
	mcpb := flag.String("mcpb", "mcpb", "the mcpb command (npm @anthropic-ai/mcpb)")
	flag.Parse()
	path, err := Build(*server, *platform, *version, *out, *mcpb)
	if err != nil {
		fmt.Fprintln(os.Stderr, "bundle:", err)
		os.Exit(1)
	}
	fmt.Println(path)
}

// Build writes <out>/<server>_v<version>_<goos>_<goarch>.mcpb and returns its path.
func Build(server, platform, version, out, mcpb string) (string, error) {
	if _, ok := Fields[server]; !ok {
		return "", fmt.Errorf("unknown server %q: one of streammcp, proxymcp, codermcp, sqlmcp", server)
	}
	p, err := ParsePlatform(platform)
	if err != nil {
		return "", err
	}
	root, err := serverhelp.RepoRoot()
	if err != nil {
		return "", err
	}
	if version == "" {
		if version, err = serverhelp.ReleasedVersion(root, server); err != nil {
			return "", err
		}
	}
	version = strings.TrimPrefix(version, "v")
	h, err := serverhelp.Read(root, server)
	if err != nil {
		return "", err
	}
	m, err := Manifest(h, server, version, p)
	if err != nil {
		return "", err
	}
	stage, err := os.MkdirTemp("", "bundle-"+server+"-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(stage)
	if err := os.MkdirAll(filepath.Join(stage, "server"), 0o755); err != nil {
		return "", err
	}
	build := exec.Command("go", "build", "-tags", "grpcnotrace", "-trimpath", "-ldflags", "-s -w -X main.version=v"+version,
		"-o", filepath.Join(stage, "server", p.Exe(server)), "./"+server)
	build.Dir = root
	build.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS="+p.GOOS, "GOARCH="+p.GOARCH)
	if b, err := build.CombinedOutput(); err != nil {
		return "", fmt.Errorf("build %s for %s: %v\n%s", server, platform, err, b)
	}
	if err := os.WriteFile(filepath.Join(stage, "manifest.json"), m, 0o644); err != nil {
		return "", err
	}
	if b, err := exec.Command(mcpb, "validate", filepath.Join(stage, "manifest.json")).CombinedOutput(); err != nil {
		return "", fmt.Errorf("mcpb validate refused %s's manifest: %v\n%s", server, err, b)
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return "", err
	}
	dest, err := filepath.Abs(filepath.Join(out, fmt.Sprintf("%s_v%s_%s_%s.mcpb", server, version, p.GOOS, p.GOARCH)))
	if err != nil {
		return "", err
	}
	if b, err := exec.Command(mcpb, "pack", stage, dest).CombinedOutput(); err != nil {
		return "", fmt.Errorf("mcpb pack %s: %v\n%s", server, err, b)
	}
	return dest, nil
}

// Manifest renders manifest.json (MCPB manifest 0.3) for one platform.
func Manifest(h *Help, server, version string, p Platform) ([]byte, error) {
	vars := map[string]int{}
	for i, v := range h.Variables {
		vars[v.Name] = i
	}
	userConfig := map[string]any{}
	env := map[string]string{}
	for _, f := range Fields[server] {
		i, ok := vars[f.Var]
		if !ok {
			return nil, fmt.Errorf("%s: bundle field %s is not in %s --help's variable table (renamed or removed?)", server, f.Var, server)
		}
		v := h.Variables[i]
		key := strings.ToLower(f.Var)
		uc := map[string]any{"type": f.Type, "title": f.Title, "description": v.Description, "required": v.Required}
		if v.Secret {
			uc["sensitive"] = true
		}
		if v.Default != "" && !strings.ContainsAny(v.Default, " \t") {
			switch f.Type {
			case "boolean":
				uc["default"] = v.Default == "true"
			case "number":
				var n json.Number = json.Number(v.Default)
				if _, err := n.Int64(); err != nil {
					return nil, fmt.Errorf("%s: %s default %q is not a number", server, f.Var, v.Default)
				}
				uc["default"] = n
			default:
				uc["default"] = v.Default
			}
		}
		userConfig[key] = uc
		env[f.Var] = "${user_config." + key + "}"
	}
	args := serveArgs[server]
	if args == nil {
		args = []string{}
	}
	m := map[string]any{
		"manifest_version": "0.3",
		"name":             server,
		"display_name":     server,
		"version":          version,
		"description":      h.Summary,
		"author":           map[string]any{"name": "mcpfleet", "url": RepoURL},
		"repository":       map[string]any{"type": "git", "url": RepoURL},
		"homepage":         RepoURL + "/tree/main/" + server,
		"documentation":    RepoURL + "/blob/main/" + server + "/README.md",
		"server": map[string]any{
			"type":        "binary",
			"entry_point": "server/" + p.Exe(server),
			"mcp_config": map[string]any{
				"command": "${__dirname}/server/" + p.Exe(server),
				"args":    args,
				"env":     env,
			},
		},
		"compatibility": map[string]any{"platforms": []string{p.MCPB()}},
		"user_config":   userConfig,
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(m); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}
