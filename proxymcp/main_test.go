package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpfleet/mcpfleet/proxymcp/internal/haproxytest"
	"github.com/mcpfleet/mcpfleet/shared/e2e"
	"github.com/mcpfleet/mcpfleet/shared/e2e/appstest"
	"github.com/mcpfleet/mcpfleet/shared/toolcall/toolcalltest"
)

var _ = flag.Bool("update", false, "rewrite golden files")

// downEnv points both back ends at addresses where nothing answers: the
// server must start anyway.
func downEnv(t *testing.T) []string {
	return []string{"PROXY_RUNTIME_URL=unix://" + filepath.Join(t.TempDir(), "none.sock"), "PROXY_STATS_URL=http://127.0.0.1:1/stats", "PROXY_STATS_TIMEOUT=1"}
}

func haproxyEnv(h *haproxytest.HAProxy, mode string) []string {
	rt := "PROXY_RUNTIME_URL=tcp://" + h.RuntimeTCP
	if mode == "unix" {
		rt = "PROXY_RUNTIME_URL=unix://" + h.Socket
	}
	return []string{rt, "PROXY_STATS_URL=" + h.StatsURL, "PROXY_STATS_USERNAME=" + haproxytest.StatsUser, "PROXY_STATS_PASSWORD=" + haproxytest.StatsPassword}
}

// TestSurfaceGolden: the tool list, over stdio and streamable HTTP, matches
// the golden files (full and read-only) by JSON meaning.
func TestSurfaceGolden(t *testing.T) {
	bin := e2e.Build(t, ".")
	env := downEnv(t)
	surfaceGolden(t, "testdata/surface.golden.json", e2e.List(t, e2e.Stdio(t, bin, env)))
	srv := e2e.StartHTTP(t, bin, env)
	surfaceGolden(t, "testdata/surface.golden.json", e2e.List(t, e2e.Connect(t, srv.MCPURL(), nil)))
	ro := append(downEnv(t), "PROXY_READ_ONLY=true")
	surfaceGolden(t, "testdata/surface_readonly.golden.json", e2e.List(t, e2e.Stdio(t, bin, ro)))

	// A client that declares MCP Apps sees the views: list_servers points
	// to backend-pool, every change tool to change-preview, and the ui://
	// resources are listed. With MCP_APPS=off it sees today's surface.
	t.Run("apps client", func(t *testing.T) {
		surfaceGolden(t, "testdata/surface-apps.golden.json", e2e.List(t, appstest.Stdio(t, bin, env)))
	})
	t.Run("apps client, fleet", func(t *testing.T) {
		dir := t.TempDir()
		fleet := []string{"PROXY_INSTANCES=lb1,lb2", "PROXY_STATS_TIMEOUT=1",
			"PROXY_LB1_RUNTIME_URL=unix://" + filepath.Join(dir, "lb1.sock"), "PROXY_LB1_STATS_URL=http://127.0.0.1:1/stats",
			"PROXY_LB2_RUNTIME_URL=unix://" + filepath.Join(dir, "lb2.sock"), "PROXY_LB2_STATS_URL=http://127.0.0.1:2/stats"}
		surfaceGolden(t, "testdata/surface-apps-fleet.golden.json", e2e.List(t, appstest.Stdio(t, bin, fleet)))
	})
	t.Run("apps client, read-only", func(t *testing.T) {
		surfaceGolden(t, "testdata/surface-apps-readonly.golden.json", e2e.List(t, appstest.Stdio(t, bin, ro)))
	})
	t.Run("apps client, MCP_APPS=off", func(t *testing.T) {
		surfaceGolden(t, "testdata/surface.golden.json", e2e.List(t, appstest.Stdio(t, bin, append(downEnv(t), "MCP_APPS=off"))))
	})
}

// surfaceGolden compares a surface with its golden file as clients read
// it: the tools by meaning (toolcalltest.ToolsDiff: key order and
// equivalent spellings of one schema aside, every keyword and its value
// compared), resources, templates and prompts as JSON values.
func surfaceGolden(t *testing.T, path string, got e2e.Surface) {
	t.Helper()
	if e2e.Updating() {
		e2e.Golden(t, path, got)
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	gotJSON, err := json.Marshal(got)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Tools) == 0 {
		t.Fatalf("%s: no tools listed", path)
	}
	for _, d := range toolcalltest.ToolsDiff(want, gotJSON) {
		t.Errorf("%s: %s", path, d)
	}
	var w, g map[string]any
	if err := json.Unmarshal(want, &w); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(gotJSON, &g); err != nil {
		t.Fatal(err)
	}
	delete(w, "tools")
	delete(g, "tools")
	if !reflect.DeepEqual(w, g) {
		t.Errorf("%s: resources, templates or prompts differ:\n got %v\nwant %v", path, g, w)
	}
}

