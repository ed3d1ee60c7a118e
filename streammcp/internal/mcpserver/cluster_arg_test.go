package mcpserver_test

import (
	"context"
	"fmt"
	"maps"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcpfleet/mcpfleet/shared/e2e/inproc"
	"github.com/mcpfleet/mcpfleet/streammcp/internal/kafkatest"
	"github.com/mcpfleet/mcpfleet/streammcp/internal/mcpserver"
)

// TestEveryToolValidatesCluster: for every tool (writes included), an
// unknown argument and a hostile cluster value are refused with an error naming the argument and
// the configured clusters (a value of another type: that it must be a
// string), and no Kafka request reaches either cluster;
// without cluster the tool reads the first (default) cluster only, with
// cluster=c2 that cluster only. Requests are counted on the kfake
// clusters themselves (two quiet clusters: nothing else talks to them).
func TestEveryToolValidatesCluster(t *testing.T) {
	var c1, c2 *kafkatest.Cluster
	var wg sync.WaitGroup
	wg.Go(func() { c1 = kafkatest.StartQuiet(t) })
	wg.Go(func() { c2 = kafkatest.StartQuiet(t) })
	wg.Wait()
	if t.Failed() {
		t.FailNow()
	}
	_, s := newFleetEnv(t, []mcpserver.Cluster{
		{Name: "c1", Client: newClient(t, c1.Addrs(), 5*time.Second), LagThreshold: 1000},
		{Name: "c2", Client: newClient(t, c2.Addrs(), 5*time.Second), LagThreshold: 1000},
	}, mcpserver.Options{AllowWrites: true})
	c := inproc.Connect(t, s, "", mcp.ProtocolVersion20251125)
	call := func(name string, args map[string]any) *mcp.CallToolResult { return callTool(t, c, name, args) }
	tools := map[string]map[string]any{
		"list_brokers":                 {},
		"list_topics":                  {},
		"describe_topic":               {"topic": kafkatest.TopicEvents},
		"list_consumer_groups":         {},
		"describe_consumer_group":      {"group_id": kafkatest.GroupEventsSink},
		"describe_configs":             {"resource_type": "topic", "resource_name": kafkatest.TopicEvents},
		"consume_messages":             {"topic": kafkatest.TopicEvents, "last": 1},
		"produce_message":              {"topic": kafkatest.TopicEvents, "partition": 2, "value": "v"},
		"create_topic":                 {"name": "cluster-arg-%d"},
		"reset_consumer_group_offsets": {"group_id": kafkatest.GroupEventsSink, "topic": kafkatest.TopicEvents, "to_latest": true},
		// Destructive tools as dry runs: they read the named cluster only,
		// and leave the topic and group for the other tools.
		"delete_consumer_group_offsets": {"group_id": kafkatest.GroupEventsSink, "topic": kafkatest.TopicEvents, "dryRun": true},
		"delete_consumer_group":         {"group_id": kafkatest.GroupEventsSink, "dryRun": true},
		"delete_records":                {"topic": kafkatest.TopicEvents, "partition": 0, "before_offset": 1, "dryRun": true},
		"create_partitions":             {"topic": kafkatest.TopicEvents, "count": 4, "dryRun": true},
		"alter_topic_config":            {"topic": kafkatest.TopicEvents, "set": map[string]any{"retention.ms": "86400000"}, "dryRun": true},
		"delete_topic":                  {"topic": kafkatest.TopicEvents, "dryRun": true},
		"get_offsets_for_times":         {"topic": kafkatest.TopicEvents, "datetime": "2026-01-01T00:00:00Z"},
	}
	list, err := c.ListTools(context.Background(), mcp.ListToolsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Tools) != len(tools) {
		t.Fatalf("%d tools listed, the table has %d: add the new tool to it", len(list.Tools), len(tools))
	}
	n := 0
	withArgs := func(tool string, cluster any, set bool) map[string]any {
		args := maps.Clone(tools[tool])
		if name, ok := args["name"].(string); ok {
			n++
			args["name"] = fmt.Sprintf(name, n) // a new topic each time
		}
		if set {
			args["cluster"] = cluster
		}
		return args
	}
	for _, tool := range list.Tools {
		if _, ok := tools[tool.Name]; !ok {
			t.Fatalf("tool %s is not in the table", tool.Name)
		}
		t.Run(tool.Name, func(t *testing.T) {
			// The default cluster without cluster; c2 with it.
			for _, tt := range []struct {
				cluster     any
				set         bool
				read, other *kafkatest.Cluster
			}{{nil, false, c1, c2}, {"c2", true, c2, c1}} {
				tt.read.ResetCounts()
				tt.other.ResetCounts()
				if res := call(tool.Name, withArgs(tool.Name, tt.cluster, tt.set)); res.IsError {
					t.Fatalf("cluster %v: %s", tt.cluster, text(res))
				}
				if tt.read.Total() == 0 || tt.other.Total() != 0 {
					t.Errorf("cluster %v: %d requests on the cluster it names, %d on the other", tt.cluster, tt.read.Total(), tt.other.Total())
				}
			}
			for _, bad := range hostileClusterNames("c2") {
				c1.ResetCounts()
				c2.ResetCounts()
				res := call(tool.Name, withArgs(tool.Name, bad, true))
				msg := text(res)
				// A string names the configured clusters; a value of
				// another type is told it must be a string.
				want := []string{`argument "cluster" must be one of "c1", "c2", got the string`}
				if _, ok := bad.(string); !ok {
					want = []string{`argument "cluster" must be a string, got `}
				}
				if !res.IsError || !strings.Contains(msg, want[0]) || !strings.Contains(msg, "nothing was run") || len(msg) > 600 {
					t.Errorf("cluster=%.80v: isError=%v %.700s", bad, res.IsError, msg)
				}
				if n1, n2 := c1.Total(), c2.Total(); n1+n2 != 0 {
					t.Errorf("cluster=%.80v sent %d Kafka requests to c1 and %d to c2: %v %v", bad, n1, n2, c1.Counts(), c2.Counts())
				}
			}
			// An argument the schema does not name is refused, not
			// ignored (a misspelt partition must not send a message to
			// another one), and nothing reaches Kafka.
			for _, unknown := range []string{"Cluster", "cluster_name", "partiton", "topic_name", "dryrun", "", "__proto__"} {
				c1.ResetCounts()
				c2.ResetCounts()
				args := withArgs(tool.Name, nil, false)
				args[unknown] = "c2"
				res := call(tool.Name, args)
				if msg := text(res); !res.IsError || !strings.Contains(msg, `unknown argument "`+unknown+`"`) || !strings.Contains(msg, "nothing was run") {
					t.Errorf("argument %q: isError=%v %.300s", unknown, res.IsError, msg)
				}
				if n1, n2 := c1.Total(), c2.Total(); n1+n2 != 0 {
					t.Errorf("argument %q sent %d Kafka requests to c1 and %d to c2", unknown, n1, n2)
				}
			}
		})
	}
}
