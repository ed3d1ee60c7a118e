// Package appstest is what the servers' MCP Apps (io.modelcontextprotocol/ui)
// tests share: a go-sdk client that declares the extension (Stdio), the MCP
// Inspector CLI's --app-info check of every tool's view (AppInfo), and the
// run of a server's browser test, views/test/<server>.test.mjs, in headless
// Debian chromium against a running server (Browser, then Run).
//
// With CI=true a missing node, chromium or npm package fails the test,
// never skips it; without it they skip with what to install
// (scripts/install/views.sh, scripts/install/inspector.sh).
package appstest

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpfleet/mcpfleet/shared/e2e"
)

// Extension and MIMEType are the MCP Apps extension a client declares and
// the mimeType of its views.
const (
	Extension = "io.modelcontextprotocol/ui"
	MIMEType  = "text/html;profile=mcp-app"
)

// Stdio spawns bin with env (added to the test's environment) and connects
// over stdio as a client that declares the MCP Apps extension with the HTML
// view mimeType. The session is closed when the test ends.
func Stdio(t testing.TB, bin string, env []string) *mcp.ClientSession {
	t.Helper()
	caps := &mcp.ClientCapabilities{}
	caps.AddExtension(Extension, map[string]any{"mimeTypes": []any{MIMEType}})
	c := mcp.NewClient(&mcp.Implementation{Name: "mcpfleet-apps-e2e", Version: "test"}, &mcp.ClientOptions{Capabilities: caps})
	cmd := exec.Command(bin)
	cmd.Env = append(os.Environ(), env...)
	// The SDK keeps using the connect context for the session's streams.
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	cs, err := c.Connect(ctx, &mcp.CommandTransport{Command: cmd}, &mcp.ClientSessionOptions{ProtocolVersion: e2e.Legacy})
	if err != nil {
		t.Fatalf("connect over stdio to %s as an MCP Apps client: %v", bin, err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// Need fails the test (CI=true) or skips it, saying what is missing and
// what installs it.
func Need(t testing.TB, what string) {
	t.Helper()
	if os.Getenv("CI") == "true" {
		t.Fatalf("%s; run scripts/install/views.sh and scripts/install/inspector.sh", what)
	}
	t.Skipf("%s (scripts/install/views.sh and scripts/install/inspector.sh install it)", what)
}

// Root is the repository's root: the first directory above the test's
// working directory that holds go.work.
func Root(t testing.TB) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.work")); err == nil {
			return dir
		}
		up := filepath.Dir(dir)
		if up == dir {
			t.Fatal("appstest: no go.work above the test's directory: run the test inside the mcpfleet repository")
		}
		dir = up
	}
}

// install runs scripts/install/<script> and returns what it prints (a path).
func install(t testing.TB, script string) string {
	t.Helper()
	cmd := exec.Command("bash", filepath.Join(Root(t), "scripts", "install", script))
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		Need(t, "scripts/install/"+script+" failed: "+err.Error())
	}
	return strings.TrimSpace(string(out))
}

func node(t testing.TB) string {
	t.Helper()
	n, err := exec.LookPath("node")
	if err != nil {
		Need(t, "node is not installed")
	}
	return n
}

