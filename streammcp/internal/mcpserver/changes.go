package mcpserver

import (
	"cmp"
	"context"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcpfleet/mcpfleet/shared/mcperr"
	"github.com/mcpfleet/mcpfleet/shared/toolcall"
	"github.com/mcpfleet/mcpfleet/streammcp/internal/kafka"
)

// maxPreviewRows bounds the per-partition table a person reads; the
// preview's state carries every row.
const maxPreviewRows = 50

type resetIn struct {
	clusterArg
	GroupID    string   `json:"group_id" jsonschema:"consumer group id"`
	Topic      *string  `json:"topic,omitempty" jsonschema:"topic whose offsets to reset (or topics)"`
	Topics     []string `json:"topics,omitempty" jsonschema:"several topics (instead of topic)" minItems:"1"`
	Partitions []int32  `json:"partitions,omitempty" jsonschema:"only these partitions (default: all); with one topic" minItems:"1" minimum:"0" maximum:"2147483647"`
	ToEarliest *bool    `json:"to_earliest,omitempty" jsonschema:"target: the log start offset"`
	ToLatest   *bool    `json:"to_latest,omitempty" jsonschema:"target: the log end offset (skip everything not yet consumed)"`
	ToOffset   *int64   `json:"to_offset,omitempty" jsonschema:"target: this offset on every partition" minimum:"0"`
	ToDatetime *string  `json:"to_datetime,omitempty" jsonschema:"target: the first offset at or after this time, RFC 3339 with a zone, e.g. 2026-11-24T09:00:00Z"`
	ByDuration *string  `json:"by_duration,omitempty" jsonschema:"target: the first offset at or after now minus this ISO 8601 duration, e.g. PT30M, P1DT2H"`
	ShiftBy    *int64   `json:"shift_by,omitempty" jsonschema:"target: the committed offset plus this (negative: back)"`
}

func (h *Handler) registerChanges(calls *toolcall.Pipeline) {
	toolcall.AddChange(calls, h.tool("reset_consumer_group_offsets",
		"Move an empty consumer group's committed offsets (replay after a bad deploy, skip a poison message, jump to now). Give group_id, topic (or topics), optional partitions, and exactly one target: to_earliest, to_latest, to_offset, to_datetime (RFC 3339 with a zone), by_duration (ISO 8601, e.g. PT30M: that far back from now) or shift_by (±N). Targets outside [log start, log end] are clamped and said so. Refused while the group has members, as kafka-consumer-groups --reset-offsets is. Try dryRun first: it shows every partition's current → new offset and the messages re-consumed or skipped.",
		destructive("Reset consumer group offsets", false)), mapped(h.planReset))
}

// planReset decodes reset_consumer_group_offsets' arguments once; the
// preview and the change both compute the per-partition offsets from them.
func (h *Handler) planReset(ctx context.Context, in resetIn) (toolcall.Plan, error) {
	cl, err := h.writableCluster(in.clusterArg)
	if err != nil {
		return toolcall.Plan{}, err
	}
	r, words, err := resetRequest(in, time.Now())
	if err != nil {
		return toolcall.Plan{}, err
	}
	if err := groupAllowed(cl, r.Group); err != nil {
		return toolcall.Plan{}, err
	}
	for _, t := range r.Topics {
		if err := topicAllowed(cl, t); err != nil {
			return toolcall.Plan{}, err
		}
	}
	kc, target := cl.Client, h.target(cl)
	parts := "all partitions"
	if r.Partitions != nil {
		parts = "partitions " + joinInts(r.Partitions)
	}
	cmd := fmt.Sprintf("OffsetCommit group=%q generation=-1 (an admin commit, to the group's coordinator, one request) topics=%s %s target=%s, clamped to [log start, log end]",
		r.Group, strings.Join(r.Topics, ","), parts, words)
	return toolcall.Plan{
		Class:    toolcall.Destructive,
		Target:   target,
		Commands: []string{cmd},
		Describe: func(ctx context.Context) (toolcall.Preview, error) {
			p, err := kc.PlanReset(ctx, r)
			if err != nil {
				return toolcall.Preview{}, err
			}
			return toolcall.Preview{
				Summary:      resetSummary(p, words, target),
				State:        p,
				Effect:       resetEffect(p),
				Precondition: p.Fingerprint(),
			}, nil
		},
		Run: func(ctx context.Context) (*mcp.CallToolResult, error) {
			p, err := kc.Reset(ctx, r)
			if err != nil {
				return nil, err
			}
			h.log.Info("consumer group offsets reset", "cluster", cl.Name, "group", r.Group, "partitions", len(p.Rows), "reconsumed", p.Reconsumed, "skipped", p.Skipped)
			return result(map[string]any{"reset": true, "group_id": p.Group, "target": words, "reconsumed": p.Reconsumed, "skipped": p.Skipped, "clamped": p.Clamped, "partitions": p.Rows}), nil
		},
	}, nil
}

