package kafka

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/IBM/sarama"

	"github.com/mcpfleet/mcpfleet/shared/errkind"
)

// CommittedRow is one committed offset a change would lose or step over.
type CommittedRow struct {
	Group     string `json:"group_id,omitempty"`
	Topic     string `json:"topic"`
	Partition int32  `json:"partition"`
	Committed int64  `json:"committed_offset"`
	LogStart  int64  `json:"log_start_offset"`
	LogEnd    int64  `json:"log_end_offset"`
	Lag       int64  `json:"lag"`
}

// GroupChange is what deleting a group's offsets (or the whole group)
// removes: its committed offsets with where each partition's log is.
type GroupChange struct {
	Group     string         `json:"group_id"`
	State     string         `json:"state"`
	Offsets   []CommittedRow `json:"committed_offsets"`
	NoCommit  []string       `json:"partitions_without_commit"` // asked, but nothing to delete
	TotalLag  int64          `json:"total_lag"`
	LogStarts int64          `json:"messages_from_log_start"` // what auto.offset.reset=earliest would re-read
	addr      string
}

// Fingerprint: the group is still empty and its committed offsets on the
// partitions concerned are the ones shown.
func (g *GroupChange) Fingerprint() string {
	var b strings.Builder
	fmt.Fprintf(&b, "group %s empty; committed", g.Group)
	for _, o := range g.Offsets {
		fmt.Fprintf(&b, " %s/%d=%d", o.Topic, o.Partition, o.Committed)
	}
	return b.String()
}

// PlanGroupChange reads what deleting group's committed offsets on topic
// (all topics when topic is ""; partitions nil for all) would remove. The
// group must be empty: Kafka refuses both deletes while members consume
// (NON_EMPTY_GROUP, GROUP_SUBSCRIBED_TO_TOPIC).
func (c *Client) PlanGroupChange(ctx context.Context, group, topic string, partitions []int32, action string) (*GroupChange, error) {
	ctx, cancel := context.WithTimeout(ctx, c.opts.Timeout)
	defer cancel()
	md, err := c.metadata(ctx, nil)
	if err != nil {
		return nil, err
	}
	if topic != "" {
		if _, err := topicPartitions(md, []string{topic}, partitions); err != nil {
			return nil, err
		}
	}
	g, err := c.groupForChange(ctx, group, action)
	if err != nil {
		return nil, err
	}
	if g.state == "Dead" && len(g.committed) == 0 {
		return nil, errkind.NotFoundf("consumer group %q does not exist; list_consumer_groups shows the groups there are", group)
	}
	set := map[tp]bool{}
	for k := range g.committed {
		if (topic == "" || k.topic == topic) && (partitions == nil || slices.Contains(partitions, k.part)) {
			set[k] = true
		}
	}
	out := &GroupChange{Group: group, State: g.state, Offsets: []CommittedRow{}, NoCommit: []string{}, addr: g.addr}
	for _, p := range partitions {
		if !set[tp{topic, p}] {
			out.NoCommit = append(out.NoCommit, fmt.Sprintf("%s/%d", topic, p))
		}
	}
	start, end, err := c.logRange(ctx, md, set)
	if err != nil {
		return nil, err
	}
	for k := range set {
		row := CommittedRow{Topic: k.topic, Partition: k.part, Committed: g.committed[k], LogStart: start[k], LogEnd: end[k]}
		row.Lag = max(row.LogEnd-row.Committed, 0)
		out.TotalLag += row.Lag
		out.LogStarts += row.LogEnd - row.LogStart
		out.Offsets = append(out.Offsets, row)
	}
	sortRows(out.Offsets)
	return out, nil
}

func sortRows(rows []CommittedRow) {
	sort.Slice(rows, func(i, j int) bool {
		a, b := rows[i], rows[j]
		if a.Group != b.Group {
			return a.Group < b.Group
		}
		if a.Topic != b.Topic {
			return a.Topic < b.Topic
		}
		return a.Partition < b.Partition
	})
}

