package mcpserver_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/mcpfleet/mcpfleet/shared/approval"
	"github.com/mcpfleet/mcpfleet/shared/e2e/inproc"
	"github.com/mcpfleet/mcpfleet/shared/toolcall"
	"github.com/mcpfleet/mcpfleet/streammcp/internal/kafka"
	"github.com/mcpfleet/mcpfleet/streammcp/internal/kafkatest"
	"github.com/mcpfleet/mcpfleet/streammcp/internal/mcpserver"
)

// pipelineEnv is streammcp with writes enabled behind a configured
// pipeline, on the seeded kfake cluster read through real sarama.
type pipelineEnv struct {
	t     *testing.T
	kcl   *kafka.Client
	s     *server.MCPServer
	audit string
}

func newPipelineEnv(t *testing.T, kc *kafkatest.Cluster, pol approval.Config) *pipelineEnv {
	t.Helper()
	kcl := newClient(t, kc.Addrs(), 2*time.Second)
	_, srv := start(t, []mcpserver.Cluster{{Name: "default", Client: kcl, LagThreshold: 1000}}, mcpserver.Options{AllowWrites: true},
		toolcall.Config{Approval: pol}, server.WithElicitation())
	return &pipelineEnv{t: t, kcl: kcl, s: srv.MCP, audit: srv.Audit}
}

// state reads what a write could change: every topic with its partitions'
// latest offsets.
func (e *pipelineEnv) state() string {
	e.t.Helper()
	ctx := context.Background()
	topics, err := e.kcl.ListTopics(ctx)
	if err != nil {
		e.t.Fatal(err)
	}
	var lines []string
	for _, tp := range topics {
		d, err := e.kcl.DescribeTopic(ctx, tp.Name)
		if err != nil {
			e.t.Fatal(err)
		}
		for _, p := range d.Partitions {
			lines = append(lines, fmt.Sprintf("%s/%d@%d", tp.Name, p.Partition, p.LatestOffset))
		}
	}
	sort.Strings(lines)
	return strings.Join(lines, " ")
}

func (e *pipelineEnv) records() []map[string]any {
	e.t.Helper()
	b, _ := os.ReadFile(e.audit)
	var out []map[string]any
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			e.t.Fatal(err)
		}
		out = append(out, m)
	}
	return out
}

func callTool(t *testing.T, c *client.Client, name string, args map[string]any) *mcp.CallToolResult {
	t.Helper()
	req := mcp.CallToolRequest{}
	req.Params.Name, req.Params.Arguments = name, args
	res, err := c.CallTool(context.Background(), req)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return res
}

// TestDryRunChangesNothing: dry runs of both write tools describe the
// Kafka request, its target and the current state, and leave every topic
// and offset as it was.
func TestDryRunChangesNothing(t *testing.T) {
	kc := cluster(t)
	e := newPipelineEnv(t, kc, approval.Config{})
	c := inproc.Connect(t, e.s, "", mcp.ProtocolVersion20251125)
	before := e.state()
	for _, tc := range []struct {
		tool string
		args map[string]any
		want []string
	}{
		{"produce_message", map[string]any{"topic": "audit", "partition": 0, "value": "hello", "key": "k", "dryRun": true},
			[]string{"Dry run — nothing was changed", `Produce (acks=all) topic="audit" partition=0 key="k"`, "partition 0 (latest offset", "Target: kafka " + kc.Addrs()[0]}},
		{"produce_message", map[string]any{"topic": "no-such-topic", "value": "x", "dryRun": true},
			[]string{"The topic does not exist", `"exists":false`}},
		{"produce_message", map[string]any{"topic": "audit", "partition": 7, "value": "x", "dryRun": true},
			[]string{"partition 7, which does not exist"}},
		{"create_topic", map[string]any{"name": "new-topic", "partitions": 3, "replication_factor": 1, "configs": map[string]any{"retention.ms": "1000"}, "dryRun": true},
			[]string{"Create topic new-topic with 3 partition(s), replication factor 1", "No topic named new-topic exists now", `CreateTopics name="new-topic" partitions=3`}},
		{"create_topic", map[string]any{"name": "orders", "dryRun": true},
			[]string{"Topic orders already exists", "TOPIC_ALREADY_EXISTS"}},
	} {
		res := callTool(t, c, tc.tool, tc.args)
		for _, w := range tc.want {
			if res.IsError || !strings.Contains(text(res), w) {
				t.Errorf("%s %v: isError=%v, lacks %q:\n%s", tc.tool, tc.args, res.IsError, w, text(res))
			}
		}
	}
	if after := e.state(); after != before {
		t.Fatalf("a dry run changed Kafka:\nbefore %s\nafter  %s", before, after)
	}
	for _, r := range e.records() {
		if r["dry_run"] != true || r["outcome"] != "ok" || !strings.HasPrefix(r["target"].(string), "kafka ") {
			t.Errorf("record %v", r)
		}
	}
}