// resetRequest validates the arguments into a reset and words its target.
// now anchors by_duration, so the preview and the change look up the same
// instant.
func resetRequest(in resetIn, now time.Time) (kafka.ResetRequest, string, error) {
	r := kafka.ResetRequest{Group: in.GroupID}
	if err := validGroup("group_id", r.Group); err != nil {
		return r, "", err
	}
	var err error
	if r.Topics, err = topics(in.Topic, in.Topics); err != nil {
		return r, "", err
	}
	r.Partitions = dedupe(in.Partitions)
	if r.Partitions != nil && len(r.Topics) > 1 {
		return r, "", mcperr.Invalidf("partitions: give partitions with one topic only (got %d topics); nothing was sent", len(r.Topics))
	}
	var kinds []string
	var words string
	if in.ToEarliest != nil {
		if !*in.ToEarliest {
			return r, "", mcperr.Invalidf("to_earliest: pass true to reset to the log start, or leave it out")
		}
		kinds, r.Target.Kind, words = append(kinds, "to_earliest"), kafka.ToEarliest, "the log start (to_earliest)"
	}
	if in.ToLatest != nil {
		if !*in.ToLatest {
			return r, "", mcperr.Invalidf("to_latest: pass true to reset to the log end, or leave it out")
		}
		kinds, r.Target.Kind, words = append(kinds, "to_latest"), kafka.ToLatest, "the log end (to_latest)"
	}
	if in.ToOffset != nil {
		n := *in.ToOffset
		kinds, r.Target.Kind, r.Target.Offset, words = append(kinds, "to_offset"), kafka.ToOffset, n, fmt.Sprintf("offset %d (to_offset)", n)
	}
	if in.ToDatetime != nil {
		s := *in.ToDatetime
		t, err := parseDatetime("to_datetime", s)
		if err != nil {
			return r, "", err
		}
		kinds, r.Target.Kind, r.Target.Time = append(kinds, "to_datetime"), kafka.ToDatetime, t
		words = fmt.Sprintf("the first offset at or after %s (to_datetime %s)", t.UTC().Format(time.RFC3339Nano), s)
	}
	if in.ByDuration != nil {
		s := *in.ByDuration
		d, err := parseISODuration("by_duration", s, now)
		if err != nil {
			return r, "", err
		}
		t := now.Add(-d).Truncate(time.Millisecond)
		kinds, r.Target.Kind, r.Target.Time = append(kinds, "by_duration"), kafka.ByDuration, t
		words = fmt.Sprintf("the first offset at or after %s (by_duration %s before %s)", t.UTC().Format(time.RFC3339Nano), s, now.UTC().Format(time.RFC3339))
	}
	if in.ShiftBy != nil {
		n := *in.ShiftBy
		kinds, r.Target.Kind, r.Target.Shift, words = append(kinds, "shift_by"), kafka.ShiftBy, n, fmt.Sprintf("the committed offset %+d (shift_by)", n)
	}
	switch len(kinds) {
	case 1:
		return r, words, nil
	case 0:
		return r, "", mcperr.Invalidf("no target: give exactly one of to_earliest, to_latest, to_offset, to_datetime, by_duration, shift_by; nothing was sent")
	}
	return r, "", mcperr.Invalidf("%s: give exactly one target, not %d; nothing was sent", strings.Join(kinds, ", "), len(kinds))
}