// TestToolsOverTransports calls tools through the official Go SDK client:
// over stdio with the Unix socket, over HTTP with the TCP port; on every
// HAProxy branch of PROXYMCP_HAPROXY_VERSIONS (scripts/test: all three).
func TestToolsOverTransports(t *testing.T) {
	bin := e2e.Build(t, ".")
	haproxytest.EachVersion(t, func(t *testing.T, branch string) { toolsOverTransports(t, bin, branch) })
}

func toolsOverTransports(t *testing.T, bin, branch string) {
	h := haproxytest.Run(t, haproxytest.Options{Version: branch, TLS: true})
	stdio := e2e.Stdio(t, bin, haproxyEnv(h, "unix"))
	srv := e2e.StartHTTP(t, bin, haproxyEnv(h, "tcp4"))
	httpCS := e2e.Connect(t, srv.MCPURL(), nil)
	for name, c := range map[string]*mcp.ClientSession{"stdio": stdio, "http": httpCS} {
		t.Run(name, func(t *testing.T) {
			res := e2e.CallTool(t, c, "list_servers", map[string]any{"backend": "be_api"})
			if res.IsError {
				t.Fatal(e2e.Text(res))
			}
			var out struct {
				Source  string `json:"source"`
				Count   int    `json:"count"`
				Servers []struct {
					Name string `json:"name"`
				} `json:"servers"`
			}
			b, _ := json.Marshal(res.StructuredContent)
			if err := json.Unmarshal(b, &out); err != nil || out.Source != "runtime_api" || out.Count != 2 || len(out.Servers) != 2 {
				t.Errorf("structured = %s (%v)", b, err)
			}
			if e2e.Text(res) != string(b) && !json.Valid([]byte(e2e.Text(res))) {
				t.Errorf("text content is not the JSON result: %s", e2e.Text(res))
			}
			res = e2e.CallTool(t, c, "set_server_weight", map[string]any{"backend": "be_app", "server": "nosuch", "weight": 5})
			if !res.IsError || !strings.Contains(e2e.Text(res), "No such server") {
				t.Errorf("refusal = %v %s", res.IsError, e2e.Text(res))
			}
			res = e2e.CallTool(t, c, "set_server_weight", map[string]any{"backend": "be_app;show info", "server": "app1", "weight": 5})
			if !res.IsError || !strings.Contains(e2e.Text(res), `argument "backend" must match`) {
				t.Errorf("injection = %v %s", res.IsError, e2e.Text(res))
			}
			res = e2e.CallTool(t, c, "show_ssl_cert", map[string]any{"file": h.TLSCertFile})
			if res.IsError || !strings.Contains(e2e.Text(res), `"not_after":"`+h.TLSCert.NotAfter.UTC().Format(time.RFC3339)+`"`) {
				t.Errorf("show_ssl_cert = %v %s", res.IsError, e2e.Text(res))
			}
			res = e2e.CallTool(t, c, "version_info", nil)
			if res.IsError || !strings.Contains(e2e.Text(res), `"haproxy_version":"`+h.Version+`"`) {
				t.Errorf("version_info = %v %s", res.IsError, e2e.Text(res))
			}
		})
	}
}

