package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"net"
	"net/http"
	"os"
	"os/exec"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpfleet/mcpfleet/shared/e2e"
	"github.com/mcpfleet/mcpfleet/shared/e2e/appstest"
	"github.com/mcpfleet/mcpfleet/shared/metrics/promtest"
	"github.com/mcpfleet/mcpfleet/shared/toolcall/toolcalltest"
	"github.com/mcpfleet/mcpfleet/streammcp/internal/kafkatest"
)

// -update rewrites the golden files (e2e.Golden reads the flag).
var _ = flag.Bool("update", false, "rewrite testdata/*.golden.json")

// seededCluster starts the in-process 3-broker cluster with the standard
// scenario and returns its STREAM_BROKERS value.
func seededCluster(t *testing.T) (*kafkatest.Cluster, string) {
	t.Helper()
	kc := kafkatest.StartSeeded(t)
	return kc, strings.Join(kc.Addrs(), ",")
}

func TestSurfaceGolden(t *testing.T) {
	bin := e2e.Build(t, ".")
	// Listing needs no cluster: the server starts with an unreachable one.
	env := []string{"STREAM_BROKERS=127.0.0.1:1"}
	t.Run("stdio", func(t *testing.T) {
		surfaceGolden(t, "testdata/surface.golden.json", e2e.List(t, e2e.Stdio(t, bin, env)))
	})
	t.Run("streamable HTTP", func(t *testing.T) {
		srv := e2e.StartHTTP(t, bin, env)
		surfaceGolden(t, "testdata/surface.golden.json", e2e.List(t, e2e.Connect(t, srv.MCPURL(), nil)))
	})
	t.Run("writes allowed", func(t *testing.T) {
		surfaceGolden(t, "testdata/surface-writes.golden.json", e2e.List(t, e2e.Stdio(t, bin, append(env, "STREAM_ALLOW_WRITES=true"))))
	})
	// A client that declares MCP Apps sees the views: the ui:// resources,
	// get_consumer_lag and get_cluster_health, _meta.ui on them and on
	// every change tool. The goldens above are what every other client
	// sees, unchanged; with MCP_APPS=off an apps client sees them too.
	t.Run("apps client", func(t *testing.T) {
		surfaceGolden(t, "testdata/surface-apps.golden.json", e2e.List(t, appstest.Stdio(t, bin, env)))
	})
	t.Run("apps client, writes allowed", func(t *testing.T) {
		surfaceGolden(t, "testdata/surface-apps-writes.golden.json", e2e.List(t, appstest.Stdio(t, bin, append(env, "STREAM_ALLOW_WRITES=true"))))
	})
	t.Run("apps client, MCP_APPS=off", func(t *testing.T) {
		surfaceGolden(t, "testdata/surface-writes.golden.json", e2e.List(t, appstest.Stdio(t, bin, append(env, "STREAM_ALLOW_WRITES=true", "MCP_APPS=off"))))
	})
}

// surfaceGolden compares the tools with the golden file by JSON meaning
// (toolcalltest.ToolsDiff: key order and equivalent spellings of one schema
// aside) and the resources, templates and prompts exactly.
func surfaceGolden(t *testing.T, path string, got e2e.Surface) {
	t.Helper()
	if f := flag.Lookup("update"); f != nil && f.Value.String() == "true" {
		e2e.Golden(t, path, got)
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	gotJSON, err := json.Marshal(got)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range toolcalltest.ToolsDiff(want, gotJSON) {
		t.Errorf("%s: %s", path, d)
	}
	var w, g map[string]json.RawMessage
	if err := json.Unmarshal(want, &w); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(gotJSON, &g); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"resources", "resourceTemplates", "prompts"} {
		var wv, gv any
		_ = json.Unmarshal(w[k], &wv)
		_ = json.Unmarshal(g[k], &gv)
		if !reflect.DeepEqual(wv, gv) {
			t.Errorf("%s: %s differ from the golden file", path, k)
		}
	}
}