// topics reads topic or topics (exactly one of them), each a valid name.
func topics(one *string, many []string) ([]string, error) {
	switch {
	case one != nil && many != nil:
		return nil, mcperr.Invalidf("topic, topics: give one topic or a list of topics, not both; nothing was sent")
	case one != nil:
		return []string{*one}, validTopic("topic", *one)
	case many != nil:
		var out []string
		seen := map[string]bool{}
		for _, s := range many {
			if err := checkTopic("topics", s); err != nil {
				return nil, err
			}
			if !seen[s] {
				seen[s] = true
				out = append(out, s)
			}
		}
		return out, nil
	}
	return nil, mcperr.Invalidf("topic is required (or topics, a list); nothing was sent")
}

// dedupe keeps the first of each partition number (nil when omitted).
func dedupe(ps []int32) []int32 {
	if ps == nil {
		return nil
	}
	seen := map[int32]bool{}
	var out []int32
	for _, p := range ps {
		if !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	}
	return out
}

// parseDatetime reads an RFC 3339 time with an explicit zone. A time
// without zone is refused rather than guessed (whose 09:00?); times before
// 1970 are refused because ListOffsets reads negative timestamps as
// "earliest"/"latest".
func parseDatetime(arg, s string) (time.Time, error) {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		if _, lerr := time.Parse("2006-01-02T15:04:05", strings.SplitN(s, ".", 2)[0]); lerr == nil {
			return time.Time{}, mcperr.Invalidf("%s: %s has no time zone; add Z (UTC) or an offset such as +02:00, e.g. %sZ; nothing was sent", arg, quoteShort(s), s)
		}
		return time.Time{}, mcperr.Invalidf("%s: %s is not an RFC 3339 time such as 2026-11-24T09:00:00Z or 2026-11-24T10:00:00+01:00; nothing was sent", arg, quoteShort(s))
	}
	if t.Before(time.Unix(0, 0)) {
		return time.Time{}, mcperr.Invalidf("%s: %s is before 1970-01-01T00:00:00Z, where Kafka timestamps start; nothing was sent", arg, quoteShort(s))
	}
	return t, nil
}

var isoDuration = regexp.MustCompile(`^P(?:(\d+)W)?(?:(\d+)D)?(?:T(?:(\d+)H)?(?:(\d+)M)?(?:(\d+)(?:\.(\d{1,9}))?S)?)?$`)

// parseISODuration reads an ISO 8601 duration of weeks, days, hours,
// minutes and seconds (years and months have no fixed length and are
// refused), which must not reach back before 1970 from now.
func parseISODuration(arg, s string, now time.Time) (time.Duration, error) {
	m := isoDuration.FindStringSubmatch(s)
	if m == nil || s == "P" || strings.HasSuffix(s, "T") {
		hint := ""
		if regexp.MustCompile(`^P.*[YM].*$`).MatchString(s) && !strings.Contains(s, "T") {
			hint = " (years and months have no fixed length: use days, e.g. P30D)"
		}
		return 0, mcperr.Invalidf("%s: %s is not an ISO 8601 duration such as PT30M, PT2H, P1DT12H or P7D%s; nothing was sent", arg, quoteShort(s), hint)
	}
	units := []time.Duration{7 * 24 * time.Hour, 24 * time.Hour, time.Hour, time.Minute, time.Second}
	limit := now.Sub(time.Unix(0, 0))
	tooLong := mcperr.Invalidf("%s: %s reaches back before 1970-01-01, where Kafka timestamps start; nothing was sent", arg, quoteShort(s))
	var total time.Duration
	for i, u := range units {
		if m[i+1] == "" {
			continue
		}
		n, err := strconv.ParseInt(m[i+1], 10, 64)
		if err != nil || n > int64(limit/u) {
			return 0, tooLong
		}
		total += time.Duration(n) * u
		if total > limit {
			return 0, tooLong
		}
	}
	if m[6] != "" {
		frac, _ := strconv.ParseInt((m[6] + "000000000")[:9], 10, 64)
		total += time.Duration(frac)
	}
	if total <= 0 {
		return 0, mcperr.Invalidf("%s: %s is zero; give how far back, e.g. PT30M (or use to_latest); nothing was sent", arg, quoteShort(s))
	}
	if total > limit {
		return 0, tooLong
	}
	return total, nil
}