// DeleteGroupOffsets plans again (the group must still be empty) and
// deletes the offsets with one OffsetDelete to the coordinator.
func (c *Client) DeleteGroupOffsets(ctx context.Context, group, topic string, partitions []int32) (*GroupChange, error) {
	what := "delete the committed offsets of group " + group + " on topic " + topic
	g, err := c.PlanGroupChange(ctx, group, topic, partitions, what)
	if err != nil {
		return nil, err
	}
	if len(g.Offsets) == 0 {
		return g, nil
	}
	ctx, cancel := context.WithTimeout(ctx, c.opts.Timeout)
	defer cancel()
	req := &sarama.DeleteOffsetsRequest{Version: 0, Group: group}
	for _, o := range g.Offsets {
		req.AddPartition(o.Topic, o.Partition)
	}
	resp, err := callWrite(ctx, c, g.addr, APIOffsetDelete, what, func(b *sarama.Broker) (*sarama.DeleteOffsetsResponse, error) {
		return b.DeleteOffsets(req)
	})
	if err != nil {
		return nil, err
	}
	if resp.ErrorCode != sarama.ErrNoError {
		return nil, errkind.New(kerrKind(resp.ErrorCode), what, errors.New(ErrorName(resp.ErrorCode)), "")
	}
	return g, commitErrors(what, resp.Errors)
}

// DeleteGroup plans again (the group must still be empty) and deletes it
// with one DeleteGroups to its coordinator.
func (c *Client) DeleteGroup(ctx context.Context, group string) (*GroupChange, error) {
	what := "delete consumer group " + group
	g, err := c.PlanGroupChange(ctx, group, "", nil, what)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, c.opts.Timeout)
	defer cancel()
	req := &sarama.DeleteGroupsRequest{Version: 1, Groups: []string{group}}
	resp, err := callWrite(ctx, c, g.addr, APIDeleteGroups, what, func(b *sarama.Broker) (*sarama.DeleteGroupsResponse, error) {
		return b.DeleteGroups(req)
	})
	if err != nil {
		return nil, err
	}
	if k := resp.GroupErrorCodes[group]; k != sarama.ErrNoError {
		return nil, errkind.New(kerrKind(k), what, errors.New(ErrorName(k)), "")
	}
	return g, nil
}

// RecordsChange is what delete_records removes from one partition.
type RecordsChange struct {
	Topic       string         `json:"topic"`
	Partition   int32          `json:"partition"`
	Leader      int32          `json:"leader"`
	LogStart    int64          `json:"log_start_offset"`
	NewLogStart int64          `json:"new_log_start_offset"`
	LogEnd      int64          `json:"log_end_offset"`
	Removed     int64          `json:"messages_removed"`
	Groups      []CommittedRow `json:"groups_below_new_log_start"` // their next fetch is out of range
	GroupsErr   string         `json:"groups_error,omitempty"`
	addr        string
}

// PlanDeleteRecords reads the partition's log and every group's committed
// offset on it (the lag report's per-broker plan).
func (c *Client) PlanDeleteRecords(ctx context.Context, topic string, partition int32, before int64) (*RecordsChange, error) {
	ctx, cancel := context.WithTimeout(ctx, c.opts.Timeout)
	defer cancel()
	md, err := c.metadata(ctx, []string{topic})
	if err != nil {
		return nil, err
	}
	if _, err := topicPartitions(md, []string{topic}, []int32{partition}); err != nil {
		return nil, err
	}
	k := tp{topic, partition}
	start, end, err := c.logRange(ctx, md, map[tp]bool{k: true})
	if err != nil {
		return nil, err
	}
	if before > end[k] {
		return nil, errkind.Invalidf("before_offset %d is past the log end offset %d of %s/%d: Kafka refuses it (OFFSET_OUT_OF_RANGE); give at most %d to empty the partition; nothing was changed",
			before, end[k], topic, partition, end[k])
	}
	r := &RecordsChange{Topic: topic, Partition: partition, LogStart: start[k], NewLogStart: max(before, start[k]), LogEnd: end[k], Groups: []CommittedRow{}}
	r.Removed = r.NewLogStart - r.LogStart
	for _, t := range md.Topics {
		for _, p := range t.Partitions {
			if p.ID == partition {
				r.Leader, r.addr = p.Leader, brokerAddrs(md)[p.Leader]
			}
		}
	}
	gs, err := c.Groups(ctx)
	if err != nil {
		r.GroupsErr = errkind.Message(err)
	} else {
		r.GroupsErr = gs.Err
		for _, g := range gs.Groups {
			for _, o := range g.Offsets {
				if o.Topic == topic && o.Partition == partition && o.Committed >= 0 && o.Committed < r.NewLogStart {
					r.Groups = append(r.Groups, CommittedRow{Group: g.ID, Topic: topic, Partition: partition, Committed: o.Committed, LogStart: r.LogStart, LogEnd: r.LogEnd, Lag: max(r.LogEnd-o.Committed, 0)})
				}
			}
		}
	}
	return r, nil
}

