// Package lb runs a real HAProxy (Debian's haproxy binary) in front of
// server replicas for end-to-end tests, and speaks MCP through it as a
// 2026-07-28 client (no session) or a 2025-11-25 one.
package lb

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/mcpfleet/mcpfleet/shared/syncbuf"
)

// ConfigBlock returns the haproxy code block that follows marker in the
// Markdown file path (a README), so that a test runs exactly what the
// documentation gives operators.
func ConfigBlock(t testing.TB, path, marker string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	i := strings.Index(s, marker)
	if i < 0 {
		t.Fatalf("%s has no %q", path, marker)
	}
	s = s[i:]
	start := strings.Index(s, "```haproxy\n")
	if start < 0 {
		t.Fatalf("%s: no ```haproxy block after %q", path, marker)
	}
	s = s[start+len("```haproxy\n"):]
	end := strings.Index(s, "```")
	if end < 0 {
		t.Fatalf("%s: the haproxy block is not closed", path)
	}
	return s[:end]
}

var (
	bindLine   = regexp.MustCompile(`(?m)^(\s*bind\s+)\S+`)
	serverLine = regexp.MustCompile(`(?m)^(\s*server\s+\S+\s+)\S+`)
)

// Address replaces the bind address of cfg with bind and the address of
// its n-th server line with servers[n]; it fails when the counts differ.
// Nothing else of cfg changes.
func Address(t testing.TB, cfg, bind string, servers []string) string {
	t.Helper()
	if n := len(bindLine.FindAllString(cfg, -1)); n != 1 {
		t.Fatalf("the configuration has %d bind lines, want 1", n)
	}
	cfg = bindLine.ReplaceAllString(cfg, "${1}"+bind)
	if n := len(serverLine.FindAllString(cfg, -1)); n != len(servers) {
		t.Fatalf("the configuration has %d server lines, want %d", n, len(servers))
	}
	i := 0
	return serverLine.ReplaceAllStringFunc(cfg, func(m string) string {
		sub := serverLine.FindStringSubmatch(m)
		i++
		return sub[1] + servers[i-1]
	})
}

// HAProxy is a running haproxy.
type HAProxy struct {
	URL  string // http://127.0.0.1:port
	Dir  string
	cmd  *exec.Cmd
	done chan struct{}
	log  *syncbuf.Buffer
}

// Log is what haproxy printed (server state changes, alerts).
func (h *HAProxy) Log() string { return h.log.String() }

// Start runs haproxy with cfg, whose bind address must be "{{bind}}": a
// free loopback port is put there; when another process takes it before
// haproxy binds it, haproxy is started again on another. The test is
// skipped without haproxy, except with CI=true where it fails.
func Start(t testing.TB, cfg string) *HAProxy {
	t.Helper()
	bin, err := exec.LookPath("haproxy")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("haproxy is not installed (Debian's haproxy package); CI=true forbids skipping")
		}
		t.Skip("haproxy is not installed (Debian's haproxy package)")
	}
	dir := t.TempDir()
	for attempt := 0; ; attempt++ {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := l.Addr().String()
		l.Close()
		path := filepath.Join(dir, "haproxy.cfg")
		if err := os.WriteFile(path, []byte(strings.ReplaceAll(cfg, "{{bind}}", addr)), 0o644); err != nil {
			t.Fatal(err)
		}
		log := &syncbuf.Buffer{}
		cmd := exec.Command(bin, "-db", "-f", path)
		cmd.Dir = dir
		cmd.Stdout, cmd.Stderr = log, log
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		h := &HAProxy{URL: "http://" + addr, Dir: dir, cmd: cmd, done: make(chan struct{}), log: log}
		go func() { cmd.Wait(); close(h.done) }()
		deadline := time.Now().Add(30 * time.Second)
		for {
			c, err := net.DialTimeout("tcp", addr, time.Second)
			if err == nil {
				c.Close()
				t.Cleanup(h.Stop)
				return h
			}
			select {
			case <-h.done:
				if strings.Contains(log.String(), "ddress already in use") && attempt < 5 {
					goto again
				}
				t.Fatalf("haproxy exited at start:\n%s", log.String())
			case <-time.After(20 * time.Millisecond):
			}
			if time.Now().After(deadline) {
				h.Stop()
				t.Fatalf("haproxy did not listen within 30s:\n%s", log.String())
			}
		}
	again:
	}
}

// Stop ends haproxy and waits for it.
func (h *HAProxy) Stop() {
	select {
	case <-h.done:
		return
	default:
	}
	h.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-h.done:
	case <-time.After(10 * time.Second):
		h.cmd.Process.Kill()
		<-h.done
	}
}

