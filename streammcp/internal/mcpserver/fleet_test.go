package mcpserver_test

import (
	"context"
	"encoding/json"
	"flag"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/mcpfleet/mcpfleet/shared/audit"
	"github.com/mcpfleet/mcpfleet/shared/e2e"
	"github.com/mcpfleet/mcpfleet/shared/e2e/inproc"
	"github.com/mcpfleet/mcpfleet/shared/toolcall"
	"github.com/mcpfleet/mcpfleet/streammcp/internal/kafka"
	"github.com/mcpfleet/mcpfleet/streammcp/internal/kafkatest"
	"github.com/mcpfleet/mcpfleet/streammcp/internal/mcpserver"
)

// -update rewrites the golden files (e2e.Golden reads the flag).
var _ = flag.Bool("update", false, "rewrite golden files")

var reportNames = []string{"overview", "health-check", "under-replicated-partitions", "consumer-lag-report"}

// fleet is three in-process clusters with different scenarios:
//   - lagging (the default cluster): the seeded scenario, two groups lag
//     past 1000 messages;
//   - degraded: the seeded scenario with broker 1 offline;
//   - quiet: healthy, its only group caught up.
type fleet struct {
	lagging, degraded, quiet *kafkatest.Cluster
}

func startFleet(t *testing.T) fleet {
	t.Helper()
	var f fleet
	var wg sync.WaitGroup
	wg.Go(func() { f.lagging = kafkatest.StartSeeded(t) })
	wg.Go(func() { f.degraded = kafkatest.StartSeeded(t) })
	wg.Go(func() { f.quiet = kafkatest.StartQuiet(t) })
	wg.Wait()
	if t.Failed() {
		t.FailNow()
	}
	if err := f.degraded.SetMetadataFault(context.Background(), kafkatest.BrokerDown(1)); err != nil {
		t.Fatal(err)
	}
	return f
}

func newClient(t testing.TB, addrs []string, timeout time.Duration) *kafka.Client {
	t.Helper()
	kcl, err := kafka.New(kafka.Options{Brokers: addrs, Timeout: timeout})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { kcl.Close() })
	return kcl
}

func newFleetEnv(t testing.TB, clusters []mcpserver.Cluster, o mcpserver.Options) (*mcpserver.Handler, *server.MCPServer) {
	t.Helper()
	h, srv := start(t, clusters, o, toolcall.Config{Audit: audit.Config{Dest: "off"}})
	return h, srv.MCP
}

func (f fleet) clusters(t *testing.T) []mcpserver.Cluster {
	return []mcpserver.Cluster{
		{Name: "lagging", Client: newClient(t, f.lagging.Addrs(), 5*time.Second), LagThreshold: 1000},
		{Name: "degraded", Client: newClient(t, f.degraded.Addrs(), 5*time.Second), LagThreshold: 1000},
		{Name: "quiet", Client: newClient(t, f.quiet.Addrs(), 5*time.Second), LagThreshold: 1000},
	}
}

var stamp = regexp.MustCompile(`"timestamp": "[^"]+"`)

// readText reads uri and returns its text with timestamps masked.
func readText(t *testing.T, c *client.Client, uri string) string {
	t.Helper()
	req := mcp.ReadResourceRequest{}
	req.Params.URI = uri
	res, err := c.ReadResource(context.Background(), req)
	if err != nil {
		t.Fatalf("read %s: %v", uri, err)
	}
	tc, ok := res.Contents[0].(mcp.TextResourceContents)
	if len(res.Contents) != 1 || !ok || tc.MIMEType != "application/json" || tc.URI != uri {
		t.Fatalf("read %s: %#v", uri, res.Contents)
	}
	return stamp.ReplaceAllString(tc.Text, `"timestamp": "<timestamp>"`)
}