// DeleteRecords plans again and sends one DeleteRecords to the leader.
func (c *Client) DeleteRecords(ctx context.Context, topic string, partition int32, before int64) (*RecordsChange, error) {
	r, err := c.PlanDeleteRecords(ctx, topic, partition, before)
	if err != nil {
		return nil, err
	}
	if r.addr == "" {
		return nil, errkind.New(errkind.Unavailable, fmt.Sprintf("delete records of %s/%d", topic, partition), errors.New("the partition has no live leader"), "retry when it is back online")
	}
	ctx, cancel := context.WithTimeout(ctx, c.opts.Timeout)
	defer cancel()
	req := &sarama.DeleteRecordsRequest{Version: 1, Timeout: c.opts.Timeout, Topics: map[string]*sarama.DeleteRecordsRequestTopic{
		topic: {PartitionOffsets: map[int32]int64{partition: before}},
	}}
	what := fmt.Sprintf("delete the records of %s/%d before offset %d", topic, partition, before)
	resp, err := callWrite(ctx, c, r.addr, APIDeleteRecords, what, func(b *sarama.Broker) (*sarama.DeleteRecordsResponse, error) {
		return b.DeleteRecords(req)
	})
	if err != nil {
		return nil, err
	}
	if t := resp.Topics[topic]; t != nil {
		if p := t.Partitions[partition]; p != nil {
			if p.Err != sarama.ErrNoError {
				return nil, errkind.New(kerrKind(p.Err), what, errors.New(ErrorName(p.Err)), "")
			}
			r.NewLogStart = p.LowWatermark
		}
	}
	return r, nil
}

// TopicInfoForChange is a topic as create_partitions and delete_topic see
// it.
type TopicInfoForChange struct {
	Topic      string         `json:"topic"`
	Partitions int            `json:"partitions"`
	SizeBytes  *int64         `json:"size_bytes"` // null when DescribeLogDirs could not tell
	SizeNote   string         `json:"size_note,omitempty"`
	Groups     []CommittedRow `json:"groups_with_committed_offsets,omitempty"`
	GroupsErr  string         `json:"groups_error,omitempty"`
	// DeleteEnabled is the controller's delete.topic.enable (null: unknown,
	// DeleteEnabledUnknown says why).
	DeleteEnabled        *bool  `json:"delete_topic_enable"`
	DeleteEnabledUnknown string `json:"delete_topic_enable_unknown,omitempty"`
	controller           string
}

