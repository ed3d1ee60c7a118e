package mcpserver_test

import (
	"context"
	"encoding/json"
	"net"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/mcpfleet/mcpfleet/shared/audit"
	"github.com/mcpfleet/mcpfleet/shared/e2e/inproc"
	"github.com/mcpfleet/mcpfleet/shared/toolcall"
	"github.com/mcpfleet/mcpfleet/streammcp/internal/kafkatest"
	"github.com/mcpfleet/mcpfleet/streammcp/internal/mcpserver"
)

type env struct {
	kc *kafkatest.Cluster
	h  *mcpserver.Handler
	s  *server.MCPServer
}

func cluster(t *testing.T) *kafkatest.Cluster {
	t.Helper()
	return kafkatest.StartSeeded(t)
}

func newEnv(t *testing.T, addrs []string, o mcpserver.Options) *env {
	t.Helper()
	clusters := []mcpserver.Cluster{{Name: "default", Client: newClient(t, addrs, 2*time.Second), LagThreshold: 1000}}
	h, srv := start(t, clusters, o, toolcall.Config{Audit: audit.Config{Dest: "off"}})
	return &env{h: h, s: srv.MCP}
}

// start serves clusters the way main.go does, through the shared
// in-process harness: serve's server (metrics, tracing, argument checks)
// and the configured tool-call pipeline. Clients connect with
// inproc.Connect.
func start(t testing.TB, clusters []mcpserver.Cluster, o mcpserver.Options, calls toolcall.Config, opts ...server.ServerOption) (*mcpserver.Handler, *inproc.Server) {
	t.Helper()
	h := mcpserver.New(clusters, o)
	srv := inproc.Start(t, inproc.Options{Name: "streammcp", Server: append(h.ServerOptions(), opts...), Calls: calls, NoClient: true}, h.Register)
	return h, srv
}

func readJSON(t *testing.T, c *client.Client, uri string) (map[string]any, error) {
	t.Helper()
	req := mcp.ReadResourceRequest{}
	req.Params.URI = uri
	res, err := c.ReadResource(context.Background(), req)
	if err != nil {
		return nil, err
	}
	if len(res.Contents) != 1 {
		t.Fatalf("%s: %d contents", uri, len(res.Contents))
	}
	tc, ok := res.Contents[0].(mcp.TextResourceContents)
	if !ok || tc.MIMEType != "application/json" {
		t.Fatalf("%s: contents %#v", uri, res.Contents[0])
	}
	var m map[string]any
	if err := json.Unmarshal([]byte(tc.Text), &m); err != nil {
		t.Fatalf("%s: %v", uri, err)
	}
	return m, nil
}

// contract lists every field of every report with its JSON type: "n"
// number, "s" string, "a" array, "o" object, "b" bool. Nested fields are
// written parent.child; array element fields parent[].child.
var contract = map[string]map[string]string{
	mcpserver.URIOverview: {
		"timestamp": "s", "broker_count": "n", "controller_id": "n", "topic_count": "n", "partition_count": "n",
		"under_replicated_partitions": "n", "offline_partitions": "n", "offline_broker_ids": "a", "health_status": "s",
	},
	mcpserver.URIHealthCheck: {
		"timestamp": "s", "broker_status": "o", "broker_status.total_brokers": "n", "broker_status.offline_brokers": "n",
		"broker_status.offline_broker_ids": "a", "broker_status.status": "s",
		"controller_status": "o", "controller_status.controller_id": "n", "controller_status.status": "s",
		"partition_status": "o", "partition_status.total_partitions": "n", "partition_status.under_replicated_partitions": "n",
		"partition_status.offline_partitions": "n", "partition_status.status": "s",
		"consumer_status": "o", "consumer_status.total_groups": "n", "consumer_status.groups_with_high_lag": "n",
		"consumer_status.status": "s", "consumer_status.error": "s", "overall_status": "s",
	},
	mcpserver.URIURP: {
		"timestamp": "s", "under_replicated_partition_count": "n", "details": "a", "recommendations": "a",
		"details[].topic": "s", "details[].partition": "n", "details[].leader": "n", "details[].replica_count": "n",
		"details[].isr_count": "n", "details[].replicas": "a", "details[].isr": "a", "details[].missing_replicas": "a",
	},
	mcpserver.URILagReport: {
		"timestamp": "s", "lag_threshold": "n", "group_count": "n", "group_summary": "a", "high_lag_details": "a", "recommendations": "a",
		"group_summary[].group_id": "s", "group_summary[].state": "s", "group_summary[].member_count": "n",
		"group_summary[].topic_count": "n", "group_summary[].total_lag": "n", "group_summary[].has_high_lag": "b",
		"high_lag_details[].group_id": "s", "high_lag_details[].topic": "s", "high_lag_details[].partition": "n",
		"high_lag_details[].current_offset": "n", "high_lag_details[].log_end_offset": "n", "high_lag_details[].lag": "n",
	},
}