// TestFleetReports reads every report of three clusters with different
// scenarios, the fleet document and the seed URIs.
func TestFleetReports(t *testing.T) {
	f := startFleet(t)
	_, s := newFleetEnv(t, f.clusters(t), mcpserver.Options{})
	c := inproc.Connect(t, s, "", mcp.ProtocolVersion20251125)

	t.Run("every cluster report is exact", func(t *testing.T) {
		for _, cl := range []string{"lagging", "degraded", "quiet"} {
			for _, r := range reportNames {
				got := readText(t, c, mcpserver.ClusterURI(cl, r))
				e2e.Golden(t, filepath.Join("..", "..", "testdata", "fleet", cl+"."+r+".golden.json"), got+"\n")
			}
		}
	})

	t.Run("cluster reports are the seed documents plus cluster", func(t *testing.T) {
		// The lagging and degraded clusters run the scenarios whose seed
		// documents kafka's tests pin (healthy and offline-broker).
		for cl, scenario := range map[string]string{"lagging": "healthy", "degraded": "offline-broker"} {
			for _, r := range reportNames {
				got := readText(t, c, mcpserver.ClusterURI(cl, r))
				want := golden(t, scenario, r)
				if got != "{\n  \"cluster\": \""+cl+"\","+strings.TrimPrefix(want, "{") {
					t.Errorf("%s/%s is not the %s document plus cluster:\n%s", cl, r, scenario, got)
				}
			}
		}
	})

	t.Run("seed URIs serve the default cluster byte for byte as before", func(t *testing.T) {
		for _, r := range reportNames {
			if got, want := readText(t, c, "stream-mcp://"+r), golden(t, "healthy", r); got != want {
				t.Errorf("stream-mcp://%s changed:\n got %s\nwant %s", r, got, want)
			}
		}
	})

	t.Run("fleet document", func(t *testing.T) {
		got := readText(t, c, mcpserver.URIClusters)
		e2e.Golden(t, filepath.Join("..", "..", "testdata", "fleet", "clusters.golden.json"), got+"\n")
		var doc struct {
			HealthStatus string `json:"health_status"`
			Clusters     []struct {
				Cluster                   string  `json:"cluster"`
				HealthStatus              string  `json:"health_status"`
				BrokerCount               *int    `json:"broker_count"`
				OfflineBrokerIDs          []int32 `json:"offline_broker_ids"`
				UnderReplicatedPartitions *int    `json:"under_replicated_partitions"`
				OfflinePartitions         *int    `json:"offline_partitions"`
				GroupsWithHighLag         *int    `json:"groups_with_high_lag"`
				Error                     *string `json:"error"`
			} `json:"clusters"`
		}
		if err := json.Unmarshal([]byte(got), &doc); err != nil {
			t.Fatal(err)
		}
		type row struct {
			name, status                   string
			brokers, urp, offline, highLag int
			offlineIDs                     []int32
		}
		want := []row{
			{"lagging", "warning", 3, 0, 0, 2, []int32{}},
			// Broker 1 coordinated the lagging groups: they cannot be listed,
			// and error says so.
			{"degraded", "critical", 2, 6, 3, 0, []int32{1}},
			{"quiet", "healthy", 3, 0, 0, 0, []int32{}},
		}
		if len(doc.Clusters) != len(want) || doc.HealthStatus != "critical" {
			t.Fatalf("fleet %s", got)
		}
		for i, w := range want {
			e := doc.Clusters[i]
			if e.Cluster != w.name || e.HealthStatus != w.status || e.BrokerCount == nil || *e.BrokerCount != w.brokers ||
				*e.UnderReplicatedPartitions != w.urp || *e.OfflinePartitions != w.offline || *e.GroupsWithHighLag != w.highLag ||
				!slices.Equal(e.OfflineBrokerIDs, w.offlineIDs) || e.Error == nil || (*e.Error != "") != (w.name == "degraded") {
				t.Errorf("entry %d: %+v, want %+v", i, e, w)
			}
		}
	})

	t.Run("unknown cluster or report", func(t *testing.T) {
		for uri, want := range map[string]string{
			"stream-mcp://clusters/nope/overview":                             `unknown cluster "nope" in stream-mcp://clusters/nope/overview: the configured clusters are lagging, degraded, quiet`,
			"stream-mcp://clusters/quiet/topics":                              "resource not found",
			"stream-mcp://clusters/quiet/overview?x=1":                        `unknown query parameter "x" in stream-mcp://clusters/quiet/overview?x=1: this resource takes no query parameters`,
			"stream-mcp://clusters?threshold=5":                               `unknown query parameter "threshold" in stream-mcp://clusters?threshold=5`,
			"stream-mcp://clusters/quiet/consumer-lag-report?threshold=-1":    "invalid query parameter threshold",
			"stream-mcp://clusters/quiet/consumer-lag-report?threshold=1&a=b": "e.g. stream-mcp://clusters/quiet/consumer-lag-report?threshold=5000",
		} {
			req := mcp.ReadResourceRequest{}
			req.Params.URI = uri
			_, err := c.ReadResource(context.Background(), req)
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("%s: err = %v, want %q", uri, err, want)
			}
		}
		// A threshold of the caller's choice, per cluster.
		got := readText(t, c, mcpserver.ClusterURI("lagging", "consumer-lag-report")+"?threshold=5050")
		if !strings.Contains(got, `"cluster": "lagging"`) || !strings.Contains(got, `"lag_threshold": 5050`) || !strings.Contains(got, `"groups_with_high_lag": 1`) {
			t.Errorf("threshold 5050: %s", got)
		}
	})

	t.Run("the fleet document costs each cluster one health-check's requests", func(t *testing.T) {
		kcs := map[string]*kafkatest.Cluster{"lagging": f.lagging, "degraded": f.degraded, "quiet": f.quiet}
		health := map[string]int{}
		for name, kc := range kcs {
			kc.ResetCounts()
			readText(t, c, mcpserver.ClusterURI(name, "health-check"))
			health[name] = planCounts(kc)
			kc.ResetCounts()
		}
		readText(t, c, mcpserver.URIClusters)
		for name, kc := range kcs {
			if n := planCounts(kc); n != health[name] || n == 0 {
				t.Errorf("%s: the fleet document sent %d requests, its health-check %d", name, n, health[name])
			}
		}
	})

	t.Run("listing names every cluster", func(t *testing.T) {
		list, err := c.ListResources(context.Background(), mcp.ListResourcesRequest{})
		if err != nil {
			t.Fatal(err)
		}
		var uris []string
		for _, r := range list.Resources {
			uris = append(uris, r.URI)
		}
		for _, cl := range []string{"lagging", "degraded", "quiet"} {
			for _, r := range reportNames {
				if !slices.Contains(uris, mcpserver.ClusterURI(cl, r)) {
					t.Errorf("%s not listed: %v", mcpserver.ClusterURI(cl, r), uris)
				}
			}
		}
		if len(uris) != 4+1+12 {
			t.Errorf("%d resources: %v", len(uris), uris)
		}
	})
}