// PlanTopicChange reads a topic's partition count and controller; with
// full, also its size on disk (DescribeLogDirs on every broker), the groups
// with committed offsets on it and delete.topic.enable.
func (c *Client) PlanTopicChange(ctx context.Context, topic string, full bool) (*TopicInfoForChange, error) {
	ctx, cancel := context.WithTimeout(ctx, c.opts.Timeout)
	defer cancel()
	md, err := c.metadata(ctx, []string{topic})
	if err != nil {
		return nil, err
	}
	if _, err := topicPartitions(md, []string{topic}, nil); err != nil {
		return nil, err
	}
	ti := &TopicInfoForChange{Topic: topic, Partitions: len(md.Topics[0].Partitions), controller: brokerAddrs(md)[md.ControllerID]}
	if ti.controller == "" {
		return nil, errkind.New(errkind.Unavailable, "find the controller", errors.New("no controller is listed in metadata"), "retry in a moment")
	}
	if !full {
		return ti, nil
	}
	ti.SizeBytes, ti.SizeNote = c.topicSize(ctx, md, topic)
	if gs, err := c.Groups(ctx); err != nil {
		ti.GroupsErr = errkind.Message(err)
	} else {
		ti.GroupsErr = gs.Err
		for _, g := range gs.Groups {
			for _, o := range g.Offsets {
				if o.Topic == topic && o.Committed >= 0 {
					ti.Groups = append(ti.Groups, CommittedRow{Group: g.ID, Topic: topic, Partition: o.Partition, Committed: o.Committed, LogEnd: o.LogEnd, Lag: max(o.LogEnd-o.Committed, 0)})
				}
			}
		}
		sortRows(ti.Groups)
	}
	cfgs, err := c.describeConfigsAt(ctx, ti.controller, sarama.BrokerResource, strconv.Itoa(int(md.ControllerID)), "delete.topic.enable")
	if err != nil {
		ti.DeleteEnabledUnknown = fmt.Sprintf("the controller (broker %d) could not be asked: %s", md.ControllerID, errkind.Message(err))
		return ti, nil
	}
	for _, e := range cfgs {
		if e.Name == "delete.topic.enable" {
			switch e.Value {
			case "true", "false":
				ti.DeleteEnabled = ptr(e.Value == "true")
			default:
				ti.DeleteEnabledUnknown = fmt.Sprintf("the controller (broker %d) reported it as %q", md.ControllerID, e.Value)
			}
			return ti, nil
		}
	}
	ti.DeleteEnabledUnknown = fmt.Sprintf("the controller (broker %d) did not report it (DescribeConfigs)", md.ControllerID)
	return ti, nil
}

// topicSize sums the partition sizes every broker reports (leader and
// followers: the bytes on disk) with one DescribeLogDirs per broker.
func (c *Client) topicSize(ctx context.Context, md *sarama.MetadataResponse, topic string) (*int64, string) {
	var total int64
	var failed []string
	answered := false
	for _, b := range md.Brokers {
		req := &sarama.DescribeLogDirsRequest{Version: 1, DescribeTopics: []sarama.DescribeLogDirsRequestTopic{{Topic: topic, PartitionIDs: partitionIDs(md, topic)}}}
		resp, err := call(ctx, c, b.Addr(), APIDescribeLogDirs, "describe the log dirs of "+topic, func(br *sarama.Broker) (*sarama.DescribeLogDirsResponse, error) {
			return br.DescribeLogDirs(req)
		})
		if err != nil {
			failed = append(failed, fmt.Sprintf("broker %d: %s", b.ID(), errkind.Message(err)))
			continue
		}
		answered = true
		for _, d := range resp.LogDirs {
			for _, t := range d.Topics {
				for _, p := range t.Partitions {
					total += p.Size
				}
			}
		}
	}
	if !answered {
		return nil, "size unknown: " + strings.Join(failed, "; ")
	}
	note := "bytes on disk over every replica (DescribeLogDirs)"
	if len(failed) > 0 {
		note += "; incomplete: " + strings.Join(failed, "; ")
	}
	return &total, note
}

func partitionIDs(md *sarama.MetadataResponse, topic string) []int32 {
	var ids []int32
	for _, t := range md.Topics {
		if t.Name == topic {
			for _, p := range t.Partitions {
				ids = append(ids, p.ID)
			}
		}
	}
	slices.Sort(ids)
	return ids
}

// CreatePartitions raises topic's partition count to count with one
// CreatePartitions to the controller; current is the count the preview
// showed, refused when it changed.
func (c *Client) CreatePartitions(ctx context.Context, topic string, count int32) (*TopicInfoForChange, error) {
	ti, err := c.PlanTopicChange(ctx, topic, false)
	if err != nil {
		return nil, err
	}
	if int(count) <= ti.Partitions {
		return nil, errkind.Invalidf("count %d is not more than the %d partitions topic %s has: Kafka can only add partitions (INVALID_PARTITIONS); nothing was changed", count, ti.Partitions, topic)
	}
	ctx, cancel := context.WithTimeout(ctx, c.opts.Timeout)
	defer cancel()
	req := &sarama.CreatePartitionsRequest{Version: 1, Timeout: c.opts.Timeout, TopicPartitions: map[string]*sarama.TopicPartition{topic: {Count: count}}}
	what := fmt.Sprintf("raise topic %s to %d partitions", topic, count)
	resp, err := callWrite(ctx, c, ti.controller, APICreatePartitions, what, func(b *sarama.Broker) (*sarama.CreatePartitionsResponse, error) {
		return b.CreatePartitions(req)
	})
	if err != nil {
		return nil, err
	}
	if te := resp.TopicPartitionErrors[topic]; te != nil && te.Err != sarama.ErrNoError {
		return nil, errkind.New(kerrKind(te.Err), what, errors.New(ErrorName(te.Err)+derefMsg(te.ErrMsg)), "")
	}
	return ti, nil
}

