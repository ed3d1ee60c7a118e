package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpfleet/mcpfleet/codermcp/internal/codertest"
	"github.com/mcpfleet/mcpfleet/codermcp/internal/codertest/harness"
	"github.com/mcpfleet/mcpfleet/shared/e2e"
	"github.com/mcpfleet/mcpfleet/shared/e2e/appstest"
	"github.com/mcpfleet/mcpfleet/shared/toolcall/toolcalltest"
)

// -update rewrites the golden files (e2e.Golden reads the flag).
var _ = flag.Bool("update", false, "rewrite testdata/*.golden.json")

// TestToolListsGolden: the tool list, over stdio and streamable HTTP,
// matches the golden files by JSON meaning.
func TestToolListsGolden(t *testing.T) {
	t.Parallel()
	bin := e2e.Build(t, ".")
	env := []string{"CODER_CLI_PATH=/nonexistent/codex"} // listing needs no CLI
	t.Run("stdio", func(t *testing.T) {
		t.Parallel()
		surfaceGolden(t, "testdata/tools.golden.json", e2e.List(t, e2e.Stdio(t, bin, env)))
	})
	t.Run("streamable HTTP", func(t *testing.T) {
		t.Parallel()
		srv := e2e.StartHTTP(t, bin, env)
		surfaceGolden(t, "testdata/tools.golden.json", e2e.List(t, e2e.Connect(t, srv.MCPURL(), nil)))
	})
	t.Run("structured content enabled", func(t *testing.T) {
		t.Parallel()
		cs := e2e.Stdio(t, bin, append(env, "STRUCTURED_CONTENT_ENABLED=true"))
		surfaceGolden(t, "testdata/tools-structured.golden.json", e2e.List(t, cs))
	})
	// A client that declares MCP Apps sees the change-preview view: its
	// ui:// resource, and _meta.ui on coder, codex and codex-reply. The
	// goldens above are what every other client sees, unchanged; with
	// MCP_APPS=off an apps client sees them too.
	t.Run("apps client", func(t *testing.T) {
		t.Parallel()
		surfaceGolden(t, "testdata/surface-apps.golden.json", e2e.List(t, appstest.Stdio(t, bin, env)))
	})
	t.Run("apps client, MCP_APPS=off", func(t *testing.T) {
		t.Parallel()
		surfaceGolden(t, "testdata/tools.golden.json", e2e.List(t, appstest.Stdio(t, bin, append(env, "MCP_APPS=off"))))
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
	if len(got.Tools) != 8 {
		t.Fatalf("%s: %d tools listed, want 8 (the seed's five, codex, codex-reply and version_info)", path, len(got.Tools))
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

func TestHTTPRefusesUnauthenticatedCalls(t *testing.T) {
	t.Parallel()
	bin := e2e.Build(t, ".")
	srv := e2e.StartHTTP(t, bin, append([]string{"CODER_CLI_PATH=/nonexistent/codex"}, e2e.OAuthEnv...))
	e2e.RequireUnauthorized(t, srv.MCPURL(), `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"ping","arguments":{}}}`)
}

func TestConfigErrorExitsWithUsageStatus(t *testing.T) {
	t.Parallel()
	bin := e2e.Build(t, ".")
	cmd := exec.Command(bin)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "CODER_TIMEOUT=soon", "CODER_DEFAULT_MODEL=nope"}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err := cmd.Run()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 2 {
		t.Fatalf("exit = %v, want status 2", err)
	}
	for _, want := range []string{"CODER_TIMEOUT", "CODER_DEFAULT_MODEL", "2 problems"} {
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr.String())
		}
	}
}

// An audit log that cannot be opened stops the server at start-up (exit 1,
// naming MCP_AUDIT_LOG and the path): no server runs without its audit
// trail, and nothing is written to stdout.
func TestUnopenableAuditLogStopsServer(t *testing.T) {
	t.Parallel()
	bin := e2e.Build(t, ".")
	path := filepath.Join(t.TempDir(), "missing-dir", "audit.log")
	cmd := exec.Command(bin)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir(), "CODER_CLI_PATH=/nonexistent/codex", "MCP_AUDIT_LOG=" + path}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 {
		t.Fatalf("exit = %v, want status 1; stderr:\n%s", err, stderr.String())
	}
	for _, want := range []string{"MCP_AUDIT_LOG", path} {
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr.String())
		}
	}
	if stdout.Len() != 0 {
		t.Errorf("stdout (the MCP stream) got %q", stdout.String())
	}
}

