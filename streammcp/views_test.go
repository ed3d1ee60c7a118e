package main

import (
	"testing"

	"github.com/mcpfleet/mcpfleet/shared/e2e"
	"github.com/mcpfleet/mcpfleet/shared/e2e/appstest"
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

// TestInspectorAppInfo: the MCP Inspector's CLI, advertising the MCP Apps
// extension, reports every view-owning tool of streammcp with its ui://
// resource, read back as text/html;profile=mcp-app, with the CSP that names
// no domain, and no resource error.
func TestInspectorAppInfo(t *testing.T) {
	got := appstest.AppInfo(t, viewsServer(t).MCPURL())
	want := map[string]string{
		"get_consumer_lag": "ui://streammcp/consumer-lag", "get_cluster_health": "ui://streammcp/cluster-health",
	}
	for _, tool := range []string{"produce_message", "create_topic", "reset_consumer_group_offsets", "delete_consumer_group_offsets",
		"delete_consumer_group", "delete_records", "create_partitions", "alter_topic_config", "delete_topic"} {
		want[tool] = "ui://streammcp/change-preview"
	}
	appstest.CheckViews(t, got, want, []string{"ui://streammcp/change-preview", "ui://streammcp/cluster-health", "ui://streammcp/consumer-lag"})
}

// TestViewsInBrowser runs views/test/streammcp.test.mjs: the consumer-lag,
// cluster-health and change-preview views in headless Debian chromium under
// the ext-apps SDK's AppBridge, their HTML read from this server's ui://
// resources, fed this server's real results, their tool calls answered by
// this server through a real MCP client. Screenshots and the first-render
// medians go to views/test/artifacts (or $VIEWS_ARTIFACTS).
func TestViewsInBrowser(t *testing.T) {
	browser := appstest.Browser(t)
	srv := viewsServer(t)
	browser.Run(t, "streammcp.test.mjs", "STREAMMCP_URL="+srv.MCPURL())
}