// AppInfo runs the MCP Inspector's CLI, advertising the MCP Apps extension,
// on tools/list of the server at url (streamable HTTP). It fails the test
// for every tool whose view is not served as text/html;profile=mcp-app,
// has a resource error, or whose CSP names a domain, and returns the
// tools that have a view, each with its ui:// resource.
func AppInfo(t testing.TB, url string) map[string]string {
	t.Helper()
	n := node(t)
	cli := install(t, "inspector.sh")
	cmd := exec.Command(n, cli, "--advertise-apps", "--app-info", "--method", "tools/list", "--transport", "http", "--server-url", url)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("inspector --app-info: %v\n%s\n%s", err, out, stderr.String())
	}
	type appInfo struct {
		HasApp           bool                `json:"hasApp"`
		ToolName         string              `json:"toolName"`
		ResourceURI      string              `json:"resourceUri"`
		ResourceMimeType string              `json:"resourceMimeType"`
		ResourceError    string              `json:"resourceError"`
		CSP              map[string][]string `json:"csp"`
	}
	got := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var a appInfo
		if err := json.Unmarshal(sc.Bytes(), &a); err != nil {
			t.Fatalf("inspector line %q: %v", sc.Text(), err)
		}
		if !a.HasApp {
			continue
		}
		got[a.ToolName] = a.ResourceURI
		if a.ResourceError != "" || a.ResourceMimeType != MIMEType {
			t.Errorf("%s → %s: mimeType %q, resource error %q", a.ToolName, a.ResourceURI, a.ResourceMimeType, a.ResourceError)
		}
		for _, k := range []string{"connectDomains", "resourceDomains", "frameDomains", "baseUriDomains"} {
			if d, ok := a.CSP[k]; !ok || len(d) != 0 {
				t.Errorf("%s → %s: csp.%s = %v, want [] (no external domain)", a.ToolName, a.ResourceURI, k, d)
			}
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatalf("inspector output: %v", err)
	}
	return got
}

// CheckViews fails the test unless got (AppInfo's answer) is exactly want:
// every tool of want with its view, no other tool with one, and the views
// used are exactly views.
func CheckViews(t testing.TB, got, want map[string]string, views []string) {
	t.Helper()
	for tool, uri := range want {
		if got[tool] != uri {
			t.Errorf("inspector: %s has view %q, want %s", tool, got[tool], uri)
		}
	}
	used := map[string]bool{}
	for tool, uri := range got {
		used[uri] = true
		if want[tool] == "" {
			t.Errorf("inspector: %s has a view it should not (%s)", tool, uri)
		}
	}
	var u []string
	for v := range used {
		u = append(u, v)
	}
	slices.Sort(u)
	want2 := slices.Sorted(slices.Values(views))
	if !slices.Equal(u, want2) {
		t.Errorf("inspector: views %v, want %v", u, want2)
	}
}

// Runner runs a browser test of views/test once what it needs is there.
type Runner struct {
	node, modules, views string
}

// Browser checks, before the test starts its back ends and server, that
// the browser test can run: not -short, node and Debian's chromium (or
// $CHROMIUM) there, the npm packages installed (scripts/install/views.sh).
// It fails (CI=true) or skips the test otherwise.
func Browser(t testing.TB) *Runner {
	t.Helper()
	if testing.Short() {
		t.Skip("-short: the browser test takes about 30 s")
	}
	n := node(t)
	if _, err := os.Stat(os.Getenv("CHROMIUM")); os.Getenv("CHROMIUM") == "" || err != nil {
		if _, err := exec.LookPath("chromium"); err != nil {
			Need(t, "chromium is not installed")
		}
	}
	return &Runner{node: n, modules: install(t, "views.sh"), views: filepath.Join(Root(t), "views")}
}

// Run runs node --test views/test/<file> with env (the server's URL, ...),
// VIEWS_NODE_MODULES and VIEWS_ARTIFACTS (default views/test/artifacts),
// logs its report and fails the test when a test failed or was skipped
// (the .mjs skips when env lacks the server's URL or chromium is missing:
// here neither may be).
func (r *Runner) Run(t testing.TB, file string, env ...string) {
	t.Helper()
	cmd := exec.Command(r.node, "--test", "--test-reporter=spec", filepath.Join("test", file))
	cmd.Dir = r.views
	cmd.Env = append(append(os.Environ(), "VIEWS_NODE_MODULES="+r.modules), env...)
	if os.Getenv("VIEWS_ARTIFACTS") == "" {
		cmd.Env = append(cmd.Env, "VIEWS_ARTIFACTS="+filepath.Join(r.views, "test", "artifacts"))
	}
	b, err := cmd.CombinedOutput()
	t.Logf("%s", b)
	if err != nil {
		t.Fatalf("views browser test %s: %v", file, err)
	}
	if !bytes.Contains(b, []byte("skipped 0")) {
		t.Fatalf("views browser test %s skipped tests", file)
	}
}