// TestCallToolAliasOneShot: a single callTool request piped to stdio,
// without initialize, prints one JSON-RPC response and exits.
func TestCallToolAliasOneShot(t *testing.T) {
	bin := e2e.Build(t, ".")
	h := haproxytest.Run(t, haproxytest.Options{})
	for _, mode := range []string{"tcp4", "unix"} {
		t.Run(mode, func(t *testing.T) {
			cmd := exec.Command(bin)
			cmd.Env = append(haproxyEnv(h, mode), "PATH=/usr/bin:/bin")
			cmd.Stdin = strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"callTool","params":{"name":"show_info","arguments":{}}}` + "\n")
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			select {
			case err := <-done:
				if err != nil {
					t.Fatalf("exit: %v\n%s", err, stderr.String())
				}
			case <-time.After(15 * time.Second):
				cmd.Process.Kill()
				t.Fatal("proxymcp did not exit when stdin closed")
			}
			lines := nonEmptyLines(stdout.String())
			if len(lines) != 1 {
				t.Fatalf("stdout has %d lines, want 1:\n%s", len(lines), stdout.String())
			}
			var resp struct {
				JSONRPC string `json:"jsonrpc"`
				ID      int    `json:"id"`
				Result  struct {
					IsError           bool `json:"isError"`
					StructuredContent struct {
						Source string         `json:"source"`
						Info   map[string]any `json:"info"`
					} `json:"structuredContent"`
				} `json:"result"`
			}
			if err := json.Unmarshal([]byte(lines[0]), &resp); err != nil {
				t.Fatal(err)
			}
			sc := resp.Result.StructuredContent
			if resp.JSONRPC != "2.0" || resp.ID != 1 || resp.Result.IsError || sc.Info["Name"] != "HAProxy" || sc.Source != "runtime_api" {
				t.Errorf("response = %s", lines[0])
			}
		})
	}
}

func nonEmptyLines(s string) []string {
	var out []string
	sc := bufio.NewScanner(strings.NewReader(s))
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		if strings.TrimSpace(sc.Text()) != "" {
			out = append(out, sc.Text())
		}
	}
	return out
}

// TestStartsWhileHAProxyDown: calls fail clearly, the server keeps running.
func TestStartsWhileHAProxyDown(t *testing.T) {
	bin := e2e.Build(t, ".")
	cs := e2e.Stdio(t, bin, downEnv(t))
	res := e2e.CallTool(t, cs, "list_servers", nil)
	msg := e2e.Text(res)
	if !res.IsError || !strings.Contains(msg, "none.sock") || !strings.Contains(msg, "127.0.0.1:1") {
		t.Errorf("list_servers = %s", msg)
	}
	res = e2e.CallTool(t, cs, "show_info", nil)
	if !res.IsError || !strings.Contains(e2e.Text(res), "PROXY_RUNTIME_URL") {
		t.Errorf("show_info = %s", e2e.Text(res))
	}
}

// TestConfigurationErrors exit with status 2 and name the variable.
func TestConfigurationErrors(t *testing.T) {
	bin := e2e.Build(t, ".")
	for _, tc := range []struct {
		env  []string
		want string
	}{
		{[]string{"PROXY_RUNTIME_ENABLED=false", "PROXY_STATS_ENABLED=false"}, "at least one back end"},
		{[]string{"PROXY_RUNTIME_MODE=udp"}, "PROXY_RUNTIME_MODE"},
		// The URL overrides the mode, but a bad mode is still an error.
		{[]string{"PROXY_RUNTIME_MODE=udp", "PROXY_RUNTIME_URL=tcp://127.0.0.1:9999"}, "PROXY_RUNTIME_MODE"},
		{[]string{"PROXY_RUNTIME_MODE=unixgram", "PROXY_RUNTIME_URL=unix:///run/h.sock"}, "PROXY_RUNTIME_MODE"},
		{[]string{"PROXY_STATS_URL=http://u:hunter2@x:1/stats", "PROXY_STATS_TIMEOUT=-1"}, "PROXY_STATS_TIMEOUT"},
	} {
		cmd := exec.Command(bin)
		cmd.Env = tc.env
		cmd.Stdin = strings.NewReader("")
		out, err := cmd.CombinedOutput()
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 2 || !strings.Contains(string(out), tc.want) {
			t.Errorf("%v: %v\n%s", tc.env, err, out)
		}
		if strings.Contains(string(out), "hunter2") {
			t.Errorf("password echoed: %s", out)
		}
	}
}

// TestHTTPRefusesUnauthenticated: with OAuth on, /mcp answers 401 without a token.
func TestHTTPRefusesUnauthenticated(t *testing.T) {
	bin := e2e.Build(t, ".")
	srv := e2e.StartHTTP(t, bin, append(downEnv(t), e2e.OAuthEnv...))
	e2e.RequireUnauthorized(t, srv.MCPURL(), `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
}

// TestReadyzFollowsHAProxy: GET /readyz is 200 while HAProxy answers show
// info and 503 naming the runtime API when it does not.
func TestReadyzFollowsHAProxy(t *testing.T) {
	bin := e2e.Build(t, ".")
	readyz := func(srv *e2e.HTTPServer) (int, string) {
		resp, err := http.Get(srv.Base + "/readyz")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	h := haproxytest.Run(t, haproxytest.Options{})
	if code, body := readyz(e2e.StartHTTP(t, bin, haproxyEnv(h, "tcp4"))); code != http.StatusOK {
		t.Errorf("HAProxy up: HTTP %d %s", code, body)
	}
	if code, body := readyz(e2e.StartHTTP(t, bin, downEnv(t))); code != http.StatusServiceUnavailable || !strings.Contains(body, "runtime API") {
		t.Errorf("HAProxy down: HTTP %d %s", code, body)
	}
}
