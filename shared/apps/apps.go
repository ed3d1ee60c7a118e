// Package apps serves a server's MCP Apps views (the io.modelcontextprotocol/ui
// extension, stable 2026-01-26): each view is a ui://<server>/<view> resource
// of mimeType text/html;profile=mcp-app, one self-contained HTML file built
// from views/ in the repository and embedded by its module; a tool that owns a
// view points to it with _meta.ui.resourceUri.
//
// Views are data-only clients of the same tools: everything a view does is a
// tools/call through the host, and so through the tool-call pipeline
// (validation, dry run, approval, audit). The HTML declares no external
// domain (_meta.ui.csp is empty), holds no credential and fetches nothing.
//
// Clients that did not declare the extension see exactly what they saw before
// views existed: tools without _meta.ui, no ui:// resource in resources/list,
// no app-only tool. MCP_APPS=off removes everything, for every client.
//
//	v := apps.New("proxymcp", apps.Enabled(env), apps.View{Name: "backend-pool", Title: "Backend pool", HTML: views.BackendPool}, apps.ChangePreview())
//	v.Register(s.MCPServer)                       // resources, capability, per-client filtering
//	toolcall.Tool{..., Options: v.Tool("backend-pool")}   // list_servers points to its view
package apps

import (
	"context"
	_ "embed"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/mcpfleet/mcpfleet/shared/envconfig"
)

const (
	// ExtensionID names the MCP Apps extension in capabilities.extensions.
	ExtensionID = "io.modelcontextprotocol/ui"
	// MIMEType is the mimeType of an HTML view.
	MIMEType = "text/html;profile=mcp-app"
	// legacyURIKey is the flat _meta key the official SDK's registerAppTool
	// still writes next to _meta.ui.resourceUri for hosts that read only it.
	legacyURIKey = "ui/resourceUri"
	// ChangePreviewView is the name of the shared change-preview view.
	ChangePreviewView = "change-preview"
)

// Var is MCP_APPS, for a server's --help table (serve.Program.Vars).
var Var = envconfig.Var{
	Name:    "MCP_APPS",
	Default: "on",
	Description: "MCP Apps views (io.modelcontextprotocol/ui): on registers the server's ui:// views for clients that " +
		"declare the extension; off registers none, declares nothing and leaves every tool exactly as without views",
}

// Enabled reads MCP_APPS (on or off; anything else is reported with the
// other bad variables).
func Enabled(env *envconfig.Reader) bool {
	return env.Enum(Var.Name, Var.Default, "on", "off") == "on"
}

// Visibility says who may call a tool that has a view: the model, the view
// (app), or both (the default when none is given).
type Visibility string

const (
	Model Visibility = "model"
	App   Visibility = "app"
)

// View is one HTML view of a server.
type View struct {
	// Name is the URI's last segment: ui://<server>/<Name>. Lower-case
	// letters, digits and '-'.
	Name        string
	Title       string
	Description string
	// HTML is the built, self-contained file (go:embed).
	HTML string
}

//go:embed change-preview.html
var changePreviewHTML string

// ChangePreview is the view every server attaches to its change tools: the
// dry-run preview (target, commands, current state, expected effect), the
// confirmation a client without elicitation gets, and the applied result. It
// has no approve action: approval stays with the client's elicitation or
// the confirmation flow.
func ChangePreview() View {
	return View{
		Name:        ChangePreviewView,
		Title:       "Change preview",
		Description: "A change's dry-run preview or outcome as a card: target, commands, current state and expected effect.",
		HTML:        changePreviewHTML,
	}
}

// Views is the set of views of one server.
type Views struct {
	server string
	on     bool
	views  []View
	uris   map[string]bool
}

// New declares the views of server (its MCP name, e.g. "proxymcp"). When on
// is false every method is a no-op and Tool returns no option. It panics on
// a malformed or duplicated view name or an empty HTML: a bug every test
// that builds the server finds.
func New(serverName string, on bool, views ...View) *Views {
	v := &Views{server: serverName, on: on, uris: map[string]bool{}}
	if !validName(serverName) {
		panic(fmt.Sprintf("apps.New: server name %q must be lower-case letters, digits and '-'", serverName))
	}
	for _, w := range views {
		if !validName(w.Name) {
			panic(fmt.Sprintf("apps.New(%s): view name %q must be lower-case letters, digits and '-'", serverName, w.Name))
		}
		if !strings.Contains(w.HTML, "<html") {
			panic(fmt.Sprintf("apps.New(%s): view %s has no HTML document (was the built file embedded?)", serverName, w.Name))
		}
		u := v.URI(w.Name)
		if v.uris[u] {
			panic(fmt.Sprintf("apps.New(%s): view %s declared twice", serverName, w.Name))
		}
		v.uris[u] = true
		v.views = append(v.views, w)
	}
	return v
}

func validName(s string) bool {
	if s == "" || len(s) > 64 {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-') {
			return false
		}
	}
	return true
}

// On reports whether views are served (MCP_APPS is not off).
func (v *Views) On() bool { return v.on }

// URI is ui://<server>/<view>.
func (v *Views) URI(view string) string { return "ui://" + v.server + "/" + view }

