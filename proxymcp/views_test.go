package main

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/mcpfleet/mcpfleet/proxymcp/internal/haproxytest"
	"github.com/mcpfleet/mcpfleet/proxymcp/internal/persist"
	"github.com/mcpfleet/mcpfleet/shared/e2e"
	"github.com/mcpfleet/mcpfleet/shared/e2e/appstest"
)

// viewsBranch is the HAProxy the browser test runs on (issue 29: the
// newest LTS branch).
const viewsBranch = "3.2"

// viewsFleet is a built proxymcp over streamable HTTP in front of two
// settled real HAProxy instances, lb1 and lb2, with MCP_APPROVAL=change
// (so the view's drain needs the person's approval) and one divergence
// made behind proxymcp's back: be_app/app2 weighs 30 on lb2 (50 on lb1).
func viewsFleet(t *testing.T) (*e2e.HTTPServer, [2]*haproxytest.HAProxy) {
	t.Helper()
	var hs [2]*haproxytest.HAProxy
	for i := range hs {
		hs[i] = haproxytest.Run(t, haproxytest.Options{Version: viewsBranch})
	}
	// Each test HAProxy starts its own web servers: lb2's be_app servers
	// are pointed at lb1's, so that the two instances serve the same pool
	// (as a real fleet does) and differ only where the test makes them.
	out, err := hs[0].Exec(t.Context(), "show servers state be_app")
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range persist.ParseServersState(out) {
		if _, err := hs[1].Exec(t.Context(), fmt.Sprintf("set server be_app/%s addr %s port %d", s.Server, s.Addr, s.Port)); err != nil {
			t.Fatal(err)
		}
	}
	for _, h := range hs {
		ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
		for _, w := range [][2]string{{"app3", "DOWN"}, {"app1", "UP"}, {"app2", "UP"}} {
			if err := h.WaitServerStatus(ctx, "be_app", w[0], w[1]); err != nil {
				cancel()
				t.Fatalf("HAProxy %s: be_app/%s never %s: %v", h.Version, w[0], w[1], err)
			}
		}
		cancel()
	}
	if _, err := hs[1].Exec(t.Context(), "set weight be_app/app2 30"); err != nil {
		t.Fatal(err)
	}
	bin := e2e.Build(t, ".")
	srv := e2e.StartHTTP(t, bin, []string{
		"PROXY_INSTANCES=lb1,lb2",
		"PROXY_LB1_RUNTIME_URL=unix://" + hs[0].Socket, "PROXY_LB1_STATS_URL=" + hs[0].StatsURL,
		"PROXY_LB2_RUNTIME_URL=unix://" + hs[1].Socket, "PROXY_LB2_STATS_URL=" + hs[1].StatsURL,
		"PROXY_STATS_USERNAME=" + haproxytest.StatsUser, "PROXY_STATS_PASSWORD=" + haproxytest.StatsPassword,
		"MCP_APPROVAL=change",
	})
	return srv, hs
}

// TestInspectorAppInfo: the MCP Inspector's CLI, advertising the MCP Apps
// extension, reports list_servers with ui://proxymcp/backend-pool and every
// change tool with ui://proxymcp/change-preview, each read back as
// text/html;profile=mcp-app, with a CSP that names no domain and no
// resource error; the read tools other than list_servers have no view.
func TestInspectorAppInfo(t *testing.T) {
	bin := e2e.Build(t, ".")
	srv := e2e.StartHTTP(t, bin, downEnv(t))
	got := appstest.AppInfo(t, srv.MCPURL())
	// The change tools, from the surface a client without the extension
	// sees: every tool that is not read-only.
	surface := e2e.List(t, e2e.Stdio(t, bin, downEnv(t)))
	want := map[string]string{"list_servers": "ui://proxymcp/backend-pool"}
	for _, tool := range surface.Tools {
		if tool.Annotations == nil || !tool.Annotations.ReadOnlyHint {
			want[tool.Name] = "ui://proxymcp/change-preview"
		}
	}
	if len(want) < 30 {
		t.Fatalf("only %d tools want a view: %v", len(want), want)
	}
	appstest.CheckViews(t, got, want, []string{"ui://proxymcp/backend-pool", "ui://proxymcp/change-preview"})
}

// TestViewsInBrowser runs views/test/proxymcp.test.mjs: the backend-pool
// and change-preview views in headless Debian chromium under the ext-apps
// SDK's AppBridge, their HTML read from this server's ui:// resources, fed
// this server's real results over a fleet of two real HAProxy 3.2, their
// tool calls answered by this server through a real MCP client whose
// elicitation handler is the person approving the drain (declined, then
// accepted); HAProxy's own `show servers state` says what happened. The
// fleet drain's and weight change's previews are read per instance.
// Screenshots and the first-render medians go to views/test/artifacts (or
// $VIEWS_ARTIFACTS).
func TestViewsInBrowser(t *testing.T) {
	browser := appstest.Browser(t)
	srv, hs := viewsFleet(t)
	browser.Run(t, "proxymcp.test.mjs", "PROXYMCP_URL="+srv.MCPURL(), "PROXYMCP_SOCKETS=lb1="+hs[0].Socket+",lb2="+hs[1].Socket)
}
