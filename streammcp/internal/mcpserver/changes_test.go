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
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/mcpfleet/mcpfleet/shared/approval"
	"github.com/mcpfleet/mcpfleet/shared/e2e/inproc"
	"github.com/mcpfleet/mcpfleet/shared/toolcall"
	"github.com/mcpfleet/mcpfleet/streammcp/internal/config"
	"github.com/mcpfleet/mcpfleet/streammcp/internal/kafkatest"
	"github.com/mcpfleet/mcpfleet/streammcp/internal/mcpserver"
)

// The change tests run on a cluster of their own with no live consumer, so
// that request counts are the server's alone:
//   - clicks: 3 partitions, RF 3, 100 messages each, message i stamped
//     clicksBase + i minutes;
//   - group clicks-sink: Empty, committed at 50 on every partition.
const (
	topicClicks = "clicks"
	groupSink   = "clicks-sink"
)

var clicksBase = time.Date(2026, 11, 24, 8, 0, 0, 0, time.UTC)

func startChanges(t testing.TB) *kafkatest.Cluster {
	t.Helper()
	kc, err := kafkatest.Start(kafkatest.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(kc.Close)
	ctx := context.Background()
	if err := kc.CreateTopic(ctx, topicClicks, 3, 3, nil); err != nil {
		t.Fatal(err)
	}
	var recs []*kgo.Record
	for p := range int32(3) {
		for i := range 100 {
			recs = append(recs, &kgo.Record{Topic: topicClicks, Partition: p, Key: fmt.Appendf(nil, "user-%d", i%7),
				Value: fmt.Appendf(nil, `{"p":%d,"i":%d}`, p, i), Timestamp: clicksBase.Add(time.Duration(i) * time.Minute)})
		}
	}
	p, err := kgo.NewClient(append(kc.ClientOpts(), kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.ProducerLinger(0))...)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	if err := p.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
	if err := kc.Commit(ctx, groupSink, map[string]map[int32]int64{topicClicks: {0: 50, 1: 50, 2: 50}}); err != nil {
		t.Fatal(err)
	}
	return kc
}

// changeEnv is streammcp over one or more clusters behind a configured
// pipeline (audit to a file), with kadm as the independent reader.
type changeEnv struct {
	t     *testing.T
	kc    *kafkatest.Cluster
	adm   *kadm.Client
	s     *server.MCPServer
	c     *client.Client
	audit string
}

func newChangeEnv(t *testing.T, kc *kafkatest.Cluster, pol approval.Config, clusters ...mcpserver.Cluster) *changeEnv {
	t.Helper()
	if len(clusters) == 0 {
		clusters = []mcpserver.Cluster{{Name: "default", Client: newClient(t, kc.Addrs(), 5*time.Second), LagThreshold: 1000,
			Writes: &config.Writes{Allowed: true, AllowedVar: "STREAM_ALLOW_WRITES", TopicsVar: "STREAM_WRITE_TOPICS", GroupsVar: "STREAM_WRITE_GROUPS"}}}
	}
	_, srv := start(t, clusters, mcpserver.Options{}, toolcall.Config{Approval: pol})
	cl, err := kc.Client()
	if err != nil {
		t.Fatal(err)
	}
	return &changeEnv{t: t, kc: kc, adm: kadm.NewClient(cl), s: srv.MCP, c: inproc.Connect(t, srv.MCP, "", mcp.ProtocolVersion20251125), audit: srv.Audit}
}

func (e *changeEnv) call(tool string, args map[string]any) *mcp.CallToolResult {
	e.t.Helper()
	req := mcp.CallToolRequest{}
	req.Params.Name, req.Params.Arguments = tool, args
	res, err := e.c.CallTool(context.Background(), req)
	if err != nil {
		e.t.Fatalf("%s: %v", tool, err)
	}
	return res
}

// committed reads a group's committed offsets with kadm: "topic/p=offset".
func (e *changeEnv) committed(group string) map[string]int64 {
	e.t.Helper()
	resp, err := e.adm.FetchOffsets(context.Background(), group)
	if err != nil {
		e.t.Fatalf("kadm fetch offsets of %s: %v", group, err)
	}
	out := map[string]int64{}
	resp.Each(func(o kadm.OffsetResponse) {
		if o.Err == nil {
			out[fmt.Sprintf("%s/%d", o.Topic, o.Partition)] = o.At
		}
	})
	return out
}

// logOffsets reads every partition's log start and end with kadm.
func (e *changeEnv) logOffsets(topics ...string) (start, end map[string]int64) {
	e.t.Helper()
	ctx := context.Background()
	read := func(l kadm.ListedOffsets, err error) map[string]int64 {
		if err != nil {
			e.t.Fatal(err)
		}
		out := map[string]int64{}
		l.Each(func(o kadm.ListedOffset) { out[fmt.Sprintf("%s/%d", o.Topic, o.Partition)] = o.Offset })
		return out
	}
	return read(e.adm.ListStartOffsets(ctx, topics...)), read(e.adm.ListEndOffsets(ctx, topics...))
}

// snapshot is everything a change could move, read with kadm: committed
// offsets of the groups, log start and end offsets, partition counts and
// non-default configs of every topic.
func (e *changeEnv) snapshot(groups ...string) string {
	e.t.Helper()
	ctx := context.Background()
	var lines []string
	for _, g := range groups {
		for k, v := range e.committed(g) {
			lines = append(lines, fmt.Sprintf("commit %s %s=%d", g, k, v))
		}
	}
	td, err := e.adm.ListTopics(ctx)
	if err != nil {
		e.t.Fatal(err)
	}
	names := td.Names()
	start, end := e.logOffsets(names...)
	for k, v := range start {
		lines = append(lines, fmt.Sprintf("log %s %d..%d", k, v, end[k]))
	}
	for _, name := range names {
		lines = append(lines, fmt.Sprintf("topic %s partitions=%d", name, len(td[name].Partitions)))
	}
	cfgs, err := e.adm.DescribeTopicConfigs(ctx, names...)
	if err != nil {
		e.t.Fatal(err)
	}
	for _, rc := range cfgs {
		for _, c := range rc.Configs {
			if c.Source == 1 { // DYNAMIC_TOPIC_CONFIG
				lines = append(lines, fmt.Sprintf("config %s %s=%s", rc.Name, c.Key, c.MaybeValue()))
			}
		}
	}
	gl, err := e.adm.ListGroups(ctx)
	if err != nil {
		e.t.Fatal(err)
	}
	for _, g := range gl.Groups() {
		lines = append(lines, "group "+g)
	}
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}

func (e *changeEnv) records() []map[string]any {
	e.t.Helper()
	b, _ := os.ReadFile(e.audit)
	var out []map[string]any
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			e.t.Fatal(err)
		}
		out = append(out, m)
	}
	return out
}

// preview decodes a dry run's structured state into v.
func preview(t testing.TB, res *mcp.CallToolResult, v any) toolcall.PreviewResult {
	t.Helper()
	if res.IsError {
		t.Fatalf("dry run failed: %s", text(res))
	}
	var pr toolcall.PreviewResult
	b, _ := json.Marshal(res.StructuredContent)
	if err := json.Unmarshal(b, &pr); err != nil {
		t.Fatal(err)
	}
	if v != nil {
		sb, _ := json.Marshal(pr.State)
		if err := json.Unmarshal(sb, v); err != nil {
			t.Fatal(err)
		}
	}
	return pr
}

func with(base map[string]any, kv ...any) map[string]any {
	out := map[string]any{}
	for k, v := range base {
		out[k] = v
	}
	for i := 0; i+1 < len(kv); i += 2 {
		out[kv[i].(string)] = kv[i+1]
	}
	return out
}

func kadmClient(cl *kgo.Client) *kadm.Client { return kadm.NewClient(cl) }