// golden returns a seed document pinned by kafka's tests
// (testdata/reports/<scenario>.<report>.golden.json), without the final newline.
func golden(t *testing.T, scenario, r string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "testdata", "reports", scenario+"."+r+".golden.json"))
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSuffix(string(b), "\n")
}

// TestFleetWithAClusterDown: every broker of one cluster hangs (accepts
// connections, never answers) and another cluster's port refuses; the
// fleet document still answers within the slow cluster's own timeout, with
// error for those clusters and exact figures for the others.
func TestFleetWithAClusterDown(t *testing.T) {
	quiet := kafkatest.StartQuiet(t)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	refused := l.Addr().String()
	l.Close()
	hung := []string{kafkatest.SilentBroker(t), kafkatest.SilentBroker(t), kafkatest.SilentBroker(t)}
	const hungTimeout = 2 * time.Second
	_, s := newFleetEnv(t, []mcpserver.Cluster{
		{Name: "quiet", Client: newClient(t, quiet.Addrs(), 10*time.Second), LagThreshold: 1000},
		{Name: "hung", Client: newClient(t, hung, hungTimeout), LagThreshold: 1000},
		{Name: "gone", Client: newClient(t, []string{refused}, 10*time.Second), LagThreshold: 1000},
	}, mcpserver.Options{})
	c := inproc.Connect(t, s, "", mcp.ProtocolVersion20251125)

	start := time.Now()
	got := readText(t, c, mcpserver.URIClusters)
	elapsed := time.Since(start)
	// Bounded by the hung cluster's own timeout (plus the fleet's grace),
	// with room for a loaded machine; without per-cluster bounds this read
	// would never end.
	if elapsed > hungTimeout+10*time.Second {
		t.Errorf("fleet document took %s with a %s cluster timeout", elapsed, hungTimeout)
	}
	var doc struct {
		HealthStatus string           `json:"health_status"`
		Clusters     []map[string]any `json:"clusters"`
	}
	if err := json.Unmarshal([]byte(got), &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Clusters) != 3 || doc.HealthStatus != "unknown" {
		t.Fatalf("fleet %s", got)
	}
	q, h, g := doc.Clusters[0], doc.Clusters[1], doc.Clusters[2]
	if q["cluster"] != "quiet" || q["health_status"] != "healthy" || q["broker_count"] != 3.0 || q["groups_with_high_lag"] != 0.0 || q["error"] != "" {
		t.Errorf("quiet %v", q)
	}
	for _, e := range []map[string]any{h, g} {
		if e["health_status"] != "unknown" || e["broker_count"] != nil || e["under_replicated_partitions"] != nil || e["groups_with_high_lag"] != nil {
			t.Errorf("unreadable cluster %v", e)
		}
	}
	if err, _ := h["error"].(string); h["cluster"] != "hung" || !strings.Contains(err, "no answer within 2s") || !slices.ContainsFunc(hung, func(a string) bool { return strings.Contains(err, a) }) {
		t.Errorf("hung error %v", h)
	}
	if err, _ := g["error"].(string); g["cluster"] != "gone" || !strings.Contains(err, "connect to Kafka broker "+refused) {
		t.Errorf("gone error %v", g)
	}
	// The cluster's own reports fail with that error; the others answer.
	req := mcp.ReadResourceRequest{}
	req.Params.URI = mcpserver.ClusterURI("gone", "overview")
	if _, err := c.ReadResource(context.Background(), req); err == nil || !strings.Contains(err.Error(), "connect to Kafka broker "+refused) {
		t.Errorf("gone overview: %v", err)
	}
	if got := readText(t, c, mcpserver.URIOverview); !strings.Contains(got, `"health_status": "healthy"`) {
		t.Errorf("default overview %s", got)
	}
}

