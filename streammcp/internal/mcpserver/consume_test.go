package mcpserver_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/mcpfleet/mcpfleet/shared/approval"
)

type consumed struct {
	Topic      string `json:"topic"`
	Partitions []struct {
		Partition   int32  `json:"partition"`
		StartOffset *int64 `json:"start_offset"`
		NextOffset  int64  `json:"next_offset"`
		LogEnd      int64  `json:"log_end_offset"`
	} `json:"partitions"`
	Messages []struct {
		Partition int32   `json:"partition"`
		Offset    int64   `json:"offset"`
		Timestamp string  `json:"timestamp"`
		Key       *string `json:"key"`
	} `json:"messages"`
	Scanned      *int    `json:"scanned_messages"`
	ScannedBytes *int64  `json:"scanned_bytes"`
	Truncated    bool    `json:"truncated"`
	StoppedBy    *string `json:"stopped_by"`
}

func (e *changeEnv) consume(args map[string]any) consumed {
	e.t.Helper()
	res := e.call("consume_messages", args)
	if res.IsError {
		e.t.Fatalf("consume_messages %v: %s", args, text(res))
	}
	var c consumed
	if err := json.Unmarshal([]byte(text(res)), &c); err != nil {
		e.t.Fatalf("%v: %s", err, text(res))
	}
	return c
}

// kgoFrom reads the same data with franz-go, the independent client: the
// start offsets from kadm (ListOffsetsAfterMilli), then every record up to
// each partition's end, sorted the way consume_messages merges (timestamp,
// then partition, then offset).
func kgoFrom(t *testing.T, e *changeEnv, topic string, at time.Time, key string) (starts map[int32]int64, recs []*kgo.Record) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	after, err := e.adm.ListOffsetsAfterMilli(ctx, at.UnixMilli(), topic)
	if err != nil {
		t.Fatal(err)
	}
	ends, err := e.adm.ListEndOffsets(ctx, topic)
	if err != nil {
		t.Fatal(err)
	}
	starts = map[int32]int64{}
	offs := map[int32]kgo.Offset{}
	want := 0
	after.Each(func(o kadm.ListedOffset) {
		starts[o.Partition] = o.Offset
		end, _ := ends.Lookup(topic, o.Partition)
		if o.Offset < end.Offset {
			offs[o.Partition] = kgo.NewOffset().At(o.Offset)
			want += int(end.Offset - o.Offset)
		}
	})
	cl, err := kgo.NewClient(append(e.kc.ClientOpts(), kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: offs}))...)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	var all []*kgo.Record
	for len(all) < want {
		f := cl.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			t.Fatalf("kgo read %d of %d records", len(all), want)
		}
		all = append(all, f.Records()...)
	}
	sort.SliceStable(all, func(i, j int) bool {
		a, b := all[i], all[j]
		if !a.Timestamp.Equal(b.Timestamp) {
			return a.Timestamp.Before(b.Timestamp)
		}
		if a.Partition != b.Partition {
			return a.Partition < b.Partition
		}
		return a.Offset < b.Offset
	})
	return starts, all
}

func ids(c consumed) []string {
	var out []string
	for _, m := range c.Messages {
		out = append(out, fmt.Sprintf("%d@%d", m.Partition, m.Offset))
	}
	return out
}

func recIDs(recs []*kgo.Record, key string, n int) []string {
	var out []string
	for _, r := range recs {
		if key != "" && string(r.Key) != key {
			continue
		}
		if len(out) == n {
			break
		}
		out = append(out, fmt.Sprintf("%d@%d", r.Partition, r.Offset))
	}
	return out
}

// TestConsumeFromDatetime: from_datetime reads every partition from its
// first offset at or after the time, merged by timestamp, and returns what
// franz-go reads from the same offsets; the bounds stop it and say so.
func TestConsumeFromDatetime(t *testing.T) {
	kc := startChanges(t)
	e := newChangeEnv(t, kc, approval.Config{Policy: approval.None})
	at := clicksBase.Add(90 * time.Minute) // messages 90..99 of each partition
	starts, recs := kgoFrom(t, e, topicClicks, at, "")
	if len(recs) != 30 {
		t.Fatalf("kgo read %d records", len(recs))
	}

	kc.ResetCounts()
	// Another zone, same instant.
	c := e.consume(map[string]any{"topic": topicClicks, "from_datetime": at.In(time.FixedZone("", -5*3600)).Format(time.RFC3339), "max_messages": 100})
	if got, want := ids(c), recIDs(recs, "", 100); !slices.Equal(got, want) {
		t.Fatalf("merged order:\n got %v\nwant %v", got, want)
	}
	counts := kc.Counts()
	t.Logf("requests: %v", counts)
	if counts["Metadata"] != 1 || counts["ListOffsets"] > 6 || counts["Fetch"] > 3 {
		t.Errorf("requests %v: want 1 Metadata, ≤ 2 ListOffsets and ≤ 1 Fetch per broker", counts)
	}
	if c.Truncated || c.StoppedBy == nil || *c.StoppedBy != "" || *c.Scanned != 30 {
		t.Errorf("read to the end: truncated=%v stopped_by=%v scanned=%v", c.Truncated, c.StoppedBy, c.Scanned)
	}
	if len(c.Partitions) != 3 {
		t.Fatalf("partitions %+v", c.Partitions)
	}
	for _, p := range c.Partitions {
		if p.StartOffset == nil || *p.StartOffset != starts[p.Partition] || p.NextOffset != 100 || p.LogEnd != 100 {
			t.Errorf("partition %d: start %v (kadm %d), next %d, end %d", p.Partition, p.StartOffset, starts[p.Partition], p.NextOffset, p.LogEnd)
		}
	}
	// Timestamps never go back.
	for i := 1; i < len(c.Messages); i++ {
		if c.Messages[i].Timestamp < c.Messages[i-1].Timestamp {
			t.Errorf("message %d (%s) before message %d (%s)", i, c.Messages[i].Timestamp, i-1, c.Messages[i-1].Timestamp)
		}
	}

	// max_messages stops it; next_offset resumes where it stopped.
	c = e.consume(map[string]any{"topic": topicClicks, "from_datetime": at.Format(time.RFC3339), "max_messages": 7})
	if got, want := ids(c), recIDs(recs, "", 7); !slices.Equal(got, want) {
		t.Errorf("first 7:\n got %v\nwant %v", got, want)
	}
	if !c.Truncated || *c.StoppedBy != "max_messages" {
		t.Errorf("7 of 30: truncated=%v stopped_by=%v", c.Truncated, *c.StoppedBy)
	}
	next := 0
	for _, p := range c.Partitions {
		next += int(p.NextOffset - *p.StartOffset)
	}
	if next != 7 {
		t.Errorf("next offsets advance by %d in all, want 7: %+v", next, c.Partitions)
	}

	// One partition.
	c = e.consume(map[string]any{"topic": topicClicks, "partition": 2, "from_datetime": at.Format(time.RFC3339)})
	if len(c.Messages) != 10 || c.Messages[0].Partition != 2 || c.Messages[0].Offset != 90 || len(c.Partitions) != 1 {
		t.Errorf("partition 2 only: %v", ids(c))
	}

	// After every message: nothing, null start offsets, next = log end.
	c = e.consume(map[string]any{"topic": topicClicks, "from_datetime": clicksBase.Add(5 * time.Hour).Format(time.RFC3339)})
	if len(c.Messages) != 0 || c.Truncated || c.Partitions[0].StartOffset != nil || c.Partitions[0].NextOffset != 100 {
		t.Errorf("after the last message: %+v", c)
	}
}

