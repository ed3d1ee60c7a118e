package apps_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/mcpfleet/mcpfleet/shared/apps"
	"github.com/mcpfleet/mcpfleet/shared/envconfig"
)

const poolHTML = "<!doctype html><html><body>pool</body></html>"

// build is a real mcp-go server with one read tool that owns a view, one
// app-only tool, one plain tool, the change-preview view, and a static
// resource of its own.
func build(t *testing.T, on bool) *server.MCPServer {
	t.Helper()
	s := server.NewMCPServer("proxymcp", "1.0.0", server.WithHooks(&server.Hooks{}), server.WithResourceCapabilities(false, false))
	v := apps.New("proxymcp", on,
		apps.View{Name: "backend-pool", Title: "Backend pool", Description: "servers per backend", HTML: poolHTML},
		apps.ChangePreview())
	v.Register(s)
	text := func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return mcp.NewToolResultText("ok"), nil
	}
	s.AddTool(mcp.NewTool("list_servers", v.Tool("backend-pool")...), text)
	s.AddTool(mcp.NewTool("pool_refresh", v.Tool("backend-pool", apps.App)...), text)
	s.AddTool(mcp.NewTool("set_server_state", v.Tool(apps.ChangePreviewView, apps.Model, apps.App)...), text)
	s.AddTool(mcp.NewTool("echo"), text)
	s.AddResource(mcp.NewResource("proxy-mcp://info", "info"), func(ctx context.Context, req mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
		return []mcp.ResourceContents{mcp.TextResourceContents{URI: "proxy-mcp://info", Text: "x"}}, nil
	})
	return s
}

type era struct {
	name string
	opts []client.ClientOption
}

var eras = []era{
	{"2026-07-28", nil},
	{"2025-11-25", []client.ClientOption{client.WithProtocolVersion(mcp.ProtocolVersion20251125), client.WithSession()}},
}