// TestToolsTakeACluster: tools read the cluster they name (the default one
// without cluster), an unknown cluster is refused naming the configured
// ones, and a write's preview and effect concern that cluster only.
func TestToolsTakeACluster(t *testing.T) {
	f := startFleet(t)
	_, s := newFleetEnv(t, f.clusters(t), mcpserver.Options{AllowWrites: true})
	c := inproc.Connect(t, s, "", mcp.ProtocolVersion20251125)
	call := func(name string, args map[string]any) *mcp.CallToolResult { return callTool(t, c, name, args) }
	brokers := func(args map[string]any) int {
		res := call("list_brokers", args)
		var v struct{ Brokers []any }
		if res.IsError || json.Unmarshal([]byte(text(res)), &v) != nil {
			t.Fatalf("list_brokers %v: %s", args, text(res))
		}
		return len(v.Brokers)
	}
	if n := brokers(nil); n != 3 {
		t.Errorf("default cluster: %d brokers", n)
	}
	if n := brokers(map[string]any{"cluster": "degraded"}); n != 2 {
		t.Errorf("degraded cluster: %d brokers", n)
	}
	res := call("list_topics", map[string]any{"cluster": "quiet"})
	if res.IsError || !strings.Contains(text(res), `"events"`) || strings.Contains(text(res), `"orders"`) {
		t.Errorf("quiet topics: %s", text(res))
	}
	res = call("describe_consumer_group", map[string]any{"cluster": "quiet", "group_id": kafkatest.GroupEventsSink})
	if res.IsError || !strings.Contains(text(res), `"total_lag": 0`) {
		t.Errorf("quiet group: %s", text(res))
	}
	res = call("list_topics", map[string]any{"cluster": "prod"})
	if !res.IsError || !strings.Contains(text(res), `"cluster"`) || !strings.Contains(text(res), "lagging") || !strings.Contains(text(res), "quiet") {
		t.Errorf("unknown cluster: %s", text(res))
	}

	// A dry run names the cluster and its brokers, and creates nothing.
	target := "kafka cluster quiet at " + strings.Join(f.quiet.Addrs(), ",")
	res = call("create_topic", map[string]any{"cluster": "quiet", "name": "fleet-topic", "dryRun": true})
	if res.IsError || !strings.Contains(text(res), "Target: "+target) || !strings.Contains(text(res), "No topic named fleet-topic exists now") {
		t.Errorf("dry run: %s", text(res))
	}
	for _, cl := range []string{"quiet", "lagging"} {
		if res := call("describe_topic", map[string]any{"cluster": cl, "topic": "fleet-topic"}); !res.IsError {
			t.Errorf("dry run created the topic on %s: %s", cl, text(res))
		}
	}
	res = call("create_topic", map[string]any{"cluster": "quiet", "name": "fleet-topic"})
	if res.IsError {
		t.Fatalf("create_topic: %s", text(res))
	}
	if res := call("describe_topic", map[string]any{"cluster": "quiet", "topic": "fleet-topic"}); res.IsError {
		t.Errorf("topic not on quiet: %s", text(res))
	}
	for _, cl := range []string{"lagging", "degraded"} {
		if res := call("describe_topic", map[string]any{"cluster": cl, "topic": "fleet-topic"}); !res.IsError {
			t.Errorf("topic created on %s too: %s", cl, text(res))
		}
	}
}

