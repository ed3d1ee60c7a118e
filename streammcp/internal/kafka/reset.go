package kafka

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/IBM/sarama"

	"github.com/mcpfleet/mcpfleet/shared/errkind"
)

// TargetKind is where an offset reset moves a group.
type TargetKind string

// The six targets of reset_consumer_group_offsets.
const (
	ToEarliest TargetKind = "to_earliest"
	ToLatest   TargetKind = "to_latest"
	ToOffset   TargetKind = "to_offset"
	ToDatetime TargetKind = "to_datetime"
	ByDuration TargetKind = "by_duration"
	ShiftBy    TargetKind = "shift_by"
)

// Target is one reset target. ByDuration is resolved to a Time by the caller
// (once, when the call is planned), so the preview and the change look up
// the same instant.
type Target struct {
	Kind   TargetKind
	Offset int64     // ToOffset
	Shift  int64     // ShiftBy
	Time   time.Time // ToDatetime, ByDuration
}

// ResetRequest is a validated offset reset.
type ResetRequest struct {
	Group      string
	Topics     []string
	Partitions []int32 // nil: every partition of the topics
	Target     Target
}

// ResetRow is one partition of a reset: what is committed now, what will be
// committed, and what that means for the group.
type ResetRow struct {
	Topic     string `json:"topic"`
	Partition int32  `json:"partition"`
	// Current is the committed offset, null when the group never committed.
	Current  *int64 `json:"current_offset"`
	New      int64  `json:"new_offset"`
	LogStart int64  `json:"log_start_offset"`
	LogEnd   int64  `json:"log_end_offset"`
	// LagBefore is null when there is no committed offset.
	LagBefore  *int64 `json:"lag_before"`
	LagAfter   int64  `json:"lag_after"`
	Reconsumed int64  `json:"reconsumed"` // messages the group will read again
	Skipped    int64  `json:"skipped"`    // messages the group will never read
	// Clamped says the target was outside [log start, log end] and was
	// moved to "log start" or "log end"; empty otherwise.
	Clamped   string `json:"clamped,omitempty"`
	Requested int64  `json:"requested_offset"` // the target before clamping
}

// ResetPlan is an offset reset computed from the live state: what the
// preview shows and what the change commits.
type ResetPlan struct {
	Group       string     `json:"group_id"`
	State       string     `json:"state"`
	Coordinator int32      `json:"coordinator"`
	Rows        []ResetRow `json:"partitions"`
	Reconsumed  int64      `json:"reconsumed"`
	Skipped     int64      `json:"skipped"`
	Clamped     int        `json:"clamped"`
	addr        string
}

// Fingerprint is what an approval of the reset depends on: the group is
// still empty and its committed offsets are the ones shown. Log offsets
// are left out: producers move them all the time.
func (p *ResetPlan) Fingerprint() string {
	var b strings.Builder
	fmt.Fprintf(&b, "group %s empty; committed", p.Group)
	for _, r := range p.Rows {
		c := "none"
		if r.Current != nil {
			c = fmt.Sprint(*r.Current)
		}
		fmt.Fprintf(&b, " %s/%d=%s", r.Topic, r.Partition, c)
	}
	return b.String()
}

// groupForChange describes a group through its coordinator and refuses
// when it has members: Kafka only accepts offsets from outside a group
// that is empty (as kafka-consumer-groups --reset-offsets requires).
func (c *Client) groupForChange(ctx context.Context, id, action string) (groupView, error) {
	cid, addr, err := c.coordinator(ctx, id)
	if err != nil {
		return groupView{}, err
	}
	groups, retry, err := c.brokerGroups(ctx, cid, addr, []string{id})
	if err != nil {
		return groupView{}, err
	}
	if len(retry) > 0 || len(groups) == 0 {
		return groupView{}, errkind.New(errkind.Unavailable, "describe group "+id, errors.New("its coordinator is moving"), "retry in a moment")
	}
	g := groups[0]
	if g.Err != "" {
		return groupView{}, errkind.New(errkind.Unavailable, "describe group "+id, errors.New(g.Err), "retry in a moment")
	}
	if len(g.Members) > 0 {
		names := make([]string, 0, len(g.Members))
		for _, m := range g.Members {
			names = append(names, fmt.Sprintf("%s (client %s at %s)", m.MemberID, m.ClientID, strings.TrimPrefix(m.ClientHost, "/")))
		}
		return groupView{}, errkind.New(errkind.Conflict, action,
			fmt.Errorf("group %s is %s with %d member(s): %s", id, g.State, len(names), strings.Join(names, ", ")),
			"Kafka only accepts this while the group is empty: stop its consumers, wait until describe_consumer_group shows state Empty, then try again")
	}
	committed := map[tp]int64{}
	for _, o := range g.Offsets {
		if o.Err == "" && o.Committed >= 0 {
			committed[tp{o.Topic, o.Partition}] = o.Committed
		}
	}
	return groupView{id: id, state: g.State, coordinator: cid, addr: addr, committed: committed}, nil
}

