package serve_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	mcpclient "github.com/mark3labs/mcp-go/client"
	mcpgo "github.com/mark3labs/mcp-go/mcp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpfleet/mcpfleet/shared/e2e"
)

func echoserver(t *testing.T) string {
	t.Helper()
	return e2e.Build(t, "internal/echoserver")
}

func runBin(t *testing.T, bin string, env []string, stdin string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH")}, env...)
	cmd.Stdin = strings.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code = 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return out.String(), errb.String(), code
}

func TestFlags(t *testing.T) {
	bin := echoserver(t)
	tests := []struct {
		name       string
		args       []string
		wantCode   int
		wantStdout []string
		wantStderr []string
	}{
		{"version", []string{"--version"}, 0, []string{"echoserver (devel)\n"}, nil},
		{"help", []string{"--help"}, 0, []string{"Usage:", "MCP_TRANSPORT", "MCP_HOST", "MCP_PORT", "MCP_ALLOWED_HOSTS",
			"MCP_SHUTDOWN_TIMEOUT", "LOG_LEVEL", "LOG_FORMAT", "OAUTH_ENABLED", "JWT_SECRET", "ECHO_MARK_FILE", "127.0.0.1", "8080"}, nil},
		{"short help", []string{"-h"}, 0, []string{"Usage:"}, nil},
		{"unknown flag", []string{"--bogus"}, 2, nil, []string{"unknown flag --bogus", "Usage:"}},
		{"stray argument", []string{"serve-please"}, 2, nil, []string{`unexpected argument "serve-please"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, errOut, code := runBin(t, bin, nil, "", tt.args...)
			if code != tt.wantCode {
				t.Fatalf("exit %d, want %d; stderr: %s", code, tt.wantCode, errOut)
			}
			for _, w := range tt.wantStdout {
				if !strings.Contains(out, w) {
					t.Errorf("stdout lacks %q:\n%s", w, out)
				}
			}
			for _, w := range tt.wantStderr {
				if !strings.Contains(errOut, w) {
					t.Errorf("stderr lacks %q:\n%s", w, errOut)
				}
			}
		})
	}
}

func TestBadConfigurationNamesEveryVariable(t *testing.T) {
	bin := echoserver(t)
	_, errOut, code := runBin(t, bin, []string{
		"MCP_TRANSPORT=carrier-pigeon", "MCP_PORT=99999", "LOG_FORMAT=xml", "MCP_SHUTDOWN_TIMEOUT=soon", "LOG_LEVEL=loud",
	}, "")
	if code != 2 {
		t.Fatalf("exit %d, want 2", code)
	}
	for _, w := range []string{
		`MCP_TRANSPORT="carrier-pigeon"`, "stdio, http",
		`MCP_PORT="99999"`, "0 to 65535",
		`LOG_FORMAT="xml"`, `LOG_LEVEL="loud"`,
		`MCP_SHUTDOWN_TIMEOUT="soon"`, "10s",
		"5 problems",
	} {
		if !strings.Contains(errOut, w) {
			t.Errorf("stderr lacks %q:\n%s", w, errOut)
		}
	}
}

func TestStdio(t *testing.T) {
	bin := echoserver(t)
	cs := e2e.Stdio(t, bin, []string{"LOG_LEVEL=debug"})
	s := e2e.List(t, cs)
	if len(s.Tools) != 2 {
		t.Fatalf("got %d tools, want 2", len(s.Tools))
	}
	res := e2e.CallTool(t, cs, "echo", map[string]any{"text": "hello"})
	if got := e2e.Text(res); got != "hello" {
		t.Fatalf("echo returned %q", got)
	}
}

// A single request piped to stdio, without initialize, is answered before
// the process exits on end of input, even when the call takes a while.
func TestStdioPipedRequestIsAnsweredBeforeExit(t *testing.T) {
	bin := echoserver(t)
	req := `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"sleep","arguments":{"ms":300}}}` + "\n"
	out, errOut, code := runBin(t, bin, []string{"LOG_LEVEL=debug"}, req)
	if code != 0 {
		t.Fatalf("exit %d; stderr: %s", code, errOut)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 1 {
		t.Fatalf("stdout has %d lines, want exactly one response:\n%s", len(lines), out)
	}
	var resp struct {
		ID     int `json:"id"`
		Result struct {
			Content []struct{ Text string } `json:"content"`
		} `json:"result"`
	}
	if err := json.Unmarshal([]byte(lines[0]), &resp); err != nil {
		t.Fatalf("stdout is not one JSON-RPC message: %v\n%s", err, out)
	}
	if resp.ID != 7 || len(resp.Result.Content) != 1 || resp.Result.Content[0].Text != "slept 300ms" {
		t.Fatalf("unexpected response: %s", lines[0])
	}
	if !strings.Contains(errOut, "serving MCP over stdio") {
		t.Errorf("logs should go to stderr; stderr: %s", errOut)
	}
}

func TestHTTPTransports(t *testing.T) {
	bin := echoserver(t)
	srv := e2e.StartHTTP(t, bin, []string{"MCP_ALLOWED_HOSTS=mcp.example.com"})

	t.Run("healthz", func(t *testing.T) {
		resp, err := http.Get(srv.Base + "/healthz")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var h map[string]string
		if err := json.NewDecoder(resp.Body).Decode(&h); err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode != 200 || h["status"] != "ok" || h["name"] != "echoserver" || h["version"] != "(devel)" {
			t.Fatalf("healthz: %d %v", resp.StatusCode, h)
		}
	})
	t.Run("streamable", func(t *testing.T) {
		cs := e2e.Connect(t, srv.MCPURL(), nil)
		if got := e2e.Text(e2e.CallTool(t, cs, "echo", map[string]any{"text": "over /mcp"})); got != "over /mcp" {
			t.Fatalf("got %q", got)
		}
		if v := cs.InitializeResult().ProtocolVersion; v != e2e.Legacy {
			t.Errorf("negotiated %s, want %s", v, e2e.Legacy)
		}
	})
	t.Run("streamable modern", func(t *testing.T) {
		cs := e2e.Connect(t, srv.MCPURL(), nil, e2e.Protocol(e2e.Modern))
		if got := e2e.Text(e2e.CallTool(t, cs, "echo", map[string]any{"text": "modern"})); got != "modern" {
			t.Fatalf("got %q", got)
		}
		if v := cs.InitializeResult().ProtocolVersion; v != e2e.Modern {
			t.Errorf("negotiated %s, want %s", v, e2e.Modern)
		}
	})
	t.Run("sse", func(t *testing.T) {
		cs := e2e.ConnectSSE(t, srv.SSEURL())
		if got := e2e.Text(e2e.CallTool(t, cs, "echo", map[string]any{"text": "over /sse"})); got != "over /sse" {
			t.Fatalf("got %q", got)
		}
	})
	t.Run("mcp-go client modern protocol", func(t *testing.T) {
		c, err := mcpclient.NewStreamableHttpClient(srv.MCPURL())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := c.Start(ctx); err != nil {
			t.Fatal(err)
		}
		ir, err := c.Initialize(ctx, mcpgo.InitializeRequest{})
		if err != nil {
			t.Fatalf("discover/initialize: %v", err)
		}
		if v := ir.ProtocolVersion; v != "2026-07-28" {
			t.Errorf("mcp-go client negotiated %q, want 2026-07-28", v)
		}
		req := mcpgo.CallToolRequest{}
		req.Params.Name = "echo"
		req.Params.Arguments = map[string]any{"text": "modern"}
		res, err := c.CallTool(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		if tc, ok := res.Content[0].(mcpgo.TextContent); !ok || tc.Text != "modern" {
			t.Fatalf("got %#v", res.Content)
		}
	})
	t.Run("dns rebinding protection", func(t *testing.T) {
		for _, tc := range []struct {
			host, origin string
			want         int
		}{
			{"evil.example", "", http.StatusForbidden},
			{"", "http://evil.example", http.StatusForbidden},
			{"mcp.example.com", "", http.StatusBadRequest}, // allowed through to mcp-go, which wants a JSON body
			{"", "http://localhost:6274", http.StatusBadRequest},
		} {
			req, _ := http.NewRequest(http.MethodPost, srv.MCPURL(), strings.NewReader("not json"))
			if tc.host != "" {
				req.Host = tc.host
			}
			if tc.origin != "" {
				req.Header.Set("Origin", tc.origin)
			}
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != tc.want {
				t.Errorf("Host %q Origin %q: status %d, want %d", tc.host, tc.origin, resp.StatusCode, tc.want)
			}
		}
	})
}

func TestHTTPPortInUse(t *testing.T) {
	bin := echoserver(t)
	srv := e2e.StartHTTP(t, bin, nil)
	port := strings.TrimPrefix(srv.Base, "http://127.0.0.1:")
	_, errOut, code := runBin(t, bin, []string{"MCP_TRANSPORT=http", "MCP_PORT=" + port}, "")
	if code != 1 || !strings.Contains(errOut, "127.0.0.1:"+port) || !strings.Contains(errOut, "MCP_PORT") {
		t.Fatalf("exit %d, stderr: %s", code, errOut)
	}
}

func readMark(t *testing.T, path string) string {
	b, _ := os.ReadFile(path)
	return strings.TrimSpace(string(b))
}

// SIGTERM lets an in-flight call finish when it can within
// MCP_SHUTDOWN_TIMEOUT, cancels it (back-end work included) when it cannot,
// and exits 0 either way.
func TestGracefulShutdownHTTP(t *testing.T) {
	bin := echoserver(t)
	for _, tc := range []struct {
		name, timeout string
		sleepMS       int
		wantMark      string
		wantResult    bool
	}{
		{"finishes within deadline", "5s", 800, "finished", true},
		{"cancelled at deadline", "700ms", 20000, "cancelled", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mark := filepath.Join(t.TempDir(), "mark")
			srv := e2e.StartHTTP(t, bin, []string{"ECHO_MARK_FILE=" + mark, "MCP_SHUTDOWN_TIMEOUT=" + tc.timeout})
			cs := e2e.Connect(t, srv.MCPURL(), nil)
			type outcome struct {
				res *mcp.CallToolResult
				err error
			}
			done := make(chan outcome, 1)
			go func() {
				res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "sleep", Arguments: map[string]any{"ms": tc.sleepMS}})
				done <- outcome{res, err}
			}()
			time.Sleep(300 * time.Millisecond)
			start := time.Now()
			if err := srv.Stop(); err != nil {
				t.Fatalf("exit after SIGTERM: %v", err)
			}
			if elapsed := time.Since(start); elapsed > 6*time.Second {
				t.Errorf("shutdown took %s", elapsed)
			}
			o := <-done
			if tc.wantResult && (o.err != nil || o.res.IsError) {
				t.Errorf("in-flight call should have completed: %v %v", o.err, o.res)
			}
			if got := readMark(t, mark); got != tc.wantMark {
				t.Errorf("sleep ended as %q, want %q", got, tc.wantMark)
			}
		})
	}
}

func TestIdleServerExitsAtOnce(t *testing.T) {
	bin := echoserver(t)
	t.Run("http with an open session", func(t *testing.T) {
		srv := e2e.StartHTTP(t, bin, nil)
		e2e.Connect(t, srv.MCPURL(), nil) // keeps a standalone SSE stream open
		start := time.Now()
		if err := srv.Stop(); err != nil {
			t.Fatalf("exit: %v", err)
		}
		if d := time.Since(start); d > 2*time.Second {
			t.Errorf("idle HTTP server took %s to exit", d)
		}
	})
	t.Run("stdio", func(t *testing.T) {
		cmd := exec.Command(bin)
		stdin, _ := cmd.StdinPipe()
		defer stdin.Close()
		stdout, _ := cmd.StdoutPipe()
		var errb bytes.Buffer
		cmd.Stderr = &errb
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		// Wait for an answer rather than a fixed time: on a loaded machine
		// a SIGTERM sent before the handler is installed kills the process.
		io.WriteString(stdin, `{"jsonrpc":"2.0","id":1,"method":"ping"}`+"\n")
		if _, err := bufio.NewReader(stdout).ReadString('\n'); err != nil {
			t.Fatalf("no answer to ping: %v; stderr %s", err, errb.String())
		}
		start := time.Now()
		cmd.Process.Signal(syscall.SIGTERM)
		if err := cmd.Wait(); err != nil {
			t.Fatalf("exit: %v; stderr %s", err, errb.String())
		}
		if d := time.Since(start); d > 2*time.Second {
			t.Errorf("idle stdio server took %s to exit", d)
		}
	})
}

func TestGracefulShutdownStdio(t *testing.T) {
	bin := echoserver(t)
	mark := filepath.Join(t.TempDir(), "mark")
	cmd := exec.Command(bin)
	cmd.Env = []string{"ECHO_MARK_FILE=" + mark}
	stdin, _ := cmd.StdinPipe()
	defer stdin.Close()
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	io.WriteString(stdin, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`+"\n")
	r := bufio.NewReader(stdout)
	if _, err := r.ReadString('\n'); err != nil {
		t.Fatal(err)
	}
	io.WriteString(stdin, `{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n")
	io.WriteString(stdin, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"sleep","arguments":{"ms":700}}}`+"\n")
	time.Sleep(200 * time.Millisecond)
	cmd.Process.Signal(syscall.SIGTERM)
	line, err := r.ReadString('\n')
	if err != nil || !strings.Contains(line, "slept 700ms") {
		t.Fatalf("in-flight call was not answered: %q %v", line, err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("exit: %v", err)
	}
	if got := readMark(t, mark); got != "finished" {
		t.Errorf("sleep ended as %q", got)
	}
}

func TestOAuthGuardsEveryMCPEndpoint(t *testing.T) {
	bin := echoserver(t)
	srv := e2e.StartHTTP(t, bin, []string{"OAUTH_ENABLED=true", "OAUTH_PROVIDER=hmac",
		"JWT_SECRET=0123456789abcdef0123456789abcdef", "OIDC_AUDIENCE=echoserver"})
	for _, path := range []string{"/mcp", "/sse", "/message?sessionId=x"} {
		method := http.MethodPost
		if path == "/sse" {
			method = http.MethodGet
		}
		req, _ := http.NewRequest(method, srv.Base+path, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`))
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		challenge := resp.Header.Get("WWW-Authenticate")
		if resp.StatusCode != http.StatusUnauthorized || !strings.HasPrefix(challenge, "Bearer ") ||
			!strings.Contains(challenge, `resource_metadata="`+srv.Base+`/.well-known/oauth-protected-resource"`) {
			t.Errorf("%s %s: %d %q, want 401 with a Bearer challenge", method, path, resp.StatusCode, challenge)
		}
	}
	resp, err := http.Get(srv.Base + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("/healthz: %d, want 200 without a token", resp.StatusCode)
	}
}

func TestBadOAuthConfigurationExits2(t *testing.T) {
	bin := echoserver(t)
	_, errOut, code := runBin(t, bin, []string{"MCP_TRANSPORT=http", "OAUTH_ENABLED=true", "OAUTH_PROVIDER=hmac", "OAUTH_MODE=sideways"}, "")
	if code != 2 {
		t.Fatalf("exit %d, want 2; stderr: %s", code, errOut)
	}
	for _, w := range []string{"JWT_SECRET", "OAUTH_MODE"} {
		if !strings.Contains(errOut, w) {
			t.Errorf("stderr lacks %s:\n%s", w, errOut)
		}
	}
}

// A request the client cancels is not waited for when input ends: the
// process exits promptly and the call's work was cancelled.
func TestStdioCancelledRequestIsNotAwaited(t *testing.T) {
	bin := echoserver(t)
	mark := filepath.Join(t.TempDir(), "mark")
	in := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}
{"jsonrpc":"2.0","method":"notifications/initialized"}
{"jsonrpc":"2.0","id":"slow","method":"tools/call","params":{"name":"sleep","arguments":{"ms":20000}}}
`
	cmd := exec.Command(bin)
	started := filepath.Join(t.TempDir(), "started")
	cmd.Env = []string{"ECHO_MARK_FILE=" + mark, "ECHO_STARTED_FILE=" + started, "MCP_SHUTDOWN_TIMEOUT=15s"}
	stdin, _ := cmd.StdinPipe()
	var out bytes.Buffer
	cmd.Stdout = &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	io.WriteString(stdin, in)
	// Cancel once the call runs, not after a fixed time: on a loaded
	// machine a cancel that arrives before the call starts is lost.
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if _, err := os.Stat(started); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the sleep call never started")
		}
	}
	io.WriteString(stdin, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"slow","reason":"user"}}`+"\n")
	stdin.Close()
	start := time.Now()
	if err := cmd.Wait(); err != nil {
		t.Fatalf("exit: %v", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("exit took %s after input ended; the cancelled request was awaited", d)
	}
	if got := readMark(t, mark); got != "cancelled" {
		t.Errorf("sleep ended as %q, want cancelled", got)
	}
}

// The quick methods are answered on the goroutine that reads stdin (see
// stdioGate): each must still be answered exactly as mcp-go answers it, with
// its own id, while a slow call holds a goroutine of its own, and the slow
// call's answer must still come.
func TestStdioQuickMethodsAnsweredWhileACallRuns(t *testing.T) {
	bin := echoserver(t)
	cmd := exec.Command(bin)
	started := filepath.Join(t.TempDir(), "started")
	cmd.Env = []string{"ECHO_STARTED_FILE=" + started}
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Wait()
	defer stdin.Close()
	r := bufio.NewReader(stdout)
	read := func() map[string]any {
		t.Helper()
		line, err := r.ReadString('\n')
		if err != nil {
			t.Fatalf("read an answer: %v", err)
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("answer %q: %v", line, err)
		}
		return m
	}
	io.WriteString(stdin, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`+"\n")
	read()
	io.WriteString(stdin, `{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n")
	io.WriteString(stdin, `{"jsonrpc":"2.0","id":"slow","method":"tools/call","params":{"name":"sleep","arguments":{"ms":1500}}}`+"\n")
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if _, err := os.Stat(started); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the sleep call never started")
		}
	}
	tests := []struct {
		line   string
		id     any
		result string // a key the result must hold; "" for an empty result
		code   float64
	}{
		{`{"jsonrpc":"2.0","id":10,"method":"ping"}`, 10.0, "", 0},
		{`  {"id":"p-11" , "method":"ping","jsonrpc":"2.0","params":{}}  `, "p-11", "", 0},
		{`{"jsonrpc":"2.0","id":12,"method":"tools/list"}`, 12.0, "tools", 0},
		// echoserver has no prompts or resources: mcp-go's "not supported".
		{`{"jsonrpc":"2.0","id":13,"method":"prompts/list","params":{"cursor":null}}`, 13.0, "", -32601},
		{`{"jsonrpc":"2.0","id":14,"method":"resources/list"}`, 14.0, "", -32601},
		{`{"jsonrpc":"2.0","id":15,"method":"resources/templates/list"}`, 15.0, "", -32601},
		// What mcp-go refuses, the quick path refuses the same way.
		{`{"jsonrpc":"1.0","id":16,"method":"ping"}`, 16.0, "", -32600},
		{`{"jsonrpc":"2.0","id":17,"method":"tools/list","params":{"cursor":"not-a-cursor"}}`, 17.0, "", -32602},
	}
	for _, tt := range tests {
		io.WriteString(stdin, tt.line+"\n")
		m := read()
		if m["id"] != tt.id {
			t.Fatalf("%s: answered %v before the slow call finished, want the answer to id %v", tt.line, m, tt.id)
		}
		if tt.code != 0 {
			e, _ := m["error"].(map[string]any)
			if e == nil || e["code"] != tt.code {
				t.Errorf("%s: %v, want error %v", tt.line, m, tt.code)
			}
			continue
		}
		res, ok := m["result"].(map[string]any)
		if !ok {
			t.Errorf("%s: %v, want a result", tt.line, m)
			continue
		}
		if tt.result != "" && res[tt.result] == nil {
			t.Errorf("%s: result %v lacks %q", tt.line, res, tt.result)
		}
	}
	if m := read(); m["id"] != "slow" {
		t.Fatalf("then %v, want the slow call's answer", m)
	}
}
