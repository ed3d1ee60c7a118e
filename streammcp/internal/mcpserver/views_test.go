package mcpserver_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/mcpfleet/mcpfleet/shared/apps"
	"github.com/mcpfleet/mcpfleet/streammcp/internal/mcpserver"
)

const viewHTML = "<!doctype html><html><body>view</body></html>"

// viewsEnv is a server with the views on and writes allowed, on the seeded
// cluster.
func viewsEnv(t *testing.T) *server.MCPServer {
	t.Helper()
	kc := cluster(t)
	v := apps.New("streammcp", true,
		apps.View{Name: mcpserver.ViewConsumerLag, HTML: viewHTML},
		apps.View{Name: mcpserver.ViewClusterHealth, HTML: viewHTML},
		apps.ChangePreview())
	e := newEnv(t, kc.Addrs(), mcpserver.Options{AllowWrites: true, Views: v})
	v.Register(e.s)
	return e.s
}

// connectApps initializes a client that declares the MCP Apps extension
// (or not).
func connectApps(t *testing.T, s *server.MCPServer, withApps bool) *client.Client {
	t.Helper()
	c, err := client.NewInProcessClient(s)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	req := mcp.InitializeRequest{}
	req.Params.ProtocolVersion = mcp.ProtocolVersion20251125
	req.Params.ClientInfo = mcp.Implementation{Name: "test", Version: "1"}
	if withApps {
		req.Params.Capabilities.Extensions = map[string]any{apps.ExtensionID: map[string]any{"mimeTypes": []any{apps.MIMEType}}}
	}
	if _, err := c.Initialize(ctx, req); err != nil {
		t.Fatal(err)
	}
	return c
}

func viewCall(t *testing.T, c *client.Client, name string, args map[string]any) *mcp.CallToolResult {
	t.Helper()
	req := mcp.CallToolRequest{}
	req.Params.Name = name
	req.Params.Arguments = args
	res, err := c.CallTool(context.Background(), req)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return res
}

func TestViewToolsOnlyForAppsClients(t *testing.T) {
	s := viewsEnv(t)
	plain := connectApps(t, s, false)
	l, err := plain.ListTools(context.Background(), mcp.ListToolsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tool := range l.Tools {
		if tool.Name == "get_consumer_lag" || tool.Name == "get_cluster_health" {
			t.Errorf("a client without the extension lists %s", tool.Name)
		}
		if tool.Meta != nil && tool.Meta.AdditionalFields["ui"] != nil {
			t.Errorf("a client without the extension sees _meta.ui on %s", tool.Name)
		}
	}
	// Calling one anyway gets the "tool not found" it got before views.
	for _, tool := range []string{"get_consumer_lag", "get_cluster_health"} {
		req := mcp.CallToolRequest{}
		req.Params.Name = tool
		req.Params.Arguments = map[string]any{}
		if _, err := plain.CallTool(context.Background(), req); err == nil || !strings.Contains(err.Error(), "not found") {
			t.Errorf("%s without the extension: %v", tool, err)
		}
	}
}

func TestViewToolResults(t *testing.T) {
	c := connectApps(t, viewsEnv(t), true)
	res := viewCall(t, c, "get_consumer_lag", map[string]any{})
	if res.IsError {
		t.Fatal(text(res))
	}
	var lag struct {
		Cluster      string `json:"cluster"`
		ResetTool    string `json:"reset_tool"`
		LagThreshold int64  `json:"lag_threshold"`
		GroupSummary []struct {
			GroupID  string `json:"group_id"`
			TotalLag *int64 `json:"total_lag"`
		} `json:"group_summary"`
	}
	b, _ := json.Marshal(res.StructuredContent)
	if err := json.Unmarshal(b, &lag); err != nil {
		t.Fatal(err)
	}
	if lag.Cluster != "default" || lag.ResetTool != "reset_consumer_group_offsets" || lag.LagThreshold != 1000 || len(lag.GroupSummary) == 0 {
		t.Errorf("get_consumer_lag: %s", b)
	}
	if !json.Valid([]byte(text(res))) {
		t.Errorf("get_consumer_lag's text is not the report's JSON: %s", text(res))
	}
	res = viewCall(t, c, "get_consumer_lag", map[string]any{"threshold": 10000})
	if !strings.Contains(text(res), `"lag_threshold": 10000`) || !strings.Contains(text(res), `"groups_with_high_lag": 0`) {
		t.Errorf("threshold 10000: %s", text(res))
	}
	res = viewCall(t, c, "get_cluster_health", map[string]any{})
	var health struct {
		HealthStatus string `json:"health_status"`
		Clusters     []struct {
			Cluster     string          `json:"cluster"`
			HealthCheck json.RawMessage `json:"health_check"`
			URP         json.RawMessage `json:"under_replicated_partitions"`
			Error       string          `json:"error"`
		} `json:"clusters"`
	}
	b, _ = json.Marshal(res.StructuredContent)
	if err := json.Unmarshal(b, &health); err != nil {
		t.Fatal(err)
	}
	if res.IsError || len(health.Clusters) != 1 || health.Clusters[0].Cluster != "default" || len(health.Clusters[0].HealthCheck) < 10 ||
		len(health.Clusters[0].URP) < 10 || health.Clusters[0].Error != "" || health.HealthStatus == "" {
		t.Errorf("get_cluster_health: %s", b)
	}
}

// Hostile arguments never reach Kafka: the schema or the cluster check
// refuses each with an error that names the argument.
func TestViewToolsHostileArguments(t *testing.T) {
	c := connectApps(t, viewsEnv(t), true)
	cases := []struct {
		tool string
		args map[string]any
		want string
	}{
		{"get_consumer_lag", map[string]any{"threshold": -1}, "threshold"},
		{"get_consumer_lag", map[string]any{"threshold": 1.5}, "threshold"},
		{"get_consumer_lag", map[string]any{"threshold": "1000"}, "threshold"},
		{"get_consumer_lag", map[string]any{"threshold": 1e300}, "threshold"},
		{"get_consumer_lag", map[string]any{"threshold": nil}, "threshold"},
		{"get_consumer_lag", map[string]any{"cluster": "prod"}, "cluster"},
		{"get_consumer_lag", map[string]any{"cluster": ""}, "cluster"},
		{"get_consumer_lag", map[string]any{"cluster": "default\x00"}, "cluster"},
		{"get_consumer_lag", map[string]any{"cluster": strings.Repeat("a", 100000)}, "cluster"},
		{"get_consumer_lag", map[string]any{"cluster": []any{"default"}}, "cluster"},
		{"get_consumer_lag", map[string]any{"cluster": nil}, "cluster"},
		{"get_consumer_lag", map[string]any{"group_id": "orders-replay"}, "group_id"},
		{"get_cluster_health", map[string]any{"cluster": "all"}, "cluster"},
		{"get_cluster_health", map[string]any{"cluster": "DEFAULT"}, "cluster"},
		{"get_cluster_health", map[string]any{"cluster": 1}, "cluster"},
		{"get_cluster_health", map[string]any{"cluster": map[string]any{}}, "cluster"},
		{"get_cluster_health", map[string]any{"threshold": 5}, "threshold"},
		{"get_cluster_health", map[string]any{"dryRun": true}, "dryRun"},
	}
	for _, tc := range cases {
		res := viewCall(t, c, tc.tool, tc.args)
		if !res.IsError || !strings.Contains(text(res), tc.want) {
			a, _ := json.Marshal(tc.args)
			if len(a) > 80 {
				a = a[:80]
			}
			t.Errorf("%s %s: want an error naming %s, got %.300s", tc.tool, a, tc.want, text(res))
		}
	}
}
