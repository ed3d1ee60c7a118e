package mcpserver_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/mcpfleet/mcpfleet/shared/approval"
	"github.com/mcpfleet/mcpfleet/shared/toolcall"
	"github.com/mcpfleet/mcpfleet/streammcp/internal/kafka"
)

// adminCase is one operation checked the same way: its dry run changes
// nothing kadm can see, its preview's figures are what kadm reads after
// the run, a change behind the server's back between preview and confirm
// is refused, and intent and outcome are audited.
type adminCase struct {
	tool string
	args map[string]any
	// class is the call's class.
	class string
	// summary lists words the preview must hold.
	summary []string
	// behind changes the cluster the way another client would.
	behind func(t *testing.T, e *changeEnv)
	// check compares the preview's state with what kadm reads after the run.
	check func(t *testing.T, e *changeEnv, state json.RawMessage)
}

func TestAdminOperations(t *testing.T) {
	ctx := context.Background()
	commit := func(group string, offs map[int32]int64) func(t *testing.T, e *changeEnv) {
		return func(t *testing.T, e *changeEnv) {
			if err := e.kc.Commit(ctx, group, map[string]map[int32]int64{topicClicks: offs}); err != nil {
				t.Fatal(err)
			}
		}
	}
	setConfig := func(k, v string) func(t *testing.T, e *changeEnv) {
		return func(t *testing.T, e *changeEnv) {
			r, err := e.adm.AlterTopicConfigs(ctx, []kadm.AlterConfig{{Name: k, Value: &v}}, topicClicks)
			if err != nil || r[0].Err != nil {
				t.Fatalf("alter behind the back: %v %v", err, r)
			}
		}
	}
	cases := []adminCase{
		{
			tool: "delete_consumer_group_offsets", args: map[string]any{"group_id": groupSink, "topic": topicClicks, "partitions": []any{0, 2}},
			class: "destructive", summary: []string{"2 committed offset(s) disappear (lag 100)", "auto.offset.reset", "latest skips the 100 message(s) of lag", "clicks/0"},
			behind: commit(groupSink, map[int32]int64{0: 51}),
			check: func(t *testing.T, e *changeEnv, state json.RawMessage) {
				var g kafka.GroupChange
				json.Unmarshal(state, &g)
				got := e.committed(groupSink)
				if len(g.Offsets) != 2 || g.Offsets[0].Partition != 0 || g.Offsets[1].Partition != 2 || len(got) != 1 || got["clicks/1"] != 50 {
					t.Errorf("preview %+v; kadm %v", g.Offsets, got)
				}
			},
		},
		{
			tool: "delete_consumer_group", args: map[string]any{"group_id": groupSink},
			class: "destructive", summary: []string{"members: none", "clicks (3 partition(s))", "total lag 150"},
			behind: commit(groupSink, map[int32]int64{1: 60}),
			check: func(t *testing.T, e *changeEnv, state json.RawMessage) {
				var g kafka.GroupChange
				json.Unmarshal(state, &g)
				gl, _ := e.adm.ListGroups(ctx)
				if len(g.Offsets) != 3 || g.TotalLag != 150 || contains(gl.Groups(), groupSink) {
					t.Errorf("preview %+v; groups now %v", g, gl.Groups())
				}
			},
		},
		{
			tool: "delete_records", args: map[string]any{"topic": topicClicks, "partition": 1, "before_offset": 70},
			class: "destructive", summary: []string{"log start 0 → 70, 70 message(s) removed", "clicks-sink", "out of range"},
			behind: func(t *testing.T, e *changeEnv) {
				r, err := e.adm.DeleteRecords(ctx, kadm.Offsets{topicClicks: {1: {Topic: topicClicks, Partition: 1, At: 5}}})
				if err != nil || r.Error() != nil {
					t.Fatal(err, r.Error())
				}
			},
			check: func(t *testing.T, e *changeEnv, state json.RawMessage) {
				var r kafka.RecordsChange
				json.Unmarshal(state, &r)
				start, _ := e.logOffsets(topicClicks)
				if r.NewLogStart != 70 || start["clicks/1"] != r.NewLogStart || len(r.Groups) != 1 || r.Groups[0].Group != groupSink {
					t.Errorf("preview %+v; kadm log start %d", r, start["clicks/1"])
				}
			},
		},
		{
			tool: "create_partitions", args: map[string]any{"topic": topicClicks, "count": 5},
			class: "destructive", summary: []string{"from 3 to 5 partitions", "cannot be undone", "per-key ordering"},
			behind: func(t *testing.T, e *changeEnv) {
				if _, err := e.adm.UpdatePartitions(ctx, 4, topicClicks); err != nil {
					t.Fatal(err)
				}
			},
			check: func(t *testing.T, e *changeEnv, state json.RawMessage) {
				var s struct {
					Partitions int `json:"partitions"`
					New        int `json:"new_partitions"`
				}
				json.Unmarshal(state, &s)
				td, _ := e.adm.ListTopics(ctx, topicClicks)
				if s.New != 5 || len(td[topicClicks].Partitions) != 5 {
					t.Errorf("preview %+v; kadm %d partitions", s, len(td[topicClicks].Partitions))
				}
			},
		},
		{
			tool: "alter_topic_config", args: map[string]any{"topic": topicClicks, "set": map[string]any{"retention.ms": "3600000"}},
			class: "destructive", summary: []string{"Lowers retention.ms", "604800000 (", "3600000 (DynamicTopic)", "become eligible for deletion: about 300 message(s)"},
			behind: setConfig("retention.ms", "7200000"),
			check: func(t *testing.T, e *changeEnv, state json.RawMessage) {
				if v := topicConfig(t, e, "retention.ms"); v != "3600000" {
					t.Errorf("kadm retention.ms=%s", v)
				}
			},
		},
		{
			tool: "alter_topic_config", args: map[string]any{"topic": topicClicks, "set": map[string]any{"retention.ms": "-1", "max.message.bytes": "2000000"}},
			class: "change", summary: []string{"(change)", "retention.ms", "-1 (DynamicTopic)"},
			behind: setConfig("max.message.bytes", "3000000"),
			check: func(t *testing.T, e *changeEnv, state json.RawMessage) {
				if v := topicConfig(t, e, "max.message.bytes"); v != "2000000" {
					t.Errorf("kadm max.message.bytes=%s", v)
				}
			},
		},
		{
			tool: "alter_topic_config", args: map[string]any{"topic": topicClicks, "set": map[string]any{"cleanup.policy": "compact"}},
			class: "destructive", summary: []string{"Changes cleanup.policy"},
			behind: setConfig("cleanup.policy", "compact,delete"),
			check: func(t *testing.T, e *changeEnv, state json.RawMessage) {
				if v := topicConfig(t, e, "cleanup.policy"); v != "compact" {
					t.Errorf("kadm cleanup.policy=%s", v)
				}
			},
		},
		{
			tool: "delete_topic", args: map[string]any{"topic": topicClicks},
			class: "destructive", summary: []string{"3 partition(s)", "bytes on disk", "1 consumer group(s) have committed offsets"},
			behind: func(t *testing.T, e *changeEnv) {
				if _, err := e.adm.UpdatePartitions(ctx, 4, topicClicks); err != nil {
					t.Fatal(err)
				}
			},
			check: func(t *testing.T, e *changeEnv, state json.RawMessage) {
				var ti kafka.TopicInfoForChange
				json.Unmarshal(state, &ti)
				td, _ := e.adm.ListTopics(ctx)
				if td.Has(topicClicks) || ti.Partitions != 3 || ti.SizeBytes == nil || *ti.SizeBytes <= 0 {
					t.Errorf("preview %+v; topics now %v", ti, td.Names())
				}
			},
		},
	}
	for _, tc := range cases {
		t.Run(tc.tool+" "+fmt.Sprint(tc.args), func(t *testing.T) {
			kc := startChanges(t)
			e := newChangeEnv(t, kc, approval.Config{Policy: approval.Change})
			before := e.snapshot(groupSink)
			res := e.call(tc.tool, with(tc.args, "dryRun", true))
			pr := preview(t, res, nil)
			if after := e.snapshot(groupSink); after != before {
				t.Fatalf("the dry run changed Kafka:\n%s\n---\n%s", before, after)
			}
			if pr.Class != tc.class {
				t.Errorf("class %s, want %s", pr.Class, tc.class)
			}
			for _, w := range tc.summary {
				if !strings.Contains(pr.Summary, w) {
					t.Errorf("summary lacks %q:\n%s", w, pr.Summary)
				}
			}
			// A change behind the server's back voids the approval.
			first := e.call(tc.tool, tc.args)
			code := confirmation(t, first)
			tc.behind(t, e)
			mid := e.snapshot(groupSink)
			if res := e.call(tc.tool, with(tc.args, "confirm", code)); !res.IsError || !strings.Contains(text(res), "state changed since the preview") {
				t.Fatalf("stale approval: %s", text(res))
			}
			if e.snapshot(groupSink) != mid {
				t.Fatal("the stale approval changed Kafka")
			}
			// A fresh preview, confirmed, runs; the preview's figures are kadm's.
			// (The case's own preview figures are compared on a fresh cluster.)
			kc2 := startChanges(t)
			e2 := newChangeEnv(t, kc2, approval.Config{Policy: approval.Change})
			first = e2.call(tc.tool, tc.args)
			var st toolcall.PreviewResult
			b, _ := json.Marshal(first.StructuredContent)
			json.Unmarshal(b, &st)
			state, _ := json.Marshal(st.State)
			if res := e2.call(tc.tool, with(tc.args, "confirm", confirmation(t, first))); res.IsError {
				t.Fatal(text(res))
			}
			tc.check(t, e2, state)
			var events []string
			for _, r := range e2.records() {
				events = append(events, fmt.Sprintf("%s:%s:%s", r["event"], r["approval"], r["class"]))
				if r["tool"] != tc.tool || !strings.HasPrefix(fmt.Sprint(r["commands"]), "[") {
					t.Errorf("record %v", r)
				}
			}
			want := fmt.Sprintf("outcome:pending:%[1]s intent:confirmation_code:%[1]s outcome:confirmation_code:%[1]s", tc.class)
			if strings.Join(events, " ") != want {
				t.Errorf("audit %v, want %s", events, want)
			}
		})
	}
}