func readJSON(t *testing.T, cs *mcp.ClientSession, uri string) map[string]any {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
	if err != nil {
		t.Fatalf("read %s: %v", uri, err)
	}
	if len(res.Contents) != 1 || res.Contents[0].MIMEType != "application/json" {
		t.Fatalf("read %s: %+v", uri, res.Contents)
	}
	var m map[string]any
	if err := json.Unmarshal([]byte(res.Contents[0].Text), &m); err != nil {
		t.Fatalf("read %s: %v", uri, err)
	}
	return m
}

func TestReadsAllFourResources(t *testing.T) {
	_, brokers := seededCluster(t)
	bin := e2e.Build(t, ".")
	env := []string{"STREAM_BROKERS=" + brokers}
	sessions := map[string]func(t *testing.T) *mcp.ClientSession{
		"stdio":            func(t *testing.T) *mcp.ClientSession { return e2e.Stdio(t, bin, env) },
		"streamable HTTP":  func(t *testing.T) *mcp.ClientSession { return e2e.Connect(t, e2e.StartHTTP(t, bin, env).MCPURL(), nil) },
		"stdio 2026-07-28": func(t *testing.T) *mcp.ClientSession { return e2e.Stdio(t, bin, env, e2e.Protocol(e2e.Modern)) },
	}
	for name, open := range sessions {
		t.Run(name, func(t *testing.T) {
			cs := open(t)
			o := readJSON(t, cs, "stream-mcp://overview")
			if o["broker_count"] != 3.0 || o["partition_count"] != 10.0 || o["health_status"] != "healthy" {
				t.Errorf("overview %v", o)
			}
			h := readJSON(t, cs, "stream-mcp://health-check")
			if h["overall_status"] != "warning" || h["consumer_status"].(map[string]any)["groups_with_high_lag"] != 2.0 {
				t.Errorf("health-check %v", h)
			}
			u := readJSON(t, cs, "stream-mcp://under-replicated-partitions")
			if u["under_replicated_partition_count"] != 0.0 || len(u["details"].([]any)) != 0 {
				t.Errorf("under-replicated %v", u)
			}
			l := readJSON(t, cs, "stream-mcp://consumer-lag-report")
			if l["group_count"] != 4.0 || l["lag_threshold"] != 1000.0 || len(l["high_lag_details"].([]any)) != 2 {
				t.Errorf("lag %v", l)
			}
			l = readJSON(t, cs, "stream-mcp://consumer-lag-report?threshold=5000")
			if l["lag_threshold"] != 5000.0 || len(l["high_lag_details"].([]any)) != 1 {
				t.Errorf("lag at 5000 %v", l)
			}
			_, err := cs.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: "stream-mcp://consumer-lag-report?threshold=-3"})
			if err == nil || !strings.Contains(err.Error(), "threshold") {
				t.Errorf("bad threshold: %v", err)
			}
			res := e2e.CallTool(t, cs, "describe_consumer_group", map[string]any{"group_id": kafkatest.GroupOrdersProcessor})
			if res.IsError || !strings.Contains(e2e.Text(res), `"lag": 5000`) {
				t.Errorf("describe_consumer_group: %s", e2e.Text(res))
			}
		})
	}
}

func TestStartsWithClusterDownAndRecovers(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	bin := e2e.Build(t, ".")
	cs := e2e.Stdio(t, bin, []string{"STREAM_BROKERS=127.0.0.1:" + strconv.Itoa(port), "STREAM_TIMEOUT=2s"})
	start := time.Now()
	_, err = cs.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: "stream-mcp://overview"})
	if err == nil || !strings.Contains(err.Error(), "connect to Kafka broker 127.0.0.1:"+strconv.Itoa(port)) {
		t.Fatalf("read with the cluster down: %v", err)
	}
	if d := time.Since(start); d > 4*time.Second {
		t.Errorf("error took %s with STREAM_TIMEOUT=2s", d)
	}
	kc, err := kafkatest.Start(kafkatest.Options{Ports: []int{port, 0, 0}})
	if err != nil {
		t.Fatal(err)
	}
	defer kc.Close()
	o := readJSON(t, cs, "stream-mcp://overview")
	if o["broker_count"] != 3.0 {
		t.Errorf("after the cluster came up: %v", o)
	}
}