// TestConsumeKeyFilter: key returns exact matches only; max_messages
// bounds what is returned, max_bytes what is scanned, and the answer says
// which stopped the scan.
func TestConsumeKeyFilter(t *testing.T) {
	kc := startChanges(t)
	e := newChangeEnv(t, kc, approval.Config{Policy: approval.None})
	at := clicksBase.Add(70 * time.Minute) // 30 messages per partition
	_, recs := kgoFrom(t, e, topicClicks, at, "")

	c := e.consume(map[string]any{"topic": topicClicks, "from_datetime": at.Format(time.RFC3339), "key": "user-1", "max_messages": 100})
	want := recIDs(recs, "user-1", 100)
	if got := ids(c); !slices.Equal(got, want) || len(want) == 0 {
		t.Fatalf("key user-1:\n got %v\nwant %v", got, want)
	}
	for _, m := range c.Messages {
		if m.Key == nil || *m.Key != "user-1" {
			t.Errorf("a message with key %v was returned", m.Key)
		}
	}
	if *c.Scanned != 90 || c.Truncated || *c.StoppedBy != "" {
		t.Errorf("scanned %d (want 90), truncated %v, stopped_by %q", *c.Scanned, c.Truncated, *c.StoppedBy)
	}

	// Returned messages are bounded by max_messages...
	c = e.consume(map[string]any{"topic": topicClicks, "from_datetime": at.Format(time.RFC3339), "key": "user-1", "max_messages": 2})
	if got := ids(c); !slices.Equal(got, want[:2]) || !c.Truncated || *c.StoppedBy != "max_messages" {
		t.Errorf("max_messages 2: %v truncated=%v stopped_by=%q", got, c.Truncated, *c.StoppedBy)
	}
	// ...scanned bytes by max_bytes, matching or not: each message is 20
	// key+value bytes, so 100 bytes scan 5 messages.
	c = e.consume(map[string]any{"topic": topicClicks, "from_datetime": at.Format(time.RFC3339), "key": "user-1", "max_bytes": 100})
	if *c.Scanned != 5 || *c.ScannedBytes != 100 || !c.Truncated || *c.StoppedBy != "max_bytes" {
		t.Errorf("max_bytes 100: scanned %d (%d bytes), truncated=%v, stopped_by=%q", *c.Scanned, *c.ScannedBytes, c.Truncated, *c.StoppedBy)
	}
	if got, w := ids(c), recIDs(recs[:5], "user-1", 100); !slices.Equal(got, w) {
		t.Errorf("max_bytes 100: got %v, want the matches among the first 5 %v", got, w)
	}

	// Without from_datetime: one partition from an offset, filtered.
	c = e.consume(map[string]any{"topic": topicClicks, "partition": 1, "offset": 0, "key": "user-3", "max_messages": 100, "max_bytes": 1 << 20})
	var p1 []string
	for i := 3; i < 100; i += 7 {
		p1 = append(p1, fmt.Sprintf("1@%d", i))
	}
	if got := ids(c); !slices.Equal(got, p1) || *c.Scanned != 100 || *c.StoppedBy != "" {
		t.Errorf("partition 1 key user-3: %v scanned %v stopped_by %q", got, *c.Scanned, *c.StoppedBy)
	}
	// Without key the answer keeps its former fields only.
	res := e.call("consume_messages", map[string]any{"topic": topicClicks, "last": 1})
	var raw map[string]any
	_ = json.Unmarshal([]byte(text(res)), &raw)
	for _, k := range []string{"scanned_messages", "scanned_bytes", "stopped_by"} {
		if _, ok := raw[k]; ok {
			t.Errorf("a read without key carries %s", k)
		}
	}
}
