package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mcpfleet/mcpfleet/shared/e2e"
)

// viewsServer is a built streammcp over streamable HTTP on the seeded
// in-process Kafka cluster, writes allowed (so the lag view offers the
// dry-run reset and the change tools exist), threshold 1000.
func viewsServer(t *testing.T) *e2e.HTTPServer {
	t.Helper()
	_, brokers := seededCluster(t)
	bin := e2e.Build(t, ".")
	return e2e.StartHTTP(t, bin, []string{"STREAM_BROKERS=" + brokers, "STREAM_ALLOW_WRITES=true", "STREAM_LAG_THRESHOLD=1000"})
}

// needTool fails (CI=true) or skips the test when a tool the views' tests
// need is missing.
func needTool(t *testing.T, what string) {
	t.Helper()
	if os.Getenv("CI") == "true" {
		t.Fatalf("%s; run scripts/install/views.sh and scripts/install/inspector.sh", what)
	}
	t.Skipf("%s (scripts/install/views.sh and scripts/install/inspector.sh install it)", what)
}

func install(t *testing.T, script string) string {
	t.Helper()
	cmd := exec.Command("bash", filepath.Join("..", "scripts", "install", script))
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		needTool(t, script+" failed: "+err.Error())
	}
	return strings.TrimSpace(string(out))
}

// TestInspectorAppInfo: the MCP Inspector's CLI, advertising the MCP Apps
// extension, reports every view-owning tool of streammcp with its ui://
// resource, read back as text/html;profile=mcp-app, with the CSP that names
// no domain, and no resource error.
func TestInspectorAppInfo(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		needTool(t, "node is not installed")
	}
	cli := install(t, "inspector.sh")
	srv := viewsServer(t)
	cmd := exec.Command(node, cli, "--advertise-apps", "--app-info", "--method", "tools/list", "--transport", "http", "--server-url", srv.MCPURL())
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
	want := map[string]string{
		"get_consumer_lag": "ui://streammcp/consumer-lag", "get_cluster_health": "ui://streammcp/cluster-health",
	}
	for _, tool := range []string{"produce_message", "create_topic", "reset_consumer_group_offsets", "delete_consumer_group_offsets",
		"delete_consumer_group", "delete_records", "create_partitions", "alter_topic_config", "delete_topic"} {
		want[tool] = "ui://streammcp/change-preview"
	}
	got := map[string]string{}
	views := map[string]bool{}
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
		views[a.ResourceURI] = true
		if a.ResourceError != "" || a.ResourceMimeType != "text/html;profile=mcp-app" {
			t.Errorf("%s → %s: mimeType %q, resource error %q", a.ToolName, a.ResourceURI, a.ResourceMimeType, a.ResourceError)
		}
		for _, k := range []string{"connectDomains", "resourceDomains", "frameDomains", "baseUriDomains"} {
			if d, ok := a.CSP[k]; !ok || len(d) != 0 {
				t.Errorf("%s → %s: csp.%s = %v, want [] (no external domain)", a.ToolName, a.ResourceURI, k, d)
			}
		}
	}
	for tool, uri := range want {
		if got[tool] != uri {
			t.Errorf("inspector: %s has view %q, want %s", tool, got[tool], uri)
		}
	}
	for tool := range got {
		if want[tool] == "" {
			t.Errorf("inspector: %s has a view it should not (%s)", tool, got[tool])
		}
	}
	if u := slices.Sorted(func(yield func(string) bool) {
		for v := range views {
			if !yield(v) {
				return
			}
		}
	}); !slices.Equal(u, []string{"ui://streammcp/change-preview", "ui://streammcp/cluster-health", "ui://streammcp/consumer-lag"}) {
		t.Errorf("inspector: views %v", u)
	}
}

// TestViewsInBrowser runs views/test/streammcp.test.mjs: the consumer-lag,
// cluster-health and change-preview views in headless Debian chromium under
// the ext-apps SDK's AppBridge, their HTML read from this server's ui://
// resources, fed this server's real results, their tool calls answered by
// this server through a real MCP client. Screenshots and the first-render
// medians go to views/test/artifacts (or $VIEWS_ARTIFACTS).
func TestViewsInBrowser(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: the browser test takes about 30 s")
	}
	node, err := exec.LookPath("node")
	if err != nil {
		needTool(t, "node is not installed")
	}
	if _, err := os.Stat(os.Getenv("CHROMIUM")); os.Getenv("CHROMIUM") == "" || err != nil {
		if _, err := exec.LookPath("chromium"); err != nil {
			needTool(t, "chromium is not installed")
		}
	}
	modules := install(t, "views.sh")
	srv := viewsServer(t)
	dir, err := filepath.Abs(filepath.Join("..", "views"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(node, "--test", "--test-reporter=spec", filepath.Join("test", "streammcp.test.mjs"))
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "VIEWS_NODE_MODULES="+modules, "STREAMMCP_URL="+srv.MCPURL())
	if os.Getenv("VIEWS_ARTIFACTS") == "" {
		cmd.Env = append(cmd.Env, "VIEWS_ARTIFACTS="+filepath.Join(dir, "test", "artifacts"))
	}
	b, err := cmd.CombinedOutput()
	t.Logf("%s", b)
	if err != nil {
		t.Fatalf("streammcp views browser test: %v", err)
	}
	// node --test skips every test when STREAMMCP_URL or chromium is
	// missing; here neither is, so a skip is a failure.
	if !bytes.Contains(b, []byte("skipped 0")) {
		t.Fatalf("streammcp views browser test skipped tests")
	}
}
