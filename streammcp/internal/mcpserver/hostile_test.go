package mcpserver_test

import (
	"strings"
	"testing"

	"github.com/mcpfleet/mcpfleet/shared/approval"
)

// hostile is one bad call: the argument its refusal must name.
type hostile struct {
	args map[string]any
	arg  string
}

// hostileTables are, per write or new read tool, inputs that must be
// refused naming the argument, before any request reaches Kafka.
var hostileTables = map[string][]hostile{
	"reset_consumer_group_offsets": func() []hostile {
		b := map[string]any{"group_id": groupSink, "topic": topicClicks}
		return []hostile{
			{with(b, "to_offset", -1), "to_offset"},
			{with(b, "to_offset", 1e19), "to_offset"},
			{with(b, "to_offset", 1.5), "to_offset"},
			{with(b, "shift_by", 1e19), "shift_by"},
			{with(b, "shift_by", -1e19), "shift_by"},
			{with(b, "by_duration", "PT9999999999999999999H"), "by_duration"},
			{with(b, "by_duration", "PT2562048H"), "by_duration"}, // ~292 years: before 1970
			{with(b, "by_duration", "P99999999999W"), "by_duration"},
			{with(b, "by_duration", "P1M"), "by_duration"},
			{with(b, "by_duration", "PT"), "by_duration"},
			{with(b, "by_duration", "PT0S"), "by_duration"},
			{with(b, "by_duration", "-PT30M"), "by_duration"},
			{with(b, "by_duration", "30m"), "by_duration"},
			{with(b, "to_datetime", "2026-11-24T09:00:00"), "to_datetime"},
			{with(b, "to_datetime", "2026-11-24 09:00"), "to_datetime"},
			{with(b, "to_datetime", "1969-12-31T23:59:59Z"), "to_datetime"},
			{with(b, "to_datetime", "yesterday"), "to_datetime"},
			{with(b, "to_datetime", "2026-11-24T09:00:00+25:00"), "to_datetime"},
			{with(b, "to_earliest", false), "to_earliest"},
			{with(b, "to_latest", false), "to_latest"},
			{with(b, "to_earliest", true, "to_latest", true), "to_earliest, to_latest"},
			{with(b, "to_offset", 1, "shift_by", 1), "to_offset, shift_by"},
			{b, "to_earliest, to_latest, to_offset, to_datetime, by_duration, shift_by"},
			{with(b, "topic", "..", "to_earliest", true), "topic"},
			{with(b, "topic", ".", "to_earliest", true), "topic"},
			{with(b, "topic", "a/b", "to_earliest", true), "topic"},
			{with(b, "topic", strings.Repeat("x", 250), "to_earliest", true), "topic"},
			{map[string]any{"group_id": groupSink, "topics": []any{"clicks", "../x"}, "to_earliest": true}, "topics"},
			{map[string]any{"group_id": groupSink, "topics": []any{}, "to_earliest": true}, "topics"},
			{map[string]any{"group_id": groupSink, "topic": "clicks", "topics": []any{"clicks"}, "to_earliest": true}, "topic, topics"},
			{map[string]any{"group_id": groupSink, "to_earliest": true}, "topic"},
			{with(b, "partitions", []any{-1}, "to_earliest", true), "partitions"},
			{with(b, "partitions", []any{1e12}, "to_earliest", true), "partitions"},
			{with(b, "partitions", []any{}, "to_earliest", true), "partitions"},
			{map[string]any{"group_id": groupSink, "topics": []any{"clicks", "other"}, "partitions": []any{0}, "to_earliest": true}, "partitions"},
			{with(b, "group_id", "", "to_earliest", true), "group_id"},
			{with(b, "group_id", " clicks-sink", "to_earliest", true), "group_id"},
			{with(b, "group_id", "bad\x00group", "to_earliest", true), "group_id"},
			{with(b, "group_id", strings.Repeat("g", 300), "to_earliest", true), "group_id"},
		}
	}(),
}

// TestHostileInputs: each hostile input is refused naming its argument,
// dry run or not, and not one request reaches Kafka.
func TestHostileInputs(t *testing.T) {
	kc := startChanges(t)
	e := newChangeEnv(t, kc, approval.Config{Policy: approval.None})
	total := 0
	for tool, table := range hostileTables {
		for _, h := range table {
			for _, dry := range []bool{false, true} {
				kc.ResetCounts()
				res := e.call(tool, with(h.args, "dryRun", dry))
				msg := text(res)
				if !res.IsError || !strings.Contains(msg, h.arg) {
					t.Errorf("%s %v: isError=%v, does not name %q: %.400s", tool, h.args, res.IsError, h.arg, msg)
				}
				if n := kc.Total(); n != 0 {
					t.Errorf("%s %v: %d requests sent: %v", tool, h.args, n, kc.Counts())
				}
				total++
			}
		}
		t.Logf("%s: %d hostile inputs", tool, len(table))
	}
	t.Logf("%d hostile calls, none reached Kafka", total)
}
