package mcpserver_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/mcpfleet/mcpfleet/shared/approval"
	"github.com/mcpfleet/mcpfleet/shared/toolcall"
	"github.com/mcpfleet/mcpfleet/streammcp/internal/kafka"
)

// resetState is a reset preview's state.
type resetState struct {
	Group      string           `json:"group_id"`
	State      string           `json:"state"`
	Rows       []kafka.ResetRow `json:"partitions"`
	Reconsumed int64            `json:"reconsumed"`
	Skipped    int64            `json:"skipped"`
	Clamped    int              `json:"clamped"`
}

// TestResetTargets: every target kind, previewed by a dry run that changes
// nothing, then run; the offsets kadm reads afterwards are the preview's.
// Partition 0's log start is moved to 10 first, so clamping at both ends
// shows.
func TestResetTargets(t *testing.T) {
	kc := startChanges(t)
	e := newChangeEnv(t, kc, approval.Config{Policy: approval.None})
	ctx := context.Background()
	dr, err := e.adm.DeleteRecords(ctx, kadm.Offsets{topicClicks: {0: {Topic: topicClicks, Partition: 0, At: 10}}})
	if err != nil || dr.Error() != nil {
		t.Fatalf("move log start: %v %v", err, dr.Error())
	}
	now := time.Now()
	base := map[string]any{"group_id": groupSink, "topic": topicClicks}
	for _, tc := range []struct {
		name string
		args map[string]any
		// want is the new offset of partitions 0, 1, 2 (committed 50 each;
		// logs 10..100, 0..100, 0..100).
		want    [3]int64
		clamped [3]string
	}{
		{"to_earliest", with(base, "to_earliest", true), [3]int64{10, 0, 0}, [3]string{}},
		{"to_latest", with(base, "to_latest", true), [3]int64{100, 100, 100}, [3]string{}},
		{"to_offset inside", with(base, "to_offset", 42), [3]int64{42, 42, 42}, [3]string{}},
		{"to_offset below log start", with(base, "to_offset", 5), [3]int64{10, 5, 5}, [3]string{"log start"}},
		{"to_offset past log end", with(base, "to_offset", 1_000_000), [3]int64{100, 100, 100}, [3]string{"log end", "log end", "log end"}},
		{"to_datetime UTC", with(base, "to_datetime", "2026-11-24T08:30:00Z"), [3]int64{30, 30, 30}, [3]string{}},
		{"to_datetime other zone", with(base, "to_datetime", "2026-11-24T14:00:30+05:30"), [3]int64{31, 31, 31}, [3]string{}},
		{"to_datetime before the log", with(base, "to_datetime", "2026-11-24T08:05:00Z"), [3]int64{10, 5, 5}, [3]string{}},
		{"to_datetime after the log", with(base, "to_datetime", "2030-01-01T00:00:00Z"), [3]int64{100, 100, 100}, [3]string{}},
		{"by_duration", with(base, "by_duration", fmt.Sprintf("PT%dM", int(now.Sub(clicksBase.Add(20*time.Minute)).Minutes())+1)), [3]int64{20, 20, 20}, [3]string{}},
		{"shift_by back", with(base, "shift_by", -15), [3]int64{35, 35, 35}, [3]string{}},
		{"shift_by back past log start", with(base, "shift_by", -45), [3]int64{10, 5, 5}, [3]string{"log start"}},
		{"shift_by forward past log end", with(base, "shift_by", 9_000_000_000_000_000_000), [3]int64{100, 100, 100}, [3]string{"log end", "log end", "log end"}},
		{"partitions subset", with(base, "partitions", []any{1}, "to_offset", 7), [3]int64{50, 7, 50}, [3]string{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := kc.Commit(ctx, groupSink, map[string]map[int32]int64{topicClicks: {0: 50, 1: 50, 2: 50}}); err != nil {
				t.Fatal(err)
			}
			before := e.snapshot(groupSink)
			var st resetState
			pr := preview(t, e.call("reset_consumer_group_offsets", with(tc.args, "dryRun", true)), &st)
			if after := e.snapshot(groupSink); after != before {
				t.Fatalf("the dry run changed Kafka:\n%s\n---\n%s", before, after)
			}
			if pr.Class != "destructive" || !strings.Contains(pr.Commands[0], `OffsetCommit group="clicks-sink" generation=-1`) {
				t.Errorf("preview %+v", pr)
			}
			start, end := e.logOffsets(topicClicks)
			var reconsumed, skipped int64
			for _, r := range st.Rows {
				k := fmt.Sprintf("%s/%d", r.Topic, r.Partition)
				if r.LogStart != start[k] || r.LogEnd != end[k] || r.Current == nil || *r.Current != 50 || *r.LagBefore != r.LogEnd-50 || r.LagAfter != r.LogEnd-r.New {
					t.Errorf("%s: row %+v (kadm: log %d..%d)", k, r, start[k], end[k])
				}
				if r.New < 50 {
					reconsumed += 50 - r.New
				} else {
					skipped += r.New - 50
				}
				if r.New < 50 && r.Reconsumed != 50-r.New || r.New >= 50 && r.Skipped != r.New-50 {
					t.Errorf("%s: re-consumed/skipped %+v", k, r)
				}
				if r.Clamped != tc.clamped[r.Partition] {
					t.Errorf("%s: clamped %q, want %q", k, r.Clamped, tc.clamped[r.Partition])
				}
			}
			if st.Reconsumed != reconsumed || st.Skipped != skipped {
				t.Errorf("totals %d/%d, rows say %d/%d", st.Reconsumed, st.Skipped, reconsumed, skipped)
			}
			res := e.call("reset_consumer_group_offsets", tc.args)
			if res.IsError {
				t.Fatal(text(res))
			}
			got := e.committed(groupSink)
			for p := range int32(3) {
				k := fmt.Sprintf("%s/%d", topicClicks, p)
				if got[k] != tc.want[p] {
					t.Errorf("%s committed %d, want %d", k, got[k], tc.want[p])
				}
			}
			for _, r := range st.Rows {
				if k := fmt.Sprintf("%s/%d", r.Topic, r.Partition); got[k] != r.New {
					t.Errorf("%s: the preview said %d, kadm reads %d", k, r.New, got[k])
				}
			}
		})
	}
	// Every run wrote an intent before and an outcome after, with the command.
	var intents, outcomes int
	for _, r := range e.records() {
		if r["tool"] != "reset_consumer_group_offsets" || r["class"] != "destructive" {
			t.Errorf("record %v", r)
		}
		if r["dry_run"] == true {
			continue
		}
		switch r["event"] {
		case "intent":
			intents++
		case "outcome":
			outcomes++
			if r["outcome"] != "ok" || r["approval"] != "policy" || !strings.Contains(fmt.Sprint(r["commands"]), "OffsetCommit") {
				t.Errorf("outcome %v", r)
			}
		}
	}
	if intents != 14 || outcomes != 14 {
		t.Errorf("%d intents, %d outcomes", intents, outcomes)
	}
}

