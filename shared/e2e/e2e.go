// Package e2e drives a built server binary with an independent MCP client,
// the official Go SDK, over stdio and streamable HTTP, and compares what it
// sees with golden files. Every server's end-to-end tests use it.
//
//	bin := e2e.Build(t, "..")                      // the module root (package main)
//	cs := e2e.Stdio(t, bin, env)                    // spawned binary over stdio
//	srv := e2e.StartHTTP(t, bin, env)               // MCP_TRANSPORT=http on a free port
//	cs = e2e.Connect(t, srv.MCPURL(), nil)
//	e2e.Golden(t, "testdata/tools.golden.json", e2e.Tools(t, cs))
//
// Golden files are rewritten when the test binary has an -update flag set
// to true or UPDATE_GOLDEN=1 is in the environment.
package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

var builds sync.Map // module dir → *build

type build struct {
	once sync.Once
	path string
	err  error
}

// Build compiles the main package at moduleDir once per test process and
// returns the binary's path. The binary lives at one path per module
// directory, replaced atomically by each build, so test processes leave one
// copy behind instead of one each (hundreds of 45 MB binaries filled a disk).
func Build(t testing.TB, moduleDir string) string {
	t.Helper()
	abs, err := filepath.Abs(moduleDir)
	if err != nil {
		t.Fatal(err)
	}
	v, _ := builds.LoadOrStore(abs, &build{})
	b := v.(*build)
	b.once.Do(func() { b.path, b.err = buildOnce(abs) })
	if b.err != nil {
		t.Fatal(b.err)
	}
	return b.path
}

// buildOnce builds abs into a fresh file beside its final path and renames
// it there: a concurrent test process running the previous binary keeps
// its inode, and no process ever sees a half-written file.
func buildOnce(abs string) (string, error) {
	dir := filepath.Join(os.TempDir(), "mcpfleet-e2e-bin", strings.Trim(strings.ReplaceAll(abs, string(filepath.Separator), "_"), "_"))
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", fmt.Errorf("making the directory for the test binary of %s: %w", abs, err)
	}
	final := filepath.Join(dir, filepath.Base(abs))
	tmp, err := os.CreateTemp(dir, filepath.Base(abs)+".build-*")
	if err != nil {
		return "", fmt.Errorf("building %s: %w", abs, err)
	}
	tmp.Close()
	defer os.Remove(tmp.Name()) // gone after the rename; left only on failure
	// The tags the images and release archives are built with, so the
	// tests run what ships.
	cmd := exec.Command("go", "build", "-tags", "grpcnotrace", "-o", tmp.Name(), ".")
	cmd.Dir = abs
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build in %s: %v\n%s", abs, err, out)
	}
	if err := os.Rename(tmp.Name(), final); err != nil {
		return "", fmt.Errorf("placing the test binary of %s: %w", abs, err)
	}
	return final, nil
}

func client() *mcp.Client {
	return mcp.NewClient(&mcp.Implementation{Name: "mcpfleet-e2e", Version: "test"}, nil)
}

// Legacy is the protocol revision of the initialize handshake most clients
// use today; Modern is the stateless core reached through server/discover.
const (
	Legacy = "2025-11-25"
	Modern = "2026-07-28"
)

// Option adjusts a connection.
type Option func(*connectOptions)

type connectOptions struct {
	version string
	env     []string
}

// Protocol selects the protocol revision the client asks for (default Legacy).
func Protocol(version string) Option {
	return func(o *connectOptions) { o.version = version }
}

func options(opts []Option) connectOptions {
	o := connectOptions{version: Legacy}
	for _, f := range opts {
		f(&o)
	}
	return o
}

func (o connectOptions) session() *mcp.ClientSessionOptions {
	return &mcp.ClientSessionOptions{ProtocolVersion: o.version}
}