// DeleteTopic deletes topic with one DeleteTopics to the controller.
func (c *Client) DeleteTopic(ctx context.Context, topic string) error {
	ti, err := c.PlanTopicChange(ctx, topic, false)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, c.opts.Timeout)
	defer cancel()
	req := &sarama.DeleteTopicsRequest{Version: 3, Topics: []string{topic}, Timeout: c.opts.Timeout}
	what := "delete topic " + topic
	resp, err := callWrite(ctx, c, ti.controller, APIDeleteTopics, what, func(b *sarama.Broker) (*sarama.DeleteTopicsResponse, error) {
		return b.DeleteTopics(req)
	})
	if err != nil {
		return err
	}
	if k := resp.TopicErrorCodes[topic]; k != sarama.ErrNoError {
		hint := ""
		if k == sarama.ErrTopicDeletionDisabled {
			hint = "the brokers have delete.topic.enable=false"
		}
		return errkind.New(kerrKind(k), what, errors.New(ErrorName(k)), hint)
	}
	return nil
}

func derefMsg(s *string) string {
	if s == nil || *s == "" {
		return ""
	}
	return ": " + *s
}

// ConfigValue is one topic config as alter_topic_config sees it.
type ConfigValue struct {
	Value  string `json:"value"`
	Source string `json:"source"`
	// Default is the value the topic falls back to without its own setting
	// (the broker's or Kafka's default), "" when Kafka did not say.
	Default string `json:"default"`
}

// TopicConfigs reads the given configs of topic with their synonyms (one
// DescribeConfigs), so that deleting a topic override shows the value it
// falls back to.
func (c *Client) TopicConfigs(ctx context.Context, topic string, keys []string) (map[string]ConfigValue, error) {
	ctx, cancel := context.WithTimeout(ctx, c.opts.Timeout)
	defer cancel()
	req := &sarama.DescribeConfigsRequest{Version: describeConfigsVersion(c.conf.Version), IncludeSynonyms: true,
		Resources: []*sarama.ConfigResource{{Type: sarama.TopicResource, Name: topic, ConfigNames: keys}}}
	resp, _, err := anyBroker(ctx, c, APIDescribeConfigs, "describe configs of topic "+topic, func(b *sarama.Broker) (*sarama.DescribeConfigsResponse, error) {
		return b.DescribeConfigs(req)
	})
	if err != nil {
		return nil, err
	}
	out := map[string]ConfigValue{}
	for _, r := range resp.Resources {
		if r.ErrorCode != 0 {
			k := sarama.KError(r.ErrorCode)
			if k == sarama.ErrUnknownTopicOrPartition {
				return nil, errkind.NotFoundf("topic %q does not exist; list_topics shows the topics there are", topic)
			}
			return nil, errkind.New(kerrKind(k), "describe configs of topic "+topic, fmt.Errorf("%s: %s", ErrorName(k), r.ErrorMsg), "")
		}
		for _, e := range r.Configs {
			v := ConfigValue{Value: e.Value, Source: e.Source.String()}
			if e.Sensitive {
				v.Value = "(sensitive)"
			}
			for _, s := range e.Synonyms {
				if s.Source != sarama.SourceTopic {
					v.Default = s.ConfigValue
					break
				}
			}
			if v.Default == "" && e.Source != sarama.SourceTopic {
				v.Default = v.Value
			}
			out[e.Name] = v
		}
	}
	return out, nil
}