// TestApprovalFlows: under MCP_APPROVAL=change both write tools need a
// person; a client without elicitation confirms with a code, a client with
// elicitation is asked; only an approved call changes Kafka.
func TestApprovalFlows(t *testing.T) {
	kc := cluster(t)
	e := newPipelineEnv(t, kc, approval.Config{Policy: approval.Change})

	// No elicitation (2025-11-25 client without the capability): preview + code.
	c := inproc.Connect(t, e.s, "", mcp.ProtocolVersion20251125)
	before := e.state()
	args := map[string]any{"topic": "audit", "partition": 0, "value": "approved", "key": "k"}
	first := callTool(t, c, "produce_message", args)
	if first.IsError || !strings.Contains(text(first), "Approval needed") {
		t.Fatalf("first call: %s", text(first))
	}
	if e.state() != before {
		t.Fatal("the preview produced a message")
	}
	var pr toolcall.PreviewResult
	b, _ := json.Marshal(first.StructuredContent)
	json.Unmarshal(b, &pr)
	if pr.Confirmation == nil {
		t.Fatalf("no code: %s", b)
	}
	other := map[string]any{"topic": "audit", "partition": 0, "value": "tampered", "key": "k", "confirm": pr.Confirmation.Code}
	if res := callTool(t, c, "produce_message", other); !res.IsError || !strings.Contains(text(res), "other arguments") {
		t.Fatalf("code for other arguments: %s", text(res))
	}
	if res := callTool(t, c, "create_topic", map[string]any{"name": "x", "confirm": pr.Confirmation.Code}); !res.IsError || !strings.Contains(text(res), "another tool (produce_message)") {
		t.Fatalf("code for another tool: %s", text(res))
	}
	if e.state() != before {
		t.Fatal("a refused code changed Kafka")
	}
	args["confirm"] = pr.Confirmation.Code
	if res := callTool(t, c, "produce_message", args); res.IsError || !strings.Contains(text(res), `"offset"`) {
		t.Fatalf("confirmed: %s", text(res))
	}
	if e.state() == before {
		t.Fatal("the confirmed message was not produced")
	}
	if res := callTool(t, c, "produce_message", args); !res.IsError || !strings.Contains(text(res), "already been used") {
		t.Fatalf("replay: %s", text(res))
	}

	// Elicitation on 2026-07-28 (input required): decline, then accept.
	for _, action := range []mcp.ElicitationResponseAction{mcp.ElicitationResponseActionDecline, mcp.ElicitationResponseActionAccept} {
		var asked []string
		mc, err := client.NewInProcessClientWithOptions(e.s,
			client.WithClientCapabilities(mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapability{}}),
			client.WithElicitationHandler(elicitor(func(r mcp.ElicitationRequest) mcp.ElicitationResponseAction {
				asked = append(asked, r.Params.Message)
				return action
			})))
		if err != nil {
			t.Fatal(err)
		}
		mc.Start(context.Background())
		init := mcp.InitializeRequest{}
		init.Params.ClientInfo = mcp.Implementation{Name: "elicit-client", Version: "1"}
		init.Params.ProtocolVersion = mcp.LATEST_PROTOCOL_VERSION
		if _, err := mc.Initialize(context.Background(), init); err != nil {
			t.Fatal(err)
		}
		res := callTool(t, mc, "create_topic", map[string]any{"name": "approved-topic", "partitions": 2, "replication_factor": 1})
		mc.Close()
		if len(asked) != 1 || !strings.HasPrefix(asked[0], "Create topic approved-topic with 2 partition(s)") {
			t.Errorf("the person saw %q", asked)
		}
		_, err = e.kcl.DescribeTopic(context.Background(), "approved-topic")
		if action == mcp.ElicitationResponseActionDecline {
			if !res.IsError || !strings.Contains(text(res), "declined") || err == nil {
				t.Fatalf("declined: %s (topic err %v)", text(res), err)
			}
		} else if res.IsError || err != nil {
			t.Fatalf("accepted: %s (topic err %v)", text(res), err)
		}
	}
	var got []string
	for _, r := range e.records() {
		got = append(got, fmt.Sprintf("%s:%s:%s", r["tool"], r["event"], r["approval"]))
	}
	want := "produce_message:outcome:pending produce_message:outcome:refused create_topic:outcome:refused produce_message:intent:confirmation_code produce_message:outcome:confirmation_code produce_message:outcome:refused " +
		"create_topic:outcome:pending create_topic:outcome:declined create_topic:outcome:pending create_topic:intent:person create_topic:outcome:person"
	if strings.Join(got, " ") != want {
		t.Errorf("audit\n got %s\nwant %s", strings.Join(got, " "), want)
	}
}