// connect opens a real in-process client; apps says whether it declares the
// extension.
func connect(t *testing.T, s *server.MCPServer, e era, withApps bool) (*client.Client, *mcp.InitializeResult) {
	t.Helper()
	c, err := client.NewInProcessClientWithOptions(s, e.opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	ctx := context.Background()
	if err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	req := mcp.InitializeRequest{}
	req.Params.ProtocolVersion = mcp.ProtocolVersion20251125
	req.Params.ClientInfo = mcp.Implementation{Name: "apps-test", Version: "1"}
	if withApps {
		req.Params.Capabilities.Extensions = map[string]any{apps.ExtensionID: map[string]any{"mimeTypes": []any{apps.MIMEType}}}
	}
	res, err := c.Initialize(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	return c, res
}

func toolsJSON(t *testing.T, c *client.Client) map[string]map[string]any {
	t.Helper()
	l, err := c.ListTools(context.Background(), mcp.ListToolsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(l.Tools)
	var raw []map[string]any
	if err := json.Unmarshal(b, &raw); err != nil {
		t.Fatal(err)
	}
	out := map[string]map[string]any{}
	for _, x := range raw {
		out[x["name"].(string)] = x
	}
	return out
}

func resourceURIs(t *testing.T, c *client.Client) []string {
	t.Helper()
	l, err := c.ListResources(context.Background(), mcp.ListResourcesRequest{})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, r := range l.Resources {
		out = append(out, r.URI)
	}
	return out
}

func jsonOf(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func TestViewsForAClientWithTheExtension(t *testing.T) {
	for _, e := range eras {
		t.Run(e.name, func(t *testing.T) {
			c, init := connect(t, build(t, true), e, true)
			if got := jsonOf(init.Capabilities.Extensions); got != `{"io.modelcontextprotocol/ui":{"mimeTypes":["text/html;profile=mcp-app"]}}` {
				t.Errorf("capabilities.extensions = %s", got)
			}

			tools := toolsJSON(t, c)
			if got := jsonOf(tools["list_servers"]["_meta"]); got != `{"ui":{"resourceUri":"ui://proxymcp/backend-pool"},"ui/resourceUri":"ui://proxymcp/backend-pool"}` {
				t.Errorf("list_servers _meta = %s", got)
			}
			if got := jsonOf(tools["pool_refresh"]["_meta"]); got != `{"ui":{"resourceUri":"ui://proxymcp/backend-pool","visibility":["app"]},"ui/resourceUri":"ui://proxymcp/backend-pool"}` {
				t.Errorf("pool_refresh _meta = %s", got)
			}
			if got := jsonOf(tools["set_server_state"]["_meta"]); got != `{"ui":{"resourceUri":"ui://proxymcp/change-preview","visibility":["model","app"]},"ui/resourceUri":"ui://proxymcp/change-preview"}` {
				t.Errorf("set_server_state _meta = %s", got)
			}
			if _, ok := tools["echo"]["_meta"]; ok {
				t.Errorf("echo has _meta: %v", tools["echo"])
			}

			l, err := c.ListResources(context.Background(), mcp.ListResourcesRequest{})
			if err != nil {
				t.Fatal(err)
			}
			byURI := map[string]mcp.Resource{}
			for _, r := range l.Resources {
				byURI[r.URI] = r
			}
			pool, ok := byURI["ui://proxymcp/backend-pool"]
			if !ok || pool.MIMEType != apps.MIMEType || pool.Title != "Backend pool" || pool.Name != "backend-pool" {
				t.Fatalf("resources/list: %s", jsonOf(l.Resources))
			}
			const wantMeta = `{"ui":{"csp":{"baseUriDomains":[],"connectDomains":[],"frameDomains":[],"resourceDomains":[]},"prefersBorder":true}}`
			if got := jsonOf(pool.Meta); got != wantMeta {
				t.Errorf("listed _meta = %s", got)
			}
			if _, ok := byURI["ui://proxymcp/change-preview"]; !ok || len(l.Resources) != 3 {
				t.Errorf("resources/list = %s", jsonOf(l.Resources))
			}

			for uri, want := range map[string]string{"ui://proxymcp/backend-pool": poolHTML, "ui://proxymcp/change-preview": "<!doctype html>"} {
				rr, err := c.ReadResource(context.Background(), mcp.ReadResourceRequest{Params: mcp.ReadResourceParams{URI: uri}})
				if err != nil {
					t.Fatal(err)
				}
				b, _ := json.Marshal(rr.Contents)
				var contents []map[string]any
				json.Unmarshal(b, &contents)
				if len(contents) != 1 || contents[0]["uri"] != uri || contents[0]["mimeType"] != apps.MIMEType ||
					!strings.HasPrefix(contents[0]["text"].(string), want) || jsonOf(contents[0]["_meta"]) != wantMeta {
					t.Errorf("resources/read %s = %.300s", uri, b)
				}
			}
		})
	}
}

// A client without the extension sees what it saw before views existed.
func TestClientWithoutTheExtensionSeesNoViews(t *testing.T) {
	for _, e := range eras {
		t.Run(e.name, func(t *testing.T) {
			on, _ := connect(t, build(t, true), e, false)
			off, _ := connect(t, build(t, false), e, false)
			offApps, offInit := connect(t, build(t, false), e, true)

			onTools, offTools := toolsJSON(t, on), toolsJSON(t, off)
			if _, ok := onTools["pool_refresh"]; ok {
				t.Errorf("an app-only tool is listed for a client without the extension")
			}
			for _, name := range []string{"list_servers", "set_server_state", "echo"} {
				if got, want := jsonOf(onTools[name]), jsonOf(offTools[name]); got != want {
					t.Errorf("%s:\n with views on %s\nwith views off %s", name, got, want)
				}
			}
			if got := jsonOf(resourceURIs(t, on)); got != `["proxy-mcp://info"]` {
				t.Errorf("resources/list = %s", got)
			}
			// The tool itself still answers: only its view is hidden.
			if r, err := on.CallTool(context.Background(), mcp.CallToolRequest{Params: mcp.CallToolParams{Name: "list_servers"}}); err != nil || r.IsError {
				t.Errorf("list_servers: %v %v", r, err)
			}

			// MCP_APPS=off: nothing at all, even for a client with the extension.
			if offInit.Capabilities.Extensions != nil {
				t.Errorf("off declares %v", offInit.Capabilities.Extensions)
			}
			if got := jsonOf(resourceURIs(t, offApps)); got != `["proxy-mcp://info"]` {
				t.Errorf("off: resources/list = %s", got)
			}
			for name, tool := range toolsJSON(t, offApps) {
				if _, ok := tool["_meta"]; ok {
					t.Errorf("off: %s has _meta %v", name, tool["_meta"])
				}
			}
			_, err := offApps.ReadResource(context.Background(), mcp.ReadResourceRequest{Params: mcp.ReadResourceParams{URI: "ui://proxymcp/backend-pool"}})
			if err == nil {
				t.Errorf("off: ui://proxymcp/backend-pool can be read")
			}
		})
	}
}

func TestEnabledReadsMCPApps(t *testing.T) {
	for _, tc := range []struct {
		value string
		on    bool
		bad   bool
	}{{"", true, false}, {"on", true, false}, {"off", false, false}, {"no", true, true}} {
		env := envconfig.New(func(k string) string {
			if k == "MCP_APPS" {
				return tc.value
			}
			return ""
		})
		on := apps.Enabled(env)
		err := env.Err()
		if (err != nil) != tc.bad || (!tc.bad && on != tc.on) {
			t.Errorf("MCP_APPS=%q: on=%v err=%v", tc.value, on, err)
		}
		if tc.bad && !strings.Contains(err.Error(), "MCP_APPS") {
			t.Errorf("MCP_APPS=%q: error %v does not name the variable", tc.value, err)
		}
	}
}

func TestDeclarationMistakesPanic(t *testing.T) {
	for name, f := range map[string]func(){
		"bad view name":   func() { apps.New("proxymcp", true, apps.View{Name: "Pool", HTML: poolHTML}) },
		"no HTML":         func() { apps.New("proxymcp", true, apps.View{Name: "pool"}) },
		"twice":           func() { apps.New("proxymcp", true, apps.ChangePreview(), apps.ChangePreview()) },
		"unknown view":    func() { apps.New("proxymcp", true).Tool("nope") },
		"bad visibility":  func() { apps.New("proxymcp", true, apps.ChangePreview()).Tool(apps.ChangePreviewView, "user") },
		"bad server name": func() { apps.New("proxy mcp", true) },
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: no panic", name)
				}
			}()
			f()
		}()
	}
	// Off: no option at all, even for an undeclared view.
	if opts := apps.New("proxymcp", false).Tool("anything"); opts != nil {
		t.Errorf("off: Tool = %v", opts)
	}
}

func TestExtensionsMergesOthers(t *testing.T) {
	v := apps.New("sqlmcp", true)
	got := jsonOf(v.Extensions(map[string]any{"io.modelcontextprotocol/tasks": map[string]any{}}))
	if got != `{"io.modelcontextprotocol/tasks":{},"io.modelcontextprotocol/ui":{"mimeTypes":["text/html;profile=mcp-app"]}}` {
		t.Errorf("Extensions = %s", got)
	}
}
