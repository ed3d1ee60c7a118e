package main

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpfleet/mcpfleet/tools/internal/serverhelp"
)

var servers = []string{"streammcp", "proxymcp", "codermcp", "sqlmcp"}

// mcpbPath finds the pinned mcpb CLI that scripts/install/mcpb.sh installs
// (or MCPB_CLI). CI=true never skips: a missing CLI fails.
func mcpbPath(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("MCPB_CLI"); p != "" {
		return p
	}
	cache := os.Getenv("MCPFLEET_CACHE")
	if cache == "" {
		base := os.Getenv("XDG_CACHE_HOME")
		if base == "" {
			home, _ := os.UserHomeDir()
			base = filepath.Join(home, ".cache")
		}
		cache = filepath.Join(base, "mcpfleet")
	}
	p := filepath.Join(cache, "mcpb", "node_modules", ".bin", "mcpb")
	if _, err := os.Stat(p); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("mcpb is not installed at %s (scripts/install/mcpb.sh installs it); CI=true forbids skipping", p)
		}
		t.Skipf("mcpb is not installed at %s: run scripts/install/mcpb.sh", p)
	}
	return p
}

// testValues are what a desktop user would type for fields with no default.
var testValues = map[string]string{"stream_brokers": "127.0.0.1:1"}

// Each bundle validates, packs for linux/amd64, unpacks, and its binary,
// started exactly as the manifest says (command, args, env from user_config)
// over stdio, answers tools/list with the version it was packed as.
func TestBundlesStartFromTheirManifest(t *testing.T) {
	mcpb := mcpbPath(t)
	out := t.TempDir()
	for _, s := range servers {
		t.Run(s, func(t *testing.T) {
			path, err := Build(s, "linux/amd64", "v9.8.7", out, mcpb)
			if err != nil {
				t.Fatal(err)
			}
			if want := s + "_v9.8.7_linux_amd64.mcpb"; filepath.Base(path) != want {
				t.Errorf("bundle named %s, want %s", filepath.Base(path), want)
			}
			dir := filepath.Join(t.TempDir(), "unpacked")
			if b, err := exec.Command(mcpb, "unpack", path, dir).CombinedOutput(); err != nil {
				t.Fatalf("mcpb unpack: %v\n%s", err, b)
			}
			b, err := os.ReadFile(filepath.Join(dir, "manifest.json"))
			if err != nil {
				t.Fatal(err)
			}
			var m struct {
				Version string
				Server  struct {
					Type       string
					EntryPoint string `json:"entry_point"`
					MCPConfig  struct {
						Command string
						Args    []string
						Env     map[string]string
					} `json:"mcp_config"`
				}
				UserConfig map[string]struct {
					Type      string
					Default   any
					Required  bool
					Sensitive bool
				} `json:"user_config"`
			}
			if err := json.Unmarshal(b, &m); err != nil {
				t.Fatal(err)
			}
			if m.Server.Type != "binary" || m.Version != "9.8.7" {
				t.Fatalf("manifest server type %q version %q", m.Server.Type, m.Version)
			}
			if fi, err := os.Stat(filepath.Join(dir, m.Server.EntryPoint)); err != nil || fi.Mode()&0o111 == 0 {
				t.Fatalf("entry point %s: %v (mode %v): not an executable in the bundle", m.Server.EntryPoint, err, fi)
			}
			// Credentials are sensitive fields.
			for key, uc := range m.UserConfig {
				if strings.Contains(key, "password") && !uc.Sensitive {
					t.Errorf("user_config %s is not sensitive", key)
				}
			}
			// Resolve the manifest the way a host does.
			ref := regexp.MustCompile(`\$\{user_config\.([a-z0-9_]+)\}`)
			resolve := func(s string) string {
				s = strings.ReplaceAll(s, "${__dirname}", dir)
				return ref.ReplaceAllStringFunc(s, func(r string) string {
					key := ref.FindStringSubmatch(r)[1]
					uc, ok := m.UserConfig[key]
					if !ok {
						t.Errorf("env refers to user_config.%s, which the manifest does not declare", key)
					}
					if v, ok := testValues[key]; ok {
						return v
					}
					if uc.Default == nil {
						if uc.Required {
							t.Fatalf("required user_config %s has no default and no test value", key)
						}
						return ""
					}
					switch d := uc.Default.(type) {
					case bool:
						if d {
							return "true"
						}
						return "false"
					case float64:
						return strings.TrimSuffix(strings.TrimRight(strings.TrimRight(jsonNumber(d), "0"), "."), ".")
					default:
						return d.(string)
					}
				})
			}
			cmd := exec.Command(resolve(m.Server.MCPConfig.Command))
			for _, a := range m.Server.MCPConfig.Args {
				cmd.Args = append(cmd.Args, resolve(a))
			}
			cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir()}
			for k, v := range m.Server.MCPConfig.Env {
				cmd.Env = append(cmd.Env, k+"="+resolve(v))
			}
			var stderr strings.Builder
			cmd.Stderr = &stderr
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			cl := mcp.NewClient(&mcp.Implementation{Name: "bundle-test", Version: "1"}, nil)
			cs, err := cl.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
			if err != nil {
				t.Fatalf("start %v over stdio: %v\nstderr:\n%s", cmd.Args, err, stderr.String())
			}
			defer cs.Close()
			if v := cs.InitializeResult().ServerInfo; v == nil || v.Name != s || v.Version != "v9.8.7" {
				t.Errorf("server info %+v; want %s v9.8.7", v, s)
			}
			tools, err := cs.ListTools(ctx, nil)
			if err != nil {
				t.Fatalf("tools/list: %v\nstderr:\n%s", err, stderr.String())
			}
			if len(tools.Tools) == 0 {
				t.Fatalf("the bundled %s lists no tools", s)
			}
			t.Logf("%s: %d tools from %s", s, len(tools.Tools), filepath.Base(path))
		})
	}
}