func jsonType(v any) string {
	switch v.(type) {
	case float64:
		return "n"
	case string:
		return "s"
	case []any:
		return "a"
	case map[string]any:
		return "o"
	case bool:
		return "b"
	}
	return "null"
}

// checkContract asserts every contract field of m has its type; array
// element fields are checked on every element (and must exist in the data).
func checkContract(t *testing.T, uri string, m map[string]any) {
	t.Helper()
	for path, typ := range contract[uri] {
		if parent, field, ok := strings.Cut(path, "[]."); ok {
			arr, _ := m[parent].([]any)
			if len(arr) == 0 {
				t.Errorf("%s: %s is empty, cannot check %s", uri, parent, path)
				continue
			}
			for _, el := range arr {
				if got := jsonType(el.(map[string]any)[field]); got != typ {
					t.Errorf("%s: %s has type %s, want %s", uri, path, got, typ)
				}
			}
			continue
		}
		var v any = m
		for _, p := range strings.Split(path, ".") {
			v = v.(map[string]any)[p]
		}
		if got := jsonType(v); got != typ {
			t.Errorf("%s: %s has type %s, want %s", uri, path, got, typ)
		}
	}
}

func TestResourcesInBothProtocolEras(t *testing.T) {
	kc := cluster(t)
	// Make details and high_lag_details non-empty so their fields are checked.
	if err := kc.SetMetadataFault(context.Background(), kafkatest.UnderReplicate(kafkatest.TopicOrders, 1)); err != nil {
		t.Fatal(err)
	}
	e := newEnv(t, kc.Addrs(), mcpserver.Options{})
	for _, version := range []string{mcp.ProtocolVersion20251125, ""} {
		t.Run("era="+version, func(t *testing.T) {
			c := inproc.Connect(t, e.s, "", version)
			ctx := context.Background()
			list, err := c.ListResources(ctx, mcp.ListResourcesRequest{})
			if err != nil {
				t.Fatal(err)
			}
			var uris []string
			for _, r := range list.Resources {
				uris = append(uris, r.URI)
				if r.MIMEType != "application/json" {
					t.Errorf("%s mime %q", r.URI, r.MIMEType)
				}
			}
			slices.Sort(uris)
			wantURIs := []string{"stream-mcp://clusters", "stream-mcp://clusters/default/consumer-lag-report", "stream-mcp://clusters/default/health-check",
				"stream-mcp://clusters/default/overview", "stream-mcp://clusters/default/under-replicated-partitions",
				mcpserver.URILagReport, mcpserver.URIHealthCheck, mcpserver.URIOverview, mcpserver.URIURP}
			if !slices.Equal(uris, wantURIs) {
				t.Errorf("resources %v", uris)
			}
			tl, err := c.ListResourceTemplates(ctx, mcp.ListResourceTemplatesRequest{})
			if err != nil {
				t.Fatal(err)
			}
			var tmpls []string
			for _, tm := range tl.ResourceTemplates {
				tmpls = append(tmpls, tm.URITemplate.Raw())
			}
			slices.Sort(tmpls)
			wantTmpls := []string{"stream-mcp://clusters/{cluster}/consumer-lag-report{?threshold}", "stream-mcp://clusters/{cluster}/health-check",
				"stream-mcp://clusters/{cluster}/overview", "stream-mcp://clusters/{cluster}/under-replicated-partitions", mcpserver.URILagTemplate}
			if !slices.Equal(tmpls, wantTmpls) {
				t.Fatalf("templates %v", tmpls)
			}
			for uri := range contract {
				m, err := readJSON(t, c, uri)
				if err != nil {
					t.Fatalf("%s: %v", uri, err)
				}
				checkContract(t, uri, m)
			}
		})
	}
}