// TestFleetSubscriptions: subscriptions on a cluster URI and on the fleet
// document notify when that cluster changes, and not for another cluster.
func TestFleetSubscriptions(t *testing.T) {
	f := startFleet(t)
	h, s := newFleetEnv(t, f.clusters(t), mcpserver.Options{WatchInterval: 200 * time.Millisecond})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go h.Watch(ctx)
	c := inproc.Connect(t, s, "", mcp.ProtocolVersion20251125)
	updates := resourceUpdates(c)
	subscribed := []string{mcpserver.URIClusters, mcpserver.ClusterURI("quiet", "overview"), mcpserver.ClusterURI("lagging", "overview"), mcpserver.URIOverview}
	for _, uri := range subscribed {
		sub := mcp.SubscribeRequest{}
		sub.Params.URI = uri
		if err := c.Subscribe(ctx, sub); err != nil {
			t.Fatal(err)
		}
	}
	select {
	case u := <-updates:
		t.Fatalf("notified without a change: %s", u)
	case <-time.After(time.Second):
	}
	if err := f.quiet.SetMetadataFault(ctx, kafkatest.UnderReplicate(kafkatest.TopicEvents, 0)); err != nil {
		t.Fatal(err)
	}
	got := map[string]bool{}
	deadline := time.After(10 * time.Second)
	for !got[mcpserver.URIClusters] || !got[mcpserver.ClusterURI("quiet", "overview")] {
		select {
		case u := <-updates:
			got[u] = true
		case <-deadline:
			t.Fatalf("notified %v; want the fleet document and quiet's overview", got)
		}
	}
	// The default cluster did not change: its URIs stay quiet.
	select {
	case u := <-updates:
		if u == mcpserver.URIOverview || u == mcpserver.ClusterURI("lagging", "overview") {
			t.Errorf("notified for an unchanged cluster: %s", u)
		}
	case <-time.After(time.Second):
	}
}