// TestApprovalNoneStillAudits: MCP_APPROVAL=none runs create_topic at once
// and writes its intent and outcome.
func TestApprovalNoneStillAudits(t *testing.T) {
	kc := cluster(t)
	e := newPipelineEnv(t, kc, approval.Config{Policy: approval.None})
	c := inproc.Connect(t, e.s, "", mcp.ProtocolVersion20251125)
	if res := callTool(t, c, "create_topic", map[string]any{"name": "policy-topic", "replication_factor": 1}); res.IsError {
		t.Fatal(text(res))
	}
	recs := e.records()
	if len(recs) != 2 || recs[0]["event"] != "intent" || recs[1]["approval"] != "policy" || recs[1]["class"] != "change" ||
		recs[1]["client"] != "test/1" || !strings.HasPrefix(recs[1]["identity"].(string), "local:") {
		t.Fatalf("records %v", recs)
	}
}

type elicitor func(mcp.ElicitationRequest) mcp.ElicitationResponseAction

func (f elicitor) Elicit(_ context.Context, r mcp.ElicitationRequest) (*mcp.ElicitationResult, error) {
	return &mcp.ElicitationResult{ElicitationResponse: mcp.ElicitationResponse{Action: f(r)}}, nil
}

// TestWronglyTypedArguments calls every tool with wrongly typed values for
// every argument, generated from each tool's own input schema, and expects
// an isError naming the argument and Kafka unchanged.
func TestWronglyTypedArguments(t *testing.T) {
	kc := cluster(t)
	e := newPipelineEnv(t, kc, approval.Config{Policy: approval.None})
	c := inproc.Connect(t, e.s, "", mcp.ProtocolVersion20251125)
	list, err := c.ListTools(context.Background(), mcp.ListToolsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	// valid arguments per tool, so that only the argument under test is wrong
	valid := map[string]map[string]any{
		"describe_topic":                {"topic": "orders"},
		"describe_consumer_group":       {"group_id": "orders-processor"},
		"describe_configs":              {"resource_type": "topic", "resource_name": "orders"},
		"consume_messages":              {"topic": "orders"},
		"produce_message":               {"topic": "audit", "value": "v"},
		"create_topic":                  {"name": "typed-topic"},
		"reset_consumer_group_offsets":  {"group_id": "payments-audit", "topic": "payments", "to_latest": true},
		"delete_consumer_group_offsets": {"group_id": "payments-audit", "topic": "payments"},
		"delete_consumer_group":         {"group_id": "payments-audit"},
		"delete_records":                {"topic": "audit", "partition": 0, "before_offset": 1},
		"create_partitions":             {"topic": "audit", "count": 2},
		"alter_topic_config":            {"topic": "audit", "set": map[string]any{"retention.ms": "86400000"}},
		"delete_topic":                  {"topic": "audit"},
		"get_offsets_for_times":         {"topic": "audit", "datetime": "2026-01-01T00:00:00Z"},
	}
	wrong := map[string][]any{
		"string":  {7, 1.5, true, nil, []any{"a"}, map[string]any{"a": "b"}},
		"integer": {"8", "8080", 1.5, true, nil, []any{1}, map[string]any{"n": 1}, 1e300, -1e300},
		"number":  {"8", true, nil, []any{1}, map[string]any{}},
		"boolean": {"true", 1, 0, nil, []any{true}, map[string]any{}},
		"object":  {"{}", 1, true, nil, []any{}},
		"array":   {"[]", 1, true, nil, map[string]any{}},
	}
	before := e.state()
	n := 0
	for _, tl := range list.Tools {
		for prop, schema := range tl.InputSchema.Properties {
			typ, _ := schema.(map[string]any)["type"].(string)
			for _, bad := range wrong[typ] {
				if typ == "integer" && (bad == 1e300 || bad == -1e300) {
					if _, hasMax := schema.(map[string]any)["maximum"]; !hasMax && bad == 1e300 {
						continue // an unbounded integer accepts a huge one
					}
					if _, hasMin := schema.(map[string]any)["minimum"]; !hasMin && bad == -1e300 {
						continue
					}
				}
				args := map[string]any{}
				for k, v := range valid[tl.Name] {
					args[k] = v
				}
				args[prop] = bad
				res := callTool(t, c, tl.Name, args)
				n++
				if !res.IsError || !strings.Contains(text(res), fmt.Sprintf("argument %q", prop)) {
					t.Errorf("%s %s=%#v: isError=%v %s", tl.Name, prop, bad, res.IsError, text(res))
				}
			}
		}
	}
	if n < 50 {
		t.Fatalf("only %d hostile calls generated", n)
	}
	if e.state() != before {
		t.Fatal("a wrongly typed call changed Kafka")
	}
	for _, r := range e.records() {
		if r["approval"] != "refused" || r["outcome"] != "error" {
			t.Errorf("record %v", r)
		}
	}
	t.Logf("%d wrongly typed calls over %d tools", n, len(list.Tools))
}