// describeConfigsAt reads some configs of one resource from the broker at
// addr.
func (c *Client) describeConfigsAt(ctx context.Context, addr string, rt sarama.ConfigResourceType, name string, keys ...string) ([]ConfigInfo, error) {
	req := &sarama.DescribeConfigsRequest{Version: describeConfigsVersion(c.conf.Version), Resources: []*sarama.ConfigResource{{Type: rt, Name: name, ConfigNames: keys}}}
	resp, err := call(ctx, c, addr, APIDescribeConfigs, "describe configs of "+name, func(b *sarama.Broker) (*sarama.DescribeConfigsResponse, error) {
		return b.DescribeConfigs(req)
	})
	if err != nil {
		return nil, err
	}
	var out []ConfigInfo
	for _, r := range resp.Resources {
		if r.ErrorCode != int16(sarama.ErrNoError) {
			return nil, errkind.New(kerrKind(sarama.KError(r.ErrorCode)), "describe configs of "+name, errors.New(ErrorName(sarama.KError(r.ErrorCode))), "")
		}
		for _, e := range r.Configs {
			out = append(out, ConfigInfo{Name: e.Name, Value: e.Value, Source: e.Source.String()})
		}
	}
	return out, nil
}

// AlterTopicConfig sets and deletes topic configs with one
// IncrementalAlterConfigs.
func (c *Client) AlterTopicConfig(ctx context.Context, topic string, set map[string]string, del []string) error {
	ctx, cancel := context.WithTimeout(ctx, c.opts.Timeout)
	defer cancel()
	entries := map[string]sarama.IncrementalAlterConfigsEntry{}
	for k, v := range set {
		entries[k] = sarama.IncrementalAlterConfigsEntry{Operation: sarama.IncrementalAlterConfigsOperationSet, Value: &v}
	}
	for _, k := range del {
		entries[k] = sarama.IncrementalAlterConfigsEntry{Operation: sarama.IncrementalAlterConfigsOperationDelete}
	}
	req := &sarama.IncrementalAlterConfigsRequest{Version: 0, Resources: []*sarama.IncrementalAlterConfigsResource{{Type: sarama.TopicResource, Name: topic, ConfigEntries: entries}}}
	what := "alter the configs of topic " + topic
	resp, _, err := anyBrokerWrite(ctx, c, APIIncrementalAlter, what, func(b *sarama.Broker) (*sarama.IncrementalAlterConfigsResponse, error) {
		return b.IncrementalAlterConfigs(req)
	})
	if err != nil {
		return err
	}
	for _, r := range resp.Resources {
		if r.ErrorCode != 0 {
			k := sarama.KError(r.ErrorCode)
			return errkind.New(kerrKind(k), what, fmt.Errorf("%s: %s", ErrorName(k), r.ErrorMsg), "")
		}
	}
	return nil
}

// anyBrokerWrite sends a change to the first broker that can be reached;
// it is sent at most once (a failure after the request went out is not
// retried elsewhere).
func anyBrokerWrite[T any](ctx context.Context, c *Client, api API, what string, fn func(*sarama.Broker) (T, error)) (T, string, error) {
	var zero T
	var last error
	for _, addr := range c.addrs() {
		if _, _, err := c.broker(ctx, addr); err != nil {
			last = err
			continue
		}
		v, err := callWrite(ctx, c, addr, api, what, fn)
		return v, addr, err
	}
	return zero, "", last
}

// OffsetsAtTime finds, for every partition of topic, the first offset whose
// timestamp is at or after t (one ListOffsets per leader), with the log end.
func (c *Client) OffsetsAtTime(ctx context.Context, topic string, t time.Time) ([]TimeOffset, error) {
	ctx, cancel := context.WithTimeout(ctx, c.opts.Timeout)
	defer cancel()
	md, err := c.metadata(ctx, []string{topic})
	if err != nil {
		return nil, err
	}
	parts, err := topicPartitions(md, []string{topic}, nil)
	if err != nil {
		return nil, err
	}
	set := map[tp]bool{}
	for _, k := range parts {
		set[k] = true
	}
	at, ts, errs := c.offsetsWithTimes(ctx, md, set, t.UnixMilli())
	start, end, err := c.logRange(ctx, md, set)
	if err != nil {
		return nil, err
	}
	if err := firstPartitionError("look up offsets by time", errs); err != nil {
		return nil, err
	}
	out := make([]TimeOffset, 0, len(parts))
	for _, k := range parts {
		o := TimeOffset{Partition: k.part, LogStart: start[k], LogEnd: end[k]}
		if off := at[k]; off >= 0 {
			o.Offset, o.Timestamp = ptr(off), ptr(time.UnixMilli(ts[k]).UTC().Format("2006-01-02T15:04:05.000Z"))
		}
		out = append(out, o)
	}
	return out, nil
}