// TestPromptsUseTheDefaultClustersThreshold: in a fleet the lag prompt's
// default threshold is the default cluster's (no Kafka request needed).
func TestPromptsUseTheDefaultClustersThreshold(t *testing.T) {
	_, s := newFleetEnv(t, []mcpserver.Cluster{
		{Name: "prod", Client: newClient(t, []string{"127.0.0.1:1"}, time.Second), LagThreshold: 777},
		{Name: "dev", Client: newClient(t, []string{"127.0.0.1:1"}, time.Second), LagThreshold: 5},
	}, mcpserver.Options{})
	c := inproc.Connect(t, s, "", mcp.ProtocolVersion20251125)
	list, err := c.ListPrompts(context.Background(), mcp.ListPromptsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, p := range list.Prompts {
		for _, a := range p.Arguments {
			if p.Name == "investigate_consumer_lag" && a.Name == "threshold" {
				found = strings.Contains(a.Description, "default 777")
			}
		}
	}
	if !found {
		t.Errorf("threshold argument does not say default 777: %+v", list.Prompts)
	}
	req := mcp.GetPromptRequest{}
	req.Params.Name = "investigate_consumer_lag"
	res, err := c.GetPrompt(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if tc, ok := res.Messages[0].Content.(mcp.TextContent); !ok || !strings.Contains(tc.Text, "?threshold=777") {
		t.Errorf("prompt %+v", res.Messages[0].Content)
	}
}

// TestPromptsTakeACluster: with cluster a prompt points at that cluster's
// URIs, passes cluster to every tool it names and uses its lag threshold;
// without it (or with the empty string a client sends for a blank optional
// argument) the prompt is the single-cluster one; an unknown name is
// refused naming the configured clusters. Prompts send no Kafka request:
// the clusters here are not even reachable.
func TestPromptsTakeACluster(t *testing.T) {
	_, s := newFleetEnv(t, []mcpserver.Cluster{
		{Name: "prod", Client: newClient(t, []string{"127.0.0.1:1"}, time.Second), LagThreshold: 777},
		{Name: "dev", Client: newClient(t, []string{"127.0.0.1:1"}, time.Second), LagThreshold: 5},
	}, mcpserver.Options{})
	c := inproc.Connect(t, s, "", mcp.ProtocolVersion20251125)
	get := func(name string, args map[string]string) (string, error) {
		t.Helper()
		req := mcp.GetPromptRequest{}
		req.Params.Name, req.Params.Arguments = name, args
		res, err := c.GetPrompt(context.Background(), req)
		if err != nil {
			return "", err
		}
		return res.Messages[0].Content.(mcp.TextContent).Text, nil
	}
	for _, tt := range []struct {
		name    string
		args    map[string]string
		want    []string
		notWant []string
	}{
		{"investigate_consumer_lag", map[string]string{"cluster": "dev", "group_id": "g1"},
			[]string{"on cluster dev", "Read the resource stream-mcp://clusters/dev/consumer-lag-report?threshold=5.", `call describe_consumer_group with cluster="dev", group_id="g1"`, `call consume_messages with cluster="dev"`},
			[]string{"stream-mcp://consumer-lag-report", "777"}},
		{"investigate_consumer_lag", map[string]string{"cluster": "dev", "threshold": "42"},
			[]string{"stream-mcp://clusters/dev/consumer-lag-report?threshold=42", `call describe_consumer_group with cluster="dev".`}, nil},
		{"investigate_consumer_lag", map[string]string{"cluster": "prod"},
			[]string{"stream-mcp://clusters/prod/consumer-lag-report?threshold=777"}, nil},
		{"investigate_consumer_lag", nil,
			[]string{"Read the resource stream-mcp://consumer-lag-report?threshold=777.", "call describe_consumer_group."}, []string{"cluster=", "clusters/", "on cluster"}},
		{"investigate_consumer_lag", map[string]string{"cluster": ""},
			[]string{"Read the resource stream-mcp://consumer-lag-report?threshold=777."}, []string{"cluster=", "clusters/", "on cluster"}},
		{"troubleshoot_replication", map[string]string{"cluster": "dev", "topic": "orders"},
			[]string{`topic "orders" on cluster dev`, "Read the resource stream-mcp://clusters/dev/health-check.", "Read stream-mcp://clusters/dev/under-replicated-partitions.",
				`Call list_brokers with cluster="dev"`, `call describe_configs with cluster="dev", resource_type=broker`, `Call describe_topic with cluster="dev", topic="orders"`},
			[]string{"stream-mcp://health-check", "stream-mcp://under-replicated-partitions"}},
		{"troubleshoot_replication", map[string]string{"cluster": "dev"},
			[]string{"for the whole cluster dev.", `Call describe_topic with cluster="dev" for the most affected`}, nil},
		{"troubleshoot_replication", nil,
			[]string{"for the whole cluster.", "Read the resource stream-mcp://health-check.", "Call list_brokers to compare", "call describe_configs with resource_type=broker"}, []string{"cluster="}},
	} {
		got, err := get(tt.name, tt.args)
		if err != nil {
			t.Errorf("%s %v: %v", tt.name, tt.args, err)
			continue
		}
		for _, w := range tt.want {
			if !strings.Contains(got, w) {
				t.Errorf("%s %v lacks %q:\n%s", tt.name, tt.args, w, got)
			}
		}
		for _, w := range tt.notWant {
			if strings.Contains(got, w) {
				t.Errorf("%s %v has %q:\n%s", tt.name, tt.args, w, got)
			}
		}
	}
	for _, bad := range hostileClusterNames("dev") {
		name, ok := bad.(string)
		if !ok {
			continue // prompt arguments are strings
		}
		for _, p := range []string{"investigate_consumer_lag", "troubleshoot_replication"} {
			_, err := get(p, map[string]string{"cluster": name})
			if err == nil || !strings.Contains(err.Error(), "unknown cluster") || !strings.Contains(err.Error(), "the configured clusters are prod, dev (STREAM_CLUSTERS)") || len(err.Error()) > 400 {
				t.Errorf("%s cluster=%.80q: err = %.500v", p, name, err)
			}
		}
	}
}

// hostileClusterNames are cluster arguments that must all be refused when
// the configured names include name: case and whitespace variants, path
// tricks, control and invisible characters, look-alikes, a very long name
// and values of the wrong JSON type.
func hostileClusterNames(name string) []any {
	return []any{
		"nope", strings.ToUpper(name), strings.ToUpper(name[:1]) + name[1:], " " + name, name + " ", name + "\n", "\t" + name,
		"../" + name, name + "/..", "./" + name, name + "/overview", "%2e%2e/" + name, name + "\x00",
		name + "\u200b", "\u200b" + name, "\ufeff" + name, // zero-width space, byte-order mark
		"\u0501" + name[1:], // Cyrillic komi de for d
		strings.Map(func(r rune) rune { return r - 'a' + 'ａ' }, name), // fullwidth letters
		strings.Repeat(name, 20000),
		[]any{name}, map[string]any{"name": name}, 1, true,
	}
}

// TestFleetListenStream: protocol 2026-07-28's subscriptions/listen on
// cluster URIs and the fleet document. A stream that names an unknown
// cluster is refused whole, naming the configured clusters, and subscribes
// nothing (its valid URI is never re-read: no Kafka request reaches that
// cluster); an accepted stream is notified, with its subscription id, for
// exactly the documents of the cluster that changed.
func TestFleetListenStream(t *testing.T) {
	f := startFleet(t)
	h, s := newFleetEnv(t, f.clusters(t), mcpserver.Options{WatchInterval: 100 * time.Millisecond})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go h.Watch(ctx)
	c := inproc.Connect(t, s, "", "")
	updates := make(chan mcp.JSONRPCNotification, 64)
	c.OnNotification(func(n mcp.JSONRPCNotification) {
		if n.Method == mcp.MethodNotificationResourceUpdated {
			updates <- n
		}
	})

	quietHealth, quietLag := mcpserver.ClusterURI("quiet", "health-check"), mcpserver.ClusterURI("quiet", "consumer-lag-report")
	quietOverview, laggingHealth := mcpserver.ClusterURI("quiet", "overview"), mcpserver.ClusterURI("lagging", "health-check")
	errs := make(chan error, 1)
	stop, err := c.ListenAsync(ctx, mcp.SubscriptionFilter{ResourceSubscriptions: []string{quietHealth, mcpserver.ClusterURI("nope", "overview")}}, func(err error) { errs <- err })
	if err == nil {
		select {
		case err = <-errs:
		case <-time.After(10 * time.Second):
		}
		stop()
	}
	if err == nil || !strings.Contains(err.Error(), `unknown cluster "nope"`) || !strings.Contains(err.Error(), "the configured clusters are lagging, degraded, quiet") {
		t.Fatalf("listen with an unknown cluster: err = %v", err)
	}
	f.quiet.ResetCounts()
	time.Sleep(time.Second) // ten watcher ticks
	if n := planCounts(f.quiet); n != 0 {
		t.Errorf("the refused stream's valid URI is re-read: %d requests to quiet %v", n, f.quiet.Counts())
	}

	stop, err = c.ListenAsync(ctx, mcp.SubscriptionFilter{ResourceSubscriptions: []string{quietHealth, quietLag, quietOverview, mcpserver.URIClusters, laggingHealth}},
		func(err error) { errs <- err })
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	select {
	case n := <-updates:
		t.Fatalf("notified without a change: %+v", n.Params)
	case err := <-errs:
		t.Fatal(err)
	case <-time.After(time.Second):
	}
	if err := f.quiet.Produce(ctx, kafkatest.TopicEvents, 0, 1100); err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{quietHealth: true, quietLag: true, mcpserver.URIClusters: true}
	got := map[string]bool{}
	deadline := time.After(15 * time.Second)
	settle := (<-chan time.Time)(nil)
	for {
		select {
		case n := <-updates:
			uri, _ := n.Params.AdditionalFields["uri"].(string)
			if !want[uri] || n.Params.Meta[mcp.MetaKeySubscriptionID] == nil {
				t.Errorf("notification %+v", n.Params)
			}
			got[uri] = true
			if len(got) == len(want) && settle == nil {
				settle = time.After(time.Second) // ten more ticks for any extra notification
			}
		case <-settle:
			return
		case <-deadline:
			t.Fatalf("notified %v; want %v", got, want)
		}
	}
}

// TestSubscribeRefusalByProtocol: a legacy resources/subscribe to an
// unknown cluster's URI is refused with the configured clusters; a request
// that is not a subscription, or a resources/subscribe in protocol
// 2026-07-28 (where the method no longer exists), gets mcp-go's own answer.
func TestSubscribeRefusalByProtocol(t *testing.T) {
	_, s := newFleetEnv(t, []mcpserver.Cluster{
		{Name: "prod", Client: newClient(t, []string{"127.0.0.1:1"}, time.Second), LagThreshold: 1},
		{Name: "dev", Client: newClient(t, []string{"127.0.0.1:1"}, time.Second), LagThreshold: 1},
	}, mcpserver.Options{})
	modern := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}},`
	for _, tt := range []struct{ msg, want string }{
		{`{"jsonrpc":"2.0","id":1,"method":"resources/subscribe","params":{"uri":"stream-mcp://clusters/qa/overview"}}`,
			`resources/subscribe refused: unknown cluster \"qa\" in stream-mcp://clusters/qa/overview: the configured clusters are prod, dev (STREAM_CLUSTERS); nothing was subscribed`},
		{`{"jsonrpc":"2.0","id":1,"method":"resources/subscribe","params":{"uri":"stream-mcp://clusters/dev/overview?threshold=1"}}`,
			`resources/subscribe refused: unknown query parameter \"threshold\"`},
		{`{"jsonrpc":"2.0","id":1,"method":"resources/subscribe","params":{"uri":""}}`, "uri is required"},
		{`{"jsonrpc":"2.0","id":1,"method":"resources/subscribe","params":{` + modern + `"uri":"stream-mcp://clusters/qa/overview"}}`, `"code":-32601`},
		{`{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{"uri":"stream-mcp://clusters/qa/subscribe"}}`, "resource not found"},
	} {
		b, err := json.Marshal(s.HandleMessage(context.Background(), json.RawMessage(tt.msg)))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(b), tt.want) {
			t.Errorf("%s\n → %s\nwant %s", tt.msg, b, tt.want)
		}
	}
}