// The built binary over stdio and over streamable HTTP, driving the real
// Codex CLI against a codertest endpoint, with progress notifications.
func TestCoderEndToEnd(t *testing.T) {
	t.Parallel()
	h := harness.New(t)
	bin := e2e.Build(t, ".")
	env := append(append([]string(nil), h.Env...), "CODER_CLI_PATH="+h.CLI, "CODER_HOME="+h.Home, "CODER_WORKSPACE_ROOTS="+testRoots(),
		"CODER_MODELS="+codertest.Model, "CODER_DEFAULT_MODEL="+codertest.Model, "STRUCTURED_CONTENT_ENABLED=yes")
	for _, transport := range []string{"stdio", "http"} {
		t.Run(transport, func(t *testing.T) {
			t.Parallel()
			var mu sync.Mutex
			var notes []*mcp.ProgressNotificationParams
			var times []time.Time
			c := mcp.NewClient(&mcp.Implementation{Name: "codermcp-e2e", Version: "test"}, &mcp.ClientOptions{
				ProgressNotificationHandler: func(_ context.Context, r *mcp.ProgressNotificationClientRequest) {
					mu.Lock()
					notes = append(notes, r.Params)
					times = append(times, time.Now())
					mu.Unlock()
				},
			})
			ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
			defer cancel()
			var tr mcp.Transport
			if transport == "stdio" {
				cmd := exec.Command(bin)
				// A throwaway HOME: the CLI runs commands in a login shell, and the
				// machine's own profile (pyenv's rehash, seen on CI) must not add
				// its output to the command's.
				cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir()}, env...)
				tr = &mcp.CommandTransport{Command: cmd}
			} else {
				tr = &mcp.StreamableClientTransport{Endpoint: e2e.StartHTTP(t, bin, env).MCPURL(), MaxRetries: -1}
			}
			cs, err := c.Connect(ctx, tr, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer cs.Close()
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "coder",
				Arguments: map[string]any{"prompt": "over " + transport + " [[shell:echo from-" + transport + "]]", "sessionId": "e2e-" + transport, "workingDirectory": t.TempDir()},
				Meta:      mcp.Meta{"progressToken": 7}})
			if err != nil {
				t.Fatal(err)
			}
			returned := time.Now()
			if res.IsError {
				t.Fatalf("tool error: %s", e2e.Text(res))
			}
			if got := e2e.Text(res); !strings.Contains(got, "from-"+transport) {
				t.Errorf("text = %q, want the command's output relayed by the model", got)
			}
			sc, _ := res.StructuredContent.(map[string]any)
			if sc["sessionId"] != "e2e-"+transport || sc["model"] != codertest.Model || sc["threadId"] == nil {
				t.Errorf("structuredContent = %v", res.StructuredContent)
			}
			mu.Lock()
			defer mu.Unlock()
			if len(notes) < 2 {
				t.Fatalf("got %d progress notifications", len(notes))
			}
			// The final step is flushed before the result, despite mcp-go
			// writing notifications from another goroutine.
			if last := notes[len(notes)-1].Message; !strings.HasSuffix(last, "turn completed") {
				t.Errorf("last notification = %q, want the final step", last)
			}
			for i, n := range notes {
				if times[i].After(returned) {
					t.Errorf("notification %q arrived after the result", n.Message)
				}
				if n.ProgressToken != float64(7) {
					t.Errorf("progressToken = %#v, want 7 echoed", n.ProgressToken)
				}
			}
		})
	}
}