// Answer is one JSON-RPC answer and the replica that gave it (the header
// ReplicaHeader, set by the test's HAProxy configuration).
type Answer struct {
	HTTP    int
	Replica string
	Session string // Mcp-Session-Id of the answer
	Result  json.RawMessage
	Error   *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	}
	Raw string
}

// ReplicaHeader names the replica that answered.
const ReplicaHeader = "X-Replica"

// Modern is the protocol version without sessions.
const Modern = "2026-07-28"

// Client speaks MCP over HTTP to url.
type Client struct {
	URL     string
	Token   string // bearer token, "" for none
	Session string // 2025-11-25 session; "" on 2026-07-28
	Version string
	HTTP    *http.Client
	// Capabilities are the client capabilities a 2026-07-28 request
	// declares in _meta ({} when nil).
	Capabilities map[string]any
	n            atomic.Int64
}

// NewModern is a 2026-07-28 client: every request carries the version.
func NewModern(url string) *Client {
	return &Client{URL: url, Version: Modern, HTTP: &http.Client{Timeout: 60 * time.Second}}
}

// Call sends one request and decodes its answer (a JSON body or the last
// event of a stream). A transport failure is returned as an error.
func (c *Client) Call(ctx context.Context, method string, params map[string]any) (Answer, error) {
	if params == nil {
		params = map[string]any{}
	}
	if c.Version == Modern {
		caps := c.Capabilities
		if caps == nil {
			caps = map[string]any{}
		}
		params["_meta"] = map[string]any{"io.modelcontextprotocol/protocolVersion": Modern, "io.modelcontextprotocol/clientCapabilities": caps}
	}
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": c.n.Add(1), "method": method, "params": params})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.URL, bytes.NewReader(body))
	if err != nil {
		return Answer{}, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if c.Token != "" {
		req.Header.Set("Authorization", "Bearer "+c.Token)
	}
	if c.Version != "" {
		req.Header.Set("MCP-Protocol-Version", c.Version)
	}
	if c.Version == Modern {
		req.Header.Set("Mcp-Method", method)
		if name, ok := params["name"].(string); ok && method == "tools/call" {
			req.Header.Set("Mcp-Name", name)
		}
		if id, ok := params["taskId"].(string); ok && strings.HasPrefix(method, "tasks/") {
			req.Header.Set("Mcp-Name", id) // the extension's routing header
		}
	}
	if c.Session != "" {
		req.Header.Set("Mcp-Session-Id", c.Session)
	}
	resp, err := c.HTTP.Do(req)
	if err != nil {
		return Answer{}, err
	}
	defer resp.Body.Close()
	a := Answer{HTTP: resp.StatusCode, Replica: resp.Header.Get(ReplicaHeader), Session: resp.Header.Get("Mcp-Session-Id")}
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return a, err
	}
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		var last string
		sc := bufio.NewScanner(bytes.NewReader(b))
		sc.Buffer(make([]byte, 1<<20), 16<<20)
		for sc.Scan() {
			if d, ok := strings.CutPrefix(sc.Text(), "data: "); ok && strings.Contains(d, `"id"`) {
				last = d
			}
		}
		b = []byte(last)
	}
	a.Raw = string(b)
	var m struct {
		Result json.RawMessage
		Error  *struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		}
	}
	if len(bytes.TrimSpace(b)) > 0 && json.Unmarshal(b, &m) == nil {
		a.Result, a.Error = m.Result, m.Error
	}
	return a, nil
}

// Initialize opens a 2025-11-25 session on the client (the id is kept in
// c.Session) and sends notifications/initialized.
func (c *Client) Initialize(ctx context.Context) (Answer, error) {
	c.Version = ""
	a, err := c.Call(ctx, "initialize", map[string]any{"protocolVersion": "2025-11-25", "capabilities": map[string]any{},
		"clientInfo": map[string]any{"name": "lb-test", "version": "1"}})
	if err != nil {
		return a, err
	}
	if a.Session == "" || a.Error != nil {
		return a, fmt.Errorf("initialize: HTTP %d %s", a.HTTP, a.Raw)
	}
	c.Session, c.Version = a.Session, "2025-11-25"
	body := `{"jsonrpc":"2.0","method":"notifications/initialized"}`
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, c.URL, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Session-Id", c.Session)
	req.Header.Set("MCP-Protocol-Version", c.Version)
	if c.Token != "" {
		req.Header.Set("Authorization", "Bearer "+c.Token)
	}
	resp, err := c.HTTP.Do(req)
	if err != nil {
		return a, err
	}
	resp.Body.Close()
	return a, nil
}