func TestHTTPRefusesUnauthenticatedCalls(t *testing.T) {
	bin := e2e.Build(t, ".")
	srv := e2e.StartHTTP(t, bin, append([]string{"STREAM_BROKERS=127.0.0.1:1"}, e2e.OAuthEnv...))
	e2e.RequireUnauthorized(t, srv.MCPURL(), `{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{"uri":"stream-mcp://overview"}}`)
}

func TestConfigErrorExitsWithUsageStatus(t *testing.T) {
	bin := e2e.Build(t, ".")
	cmd := exec.Command(bin)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "STREAM_TIMEOUT=soon", "STREAM_LAG_THRESHOLD=-1", "STREAM_SASL_MECHANISM=KERBEROS", "STREAM_SASL_PASSWORD=hunter2"}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err := cmd.Run()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 2 {
		t.Fatalf("exit = %v, want status 2", err)
	}
	for _, want := range []string{"STREAM_BROKERS", "STREAM_TIMEOUT", "STREAM_LAG_THRESHOLD", "STREAM_SASL_MECHANISM", "4 problems"} {
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr.String())
		}
	}
	if strings.Contains(stderr.String(), "hunter2") {
		t.Errorf("stderr echoes the password:\n%s", stderr.String())
	}
}

func TestVersionAndHelp(t *testing.T) {
	var out, errb bytes.Buffer
	if code := run(context.Background(), []string{"--version"}, func(string) string { return "" }, nil, &out, &errb); code != 0 || !strings.HasPrefix(out.String(), "streammcp ") {
		t.Errorf("--version: %d %q", code, out.String())
	}
	out.Reset()
	if code := run(context.Background(), []string{"--help"}, func(string) string { return "" }, nil, &out, &errb); code != 0 {
		t.Errorf("--help: %d", code)
	}
	for _, v := range []string{"STREAM_BROKERS", "STREAM_LAG_THRESHOLD", "STREAM_ALLOW_WRITES", "STREAM_WATCH_INTERVAL", "MCP_TRANSPORT"} {
		if !strings.Contains(out.String(), v) {
			t.Errorf("--help lacks %s", v)
		}
	}
}