func confirmation(t *testing.T, res *mcp.CallToolResult) string {
	t.Helper()
	var pr toolcall.PreviewResult
	b, _ := json.Marshal(res.StructuredContent)
	json.Unmarshal(b, &pr)
	if pr.Confirmation == nil {
		t.Fatalf("no confirmation code: %s", text(res))
	}
	return pr.Confirmation.Code
}

func topicConfig(t *testing.T, e *changeEnv, key string) string {
	t.Helper()
	// kadm's metadata may be cached; configs are read fresh.
	rc, err := e.adm.DescribeTopicConfigs(context.Background(), topicClicks)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range rc[0].Configs {
		if c.Key == key {
			return c.MaybeValue()
		}
	}
	return ""
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// TestOffsetsForTimes: per partition the first offset at or after the
// time, as kadm finds it; a time after the last message has none.
func TestOffsetsForTimes(t *testing.T) {
	kc := startChanges(t)
	e := newChangeEnv(t, kc, approval.Config{})
	for _, tc := range []struct {
		at   string
		want string
	}{
		{"2026-11-24T09:15:00+01:00", "15"}, {"2026-11-24T08:15:30Z", "16"}, {"2030-01-01T00:00:00Z", "<nil>"},
	} {
		res := e.call("get_offsets_for_times", map[string]any{"topic": topicClicks, "datetime": tc.at})
		if res.IsError {
			t.Fatal(text(res))
		}
		var out struct {
			Partitions []kafka.TimeOffset `json:"partitions"`
		}
		b, _ := json.Marshal(res.StructuredContent)
		json.Unmarshal(b, &out)
		at, _ := time.Parse(time.RFC3339, tc.at)
		lo, err := e.adm.ListOffsetsAfterMilli(context.Background(), at.UnixMilli(), topicClicks)
		if err != nil || len(out.Partitions) != 3 {
			t.Fatal(err, out)
		}
		for _, p := range out.Partitions {
			got := "<nil>"
			if p.Offset != nil {
				got = fmt.Sprint(*p.Offset)
			}
			k, _ := lo.Lookup(topicClicks, p.Partition)
			if got != tc.want || p.Offset != nil && *p.Offset != k.Offset || p.LogEnd != 100 {
				t.Errorf("%s p%d: %s (kadm %d), want %s", tc.at, p.Partition, got, k.Offset, tc.want)
			}
		}
	}
	if res := e.call("get_offsets_for_times", map[string]any{"topic": topicClicks, "datetime": "2026-11-24T09:00:00"}); !res.IsError || !strings.Contains(text(res), "datetime") || !strings.Contains(text(res), "no time zone") {
		t.Fatal(text(res))
	}
}