func jsonNumber(f float64) string {
	b, _ := json.Marshal(f)
	return string(b)
}

// mcpb validate is not a rubber stamp: it refuses manifests broken in ways
// a generator bug could break them, so the validate step in Build guards.
func TestMCPBValidateRefusesBrokenManifests(t *testing.T) {
	mcpb := mcpbPath(t)
	h := &Help{Name: "proxymcp", Summary: "s"}
	for _, f := range Fields["proxymcp"] {
		h.Variables = append(h.Variables, serverhelp.Variable{Name: f.Var, Description: "d", Secret: strings.HasSuffix(f.Var, "PASSWORD")})
	}
	good, err := Manifest(h, "proxymcp", "1.0.0", Platform{"linux", "amd64"})
	if err != nil {
		t.Fatal(err)
	}
	check := func(name string, b []byte, wantOK bool) {
		t.Helper()
		p := filepath.Join(t.TempDir(), "manifest.json")
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		out, err := exec.Command(mcpb, "validate", p).CombinedOutput()
		if (err == nil) != wantOK {
			t.Errorf("%s: mcpb validate err=%v, want ok=%v\n%s", name, err, wantOK, out)
		}
	}
	check("generated", good, true)
	mutations := []struct {
		name string
		f    func(m map[string]any)
	}{
		{"server type go", func(m map[string]any) { m["server"].(map[string]any)["type"] = "go" }},
		{"no entry point", func(m map[string]any) { delete(m["server"].(map[string]any), "entry_point") }},
		{"no command", func(m map[string]any) {
			delete(m["server"].(map[string]any)["mcp_config"].(map[string]any), "command")
		}},
		{"env value not a string", func(m map[string]any) {
			m["server"].(map[string]any)["mcp_config"].(map[string]any)["env"] = map[string]any{"A": 1}
		}},
		{"user_config type password", func(m map[string]any) {
			m["user_config"].(map[string]any)["proxy_stats_password"].(map[string]any)["type"] = "password"
		}},
		{"user_config without title", func(m map[string]any) {
			delete(m["user_config"].(map[string]any)["proxy_stats_password"].(map[string]any), "title")
		}},
		{"sensitive as a string", func(m map[string]any) {
			m["user_config"].(map[string]any)["proxy_stats_password"].(map[string]any)["sensitive"] = "yes"
		}},
		{"no version", func(m map[string]any) { delete(m, "version") }},
		{"no author", func(m map[string]any) { delete(m, "author") }},
		{"platform beos", func(m map[string]any) { m["compatibility"] = map[string]any{"platforms": []string{"beos"}} }},
	}
	for _, mu := range mutations {
		var m map[string]any
		if err := json.Unmarshal(good, &m); err != nil {
			t.Fatal(err)
		}
		mu.f(m)
		b, _ := json.Marshal(m)
		check(mu.name, b, false)
	}
}

// A bundle field whose variable left the table fails generation, so a
// renamed variable cannot leave a desktop setting that sets nothing.
func TestManifestRefusesUnknownVariable(t *testing.T) {
	h := &Help{Name: "proxymcp", Summary: "s"}
	_, err := Manifest(h, "proxymcp", "1.0.0", Platform{"linux", "amd64"})
	if err == nil || !strings.Contains(err.Error(), "PROXY_RUNTIME_URL") {
		t.Fatalf("err = %v", err)
	}
}

func TestParsePlatform(t *testing.T) {
	for _, ok := range []string{"linux/amd64", "linux/arm64", "darwin/arm64", "windows/amd64"} {
		if _, err := ParsePlatform(ok); err != nil {
			t.Errorf("%s: %v", ok, err)
		}
	}
	for _, bad := range []string{"", "linux", "linux/", "/amd64", "linux/386", "plan9/amd64", "linux/amd64/v3", "Linux/amd64", "linux amd64", "../../x/amd64"} {
		if _, err := ParsePlatform(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
	if _, err := Build("nosuchmcp", "linux/amd64", "1", t.TempDir(), "mcpb"); err == nil || !strings.Contains(err.Error(), "unknown server") {
		t.Errorf("unknown server: %v", err)
	}
}
