package mcpserver

import (
	"testing"

	"github.com/mark3labs/mcp-go/server"

	"github.com/mcpfleet/mcpfleet/proxymcp/internal/haproxy"
	"github.com/mcpfleet/mcpfleet/proxymcp/internal/haproxytest"
)

// TestVersionGating: tools refuse commands the detected version lacks,
// naming the version they need, and nothing is sent. The installed HAProxy
// is 2.6, so other releases are assumed rather than detected.
func TestVersionGating(t *testing.T) {
	h := haproxytest.Run(t, haproxytest.Options{})
	envFor := func(version string) *env {
		hp := haproxy.New(h.Runtime("unix"), nil)
		if err := hp.AssumeVersion(version); err != nil {
			t.Fatal(err)
		}
		srv := server.NewMCPServer("proxymcp-test", "test")
		Register(noApproval(srv), one(hp), Options{})
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