// groupView is an empty group as a change sees it.
type groupView struct {
	id          string
	state       string
	coordinator int32
	addr        string
	committed   map[tp]int64
}

// topicPartitions resolves topics (and an optional partition subset) against
// metadata, refusing unknown topics and partitions by name.
func topicPartitions(md *sarama.MetadataResponse, topics []string, subset []int32) ([]tp, error) {
	byName := map[string]*sarama.TopicMetadata{}
	for _, t := range md.Topics {
		byName[t.Name] = t
	}
	var out []tp
	for _, name := range topics {
		t := byName[name]
		if t == nil || t.Err == sarama.ErrUnknownTopicOrPartition {
			return nil, errkind.NotFoundf("topic %q does not exist; list_topics shows the topics there are", name)
		}
		have := map[int32]bool{}
		for _, p := range t.Partitions {
			have[p.ID] = true
		}
		if subset == nil {
			for _, p := range t.Partitions {
				out = append(out, tp{name, p.ID})
			}
			continue
		}
		for _, p := range subset {
			if !have[p] {
				return nil, errkind.Invalidf("partitions: topic %q has no partition %d (it has %d partitions, 0 to %d)", name, p, len(t.Partitions), len(t.Partitions)-1)
			}
			out = append(out, tp{name, p})
		}
	}
	slices.SortFunc(out, tp.compare)
	return slices.Compact(out), nil
}

// logRange reads the log start and end offsets of parts and fails naming
// the first partition that could not be read.
func (c *Client) logRange(ctx context.Context, md *sarama.MetadataResponse, parts map[tp]bool) (start, end map[tp]int64, err error) {
	start, end, serrs, eerrs := c.bothEnds(ctx, md, parts)
	if err := firstPartitionError("read the log start and end offsets", serrs, eerrs); err != nil {
		return nil, nil, err
	}
	return start, end, nil
}

// bothEnds reads the log start and end offsets of parts, one ListOffsets
// per leader and side with the two sides in parallel, and the partitions
// each side could not read (why, per partition).
func (c *Client) bothEnds(ctx context.Context, md *sarama.MetadataResponse, parts map[tp]bool) (start, end map[tp]int64, startErrs, endErrs map[tp]string) {
	type side struct {
		offs map[tp]int64
		errs map[tp]string
	}
	early := make(chan side, 1)
	go func() {
		o, e := c.offsetsAt(ctx, md, parts, sarama.OffsetOldest)
		early <- side{o, e}
	}()
	end, endErrs = c.offsetsAt(ctx, md, parts, sarama.OffsetNewest)
	s := <-early
	return s.offs, end, s.errs, endErrs
}

func firstPartitionError(what string, errs ...map[tp]string) error {
	var keys []tp
	for _, m := range errs {
		for k := range m {
			keys = append(keys, k)
		}
	}
	if len(keys) == 0 {
		return nil
	}
	slices.SortFunc(keys, tp.compare)
	k := keys[0]
	msg := ""
	for _, m := range errs {
		if v, ok := m[k]; ok {
			msg = v
			break
		}
	}
	return errkind.New(errkind.Unavailable, fmt.Sprintf("%s of %s/%d", what, k.topic, k.part), errors.New(msg),
		"retry when every partition has a live leader; nothing was changed")
}

// PlanReset computes an offset reset from the live state: the group (which
// must be empty), its committed offsets, each partition's log start and end
// and, for time targets, the first offset at or after the time. Its cost
// does not depend on the number of partitions: one Metadata, one
// FindCoordinator, one DescribeGroups, one OffsetFetch, and one ListOffsets
// per partition leader for each of log start, log end and the time.
func (c *Client) PlanReset(ctx context.Context, r ResetRequest) (*ResetPlan, error) {
	ctx, cancel := context.WithTimeout(ctx, c.opts.Timeout)
	defer cancel()
	return c.planReset(ctx, r)
}

