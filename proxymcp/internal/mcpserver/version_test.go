package mcpserver

import (
	"bufio"
	"io"
	"net"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/server"

	"github.com/mcpfleet/mcpfleet/proxymcp/internal/haproxy"
	"github.com/mcpfleet/mcpfleet/proxymcp/internal/haproxytest"
	"github.com/mcpfleet/mcpfleet/proxymcp/internal/runtimeapi"
)

// versionRelay is a small fake, for what the installed HAProxy cannot
// show (another release): a Unix socket in front of HAProxy's that answers
// "show version" with version and "help" as an unknown command (so the
// version alone decides, as with a socket level that hides commands) and
// relays every other command to HAProxy. It speaks the one-command-per-
// connection mode only, so the client must have MaxConns 0.
func versionRelay(t *testing.T, target, version string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "version.sock")
	l, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				line, err := bufio.NewReader(c).ReadString('\n')
				if err != nil {
					return
				}
				switch cmd := strings.TrimSuffix(strings.TrimPrefix(line, "set severity-output number;"), "\n"); cmd {
				case "show version":
					_, _ = io.WriteString(c, "\n"+version+"\n\n")
				case "help":
					_, _ = io.WriteString(c, "\n[3]: Unknown command: 'help'\n\n")
				default:
					s, err := net.Dial("unix", target)
					if err != nil {
						return
					}
					defer s.Close()
					if _, err := io.WriteString(s, line); err != nil {
						return
					}
					_, _ = io.Copy(c, s)
				}
			}()
		}
	}()
	return path
}

// TestVersionGating: tools refuse commands the detected version lacks,
// naming the version they need, and nothing is sent. The installed HAProxy
// is 2.6, so other releases are announced by versionRelay.
func TestVersionGating(t *testing.T) {
	h := haproxytest.Run(t, haproxytest.Options{})
	envFor := func(version string) *env {
		hp := haproxy.New(&runtimeapi.Client{Network: "unix", Address: versionRelay(t, h.Socket, version), Timeout: 5 * time.Second}, nil)
		srv := server.NewMCPServer("proxymcp-test", "test")
		New(one(hp), Options{}).Register(noApproval(srv))
		return &env{h: h, srv: srv}
	}
	old := envFor("2.4.22")
	old.fail(t, "del_server", map[string]any{"backend": "be_app", "server": "app3"}, `"del server" needs HAProxy 2.5 or newer`, "2.4.22", "Upgrade HAProxy")
	if serverStatus(t, h, "be_app", "app3") == "" {
		t.Fatal("the server was deleted")
	}
	vi := old.call(t, "version_info", nil)
	for _, c := range list(t, vi, "commands") {
		if c["command"] == "del server" && c["supported"] != false {
			t.Errorf("del server on 2.4: %v", c)
		}
		if c["command"] == "add server" && c["supported"] != true {
			t.Errorf("add server on 2.4 (experimental-mode): %v", c)
		}
	}

	// A version claiming echo: the real 2.6 then answers "Unknown command",
	// which must be an error, never a success.
	newer := envFor("3.1.0")
	newer.fail(t, "echo", map[string]any{"text": "hi"}, "does not know", "Unknown command", "version_info")
	current := envFor(h.Version)
	if out := current.call(t, "echo", map[string]any{"text": "hi"}); out["answered_by"] != "proxymcp" {
		t.Errorf("echo on %s = %v", h.Version, out)
	}
}