// resetSummary words a reset plan with its per-partition table.
func resetSummary(p *kafka.ResetPlan, words, target string) string {
	var b strings.Builder
	state := "is " + p.State
	if p.State == "Dead" {
		state = "does not exist yet (the commit creates it, Empty)"
	}
	fmt.Fprintf(&b, "Reset the committed offsets of consumer group %s on %d partition(s) to %s on %s. The group %s, with no members. The group will re-consume %d message(s) and skip %d.",
		p.Group, len(p.Rows), words, target, state, p.Reconsumed, p.Skipped)
	if p.Clamped > 0 {
		fmt.Fprintf(&b, " %d partition(s) have a target outside [log start, log end] and are clamped to it (see the clamped column).", p.Clamped)
	}
	b.WriteString("\n\n")
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "topic/partition\tcommitted → new\tlog start..end\tlag before → after\tre-consumed\tskipped\tclamped")
	for i, r := range p.Rows {
		if i == maxPreviewRows {
			fmt.Fprintf(tw, "… %d more partition(s), every one in the preview's state\t\t\t\t\t\t\n", len(p.Rows)-maxPreviewRows)
			break
		}
		cur, lag := "none", "-"
		if r.Current != nil {
			cur, lag = strconv.FormatInt(*r.Current, 10), strconv.FormatInt(*r.LagBefore, 10)
		}
		clamped := "-"
		if r.Clamped != "" {
			clamped = fmt.Sprintf("to %s (asked %d)", r.Clamped, r.Requested)
		}
		fmt.Fprintf(tw, "%s/%d\t%s → %d\t%d..%d\t%s → %d\t%d\t%d\t%s\n", r.Topic, r.Partition, cur, r.New, r.LogStart, r.LogEnd, lag, r.LagAfter, r.Reconsumed, r.Skipped, clamped)
	}
	tw.Flush()
	return strings.TrimRight(b.String(), "\n")
}

func resetEffect(p *kafka.ResetPlan) string {
	return fmt.Sprintf("group %s's next consumer starts at the new offsets: %d message(s) read again, %d never read; the previous offsets are not kept (note them to go back)",
		p.Group, p.Reconsumed, p.Skipped)
}

func joinInts(ps []int32) string {
	s := make([]string, len(ps))
	for i, p := range ps {
		s[i] = strconv.Itoa(int(p))
	}
	return strings.Join(s, ",")
}

type deleteOffsetsIn struct {
	clusterArg
	GroupID    string  `json:"group_id" jsonschema:"consumer group id"`
	Topic      string  `json:"topic" jsonschema:"topic whose committed offsets to delete"`
	Partitions []int32 `json:"partitions,omitempty" jsonschema:"only these partitions (default: all)" minItems:"1" minimum:"0" maximum:"2147483647"`
}

type deleteGroupIn struct {
	clusterArg
	GroupID string `json:"group_id" jsonschema:"consumer group id (the group must have no members)"`
}

type deleteRecordsIn struct {
	clusterArg
	Topic        string `json:"topic" jsonschema:"topic name"`
	Partition    int32  `json:"partition" jsonschema:"partition number" minimum:"0" maximum:"2147483647"`
	BeforeOffset int64  `json:"before_offset" jsonschema:"messages below this offset are deleted; at most the log end offset" minimum:"0"`
}

type createPartitionsIn struct {
	clusterArg
	Topic string `json:"topic" jsonschema:"topic name"`
	Count int32  `json:"count" jsonschema:"the new total number of partitions (more than now)" minimum:"1" maximum:"10000"`
}

type alterConfigIn struct {
	clusterArg
	Topic  string            `json:"topic" jsonschema:"topic name"`
	Set    map[string]string `json:"set,omitempty" jsonschema:"configs to set, name to string value, e.g. {\"retention.ms\": \"86400000\"}"`
	Delete []string          `json:"delete,omitempty" jsonschema:"configs to remove from the topic (it falls back to the broker default)"`
}