// Stdio spawns bin with env (added to a minimal environment) and connects
// to it over stdio. The session is closed when the test ends.
func Stdio(t testing.TB, bin string, env []string, opts ...Option) *mcp.ClientSession {
	t.Helper()
	cmd := exec.Command(bin)
	cmd.Env = append(baseEnv(), env...)
	cmd.Stderr = &logWriter{t: t, prefix: filepath.Base(bin) + ": "}
	// The SDK keeps using the connect context for the session's streams, so
	// it lives as long as the test.
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	cs, err := client().Connect(ctx, &mcp.CommandTransport{Command: cmd}, options(opts).session())
	if err != nil {
		t.Fatalf("connect over stdio to %s: %v", bin, err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// HTTPServer is a server binary running with MCP_TRANSPORT=http.
type HTTPServer struct {
	Base string // e.g. http://127.0.0.1:41234
	Cmd  *exec.Cmd
	done chan error
}

// MCPURL is the streamable HTTP endpoint.
func (s *HTTPServer) MCPURL() string { return s.Base + "/mcp" }

// SSEURL is the legacy SSE endpoint.
func (s *HTTPServer) SSEURL() string { return s.Base + "/sse" }

// Stop sends SIGTERM and waits for the process; it returns its exit error.
func (s *HTTPServer) Stop() error {
	_ = s.Cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-s.done:
		return err
	case <-time.After(20 * time.Second):
		_ = s.Cmd.Process.Kill()
		return fmt.Errorf("%s did not exit within 20s of SIGTERM", s.Cmd.Path)
	}
}

// Done receives the process's exit error once it exits.
func (s *HTTPServer) Done() <-chan error { return s.done }

// StartHTTP starts bin with MCP_TRANSPORT=http on a free loopback port and
// waits until /healthz answers. It is stopped when the test ends.
func StartHTTP(t testing.TB, bin string, env []string) *HTTPServer {
	t.Helper()
	port := FreePort(t)
	cmd := exec.Command(bin)
	cmd.Env = append(baseEnv(), env...)
	cmd.Env = append(cmd.Env, "MCP_TRANSPORT=http", "MCP_HOST=127.0.0.1", "MCP_PORT="+strconv.Itoa(port))
	cmd.Stdout = &logWriter{t: t, prefix: filepath.Base(bin) + " stdout: "}
	cmd.Stderr = &logWriter{t: t, prefix: filepath.Base(bin) + ": "}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", bin, err)
	}
	s := &HTTPServer{Base: "http://127.0.0.1:" + strconv.Itoa(port), Cmd: cmd, done: make(chan error, 1)}
	go func() { s.done <- cmd.Wait() }()
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Signal(syscall.SIGTERM)
			select {
			case <-s.done:
			case <-time.After(10 * time.Second):
				_ = cmd.Process.Kill()
			}
		}
	})
	deadline := time.Now().Add(30 * time.Second)
	for {
		resp, err := http.Get(s.Base + "/healthz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return s
			}
		}
		select {
		case err := <-s.done:
			t.Fatalf("%s exited before serving HTTP: %v", bin, err)
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s did not answer /healthz within 30s", bin)
		}
	}
}