// Shutdown cancels a running call: SIGTERM to the server (HTTP transport)
// while the real CLI waits on a model that never answers must leave no CLI
// process behind.
func TestShutdownStopsRunningCLI(t *testing.T) {
	t.Parallel()
	h := harness.New(t)
	bin := e2e.Build(t, ".")
	srv := e2e.StartHTTP(t, bin, append(append([]string(nil), h.Env...), "MCP_SHUTDOWN_TIMEOUT=1s",
		"CODER_CLI_PATH="+h.CLI, "CODER_HOME="+h.Home, "CODER_WORKSPACE_ROOTS="+testRoots(), "CODER_MODELS="+codertest.Model, "CODER_DEFAULT_MODEL="+codertest.Model))
	cs := e2e.Connect(t, srv.MCPURL(), nil)
	go cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "coder", Arguments: map[string]any{"prompt": "shutdown [[hang]]"}})
	deadline := time.Now().Add(30 * time.Second)
	for len(h.Endpoint.RequestsWith("shutdown")) == 0 {
		if time.Now().After(deadline) {
			t.Fatal("the CLI never reached the endpoint")
		}
		time.Sleep(20 * time.Millisecond)
	}
	if len(harness.Leftovers(h.Marker)) < 2 { // the server and its CLI
		t.Fatal("no CLI process found while the call runs")
	}
	if err := srv.Stop(); err != nil {
		t.Errorf("server exit after SIGTERM: %v", err)
	}
	for {
		left := harness.Leftovers(h.Marker)
		if len(left) == 0 {
			break
		}
		if time.Now().After(deadline.Add(10 * time.Second)) {
			t.Fatalf("processes left after shutdown: %v", left)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// Representative results, as a client sees them, in a golden file: success
// shapes (content, _meta, structuredContent) and error shapes. Ids the CLI
// makes up are replaced by placeholders.
func TestResultsGolden(t *testing.T) {
	t.Parallel()
	h := harness.New(t)
	bin := e2e.Build(t, ".")
	cs := e2e.Stdio(t, bin, append(append([]string(nil), h.Env...), "CODER_CLI_PATH="+h.CLI, "CODER_HOME="+h.Home, "CODER_WORKSPACE_ROOTS="+testRoots(),
		"CODER_MODELS="+codertest.Model+","+codertest.MissingModel, "CODER_DEFAULT_MODEL="+codertest.Model,
		"STRUCTURED_CONTENT_ENABLED=true", "CODER_MCP_CALLBACK_URI=http://127.0.0.1:9/callback"))
	calls := []struct {
		name string
		tool string
		args map[string]any
	}{
		{"ping", "ping", nil},
		{"listSessions empty", "listSessions", nil},
		{"coder", "coder", map[string]any{"prompt": "golden [[reply:Hello from the model.]]", "sessionId": "golden-1"}},
		{"listSessions", "listSessions", nil},
		{"coder invalid model", "coder", map[string]any{"prompt": "p", "model": "gpt-unknown"}},
		{"coder model rejected by the provider", "coder", map[string]any{"prompt": "p", "model": codertest.MissingModel, "sessionId": "golden-2"}},
		{"coder bad enum", "coder", map[string]any{"prompt": "p", "sandbox": "everything"}},
		{"review two targets", "review", map[string]any{"uncommitted": true, "commit": "abc"}},
	}
	type entry struct {
		Name   string              `json:"name"`
		Result *mcp.CallToolResult `json:"result"`
	}
	var got []entry
	for _, c := range calls {
		got = append(got, entry{c.name, e2e.CallTool(t, cs, c.tool, c.args)})
	}
	b, err := json.MarshalIndent(got, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	out := string(b)
	// Normalise what varies run to run: thread ids, timestamps, the endpoint's port.
	out = regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`).ReplaceAllString(out, "<uuid>")
	out = regexp.MustCompile(`\d{4}-\d\d-\d\dT[0-9:.]+Z`).ReplaceAllString(out, "<time>")
	out = regexp.MustCompile(`127\.0\.0\.1:\d+/v1`).ReplaceAllString(out, "127.0.0.1:<port>/v1")
	e2e.Golden(t, "testdata/results.golden.json", out+"\n")
}

// testRoots are the workspace roots of the tests' servers: temporary
// directories, and this package's directory (the servers' working
// directory, where a call without workingDirectory runs).
func testRoots() string {
	wd, _ := os.Getwd()
	return os.TempDir() + "," + wd
}