// TestResetRefusedWithMembers: a group with a live member is refused, the
// member named, and no OffsetCommit is sent.
func TestResetRefusedWithMembers(t *testing.T) {
	kc := startChanges(t)
	e := newChangeEnv(t, kc, approval.Config{Policy: approval.None})
	ctx := context.Background()
	m, err := kc.JoinGroup(ctx, "clicks-live", topicClicks)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Leave()
	before := e.committed("clicks-live")
	kc.ResetCounts()
	for _, dry := range []bool{true, false} {
		res := e.call("reset_consumer_group_offsets", map[string]any{"group_id": "clicks-live", "topic": topicClicks, "to_earliest": true, "dryRun": dry})
		if !res.IsError || !strings.Contains(text(res), "clicks-live-member") || !strings.Contains(text(res), "Stable with 1 member(s)") ||
			!strings.Contains(text(res), "only accepts this while the group is empty") {
			t.Errorf("dryRun=%v: %s", dry, text(res))
		}
	}
	if n := kc.Counts()["OffsetCommit"]; n != 0 {
		t.Fatalf("%d OffsetCommit sent", n)
	}
	if after := e.committed("clicks-live"); fmt.Sprint(after) != fmt.Sprint(before) {
		t.Fatalf("offsets moved: %v → %v", before, after)
	}
}

// TestResetTopicNeverConsumed: a group without commits on a topic gets its
// first ones; the preview says there was none.
func TestResetTopicNeverConsumed(t *testing.T) {
	kc := startChanges(t)
	e := newChangeEnv(t, kc, approval.Config{Policy: approval.None})
	if err := kc.CreateTopic(context.Background(), "fresh", 2, 1, nil); err != nil {
		t.Fatal(err)
	}
	var st resetState
	res := e.call("reset_consumer_group_offsets", map[string]any{"group_id": groupSink, "topic": topicClicks, "to_offset": 60, "dryRun": true})
	preview(t, res, &st)
	res = e.call("reset_consumer_group_offsets", map[string]any{"group_id": groupSink, "topic": "fresh", "to_latest": true, "dryRun": true})
	preview(t, res, &st)
	if len(st.Rows) != 2 || st.Rows[0].Current != nil || st.Rows[0].LagBefore != nil || st.Rows[0].New != 0 || !strings.Contains(text(res), "none → 0") {
		t.Fatalf("%s", text(res))
	}
	if res := e.call("reset_consumer_group_offsets", map[string]any{"group_id": "brand-new", "topic": topicClicks, "to_offset": 60}); res.IsError {
		t.Fatal(text(res))
	}
	if got := e.committed("brand-new"); got["clicks/0"] != 60 || got["clicks/2"] != 60 {
		t.Fatalf("brand-new committed %v", got)
	}
	if res := e.call("reset_consumer_group_offsets", map[string]any{"group_id": "other-new", "topic": topicClicks, "shift_by": 5}); !res.IsError ||
		!strings.Contains(text(res), "shift_by: group other-new has no committed offset to shift from on clicks/0, clicks/1, clicks/2") {
		t.Fatal(text(res))
	}
}