// TestSubscriptionOverTransports subscribes to the health-check through the
// built binary and expects notifications/resources/updated once a
// partition becomes under-replicated.
func TestSubscriptionOverTransports(t *testing.T) {
	kc, brokers := seededCluster(t)
	bin := e2e.Build(t, ".")
	env := []string{"STREAM_BROKERS=" + brokers, "STREAM_WATCH_INTERVAL=1s"}
	srv := e2e.StartHTTP(t, bin, env)
	transports := map[string]func() mcp.Transport{
		"stdio": func() mcp.Transport {
			cmd := exec.Command(bin)
			cmd.Env = append([]string{"PATH=" + os.Getenv("PATH")}, env...)
			return &mcp.CommandTransport{Command: cmd}
		},
		"streamable HTTP": func() mcp.Transport { return &mcp.StreamableClientTransport{Endpoint: srv.MCPURL(), MaxRetries: -1} },
	}
	for name, tr := range transports {
		t.Run(name, func(t *testing.T) {
			kc.ClearFaults()
			updated := make(chan string, 8)
			c := mcp.NewClient(&mcp.Implementation{Name: "streammcp-e2e", Version: "test"}, &mcp.ClientOptions{
				ResourceUpdatedHandler: func(_ context.Context, r *mcp.ResourceUpdatedNotificationRequest) { updated <- r.Params.URI },
			})
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			cs, err := c.Connect(ctx, tr(), &mcp.ClientSessionOptions{ProtocolVersion: e2e.Legacy})
			if err != nil {
				t.Fatal(err)
			}
			defer cs.Close()
			if err := cs.Subscribe(ctx, &mcp.SubscribeParams{URI: "stream-mcp://health-check"}); err != nil {
				t.Fatal(err)
			}
			time.Sleep(1500 * time.Millisecond) // let the server take its baseline
			if err := kc.SetMetadataFault(ctx, kafkatest.UnderReplicate(kafkatest.TopicOrders, 3)); err != nil {
				t.Fatal(err)
			}
			select {
			case uri := <-updated:
				if uri != "stream-mcp://health-check" {
					t.Errorf("updated %s", uri)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("no notifications/resources/updated within 10s")
			}
		})
	}
}

func TestFleetConfigErrorNamesTheClusterAndVariable(t *testing.T) {
	bin := e2e.Build(t, ".")
	cmd := exec.Command(bin)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "STREAM_CLUSTERS=prod,staging", "STREAM_PROD_BROKERS=p1:9092",
		"STREAM_STAGING_LAG_THRESHOLD=lots", "STREAM_STAGING_SASL_MECHANISM=PLAIN", "STREAM_STAGING_SASL_PASSWORD=hunter2"}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err := cmd.Run()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 2 {
		t.Fatalf("exit = %v, want status 2", err)
	}
	for _, want := range []string{"3 problems", "cluster staging: STREAM_STAGING_BROKERS: not set", `cluster staging: STREAM_STAGING_LAG_THRESHOLD="lots": invalid`,
		"cluster staging: STREAM_STAGING_SASL_USERNAME: not set"} {
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr.String())
		}
	}
	if strings.Contains(stderr.String(), "hunter2") || strings.Contains(stderr.String(), "cluster prod") {
		t.Errorf("stderr:\n%s", stderr.String())
	}
}

// TestFleetOverStdio runs the binary with two clusters and reads the fleet
// document, a cluster report and a seed URI.
func TestFleetOverStdio(t *testing.T) {
	_, prod := seededCluster(t)
	staging := kafkatest.StartQuiet(t)
	bin := e2e.Build(t, ".")
	cs := e2e.Stdio(t, bin, []string{"STREAM_CLUSTERS=prod,staging", "STREAM_PROD_BROKERS=" + prod,
		"STREAM_STAGING_BROKERS=" + strings.Join(staging.Addrs(), ","), "STREAM_STAGING_LAG_THRESHOLD=50"})
	f := readJSON(t, cs, "stream-mcp://clusters")
	cl := f["clusters"].([]any)
	if len(cl) != 2 || cl[0].(map[string]any)["cluster"] != "prod" || cl[0].(map[string]any)["groups_with_high_lag"] != 2.0 ||
		cl[1].(map[string]any)["cluster"] != "staging" || cl[1].(map[string]any)["health_status"] != "healthy" {
		t.Errorf("fleet %v", f)
	}
	l := readJSON(t, cs, "stream-mcp://clusters/staging/consumer-lag-report")
	if l["cluster"] != "staging" || l["lag_threshold"] != 50.0 || l["group_count"] != 1.0 {
		t.Errorf("staging lag %v", l)
	}
	if o := readJSON(t, cs, "stream-mcp://overview"); o["cluster"] != nil || o["partition_count"] != 10.0 {
		t.Errorf("seed overview serves prod without cluster: %v", o)
	}
}