// TestFleetSubscriptionsWhenABrokerStops: one broker of quiet really stops
// (its listener closes). quiet's overview and health-check and the fleet
// document are notified, lagging's overview is not, and a read then shows
// two live brokers. Unsubscribing quiet's overview before the broker
// comes back leaves it silent while the still-subscribed health-check hears
// the recovery.
func TestFleetSubscriptionsWhenABrokerStops(t *testing.T) {
	f := startFleet(t)
	h, s := newFleetEnv(t, f.clusters(t), mcpserver.Options{WatchInterval: 200 * time.Millisecond})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go h.Watch(ctx)
	c := inproc.Connect(t, s, "", mcp.ProtocolVersion20251125)
	updates := resourceUpdates(c)
	quietOverview, quietHealth := mcpserver.ClusterURI("quiet", "overview"), mcpserver.ClusterURI("quiet", "health-check")
	laggingOverview := mcpserver.ClusterURI("lagging", "overview")
	for _, uri := range []string{quietOverview, quietHealth, laggingOverview, mcpserver.URIClusters} {
		sub := mcp.SubscribeRequest{}
		sub.Params.URI = uri
		if err := c.Subscribe(ctx, sub); err != nil {
			t.Fatal(err)
		}
	}
	// collect waits for want, then two seconds (ten ticks) more.
	collect := func(want ...string) map[string]bool {
		t.Helper()
		got := map[string]bool{}
		deadline := time.After(20 * time.Second)
		for !containsAllKeys(got, want) {
			select {
			case u := <-updates:
				got[u] = true
			case <-deadline:
				t.Fatalf("notified %v; want %v", got, want)
			}
		}
		settle := time.After(2 * time.Second)
		for {
			select {
			case u := <-updates:
				got[u] = true
			case <-settle:
				return got
			}
		}
	}
	time.Sleep(time.Second)
	if len(updates) > 0 {
		t.Fatalf("notified without a change: %s", <-updates)
	}

	port := f.quiet.Addrs()[2][strings.LastIndex(f.quiet.Addrs()[2], ":")+1:]
	if err := f.quiet.StopBroker(2); err != nil {
		t.Fatal(err)
	}
	got := collect(quietOverview, quietHealth, mcpserver.URIClusters)
	if len(got) != 3 {
		t.Errorf("notified %v after quiet's broker 2 stopped; want exactly quiet's overview, health-check and the fleet document", got)
	}
	// kfake moves a removed node's replicas away, so the stopped broker is
	// simply no longer listed (README: without STREAM_EXPECTED_BROKERS a dead
	// broker holding no replicas is invisible).
	var o struct {
		BrokerCount int `json:"broker_count"`
	}
	if err := json.Unmarshal([]byte(readText(t, c, quietOverview)), &o); err != nil || o.BrokerCount != 2 {
		t.Errorf("quiet overview after the stop: %+v %v", o, err)
	}

	unsub := mcp.UnsubscribeRequest{}
	unsub.Params.URI = quietOverview
	if err := c.Unsubscribe(ctx, unsub); err != nil {
		t.Fatal(err)
	}
	p, err := strconv.Atoi(port)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.quiet.RestartBroker(2, p); err != nil {
		t.Fatal(err)
	}
	if got := collect(quietHealth, mcpserver.URIClusters); len(got) != 2 {
		t.Errorf("notified %v after quiet's broker 2 came back; want quiet's health-check and the fleet document only", got)
	}
}

func containsAllKeys(m map[string]bool, keys []string) bool {
	for _, k := range keys {
		if !m[k] {
			return false
		}
	}
	return true
}

// resourceUpdates returns the URIs of the notifications/resources/updated
// c receives, in order.
func resourceUpdates(c *client.Client) <-chan string {
	updates := make(chan string, 64)
	c.OnNotification(func(n mcp.JSONRPCNotification) {
		if n.Method == mcp.MethodNotificationResourceUpdated {
			if uri, ok := n.Params.AdditionalFields["uri"].(string); ok {
				updates <- uri
			}
		}
	})
	return updates
}