func (c *Client) planReset(ctx context.Context, r ResetRequest) (*ResetPlan, error) {
	md, err := c.metadata(ctx, r.Topics)
	if err != nil {
		return nil, err
	}
	parts, err := topicPartitions(md, r.Topics, r.Partitions)
	if err != nil {
		return nil, err
	}
	g, err := c.groupForChange(ctx, r.Group, "reset the offsets of group "+r.Group)
	if err != nil {
		return nil, err
	}
	set := make(map[tp]bool, len(parts))
	for _, k := range parts {
		set[k] = true
	}
	start, end, err := c.logRange(ctx, md, set)
	if err != nil {
		return nil, err
	}
	var atTime map[tp]int64
	if r.Target.Kind == ToDatetime || r.Target.Kind == ByDuration {
		var errs map[tp]string
		atTime, errs = c.offsetsAt(ctx, md, set, r.Target.Time.UnixMilli())
		if err := firstPartitionError("look up the offset for "+r.Target.Time.UTC().Format(time.RFC3339), errs); err != nil {
			return nil, err
		}
	}
	if r.Target.Kind == ShiftBy {
		var missing []string
		for _, k := range parts {
			if _, ok := g.committed[k]; !ok {
				missing = append(missing, fmt.Sprintf("%s/%d", k.topic, k.part))
			}
		}
		if len(missing) > 0 {
			return nil, errkind.Invalidf("shift_by: group %s has no committed offset to shift from on %s; choose partitions it committed, or use to_earliest, to_latest, to_offset or to_datetime",
				r.Group, shortList(missing, 10))
		}
	}
	p := &ResetPlan{Group: g.id, State: g.state, Coordinator: g.coordinator, addr: g.addr, Rows: make([]ResetRow, 0, len(parts))}
	for _, k := range parts {
		row := ResetRow{Topic: k.topic, Partition: k.part, LogStart: start[k], LogEnd: end[k]}
		cur, has := g.committed[k]
		if has {
			row.Current = ptr(cur)
			row.LagBefore = ptr(max(row.LogEnd-cur, 0))
		}
		switch r.Target.Kind {
		case ToEarliest:
			row.Requested = row.LogStart
		case ToLatest:
			row.Requested = row.LogEnd
		case ToOffset:
			row.Requested = r.Target.Offset
		case ToDatetime, ByDuration:
			row.Requested = atTime[k]
			if row.Requested < 0 { // no message at or after the time
				row.Requested = row.LogEnd
			}
		case ShiftBy:
			row.Requested = shiftOffset(cur, r.Target.Shift)
		}
		row.New = row.Requested
		switch {
		case row.New < row.LogStart:
			row.New, row.Clamped = row.LogStart, "log start"
		case row.New > row.LogEnd:
			row.New, row.Clamped = row.LogEnd, "log end"
		}
		row.LagAfter = row.LogEnd - row.New
		if has {
			if row.New < cur {
				row.Reconsumed = cur - row.New
			} else {
				row.Skipped = row.New - cur
			}
		}
		if row.Clamped != "" {
			p.Clamped++
		}
		p.Reconsumed += row.Reconsumed
		p.Skipped += row.Skipped
		p.Rows = append(p.Rows, row)
	}
	return p, nil
}

// shiftOffset adds n to off without overflowing (the result is clamped to
// the log afterwards anyway).
func shiftOffset(off, n int64) int64 {
	if n > 0 && off > (1<<63-1)-n {
		return 1<<63 - 1
	}
	if n < 0 && off < -(1<<63-1)-n {
		return -(1<<63 - 1)
	}
	return off + n
}

func shortList(items []string, n int) string {
	if len(items) <= n {
		return strings.Join(items, ", ")
	}
	return strings.Join(items[:n], ", ") + fmt.Sprintf(" and %d more", len(items)-n)
}

// Reset plans the reset again from the live state (the group must still be
// empty) and commits every new offset in one OffsetCommit to the group's
// coordinator, as an admin commit (generation -1, no member): Kafka itself
// refuses it with UNKNOWN_MEMBER_ID should a consumer join in between.
func (c *Client) Reset(ctx context.Context, r ResetRequest) (*ResetPlan, error) {
	ctx, cancel := context.WithTimeout(ctx, c.opts.Timeout)
	defer cancel()
	p, err := c.planReset(ctx, r)
	if err != nil {
		return nil, err
	}
	req := sarama.NewOffsetCommitRequest(c.conf, r.Group)
	req.ConsumerGroupGeneration = sarama.GroupGenerationUndefined
	for _, row := range p.Rows {
		req.AddBlockWithLeaderEpoch(row.Topic, row.Partition, row.New, -1, 0, "")
	}
	what := "commit the reset offsets of group " + r.Group
	resp, err := callWrite(ctx, c, p.addr, APIOffsetCommit, what, func(b *sarama.Broker) (*sarama.OffsetCommitResponse, error) {
		return b.CommitOffset(req)
	})
	if err != nil {
		return nil, err
	}
	if err := commitErrors(what, resp.Errors); err != nil {
		return nil, err
	}
	return p, nil
}

// commitErrors turns per-partition error codes into one error naming them.
func commitErrors(what string, errs map[string]map[int32]sarama.KError) error {
	var bad []string
	var first sarama.KError
	for t, ps := range errs {
		for p, k := range ps {
			if k != sarama.ErrNoError {
				bad = append(bad, fmt.Sprintf("%s/%d: %s", t, p, ErrorName(k)))
				first = k
			}
		}
	}
	if len(bad) == 0 {
		return nil
	}
	slices.Sort(bad)
	hint := ""
	if first == sarama.ErrUnknownMemberId || first == sarama.ErrIllegalGeneration || first == sarama.ErrRebalanceInProgress {
		hint = "a consumer joined the group meanwhile: stop it and try again"
	}
	return errkind.New(kerrKind(first), what, errors.New(shortList(bad, 10)), hint)
}