func (h *Handler) registerAdmin(calls *toolcall.Pipeline) {
	toolcall.AddChange(calls, h.tool("delete_consumer_group_offsets",
		"Delete an empty consumer group's committed offsets on one topic (OffsetDelete): its consumers then start where their auto.offset.reset says. The preview lists every offset that disappears.",
		destructive("Delete consumer group offsets", true)), mapped(h.planDeleteOffsets))
	toolcall.AddChange(calls, h.tool("delete_consumer_group",
		"Delete an empty consumer group and every offset it committed (DeleteGroups). The preview lists the committed offsets per topic that are lost.",
		destructive("Delete consumer group", true)), mapped(h.planDeleteGroup))
	toolcall.AddChange(calls, h.tool("delete_records",
		"Delete every message of one partition before an offset (DeleteRecords): the log start moves up and those messages are gone for every consumer. The preview shows the messages removed and the groups whose committed offset falls below the new log start.",
		destructive("Delete records", true)), mapped(h.planDeleteRecords))
	toolcall.AddChange(calls, h.tool("create_partitions",
		fmt.Sprintf("Raise a topic's partition count to count (CreatePartitions). It cannot be undone, and keyed messages map to other partitions afterwards (per-key ordering breaks across the change). At most %d partitions.", maxPartitions),
		destructive("Add partitions", true)), mapped(h.planCreatePartitions))
	toolcall.AddChange(calls, h.tool("alter_topic_config",
		"Set or delete a topic's configs (IncrementalAlterConfigs). A change; destructive when it lowers retention.ms or retention.bytes (data becomes eligible for deletion), changes cleanup.policy, or lowers min.insync.replicas — compared with the live value. The preview shows old → new and the source per key, and for a retention decrease the messages that become eligible for deletion.",
		destructive("Alter topic config", true)), mapped(h.planAlterConfig))
	toolcall.AddChange(calls, h.tool("delete_topic",
		"Delete a topic and every message in it (DeleteTopics). The preview shows its partitions, size on disk, the groups with committed offsets on it and whether the brokers allow deletion (delete.topic.enable).",
		destructive("Delete topic", true)), mapped(h.planDeleteTopic))
}

// maxPartitions bounds create_partitions (the count tag says it too): a
// typo of a few digits must not ask the controller for millions of
// partitions.
const maxPartitions = 10000

// writableCluster is the cluster a write names, refused when its write
// switch is off.
func (h *Handler) writableCluster(a clusterArg) (*clusterState, error) {
	cl, err := h.cluster(a)
	if err != nil {
		return nil, err
	}
	return cl, h.writable(cl)
}

// writeTarget checks the cluster switch and allowlists shared by every
// write tool, and returns the cluster and its target words.
func (h *Handler) writeTarget(a clusterArg, topic, group string) (*clusterState, string, error) {
	cl, err := h.writableCluster(a)
	if err != nil {
		return nil, "", err
	}
	if group != "" {
		if err := groupAllowed(cl, group); err != nil {
			return nil, "", err
		}
	}
	if topic != "" {
		if err := topicAllowed(cl, topic); err != nil {
			return nil, "", err
		}
	}
	return cl, h.target(cl), nil
}

// writePlan is the start of every write tool's plan but the reset's:
// checks (the arguments' validation, the first failure refused), then the
// cluster's write switch and its allowlists for the group and topic named
// ("" for none); it returns the cluster and a destructive plan targeted at
// it, to which the tool adds its commands, preview and run.
func (h *Handler) writePlan(a clusterArg, group, topic string, checks ...error) (*clusterState, toolcall.Plan, error) {
	if err := cmp.Or(checks...); err != nil {
		return nil, toolcall.Plan{}, err
	}
	cl, target, err := h.writeTarget(a, topic, group)
	if err != nil {
		return nil, toolcall.Plan{}, err
	}
	return cl, toolcall.Plan{Class: toolcall.Destructive, Target: target}, nil
}

// validTopic refuses a blank topic argument, then a name Kafka would refuse.
func validTopic(arg, t string) error {
	if err := nonEmpty(arg, t); err != nil {
		return err
	}
	return checkTopic(arg, t)
}

// validGroup refuses a blank group argument, then an id no operator would
// mean.
func validGroup(arg, g string) error {
	if err := nonEmpty(arg, g); err != nil {
		return err
	}
	return checkGroup(arg, g)
}