// TestRealPrometheus runs the binary over HTTP with two clusters — prod
// (the seeded scenario, lagging groups) and staging (nothing listens) —
// lets Debian's prometheus scrape it and evaluate testdata/alerts.yml
// (the README's rules, with the lag threshold lowered to the scenario's),
// and asks it in PromQL for tool-call counts, Kafka request counts and the
// lag gauge; both alerts become active for the right labels only.
func TestRealPrometheus(t *testing.T) {
	promtest.Binary(t, "prometheus")
	_, prod := seededCluster(t)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	refused := l.Addr().String()
	l.Close()
	rules, err := os.ReadFile("testdata/alerts.yml")
	if err != nil {
		t.Fatal(err)
	}
	// The scenario's lags are 5000, 5100 and 80: a threshold of 5050 fires for one group only.
	testRules := strings.Replace(string(rules), "(mcpfleet_kafka_consumergroup_lag) > 10000", "(mcpfleet_kafka_consumergroup_lag) > 5050", 1)
	if testRules == string(rules) {
		t.Fatal("the lag rule's expression changed: update this test")
	}
	run := promtest.Run(t, e2e.Build(t, "."), promtest.Scenario{
		Server: "streammcp",
		Env: []string{"STREAM_CLUSTERS=prod,staging", "STREAM_PROD_BROKERS=" + prod, "STREAM_STAGING_BROKERS=" + refused,
			"STREAM_WATCH_INTERVAL=1s", "STREAM_TIMEOUT=10s"},
		Anonymous: true,
		Rules:     testRules,
		Calls: []promtest.Call{
			{Tool: "list_brokers", Args: map[string]any{}, Times: 3},
			{Tool: "list_topics", Args: map[string]any{"cluster": "staging"}, Want: promtest.ToolError, Times: 2},
		},
		// Besides the counts the calls and refused tokens imply (Scenario.Implied).
		Expect: map[string]float64{
			// The watcher reads prod every second: requests of each report API, ok.
			`count(sum by (operation) (mcpfleet_backend_requests_total{S,backend="prod",outcome="ok",operation=~"Metadata|DescribeCluster|DescribeConfigs|ListGroups|DescribeGroups|OffsetFetch|ListOffsets"}) > 0)`: 7,
			`count(mcpfleet_backend_requests_total{S,backend="prod",outcome!="ok"}) or vector(0)`:                                                                                                                    0,
			`count(mcpfleet_backend_requests_total{S,backend="staging",operation="Metadata",outcome="error"} > 2)`:                                                                                                   1,
			`mcpfleet_kafka_consumergroup_lag{S,cluster="prod",group="orders-replay"}`:                                                                                                                               5100,
			`mcpfleet_kafka_consumergroup_lag{S,cluster="prod",group="payments-audit"}`:                                                                                                                              80,
			`mcpfleet_kafka_cluster_up{S,cluster="staging"}`:                                                                                                                                                         0,
			`mcpfleet_kafka_brokers{S,cluster="prod"}`:                                                                                                                                                               3,
		},
		Alerts: []promtest.WantAlert{
			{Name: "KafkaBackendFailing", Labels: map[string]string{"backend": "staging"}},
			{Name: "KafkaConsumerGroupLagHigh", Labels: map[string]string{"cluster": "prod", "group": "orders-replay"}},
		},
	})
	resp, err := http.Get(run.Base + "/readyz")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("/readyz with prod answering: HTTP %d", resp.StatusCode)
	}
	alerts, err := run.Prom.Alerts()
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range alerts {
		if a.Labels["backend"] == "prod" || (a.Labels["alertname"] == "KafkaConsumerGroupLagHigh" && a.Labels["group"] != "orders-replay") {
			t.Errorf("alert for a healthy target: %v", a.Labels)
		}
	}
}

// TestAlertRulesAreValidAndDocumented: promtool accepts testdata/alerts.yml
// and the README's Monitoring section shows exactly those rules.
func TestAlertRulesAreValidAndDocumented(t *testing.T) {
	rules, err := os.ReadFile("testdata/alerts.yml")
	if err != nil {
		t.Fatal(err)
	}
	promtest.CheckRules(t, string(rules))
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(readme), "```yaml\n"+string(rules)+"```") {
		t.Error("README.md does not show testdata/alerts.yml verbatim in a yaml block")
	}
}