// Tool returns the tool options that point a tool to one of the views, with
// the visibility given (none: model and app, the extension's default). Put
// them in toolcall.Tool.Options. With views off it returns nil. It panics
// when the view was not declared.
func (v *Views) Tool(view string, visibility ...Visibility) []mcp.ToolOption {
	if !v.on {
		return nil
	}
	u := v.URI(view)
	if !v.uris[u] {
		panic(fmt.Sprintf("apps: tool points to %s, which is not one of the views declared with apps.New", u))
	}
	ui := map[string]any{"resourceUri": u}
	if len(visibility) > 0 {
		vis := make([]string, len(visibility))
		for i, x := range visibility {
			if x != Model && x != App {
				panic(fmt.Sprintf("apps: visibility %q is neither model nor app", x))
			}
			vis[i] = string(x)
		}
		ui["visibility"] = vis
	}
	return []mcp.ToolOption{func(t *mcp.Tool) {
		if t.Meta == nil {
			t.Meta = &mcp.Meta{}
		}
		if t.Meta.AdditionalFields == nil {
			t.Meta.AdditionalFields = map[string]any{}
		}
		t.Meta.AdditionalFields["ui"] = ui
		t.Meta.AdditionalFields[legacyURIKey] = u
	}}
}

// Capability is the extension's entry in capabilities.extensions.
func Capability() map[string]any {
	return map[string]any{"mimeTypes": []string{MIMEType}}
}

// Extensions merges the MCP Apps capability into other extensions the server
// declares (mcp-go's server.WithExtensions replaces the whole map, so a
// server with several extensions declares them in one call).
func (v *Views) Extensions(others map[string]any) map[string]any {
	out := maps.Clone(others)
	if out == nil {
		out = map[string]any{}
	}
	if v.on {
		out[ExtensionID] = Capability()
	}
	return out
}

// resourceMeta is the _meta.ui of every view: no external domain of any
// kind (the restrictive default), and a border from the host.
func resourceMeta() map[string]any {
	return map[string]any{"ui": map[string]any{
		"csp":           map[string]any{"connectDomains": []string{}, "resourceDomains": []string{}, "frameDomains": []string{}, "baseUriDomains": []string{}},
		"prefersBorder": true,
	}}
}

// Register adds the views to s: one resource per view, the extension's
// capability (server.WithExtensions with Extensions(nil): a server that
// declares another extension calls WithExtensions itself with
// Extensions(its own) after Register), a tool filter that hides the tools'
// _meta.ui and the app-only tools from clients without the extension, and
// a hook that leaves the ui:// resources out of their resources/list. With
// views off it does nothing.
func (v *Views) Register(s *server.MCPServer) {
	if !v.on {
		return
	}
	server.WithExtensions(v.Extensions(nil))(s)
	for _, w := range v.views {
		u := v.URI(w.Name)
		html := w.HTML
		res := mcp.NewResource(u, w.Name, mcp.WithResourceDescription(w.Description), mcp.WithMIMEType(MIMEType))
		if w.Title != "" {
			res.Title = w.Title
		}
		res.Meta = &mcp.Meta{AdditionalFields: resourceMeta()}
		s.AddResource(res, func(ctx context.Context, req mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
			return []mcp.ResourceContents{mcp.TextResourceContents{URI: u, MIMEType: MIMEType, Text: html, Meta: resourceMeta()}}, nil
		})
	}
	server.WithToolFilter(func(ctx context.Context, tools []mcp.Tool) []mcp.Tool {
		if ClientSupports(ctx) {
			return tools
		}
		return withoutUI(tools)
	})(s)
	if h := s.GetHooks(); h != nil {
		h.AddAfterListResources(func(ctx context.Context, _ any, _ *mcp.ListResourcesRequest, res *mcp.ListResourcesResult) {
			if res == nil || ClientSupports(ctx) {
				return
			}
			res.Resources = slices.DeleteFunc(slices.Clone(res.Resources), func(r mcp.Resource) bool { return v.uris[r.URI] })
		})
	}
}

// withoutUI is what a client without the extension sees: no app-only tool,
// and no tool with _meta.ui (the tool's other _meta stays).
func withoutUI(tools []mcp.Tool) []mcp.Tool {
	out := make([]mcp.Tool, 0, len(tools))
	for _, t := range tools {
		if t.Meta == nil {
			out = append(out, t)
			continue
		}
		ui, hasUI := t.Meta.AdditionalFields["ui"].(map[string]any)
		_, hasLegacy := t.Meta.AdditionalFields[legacyURIKey]
		if !hasUI && !hasLegacy {
			out = append(out, t)
			continue
		}
		if vis, ok := ui["visibility"].([]string); ok && !slices.Contains(vis, string(Model)) {
			continue // app-only: of no use without a view
		}
		fields := maps.Clone(t.Meta.AdditionalFields)
		delete(fields, "ui")
		delete(fields, legacyURIKey)
		if len(fields) == 0 && t.Meta.ProgressToken == nil {
			t.Meta = nil
		} else {
			t.Meta = &mcp.Meta{ProgressToken: t.Meta.ProgressToken, AdditionalFields: fields}
		}
		out = append(out, t)
	}
	return out
}

// ClientSupports reports whether the client behind ctx declared the MCP Apps
// extension with the HTML mimeType: in the request's own capabilities
// (2026-07-28) or in the session's initialize (earlier versions).
func ClientSupports(ctx context.Context) bool {
	var caps *mcp.ClientCapabilities
	if info := server.RequestProtocolInfoFromContext(ctx); info != nil && info.ClientCapabilities != nil {
		caps = info.ClientCapabilities
	} else if s, ok := server.ClientSessionFromContext(ctx).(server.SessionWithClientInfo); ok {
		c := s.GetClientCapabilities()
		caps = &c
	}
	if caps == nil {
		return false
	}
	ext, ok := caps.Extensions[ExtensionID]
	if !ok {
		return false
	}
	settings, _ := ext.(map[string]any)
	switch types := settings["mimeTypes"].(type) {
	case []any:
		for _, t := range types {
			if t == MIMEType {
				return true
			}
		}
	case []string:
		return slices.Contains(types, MIMEType)
	}
	return false
}