// TimeOffset is one partition's answer to get_offsets_for_times.
type TimeOffset struct {
	Partition int32 `json:"partition"`
	// Offset is the first offset at or after the time; null when every
	// message is older (a consumer starting there reads from log_end_offset).
	Offset    *int64  `json:"offset"`
	Timestamp *string `json:"timestamp"` // that message's timestamp
	LogStart  int64   `json:"log_start_offset"`
	LogEnd    int64   `json:"log_end_offset"`
}

// PartitionSize is one partition's size on its leader and its offsets.
type PartitionSize struct {
	Partition int32 `json:"partition"`
	Bytes     int64 `json:"size_bytes"`
	LogStart  int64 `json:"log_start_offset"`
	LogEnd    int64 `json:"log_end_offset"`
}

// PartitionSizes reads every partition's size on its leader (one
// DescribeLogDirs per leader broker, for the partitions it leads) and its
// log start and end offsets. It fails when any leader cannot tell: an
// estimate over some partitions would read as "nothing eligible" on the
// others.
func (c *Client) PartitionSizes(ctx context.Context, topic string) ([]PartitionSize, error) {
	ctx, cancel := context.WithTimeout(ctx, c.opts.Timeout)
	defer cancel()
	md, err := c.metadata(ctx, []string{topic})
	if err != nil {
		return nil, err
	}
	parts, err := topicPartitions(md, []string{topic}, nil)
	if err != nil {
		return nil, err
	}
	addrs := brokerAddrs(md)
	byLeader := map[int32][]int32{}
	set := map[tp]bool{}
	for _, t := range md.Topics {
		for _, p := range t.Partitions {
			if addrs[p.Leader] == "" {
				return nil, errkind.New(errkind.Unavailable, fmt.Sprintf("read the size of %s/%d", topic, p.ID), errors.New("the partition has no live leader"), "retry after the partition is back online")
			}
			byLeader[p.Leader] = append(byLeader[p.Leader], p.ID)
		}
	}
	for _, k := range parts {
		set[k] = true
	}
	sizes := map[int32]int64{}
	for l, ids := range byLeader {
		slices.Sort(ids)
		req := &sarama.DescribeLogDirsRequest{Version: 1, DescribeTopics: []sarama.DescribeLogDirsRequestTopic{{Topic: topic, PartitionIDs: ids}}}
		resp, err := call(ctx, c, addrs[l], APIDescribeLogDirs, fmt.Sprintf("describe the log dirs of %s on broker %d", topic, l), func(br *sarama.Broker) (*sarama.DescribeLogDirsResponse, error) {
			return br.DescribeLogDirs(req)
		})
		if err != nil {
			return nil, err
		}
		for _, d := range resp.LogDirs {
			if d.ErrorCode != sarama.ErrNoError {
				return nil, errkind.New(kerrKind(d.ErrorCode), fmt.Sprintf("describe the log dirs of %s on broker %d", topic, l), errors.New(ErrorName(d.ErrorCode)), "")
			}
			for _, t := range d.Topics {
				for _, p := range t.Partitions {
					if slices.Contains(ids, p.PartitionID) && !p.IsTemporary {
						sizes[p.PartitionID] += p.Size
					}
				}
			}
		}
		for _, id := range ids {
			if _, ok := sizes[id]; !ok {
				return nil, errkind.New(errkind.Unavailable, fmt.Sprintf("describe the log dirs of %s on broker %d", topic, l), fmt.Errorf("partition %d is not in the answer", id), "")
			}
		}
	}
	start, end, err := c.logRange(ctx, md, set)
	if err != nil {
		return nil, err
	}
	out := make([]PartitionSize, 0, len(parts))
	for _, k := range parts {
		out = append(out, PartitionSize{Partition: k.part, Bytes: sizes[k.part], LogStart: start[k], LogEnd: end[k]})
	}
	return out, nil
}