func TestLagThresholdParameter(t *testing.T) {
	kc := cluster(t)
	e := newEnv(t, kc.Addrs(), mcpserver.Options{})
	c := inproc.Connect(t, e.s, "", mcp.ProtocolVersion20251125)
	tests := []struct {
		uri       string
		threshold float64
		high      float64
		err       []string
	}{
		{uri: mcpserver.URILagReport, threshold: 1000, high: 2},
		{uri: mcpserver.URILagReport + "?threshold=5000", threshold: 5000, high: 1},
		{uri: mcpserver.URILagReport + "?threshold=0", threshold: 0, high: 3},
		{uri: mcpserver.URILagReport + "?threshold=100000", threshold: 100000, high: 0},
		{uri: mcpserver.URILagReport + "?threshold=-1", err: []string{"threshold", "non-negative integer"}},
		{uri: mcpserver.URILagReport + "?threshold=abc", err: []string{"threshold=\"abc\"", "non-negative integer"}},
		{uri: mcpserver.URILagReport + "?threshold=1.5", err: []string{"threshold", "non-negative integer"}},
		{uri: mcpserver.URILagReport + "?threshold=", err: []string{"threshold", "non-negative integer"}},
		{uri: mcpserver.URILagReport + "?foo=1", err: []string{`unknown query parameter "foo"`, "threshold"}},
		// mcp-go alone cannot route these (see routeQuery): they would be "not found".
		{uri: mcpserver.URILagReport + "?threshold=7&foo=1", err: []string{`unknown query parameter "foo"`, "the only accepted parameter is threshold"}},
		{uri: mcpserver.URILagReport + "?foo=1&threshold=7", err: []string{`unknown query parameter "foo"`}},
		{uri: mcpserver.URILagReport + "?threshold=7&threshold=8", err: []string{"threshold given 2 times"}},
		{uri: mcpserver.URIOverview + "?x=1", err: []string{`unknown query parameter "x"`, "takes no query parameters"}},
	}
	for _, tt := range tests {
		t.Run(tt.uri, func(t *testing.T) {
			m, err := readJSON(t, c, tt.uri)
			if tt.err != nil {
				if err == nil {
					t.Fatalf("no error: %v", m)
				}
				for _, w := range tt.err {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("error %q lacks %q", err, w)
					}
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if m["lag_threshold"] != tt.threshold || m["groups_with_high_lag"] != tt.high || float64(len(m["high_lag_details"].([]any))) != tt.high {
				t.Errorf("threshold %v high %v details %v", m["lag_threshold"], m["groups_with_high_lag"], m["high_lag_details"])
			}
		})
	}
}

func TestClusterDownDoesNotStopTheServer(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	e := newEnv(t, []string{addr}, mcpserver.Options{})
	c := inproc.Connect(t, e.s, "", mcp.ProtocolVersion20251125)
	for uri := range contract {
		_, err := readJSON(t, c, uri)
		if err == nil || !strings.Contains(err.Error(), "connect to Kafka broker "+addr) || !strings.Contains(err.Error(), "STREAM_BROKERS") {
			t.Errorf("%s: err = %v", uri, err)
		}
	}
	req := mcp.CallToolRequest{}
	req.Params.Name = "list_topics"
	res, err := c.CallTool(context.Background(), req)
	if err != nil || !res.IsError || !strings.Contains(text(res), "connect to Kafka broker") {
		t.Errorf("tool: %+v %v", res, err)
	}
	if _, err := c.ListTools(context.Background(), mcp.ListToolsRequest{}); err != nil {
		t.Errorf("server stopped answering: %v", err)
	}
}

// text is a result's text content.
var text = inproc.Text

func TestToolsAndWriteGate(t *testing.T) {
	kc := cluster(t)
	for _, writes := range []bool{false, true} {
		e := newEnv(t, kc.Addrs(), mcpserver.Options{AllowWrites: writes})
		c := inproc.Connect(t, e.s, "", mcp.ProtocolVersion20251125)
		list, err := c.ListTools(context.Background(), mcp.ListToolsRequest{})
		if err != nil {
			t.Fatal(err)
		}
		names := map[string]mcp.Tool{}
		for _, tl := range list.Tools {
			names[tl.Name] = tl
		}
		for _, n := range []string{"list_brokers", "list_topics", "describe_topic", "list_consumer_groups", "describe_consumer_group", "describe_configs", "consume_messages"} {
			tl, ok := names[n]
			a := tl.Annotations
			if !ok || a.ReadOnlyHint == nil || !*a.ReadOnlyHint || a.OpenWorldHint == nil || !*a.OpenWorldHint || a.DestructiveHint == nil || *a.DestructiveHint {
				t.Errorf("read-only tool %s: %+v", n, a)
			}
		}
		for _, n := range []string{"produce_message", "create_topic"} {
			tl, ok := names[n]
			if ok != writes {
				t.Errorf("writes=%v: tool %s present=%v", writes, n, ok)
			}
			if ok && (tl.Annotations.DestructiveHint == nil || !*tl.Annotations.DestructiveHint || *tl.Annotations.ReadOnlyHint) {
				t.Errorf("write tool %s annotations %+v", n, tl.Annotations)
			}
		}
	}
	e := newEnv(t, kc.Addrs(), mcpserver.Options{AllowWrites: true})
	c := inproc.Connect(t, e.s, "", mcp.ProtocolVersion20251125)
	call := func(name string, args map[string]any) *mcp.CallToolResult { return callTool(t, c, name, args) }
	tests := []struct {
		name    string
		args    map[string]any
		isError bool
		want    string
	}{
		{"list_brokers", nil, false, `"is_controller": true`},
		{"describe_topic", map[string]any{"topic": "orders"}, false, `"latest_offset": 5100`},
		{"describe_topic", map[string]any{}, true, `missing required argument "topic"`},
		{"describe_topic", map[string]any{"topic": "missing"}, true, `topic "missing" does not exist`},
		{"describe_consumer_group", map[string]any{"group_id": kafkatest.GroupOrdersProcessor}, false, `"lag": 5000`},
		{"describe_consumer_group", map[string]any{"group_id": "no-such-group"}, true, `consumer group "no-such-group" does not exist`},
		{"describe_configs", map[string]any{"resource_type": "topic", "resource_name": "orders"}, false, `"min.insync.replicas"`},
		{"describe_configs", map[string]any{"resource_type": "broker", "resource_name": "9"}, true, "not a live broker"},
		{"list_consumer_groups", nil, false, `"group_id": "orders-replay"`},
		{"list_topics", nil, false, `"replication_factor": 3`},
		{"describe_configs", map[string]any{"resource_type": "broker", "resource_name": "x"}, true, "not a broker id"},
		{"describe_configs", map[string]any{"resource_type": "cluster", "resource_name": "1"}, true, `argument "resource_type" must be one of "topic", "broker", got the string "cluster"`},
		{"consume_messages", map[string]any{"topic": "orders", "offset": 0, "last": 2}, true, "either offset or last"},
		{"consume_messages", map[string]any{"topic": "orders", "max_messages": 1000}, true, `argument "max_messages" must be at most 100, got the number 1000`},
		{"consume_messages", map[string]any{"topic": "orders", "partition": 1, "last": 2}, false, `"offset": 99`},
		{"consume_messages", map[string]any{"topic": "orders", "partition": 9}, true, "has no partition 9"},
		{"produce_message", map[string]any{"topic": "audit", "value": "hello", "key": "k", "headers": map[string]any{"trace": "1"}}, false, `"offset": 10`},
		{"produce_message", map[string]any{"topic": "audit"}, true, `missing required argument "value"`},
		{"create_topic", map[string]any{"name": "created-by-tool", "partitions": 2, "replication_factor": 3}, false, `"created": true`},
		{"create_topic", map[string]any{"name": "created-by-tool", "partitions": 2, "replication_factor": 3}, true, "TOPIC_ALREADY_EXISTS"},
	}
	for _, tt := range tests {
		res := call(tt.name, tt.args)
		if res.IsError != tt.isError || !strings.Contains(text(res), tt.want) {
			t.Errorf("%s %v: isError=%v text=%s (want %q)", tt.name, tt.args, res.IsError, text(res), tt.want)
		}
	}
}

func TestPrompts(t *testing.T) {
	e := newEnv(t, []string{"127.0.0.1:1"}, mcpserver.Options{})
	c := inproc.Connect(t, e.s, "", mcp.ProtocolVersion20251125)
	ctx := context.Background()
	list, err := c.ListPrompts(ctx, mcp.ListPromptsRequest{})
	if err != nil || len(list.Prompts) != 2 {
		t.Fatalf("prompts %+v %v", list, err)
	}
	req := mcp.GetPromptRequest{}
	req.Params.Name = "investigate_consumer_lag"
	req.Params.Arguments = map[string]string{"group_id": "g1", "threshold": "5000"}
	res, err := c.GetPrompt(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	body := res.Messages[0].Content.(mcp.TextContent).Text
	for _, w := range []string{"consumer-lag-report?threshold=5000", `describe_consumer_group with group_id="g1"`} {
		if !strings.Contains(body, w) {
			t.Errorf("prompt lacks %q:\n%s", w, body)
		}
	}
	req.Params.Arguments = map[string]string{"threshold": "lots"}
	if _, err := c.GetPrompt(ctx, req); err == nil || !strings.Contains(err.Error(), "threshold") {
		t.Errorf("bad threshold: %v", err)
	}
	req.Params.Name = "troubleshoot_replication"
	req.Params.Arguments = map[string]string{"topic": "orders"}
	res, err = c.GetPrompt(ctx, req)
	if err != nil || !strings.Contains(res.Messages[0].Content.(mcp.TextContent).Text, mcpserver.URIURP) {
		t.Errorf("troubleshoot_replication: %+v %v", res, err)
	}
}

func TestSubscriptionNotifiesOnStatusChange(t *testing.T) {
	kc := cluster(t)
	e := newEnv(t, kc.Addrs(), mcpserver.Options{WatchInterval: 100 * time.Millisecond})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go e.h.Watch(ctx)
	c := inproc.Connect(t, e.s, "", mcp.ProtocolVersion20251125)
	updates := make(chan string, 16)
	c.OnNotification(func(n mcp.JSONRPCNotification) {
		if n.Method == mcp.MethodNotificationResourceUpdated {
			if uri, ok := n.Params.AdditionalFields["uri"].(string); ok {
				updates <- uri
			}
		}
	})
	sub := mcp.SubscribeRequest{}
	sub.Params.URI = mcpserver.URIHealthCheck
	if err := c.Subscribe(ctx, sub); err != nil {
		t.Fatal(err)
	}
	// Nothing changes: only timestamps move, so no notification.
	select {
	case u := <-updates:
		t.Fatalf("notified without a change: %s", u)
	case <-time.After(500 * time.Millisecond):
	}
	if err := kc.SetMetadataFault(ctx, kafkatest.UnderReplicate(kafkatest.TopicPayments, 0)); err != nil {
		t.Fatal(err)
	}
	select {
	case u := <-updates:
		if u != mcpserver.URIHealthCheck {
			t.Errorf("updated %s", u)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("no notifications/resources/updated after the partition became under-replicated")
	}
	unsub := mcp.UnsubscribeRequest{}
	unsub.Params.URI = mcpserver.URIHealthCheck
	if err := c.Unsubscribe(ctx, unsub); err != nil {
		t.Fatal(err)
	}
	kc.ClearFaults()
	select {
	case u := <-updates:
		t.Errorf("notified after unsubscribing: %s", u)
	case <-time.After(500 * time.Millisecond):
	}
}

func TestConcurrentReadsShareOneComputation(t *testing.T) {
	kc := cluster(t)
	// A slow Metadata answer keeps the first read in flight while the others arrive.
	if err := kc.SetMetadataFault(context.Background(), func(*kmsg.MetadataResponse) { time.Sleep(300 * time.Millisecond) }); err != nil {
		t.Fatal(err)
	}
	e := newEnv(t, kc.Addrs(), mcpserver.Options{})
	if _, err := e.h.Report(context.Background(), mcpserver.URIOverview); err != nil { // warm connections
		t.Fatal(err)
	}
	kc.ResetCounts()
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := e.h.Report(context.Background(), mcpserver.URIOverview); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if n := kc.Counts()["Metadata"]; n != 1 {
		t.Errorf("8 concurrent overview reads sent %d Metadata requests, want 1", n)
	}
}

func TestReadCancellation(t *testing.T) {
	silent := kafkatest.SilentBroker(t)
	e := newEnv(t, []string{silent}, mcpserver.Options{})
	ctx, cancel := context.WithTimeout(context.Background(), 150*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := e.h.Report(ctx, mcpserver.URIHealthCheck)
	if err == nil || time.Since(start) > 2*time.Second {
		t.Fatalf("err=%v after %s", err, time.Since(start))
	}
}

// TestListenStreamNotifiesOnStatusChange covers protocol 2026-07-28, where
// subscriptions/listen replaces resources/subscribe.
func TestListenStreamNotifiesOnStatusChange(t *testing.T) {
	kc := cluster(t)
	e := newEnv(t, kc.Addrs(), mcpserver.Options{WatchInterval: 100 * time.Millisecond})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go e.h.Watch(ctx)
	c := inproc.Connect(t, e.s, "", "")
	updates := make(chan mcp.JSONRPCNotification, 16)
	c.OnNotification(func(n mcp.JSONRPCNotification) {
		if n.Method == mcp.MethodNotificationResourceUpdated {
			updates <- n
		}
	})
	errs := make(chan error, 1)
	stop, err := c.ListenAsync(ctx, mcp.SubscriptionFilter{ResourceSubscriptions: []string{mcpserver.URIOverview}}, func(err error) { errs <- err })
	if err != nil {
		t.Fatal(err)
	}
	select {
	case n := <-updates:
		t.Fatalf("notified without a change: %+v", n)
	case err := <-errs:
		t.Fatal(err)
	case <-time.After(500 * time.Millisecond):
	}
	if err := kc.SetMetadataFault(ctx, kafkatest.Offline(kafkatest.TopicAudit, 0)); err != nil {
		t.Fatal(err)
	}
	select {
	case n := <-updates:
		if n.Params.AdditionalFields["uri"] != mcpserver.URIOverview || n.Params.Meta[mcp.MetaKeySubscriptionID] == nil {
			t.Errorf("notification %+v", n.Params)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("no notifications/resources/updated on the listen stream")
	}
	stop()
	kc.ClearFaults()
	select {
	case n := <-updates:
		t.Errorf("notified after the stream closed: %+v", n)
	case <-time.After(500 * time.Millisecond):
	}
}

// URIs mcp-go cannot route on its own get an answer naming the bad
// parameter in both protocol eras (the modern one has no sessions).
func TestUnroutableQueriesNameTheParameter(t *testing.T) {
	kc := cluster(t)
	e := newEnv(t, kc.Addrs(), mcpserver.Options{})
	for _, era := range []string{mcp.ProtocolVersion20251125, ""} {
		c := inproc.Connect(t, e.s, "", era)
		for uri, want := range map[string]string{
			mcpserver.URILagReport + "?threshold=7&foo=1": `unknown query parameter "foo"`,
			mcpserver.URIHealthCheck + "?threshold=7":     `unknown query parameter "threshold"`,
			mcpserver.URIURP + "?topic=orders":            `unknown query parameter "topic"`,
		} {
			_, err := readJSON(t, c, uri)
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("era %q, %s: error %v, want one containing %s", era, uri, err, want)
			}
		}
		if _, err := readJSON(t, c, "stream-mcp://no-such-report?x=1"); err == nil || !strings.Contains(strings.ToLower(err.Error()), "not found") {
			t.Errorf("era %q: unknown report answered %v, want not found", era, err)
		}
	}
}