// Connect opens a go-sdk client session over streamable HTTP. httpClient
// may be nil; pass one to add headers such as Authorization.
func Connect(t testing.TB, endpoint string, httpClient *http.Client, opts ...Option) *mcp.ClientSession {
	t.Helper()
	// The SDK keeps using the connect context for the session's streams, so
	// it lives as long as the test.
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	tr := &mcp.StreamableClientTransport{Endpoint: endpoint, HTTPClient: httpClient, MaxRetries: -1}
	cs, err := client().Connect(ctx, tr, options(opts).session())
	if err != nil {
		t.Fatalf("connect over streamable HTTP to %s: %v", endpoint, err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// ConnectSSE opens a go-sdk client session over the legacy SSE transport.
func ConnectSSE(t testing.TB, endpoint string) *mcp.ClientSession {
	t.Helper()
	// The SDK keeps using the connect context for the session's streams, so
	// it lives as long as the test.
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	cs, err := client().Connect(ctx, &mcp.SSEClientTransport{Endpoint: endpoint}, options(nil).session())
	if err != nil {
		t.Fatalf("connect over SSE to %s: %v", endpoint, err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// Surface is what a server offers, as golden files record it.
type Surface struct {
	Tools             []*mcp.Tool             `json:"tools"`
	Resources         []*mcp.Resource         `json:"resources"`
	ResourceTemplates []*mcp.ResourceTemplate `json:"resourceTemplates"`
	Prompts           []*mcp.Prompt           `json:"prompts"`
}

// List reads the tool, resource, template and prompt lists the server
// advertises (each empty when the server lacks the capability).
func List(t testing.TB, cs *mcp.ClientSession) Surface {
	t.Helper()
	// The SDK keeps using the connect context for the session's streams, so
	// it lives as long as the test.
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	s := Surface{Tools: []*mcp.Tool{}, Resources: []*mcp.Resource{}, ResourceTemplates: []*mcp.ResourceTemplate{}, Prompts: []*mcp.Prompt{}}
	caps := cs.InitializeResult().Capabilities
	if caps.Tools != nil {
		for tool, err := range cs.Tools(ctx, nil) {
			if err != nil {
				t.Fatalf("tools/list: %v", err)
			}
			s.Tools = append(s.Tools, tool)
		}
	}
	if caps.Resources != nil {
		for r, err := range cs.Resources(ctx, nil) {
			if err != nil {
				t.Fatalf("resources/list: %v", err)
			}
			s.Resources = append(s.Resources, r)
		}
		for r, err := range cs.ResourceTemplates(ctx, nil) {
			if err != nil {
				t.Fatalf("resources/templates/list: %v", err)
			}
			s.ResourceTemplates = append(s.ResourceTemplates, r)
		}
	}
	if caps.Prompts != nil {
		for p, err := range cs.Prompts(ctx, nil) {
			if err != nil {
				t.Fatalf("prompts/list: %v", err)
			}
			s.Prompts = append(s.Prompts, p)
		}
	}
	return s
}

// CallTool calls a tool and fails the test on a protocol error (a tool
// error result is returned for the caller to inspect).
func CallTool(t testing.TB, cs *mcp.ClientSession, name string, args map[string]any) *mcp.CallToolResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("tools/call %s: %v", name, err)
	}
	return res
}

// Text joins the text content of a tool result.
func Text(res *mcp.CallToolResult) string {
	var parts []string
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			parts = append(parts, tc.Text)
		}
	}
	return strings.Join(parts, "\n")
}

// Golden compares got, as indented JSON, with the file at path, rewriting
// the file when updating.
func Golden(t testing.TB, path string, got any) {
	t.Helper()
	var b []byte
	switch v := got.(type) {
	case []byte:
		b = v
	case string:
		b = []byte(v)
	default:
		var err error
		b, err = json.MarshalIndent(got, "", "  ")
		if err != nil {
			t.Fatalf("marshal golden %s: %v", path, err)
		}
		b = append(b, '\n')
	}
	if Updating() {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read golden file %s: %v (run the test with -update or UPDATE_GOLDEN=1 to create it)", path, err)
	}
	if !bytes.Equal(bytes.TrimSpace(want), bytes.TrimSpace(b)) {
		t.Errorf("%s differs from what the server returned (rerun with -update to accept the change):\n--- got\n%s", path, b)
	}
}

// Updating reports whether golden files should be rewritten.
func Updating() bool {
	if f := flag.Lookup("update"); f != nil && f.Value.String() == "true" {
		return true
	}
	return os.Getenv("UPDATE_GOLDEN") == "1"
}

// FreePort returns a loopback TCP port that was free a moment ago.
func FreePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// baseEnv keeps only what a child needs to run, so a developer's MCP_* or
// OAUTH_* variables do not leak into tests.
func baseEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		switch k {
		case "PATH", "HOME", "TMPDIR", "USER", "LANG", "LC_ALL", "GOCOVERDIR", "XDG_CONFIG_HOME", "XDG_CACHE_HOME":
			env = append(env, kv)
		}
	}
	return env
}

// logWriter forwards a child's output to the test log.
type logWriter struct {
	t      testing.TB
	prefix string
	mu     sync.Mutex
}

func (w *logWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	defer func() { recover() }() // the test may have ended; logging then panics
	for _, line := range strings.Split(strings.TrimRight(string(p), "\n"), "\n") {
		w.t.Log(w.prefix + line)
	}
	return len(p), nil
}

// OAuthEnv is a minimal valid OAuth configuration (HS256 tokens checked with
// a test secret) for tests that show a server's HTTP transport refuses
// unauthenticated calls.
var OAuthEnv = []string{
	"OAUTH_ENABLED=true", "OAUTH_PROVIDER=hmac",
	"JWT_SECRET=0123456789abcdef0123456789abcdef-test", "OIDC_AUDIENCE=x",
}

// Post sends one JSON-RPC message to endpoint the way an MCP client does
// over streamable HTTP, with extra headers given as name, value pairs, and
// returns the response with its body read.
func Post(t testing.TB, endpoint, message string, headers ...string) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, endpoint, strings.NewReader(message))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("POST %s: %v", endpoint, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("read the answer of POST %s: %v", endpoint, err)
	}
	return resp, body
}

// RequireUnauthorized posts message without a token and fails the test
// unless the server answers 401 with a Bearer challenge.
func RequireUnauthorized(t testing.TB, endpoint, message string) {
	t.Helper()
	resp, body := Post(t, endpoint, message)
	if resp.StatusCode != http.StatusUnauthorized || !strings.HasPrefix(resp.Header.Get("WWW-Authenticate"), "Bearer ") {
		t.Errorf("unauthenticated %s: HTTP %d (WWW-Authenticate %q), want 401 with a Bearer challenge; body: %s",
			message, resp.StatusCode, resp.Header.Get("WWW-Authenticate"), body)
	}
}