func (h *Handler) planDeleteOffsets(ctx context.Context, in deleteOffsetsIn) (toolcall.Plan, error) {
	group, topic, parts := in.GroupID, in.Topic, dedupe(in.Partitions)
	cl, plan, err := h.writePlan(in.clusterArg, group, topic, validGroup("group_id", group), validTopic("topic", topic))
	if err != nil {
		return plan, err
	}
	kc, target := cl.Client, plan.Target
	which := "all partitions"
	if parts != nil {
		which = "partitions " + joinInts(parts)
	}
	action := "delete the committed offsets of group " + group + " on topic " + topic
	plan.Commands = []string{fmt.Sprintf("OffsetDelete group=%q topic=%q %s (the partitions with a committed offset; to the group's coordinator)", group, topic, which)}
	plan.Describe = func(ctx context.Context) (toolcall.Preview, error) {
		g, err := kc.PlanGroupChange(ctx, group, topic, parts, action)
		if err != nil {
			return toolcall.Preview{}, err
		}
		var b strings.Builder
		fmt.Fprintf(&b, "Delete the committed offsets of consumer group %s on topic %s (%s) on %s. The group is %s, with no members; %d committed offset(s) disappear (lag %d).",
			group, topic, which, target, g.State, len(g.Offsets), g.TotalLag)
		if len(g.NoCommit) > 0 {
			fmt.Fprintf(&b, " No committed offset to delete on %s.", strings.Join(g.NoCommit, ", "))
		}
		fmt.Fprintf(&b, " Its next consumer starts where its auto.offset.reset says (a consumer setting, not visible to Kafka): latest skips the %d message(s) of lag; earliest re-reads %d message(s) from the log start; none fails.\n\n", g.TotalLag, g.LogStarts)
		writeCommittedTable(&b, g.Offsets, false)
		return toolcall.Preview{Summary: strings.TrimRight(b.String(), "\n"), State: g,
			Effect:       "the offsets are gone; consumers of " + group + " on " + topic + " restart from auto.offset.reset",
			Precondition: g.Fingerprint()}, nil
	}
	plan.Run = func(ctx context.Context) (*mcp.CallToolResult, error) {
		g, err := kc.DeleteGroupOffsets(ctx, group, topic, parts)
		if err != nil {
			return nil, err
		}
		h.log.Info("consumer group offsets deleted", "cluster", cl.Name, "group", group, "topic", topic, "partitions", len(g.Offsets))
		return result(map[string]any{"deleted": len(g.Offsets), "group_id": group, "topic": topic, "offsets": g.Offsets}), nil
	}
	return plan, nil
}

func writeCommittedTable(b *strings.Builder, rows []kafka.CommittedRow, withGroup bool) {
	tw := tabwriter.NewWriter(b, 0, 0, 2, ' ', 0)
	if withGroup {
		fmt.Fprintln(tw, "group\ttopic/partition\tcommitted\tlog end\tlag")
	} else {
		fmt.Fprintln(tw, "topic/partition\tcommitted\tlog start..end\tlag")
	}
	for i, r := range rows {
		if i == maxPreviewRows {
			fmt.Fprintf(tw, "… %d more, every one in the preview's state\n", len(rows)-maxPreviewRows)
			break
		}
		if withGroup {
			fmt.Fprintf(tw, "%s\t%s/%d\t%d\t%d\t%d\n", r.Group, r.Topic, r.Partition, r.Committed, r.LogEnd, r.Lag)
		} else {
			fmt.Fprintf(tw, "%s/%d\t%d\t%d..%d\t%d\n", r.Topic, r.Partition, r.Committed, r.LogStart, r.LogEnd, r.Lag)
		}
	}
	tw.Flush()
}