// TestAlertRulesFire runs promtool's rule tests on testdata/alerts.yml (the
// README's rules): a cluster whose requests all fail fires
// KafkaBackendFailing after its "for", a healthy one and timeouts below half
// do not; a group lagging past 10000 for 15 minutes fires
// KafkaConsumerGroupLagHigh, a short spike and a group below it do not.
func TestAlertRulesFire(t *testing.T) {
	rules, err := os.ReadFile("testdata/alerts.yml")
	if err != nil {
		t.Fatal(err)
	}
	promtest.TestRules(t, string(rules), `rule_files: [rules.yml]
evaluation_interval: 1m
tests:
  - interval: 1m
    input_series:
      - series: 'mcpfleet_backend_requests_total{server="streammcp",backend="prod",operation="Metadata",outcome="ok"}'
        values: '0+10x60'
      - series: 'mcpfleet_backend_requests_total{server="streammcp",backend="prod",operation="Metadata",outcome="timeout"}'
        values: '0+2x60'
      - series: 'mcpfleet_backend_requests_total{server="streammcp",backend="staging",operation="Metadata",outcome="error"}'
        values: '0+4x60'
      - series: 'mcpfleet_kafka_consumergroup_lag{server="streammcp",cluster="prod",group="orders-replay"}'
        values: '20000x60'
      - series: 'mcpfleet_kafka_consumergroup_lag{server="streammcp",cluster="prod",group="payments-audit"}'
        values: '80x60'
      - series: 'mcpfleet_kafka_consumergroup_lag{server="streammcp",cluster="staging",group="burst"}'
        values: '0x10 50000x5 0x45'
    alert_rule_test:
      - eval_time: 3m
        alertname: KafkaBackendFailing
        exp_alerts: []
      - eval_time: 10m
        alertname: KafkaBackendFailing
        exp_alerts:
          - exp_labels: {severity: critical, server: streammcp, backend: staging}
            exp_annotations:
              summary: "Kafka cluster staging: 100% of requests fail"
      - eval_time: 10m
        alertname: KafkaConsumerGroupLagHigh
        exp_alerts: []
      - eval_time: 30m
        alertname: KafkaConsumerGroupLagHigh
        exp_alerts:
          - exp_labels: {severity: warning, server: streammcp, cluster: prod, group: orders-replay}
            exp_annotations:
              summary: "Consumer group orders-replay on prod lags 20000 messages"
`)
}

// TestReadyz: /readyz is 503 naming each cluster when none answers a
// Metadata request, and 200 once one does.
func TestReadyz(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	refused := l.Addr().String()
	l.Close()
	quiet := kafkatest.StartQuiet(t)
	bin := e2e.Build(t, ".")
	get := func(srv *e2e.HTTPServer) (int, string) {
		t.Helper()
		resp, err := http.Get(srv.Base + "/readyz")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var b bytes.Buffer
		b.ReadFrom(resp.Body)
		return resp.StatusCode, b.String()
	}
	down := e2e.StartHTTP(t, bin, []string{"STREAM_CLUSTERS=prod,dev", "STREAM_PROD_BROKERS=" + refused, "STREAM_DEV_BROKERS=" + refused, "STREAM_TIMEOUT=2s"})
	code, body := get(down)
	if code != http.StatusServiceUnavailable || !strings.Contains(body, "no Kafka cluster answers a metadata request") ||
		!strings.Contains(body, "cluster prod: connect to Kafka broker "+refused) || !strings.Contains(body, "cluster dev: ") || !strings.Contains(body, "STREAM_DEV_BROKERS") {
		t.Errorf("no cluster up: %d %s", code, body)
	}
	half := e2e.StartHTTP(t, bin, []string{"STREAM_CLUSTERS=prod,dev", "STREAM_PROD_BROKERS=" + strings.Join(quiet.Addrs(), ","), "STREAM_DEV_BROKERS=" + refused, "STREAM_TIMEOUT=2s"})
	if code, body := get(half); code != http.StatusOK {
		t.Errorf("prod up, dev down: %d %s", code, body)
	}
}