// TestResetPrecondition: an approval is refused when the state changed
// behind the server's back between the preview and the confirmed call —
// another client commits, or a consumer joins.
func TestResetPrecondition(t *testing.T) {
	kc := startChanges(t)
	e := newChangeEnv(t, kc, approval.Config{Policy: approval.Destructive})
	ctx := context.Background()
	args := map[string]any{"group_id": groupSink, "topic": topicClicks, "to_earliest": true}
	code := func() string {
		res := e.call("reset_consumer_group_offsets", args)
		var pr toolcall.PreviewResult
		b, _ := json.Marshal(res.StructuredContent)
		json.Unmarshal(b, &pr)
		if pr.Confirmation == nil || !strings.Contains(text(res), "Approval needed") || !strings.Contains(text(res), "50 → 0") {
			t.Fatalf("no confirmation: %s", text(res))
		}
		return pr.Confirmation.Code
	}

	// Another client commits meanwhile.
	c := code()
	if err := kc.Commit(ctx, groupSink, map[string]map[int32]int64{topicClicks: {1: 77}}); err != nil {
		t.Fatal(err)
	}
	kc.ResetCounts()
	res := e.call("reset_consumer_group_offsets", with(args, "confirm", c))
	if !res.IsError || !strings.Contains(text(res), "state changed since the preview") {
		t.Fatalf("after a commit: %s", text(res))
	}
	if kc.Counts()["OffsetCommit"] != 0 || e.committed(groupSink)["clicks/1"] != 77 {
		t.Fatal("the stale approval committed")
	}

	// A consumer joins meanwhile.
	c = code()
	m, err := kc.JoinGroup(ctx, groupSink, topicClicks)
	if err != nil {
		t.Fatal(err)
	}
	kc.ResetCounts()
	res = e.call("reset_consumer_group_offsets", with(args, "confirm", c))
	if !res.IsError || !strings.Contains(text(res), "clicks-sink-member") {
		t.Fatalf("after a join: %s", text(res))
	}
	m.Leave()
	if kc.Counts()["OffsetCommit"] != 0 {
		t.Fatal("the stale approval committed")
	}

	// Unchanged: the code runs the reset.
	waitEmpty(t, e, groupSink)
	c = code()
	if res := e.call("reset_consumer_group_offsets", with(args, "confirm", c)); res.IsError {
		t.Fatal(text(res))
	}
	if got := e.committed(groupSink); got["clicks/0"] != 0 || got["clicks/1"] != 0 {
		t.Fatalf("committed %v", got)
	}
	var approvals []string
	for _, r := range e.records() {
		approvals = append(approvals, fmt.Sprintf("%s:%s", r["event"], r["approval"]))
	}
	if got := strings.Join(approvals, " "); got != "outcome:pending outcome:refused outcome:pending outcome:refused outcome:pending intent:confirmation_code outcome:confirmation_code" {
		t.Errorf("audit: %s", got)
	}
}

func waitEmpty(t *testing.T, e *changeEnv, group string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		d, err := e.adm.DescribeGroups(context.Background(), group)
		if err == nil && d[group].State == "Empty" {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("group %s did not become Empty", group)
}

// TestResetThousandPartitions: one reset over 1,000 partitions sends one
// OffsetCommit, and the preview's request count does not grow with the
// partitions.
func TestResetThousandPartitions(t *testing.T) {
	kc := startChanges(t)
	e := newChangeEnv(t, kc, approval.Config{Policy: approval.None})
	ctx := context.Background()
	if err := kc.CreateTopic(ctx, "wide", 1000, 1, nil); err != nil {
		t.Fatal(err)
	}
	offs := map[int32]int64{}
	for p := range int32(1000) {
		offs[p] = 0
	}
	if err := kc.Commit(ctx, "wide-sink", map[string]map[int32]int64{"wide": offs}); err != nil {
		t.Fatal(err)
	}
	args := map[string]any{"group_id": "wide-sink", "topic": "wide", "to_latest": true}
	kc.ResetCounts()
	t0 := time.Now()
	var st resetState
	preview(t, e.call("reset_consumer_group_offsets", with(args, "dryRun", true)), &st)
	previewTime, previewCounts, previewTotal := time.Since(t0), kc.Counts(), kc.Total()
	if len(st.Rows) != 1000 || previewCounts["OffsetCommit"] != 0 || previewTotal > 20 {
		t.Fatalf("%d rows; requests %v", len(st.Rows), previewCounts)
	}
	kc.ResetCounts()
	t0 = time.Now()
	if res := e.call("reset_consumer_group_offsets", args); res.IsError {
		t.Fatal(text(res))
	}
	runTime, runCounts, runTotal := time.Since(t0), kc.Counts(), kc.Total()
	if runCounts["OffsetCommit"] != 1 || runTotal > 20 {
		t.Fatalf("requests %v", runCounts)
	}
	if got := e.committed("wide-sink"); len(got) != 1000 {
		t.Fatalf("%d committed", len(got))
	}
	t.Logf("1,000-partition reset: preview %d requests %v in %s; reset %d requests %v in %s", previewTotal, previewCounts, previewTime, runTotal, runCounts, runTime)
}