func (h *Handler) planDeleteGroup(ctx context.Context, in deleteGroupIn) (toolcall.Plan, error) {
	group := in.GroupID
	cl, plan, err := h.writePlan(in.clusterArg, group, "", validGroup("group_id", group))
	if err != nil {
		return plan, err
	}
	kc, target := cl.Client, plan.Target
	plan.Commands = []string{fmt.Sprintf("DeleteGroups groups=[%q] (to the group's coordinator)", group)}
	plan.Describe = func(ctx context.Context) (toolcall.Preview, error) {
		g, err := kc.PlanGroupChange(ctx, group, "", nil, "delete consumer group "+group)
		if err != nil {
			return toolcall.Preview{}, err
		}
		perTopic := map[string]int{}
		var topics []string
		for _, o := range g.Offsets {
			if perTopic[o.Topic] == 0 {
				topics = append(topics, o.Topic)
			}
			perTopic[o.Topic]++
		}
		words := make([]string, len(topics))
		for i, t := range topics {
			words[i] = fmt.Sprintf("%s (%d partition(s))", t, perTopic[t])
		}
		lost := "none"
		if len(words) > 0 {
			lost = strings.Join(words, ", ")
		}
		var b strings.Builder
		fmt.Fprintf(&b, "Delete consumer group %s on %s. It is %s with members: none. Committed offsets lost, per topic: %s; total lag %d.\n\n", group, target, g.State, lost, g.TotalLag)
		writeCommittedTable(&b, g.Offsets, false)
		return toolcall.Preview{Summary: strings.TrimRight(b.String(), "\n"), State: g,
			Effect:       "the group and its offsets are gone; a consumer joining " + group + " later starts from its auto.offset.reset",
			Precondition: g.Fingerprint()}, nil
	}
	plan.Run = func(ctx context.Context) (*mcp.CallToolResult, error) {
		g, err := kc.DeleteGroup(ctx, group)
		if err != nil {
			return nil, err
		}
		h.log.Info("consumer group deleted", "cluster", cl.Name, "group", group)
		return result(map[string]any{"deleted": true, "group_id": group, "offsets_lost": g.Offsets}), nil
	}
	return plan, nil
}

func (h *Handler) planDeleteRecords(ctx context.Context, in deleteRecordsIn) (toolcall.Plan, error) {
	topic, part, before := in.Topic, in.Partition, in.BeforeOffset
	cl, plan, err := h.writePlan(in.clusterArg, "", topic, validTopic("topic", topic))
	if err != nil {
		return plan, err
	}
	kc, target := cl.Client, plan.Target
	plan.Commands = []string{fmt.Sprintf("DeleteRecords topic=%q partition=%d offset=%d (to the partition's leader)", topic, part, before)}
	plan.Describe = func(ctx context.Context) (toolcall.Preview, error) {
		r, err := kc.PlanDeleteRecords(ctx, topic, part, before)
		if err != nil {
			return toolcall.Preview{}, err
		}
		var b strings.Builder
		fmt.Fprintf(&b, "Delete the messages of %s/%d before offset %d on %s: log start %d → %d, %d message(s) removed (log end %d).",
			topic, part, before, target, r.LogStart, r.NewLogStart, r.Removed, r.LogEnd)
		if len(r.Groups) == 0 {
			b.WriteString(" No consumer group has its committed offset below the new log start.")
		} else {
			fmt.Fprintf(&b, " %d group(s) have their committed offset below the new log start: they lose those messages, and their next fetch is out of range (auto.offset.reset decides where they resume).\n\n", len(r.Groups))
			writeCommittedTable(&b, r.Groups, true)
		}
		if r.GroupsErr != "" {
			b.WriteString("\nGroups may be incomplete: " + r.GroupsErr)
		}
		return toolcall.Preview{Summary: strings.TrimRight(b.String(), "\n"), State: r,
			Effect:       fmt.Sprintf("messages %d..%d of %s/%d are gone for every consumer", r.LogStart, r.NewLogStart-1, topic, part),
			Precondition: fmt.Sprintf("log start %d", r.LogStart)}, nil
	}
	plan.Run = func(ctx context.Context) (*mcp.CallToolResult, error) {
		r, err := kc.DeleteRecords(ctx, topic, part, before)
		if err != nil {
			return nil, err
		}
		h.log.Info("records deleted", "cluster", cl.Name, "topic", topic, "partition", part, "log_start", r.NewLogStart)
		return result(map[string]any{"topic": topic, "partition": part, "old_log_start_offset": r.LogStart, "log_start_offset": r.NewLogStart, "messages_removed": r.NewLogStart - r.LogStart}), nil
	}
	return plan, nil
}

