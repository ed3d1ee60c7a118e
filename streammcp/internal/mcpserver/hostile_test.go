package mcpserver_test

import (
	"encoding/json"
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
	"delete_consumer_group_offsets": {
		{map[string]any{"group_id": "", "topic": topicClicks}, "group_id"},
		{map[string]any{"group_id": "g\n1", "topic": topicClicks}, "group_id"},
		{map[string]any{"group_id": groupSink, "topic": ".."}, "topic"},
		{map[string]any{"group_id": groupSink, "topic": "x y"}, "topic"},
		{map[string]any{"group_id": groupSink, "topic": topicClicks, "partitions": []any{-3}}, "partitions"},
		{map[string]any{"group_id": groupSink, "topic": topicClicks, "partitions": []any{4294967296.0}}, "partitions"},
		{map[string]any{"group_id": groupSink, "topic": topicClicks, "partitions": []any{}}, "partitions"},
	},
	"delete_consumer_group": {
		{map[string]any{"group_id": ""}, "group_id"},
		{map[string]any{"group_id": "  "}, "group_id"},
		{map[string]any{"group_id": strings.Repeat("g", 256)}, "group_id"},
	},
	"delete_records": {
		{map[string]any{"topic": topicClicks, "partition": 0, "before_offset": -1}, "before_offset"},
		{map[string]any{"topic": topicClicks, "partition": 0, "before_offset": 1e19}, "before_offset"},
		{map[string]any{"topic": topicClicks, "partition": -1, "before_offset": 1}, "partition"},
		{map[string]any{"topic": topicClicks, "partition": 1e10, "before_offset": 1}, "partition"},
		{map[string]any{"topic": "..", "partition": 0, "before_offset": 1}, "topic"},
		{map[string]any{"topic": topicClicks, "partition": 0}, "before_offset"},
	},
	"create_partitions": {
		{map[string]any{"topic": topicClicks, "count": 0}, "count"},
		{map[string]any{"topic": topicClicks, "count": -4}, "count"},
		{map[string]any{"topic": topicClicks, "count": 1e6}, "count"},
		{map[string]any{"topic": topicClicks, "count": 2.5}, "count"},
		{map[string]any{"topic": "../clicks", "count": 4}, "topic"},
		{map[string]any{"topic": topicClicks}, "count"},
	},
	"alter_topic_config": {
		{map[string]any{"topic": topicClicks, "set": map[string]any{}}, "set"},
		{map[string]any{"topic": topicClicks}, "set, delete"},
		{map[string]any{"topic": topicClicks, "set": map[string]any{}, "delete": []any{}}, "set, delete"},
		{map[string]any{"topic": topicClicks, "set": map[string]any{"retention.msec": "1"}}, "retention.msec"},
		{map[string]any{"topic": topicClicks, "set": map[string]any{"log.retention.ms": "1"}}, "log.retention.ms"},
		{map[string]any{"topic": topicClicks, "set": map[string]any{"sasl.jaas.config": "org.apache.kafka... password=\"hunter2\";"}}, "sasl.jaas.config"},
		{map[string]any{"topic": topicClicks, "set": map[string]any{"ssl.keystore.password": "hunter2"}}, "ssl.keystore.password"},
		{map[string]any{"topic": topicClicks, "set": map[string]any{"my.secret.token": "hunter2"}}, "my.secret.token"},
		{map[string]any{"topic": topicClicks, "delete": []any{"sasl.jaas.config"}}, "delete"},
		{map[string]any{"topic": topicClicks, "set": map[string]any{"retention.ms": "soon"}}, "retention.ms"},
		{map[string]any{"topic": topicClicks, "set": map[string]any{"retention.ms": "-2"}}, "retention.ms"},
		{map[string]any{"topic": topicClicks, "set": map[string]any{"retention.ms": "99999999999999999999"}}, "retention.ms"},
		{map[string]any{"topic": topicClicks, "set": map[string]any{"min.insync.replicas": "0"}}, "min.insync.replicas"},
		{map[string]any{"topic": topicClicks, "set": map[string]any{"cleanup.policy": "shred"}}, "cleanup.policy"},
		{map[string]any{"topic": topicClicks, "set": map[string]any{"preallocate": "yes"}}, "preallocate"},
		{map[string]any{"topic": topicClicks, "set": map[string]any{"retention.ms": "1"}, "delete": []any{"retention.ms"}}, "retention.ms"},
		{map[string]any{"topic": "..", "set": map[string]any{"retention.ms": "1"}}, "topic"},
	},
	"get_offsets_for_times": {
		{map[string]any{"topic": topicClicks, "datetime": "2026-11-24T09:00:00"}, "datetime"},
		{map[string]any{"topic": topicClicks, "datetime": "1960-01-01T00:00:00Z"}, "datetime"},
		{map[string]any{"topic": topicClicks, "datetime": "9:00"}, "datetime"},
		{map[string]any{"topic": "..", "datetime": "2026-11-24T09:00:00Z"}, "topic"},
	},
	"consume_messages": func() []hostile {
		b := map[string]any{"topic": topicClicks}
		return []hostile{
			{with(b, "from_datetime", "2026-11-24T09:00:00"), "from_datetime"},              // no zone
			{with(b, "from_datetime", "2026-11-24T09:00:00.5"), "from_datetime"},            // no zone, fraction
			{with(b, "from_datetime", "2026-11-24T09:00:00 CET"), "from_datetime"},          // a zone name
			{with(b, "from_datetime", "2026-11-24T09:00:00 Europe/Paris"), "from_datetime"}, // an IANA zone
			{with(b, "from_datetime", "2026-11-24T09:00:00+25:00"), "from_datetime"},        // no such offset
			{with(b, "from_datetime", "1969-12-31T23:59:59Z"), "from_datetime"},             // before Kafka time
			{with(b, "from_datetime", "0001-01-01T00:00:00Z"), "from_datetime"},             // far past
			{with(b, "from_datetime", "9999-12-31T23:59:59Z"), "from_datetime"},             // far future
			{with(b, "from_datetime", "2300-01-01T00:00:00+02:00"), "from_datetime"},        // future, other zone
			{with(b, "from_datetime", ""), "from_datetime"},
			{with(b, "from_datetime", 1732438800), "from_datetime"}, // epoch number
			{with(b, "from_datetime", "2026-11-24T09:00:00Z", "offset", 5), "from_datetime"},
			{with(b, "from_datetime", "2026-11-24T09:00:00Z", "partition", 1, "offset", 5), "from_datetime"},
			{with(b, "from_datetime", "2026-11-24T09:00:00Z", "last", 5), "from_datetime"},
			{with(b, "max_bytes", 1<<40), "max_bytes"},
			{with(b, "max_bytes", 1e300), "max_bytes"},
			{with(b, "from_datetime", "2026-11-24T09:00:00Z", "max_bytes", 1<<21), "max_bytes"},
			{with(b, "max_messages", 1e9), "max_messages"},
			{with(b, "key", strings.Repeat("k", 1<<20)), "key"}, // 1 MB
			{with(b, "key", strings.Repeat("k", 4097)), "key"},  // just over
			{with(b, "key", "user\x00"), "key"},                 // NUL
			{with(b, "key", "\xff\xfe\x00\x01"), "key"},         // binary (arrives as U+FFFD)
			{with(b, "key", "user-1\n"), "key"},                 // control character
			{with(b, "key", 42), "key"},
			{with(b, "key", "user-1", "from_datetime", "2026-11-24T09:00:00", "partition", -1), "partition"},
			{with(b, "partition", -1, "from_datetime", "2026-11-24T09:00:00Z"), "partition"},
			{with(b, "partition", 1e10, "from_datetime", "2026-11-24T09:00:00Z"), "partition"},
		}
	}(),
	"delete_topic": {
		{map[string]any{"topic": ".."}, "topic"},
		{map[string]any{"topic": "."}, "topic"},
		{map[string]any{"topic": ""}, "topic"},
		{map[string]any{"topic": "orders*"}, "topic"},
		{map[string]any{"topic": strings.Repeat("t", 300)}, "topic"},
	},
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
				args := with(h.args, "dryRun", dry)
				if tool == "get_offsets_for_times" || tool == "consume_messages" { // a read: no dryRun
					if dry {
						continue
					}
					args = h.args
				}
				kc.ResetCounts()
				res := e.call(tool, args)
				msg := text(res)
				if !res.IsError || !strings.Contains(msg, h.arg) {
					t.Errorf("%s %v: isError=%v, does not name %q: %.400s", tool, h.args, res.IsError, h.arg, msg)
				}
				if strings.Contains(msg, "hunter2") {
					t.Errorf("%s: a secret value was echoed: %s", tool, msg)
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
	// No secret reached the audit log either.
	for _, r := range e.records() {
		if b, _ := json.Marshal(r); strings.Contains(string(b), "hunter2") {
			t.Errorf("audit record holds a secret: %s", b)
		}
	}
}