func (h *Handler) planCreatePartitions(ctx context.Context, in createPartitionsIn) (toolcall.Plan, error) {
	topic, count := in.Topic, in.Count
	cl, plan, err := h.writePlan(in.clusterArg, "", topic, validTopic("topic", topic))
	if err != nil {
		return plan, err
	}
	kc, target := cl.Client, plan.Target
	plan.Commands = []string{fmt.Sprintf("CreatePartitions topic=%q count=%d (new total; to the controller)", topic, count)}
	plan.Describe = func(ctx context.Context) (toolcall.Preview, error) {
		ti, err := kc.PlanTopicChange(ctx, topic, false)
		if err != nil {
			return toolcall.Preview{}, err
		}
		if int(count) <= ti.Partitions {
			return toolcall.Preview{}, mcperr.Invalidf("count %d is not more than the %d partitions topic %s has: Kafka can only add partitions (INVALID_PARTITIONS); nothing was changed", count, ti.Partitions, topic)
		}
		return toolcall.Preview{
			Summary: fmt.Sprintf("Raise topic %s on %s from %d to %d partitions. This cannot be undone (Kafka cannot remove partitions). Producers that key their messages will send most keys to other partitions from now on: per-key ordering across the change is lost, and consumers relying on key → partition (state stores, compacted topics) must be checked first.",
				topic, target, ti.Partitions, count),
			State:        map[string]any{"topic": topic, "partitions": ti.Partitions, "new_partitions": count},
			Effect:       fmt.Sprintf("%d new empty partition(s); the default partitioner spreads keys over all %d", int(count)-ti.Partitions, count),
			Precondition: fmt.Sprintf("%d partitions", ti.Partitions),
		}, nil
	}
	plan.Run = func(ctx context.Context) (*mcp.CallToolResult, error) {
		ti, err := kc.CreatePartitions(ctx, topic, count)
		if err != nil {
			return nil, err
		}
		h.log.Info("partitions created", "cluster", cl.Name, "topic", topic, "from", ti.Partitions, "to", count)
		return result(map[string]any{"topic": topic, "old_partitions": ti.Partitions, "partitions": count}), nil
	}
	return plan, nil
}

func (h *Handler) planDeleteTopic(ctx context.Context, in topicIn) (toolcall.Plan, error) {
	topic := in.Topic
	cl, plan, err := h.writePlan(in.clusterArg, "", topic, validTopic("topic", topic))
	if err != nil {
		return plan, err
	}
	kc, target := cl.Client, plan.Target
	plan.Commands = []string{fmt.Sprintf("DeleteTopics topics=[%q] (to the controller)", topic)}
	plan.Describe = func(ctx context.Context) (toolcall.Preview, error) {
		ti, err := kc.PlanTopicChange(ctx, topic, true)
		if err != nil {
			return toolcall.Preview{}, err
		}
		size := "size unknown"
		if ti.SizeBytes != nil {
			size = fmt.Sprintf("%d bytes on disk over all replicas", *ti.SizeBytes)
		}
		var b strings.Builder
		fmt.Fprintf(&b, "Delete topic %s on %s: %d partition(s), %s, every message lost.", topic, target, ti.Partitions, size)
		switch {
		case ti.DeleteEnabled == nil:
			fmt.Fprintf(&b, " delete.topic.enable: unknown, %s; if it is false Kafka refuses (TOPIC_DELETION_DISABLED) and nothing is deleted.", ti.DeleteEnabledUnknown)
		case !*ti.DeleteEnabled:
			b.WriteString(" The controller has delete.topic.enable=false: Kafka will refuse (TOPIC_DELETION_DISABLED).")
		default:
			b.WriteString(" The controller has delete.topic.enable=true.")
		}
		groups := map[string]bool{}
		for _, g := range ti.Groups {
			groups[g.Group] = true
		}
		if len(groups) == 0 {
			b.WriteString(" No consumer group has committed offsets on it.")
		} else {
			fmt.Fprintf(&b, " %d consumer group(s) have committed offsets on it (kept by Kafka until they expire, pointing at a topic that is gone):\n\n", len(groups))
			writeCommittedTable(&b, ti.Groups, true)
		}
		if ti.GroupsErr != "" {
			b.WriteString("\nGroups may be incomplete: " + ti.GroupsErr)
		}
		return toolcall.Preview{Summary: strings.TrimRight(b.String(), "\n"), State: ti,
			Effect:       "the topic and its data are gone; producers to " + topic + " fail or re-create it (auto.create.topics.enable)",
			Precondition: fmt.Sprintf("exists with %d partitions", ti.Partitions)}, nil
	}
	plan.Run = func(ctx context.Context) (*mcp.CallToolResult, error) {
		if err := kc.DeleteTopic(ctx, topic); err != nil {
			return nil, err
		}
		h.log.Info("topic deleted", "cluster", cl.Name, "topic", topic)
		return result(map[string]any{"deleted": true, "topic": topic}), nil
	}
	return plan, nil
}
