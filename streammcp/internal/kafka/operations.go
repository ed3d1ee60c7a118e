package kafka

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/IBM/sarama"
	"go.opentelemetry.io/otel/attribute"

	"github.com/mcpfleet/mcpfleet/shared/errkind"
	"github.com/mcpfleet/mcpfleet/streammcp/internal/report"
)

// BrokerInfo is one broker for list_brokers.
type BrokerInfo struct {
	ID           int32  `json:"id"`
	Host         string `json:"host"`
	Port         int32  `json:"port"`
	Rack         string `json:"rack"`
	IsController bool   `json:"is_controller"`
}

// ListBrokers lists the live brokers (one Metadata request).
func (c *Client) ListBrokers(ctx context.Context) ([]BrokerInfo, error) {
	ctx, cancel := context.WithTimeout(ctx, c.opts.Timeout)
	defer cancel()
	md, err := c.metadata(ctx, []string{})
	if err != nil {
		return nil, err
	}
	snap := snapshot(md)
	out := []BrokerInfo{}
	for _, b := range snap.Brokers {
		out = append(out, BrokerInfo{ID: b.ID, Host: b.Host, Port: b.Port, Rack: b.Rack, IsController: b.ID == md.ControllerID})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out, nil
}

// TopicInfo is one topic for list_topics.
type TopicInfo struct {
	Name              string `json:"name"`
	Partitions        int    `json:"partitions"`
	ReplicationFactor int    `json:"replication_factor"`
	Internal          bool   `json:"internal"`
}

// ListTopics lists every topic (one Metadata request).
func (c *Client) ListTopics(ctx context.Context) ([]TopicInfo, error) {
	ctx, cancel := context.WithTimeout(ctx, c.opts.Timeout)
	defer cancel()
	md, err := c.metadata(ctx, nil)
	if err != nil {
		return nil, err
	}
	out := []TopicInfo{}
	for _, t := range md.Topics {
		ti := TopicInfo{Name: t.Name, Partitions: len(t.Partitions), Internal: t.IsInternal}
		for _, p := range t.Partitions {
			ti.ReplicationFactor = max(ti.ReplicationFactor, len(p.Replicas))
		}
		out = append(out, ti)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// PartitionInfo is one partition for describe_topic.
type PartitionInfo struct {
	Partition       int32   `json:"partition"`
	Leader          int32   `json:"leader"`
	Replicas        []int32 `json:"replicas"`
	ISR             []int32 `json:"isr"`
	OfflineReplicas []int32 `json:"offline_replicas"`
	EarliestOffset  int64   `json:"earliest_offset"`
	LatestOffset    int64   `json:"latest_offset"`
	Error           string  `json:"error"`
}

// ConfigInfo is one configuration entry.
type ConfigInfo struct {
	Name      string `json:"name"`
	Value     string `json:"value"`
	Source    string `json:"source"`
	Default   bool   `json:"is_default"`
	ReadOnly  bool   `json:"is_read_only"`
	Sensitive bool   `json:"is_sensitive"`
}

// TopicDetail is describe_topic's answer.
type TopicDetail struct {
	Name       string          `json:"name"`
	Internal   bool            `json:"internal"`
	Partitions []PartitionInfo `json:"partitions"`
	Configs    []ConfigInfo    `json:"configs"` // non-default only
}

// DescribeTopic describes one topic: partitions with earliest and latest
// offsets (one ListOffsets per leader and side) and non-default configs.
func (c *Client) DescribeTopic(ctx context.Context, topic string) (*TopicDetail, error) {
	ctx, cancel := context.WithTimeout(ctx, c.opts.Timeout)
	defer cancel()
	md, err := c.metadata(ctx, []string{topic})
	if err != nil {
		return nil, err
	}
	if len(md.Topics) == 0 || md.Topics[0].Err == sarama.ErrUnknownTopicOrPartition {
		return nil, errkind.NotFoundf("topic %q does not exist; list_topics shows the topics there are", topic)
	}
	t := md.Topics[0]
	if t.Err != sarama.ErrNoError && len(t.Partitions) == 0 {
		return nil, errkind.New(kerrKind(t.Err), "describe topic "+topic, fmt.Errorf("%s: %w", ErrorName(t.Err), t.Err), "")
	}
	parts := map[tp]bool{}
	for _, p := range t.Partitions {
		parts[tp{t.Name, p.ID}] = true
	}
	earliest, latest, eerrs, lerrs := c.bothEnds(ctx, md, parts)
	d := &TopicDetail{Name: t.Name, Internal: t.IsInternal, Partitions: []PartitionInfo{}}
	for _, p := range t.Partitions {
		k := tp{t.Name, p.ID}
		pi := PartitionInfo{
			Partition: p.ID, Leader: p.Leader,
			Replicas: nonNilIDs(p.Replicas), ISR: nonNilIDs(p.Isr), OfflineReplicas: nonNilIDs(p.OfflineReplicas),
			EarliestOffset: -1, LatestOffset: -1, Error: ErrorName(p.Err),
		}
		if v, ok := earliest[k]; ok {
			pi.EarliestOffset = v
		}
		if v, ok := latest[k]; ok {
			pi.LatestOffset = v
		}
		if pi.Error == "" {
			pi.Error = firstNonEmpty(lerrs[k], eerrs[k])
		}
		d.Partitions = append(d.Partitions, pi)
	}
	sort.Slice(d.Partitions, func(i, j int) bool { return d.Partitions[i].Partition < d.Partitions[j].Partition })
	cfgs, err := c.describeConfigs(ctx, sarama.TopicResource, topic)
	if err != nil {
		return nil, err
	}
	d.Configs = []ConfigInfo{}
	for _, e := range cfgs {
		if !e.Default {
			d.Configs = append(d.Configs, e)
		}
	}
	return d, nil
}

// DescribeConfigs returns every config of a broker (name = its id) or topic.
func (c *Client) DescribeConfigs(ctx context.Context, resourceType, name string) ([]ConfigInfo, error) {
	ctx, cancel := context.WithTimeout(ctx, c.opts.Timeout)
	defer cancel()
	var rt sarama.ConfigResourceType
	switch resourceType {
	case "topic":
		rt = sarama.TopicResource
	case "broker":
		rt = sarama.BrokerResource
	default:
		return nil, errkind.Invalidf("resource_type %q is not supported; use topic or broker", resourceType)
	}
	return c.describeConfigs(ctx, rt, name)
}

func (c *Client) describeConfigs(ctx context.Context, rt sarama.ConfigResourceType, name string) ([]ConfigInfo, error) {
	req := &sarama.DescribeConfigsRequest{
		Version:   describeConfigsVersion(c.conf.Version),
		Resources: []*sarama.ConfigResource{{Type: rt, Name: name}},
	}
	fn := func(b *sarama.Broker) (*sarama.DescribeConfigsResponse, error) { return b.DescribeConfigs(req) }
	var resp *sarama.DescribeConfigsResponse
	var err error
	if rt == sarama.BrokerResource {
		// A broker's own configs must be asked of that broker.
		addr, aerr := c.brokerAddr(ctx, name)
		if aerr != nil {
			return nil, aerr
		}
		resp, err = call(ctx, c, addr, APIDescribeConfigs, "describe configs of broker "+name, fn)
	} else {
		resp, _, err = anyBroker(ctx, c, APIDescribeConfigs, "describe configs of topic "+name, fn)
	}
	if err != nil {
		return nil, err
	}
	out := []ConfigInfo{}
	for _, r := range resp.Resources {
		if r.ErrorCode != 0 {
			k := sarama.KError(r.ErrorCode)
			return nil, errkind.New(kerrKind(k), "describe configs of "+name, fmt.Errorf("%s: %s", ErrorName(k), r.ErrorMsg), "")
		}
		for _, e := range r.Configs {
			v := e.Value
			if e.Sensitive {
				v = "(sensitive)"
			}
			out = append(out, ConfigInfo{Name: e.Name, Value: v, Source: e.Source.String(), Default: e.Default || e.Source == sarama.SourceDefault, ReadOnly: e.ReadOnly, Sensitive: e.Sensitive})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// brokerAddr finds the address of broker id (a decimal string).
func (c *Client) brokerAddr(ctx context.Context, id string) (string, error) {
	md, err := c.metadata(ctx, []string{})
	if err != nil {
		return "", err
	}
	for _, b := range md.Brokers {
		if fmt.Sprint(b.ID()) == id {
			return b.Addr(), nil
		}
	}
	return "", errkind.NotFoundf("broker %q is not a live broker; list_brokers shows the ids there are", id)
}

// GroupInfo is one group for list_consumer_groups.
type GroupInfo struct {
	GroupID      string `json:"group_id"`
	State        string `json:"state"`
	ProtocolType string `json:"protocol_type"`
	Type         string `json:"type"`         // classic, consumer (KIP-848) or share (KIP-932)
	MemberCount  *int   `json:"member_count"` // null when the group's members cannot be read (share groups)
	Coordinator  int32  `json:"coordinator"`
	Error        string `json:"error"`
	Unavailable  string `json:"unavailable,omitempty"` // what cannot be read for this type
}

// GroupList is list_consumer_groups' answer.
type GroupList struct {
	Groups []GroupInfo `json:"groups"`
	Error  string      `json:"error"` // brokers that could not be asked
}

// ListConsumerGroups lists every group with its state and member count.
// It shares the lag report's plan (and its offsets) for simplicity.
func (c *Client) ListConsumerGroups(ctx context.Context) (*GroupList, error) {
	g, err := c.Groups(ctx)
	if err != nil {
		return nil, err
	}
	out := &GroupList{Groups: []GroupInfo{}, Error: g.Err}
	for _, gr := range g.Groups {
		gi := GroupInfo{GroupID: gr.ID, State: gr.State, ProtocolType: gr.ProtocolType, Type: gr.Type, Coordinator: gr.Coordinator, Error: gr.Err, Unavailable: gr.Unavailable}
		if gr.Unavailable == "" {
			gi.MemberCount = ptr(len(gr.Members))
		}
		out.Groups = append(out.Groups, gi)
	}
	return out, nil
}

// MemberInfo is one member for describe_consumer_group.
type MemberInfo struct {
	MemberID   string               `json:"member_id"`
	ClientID   string               `json:"client_id"`
	ClientHost string               `json:"client_host"`
	Assigned   []AssignedPartitions `json:"assigned"`
}

// AssignedPartitions lists one topic's assigned partitions.
type AssignedPartitions struct {
	Topic      string  `json:"topic"`
	Partitions []int32 `json:"partitions"`
}

// OffsetInfo is one partition's offsets for describe_consumer_group.
type OffsetInfo struct {
	Topic           string `json:"topic"`
	Partition       int32  `json:"partition"`
	CommittedOffset *int64 `json:"committed_offset"` // null when never committed
	LogEndOffset    *int64 `json:"log_end_offset"`   // null when unknown
	Lag             *int64 `json:"lag"`              // null when either is unknown
	Error           string `json:"error"`
}

// GroupDetail is describe_consumer_group's answer.
type GroupDetail struct {
	GroupID      string       `json:"group_id"`
	State        string       `json:"state"`
	ProtocolType string       `json:"protocol_type"`
	Type         string       `json:"type"` // classic, consumer (KIP-848) or share (KIP-932)
	Coordinator  int32        `json:"coordinator"`
	Members      []MemberInfo `json:"members"`
	Offsets      []OffsetInfo `json:"offsets"`
	TotalLag     *int64       `json:"total_lag"` // null when the group's lag cannot be read (share groups)
	Error        string       `json:"error"`
	// Unavailable says what cannot be read for this type of group (share
	// groups: members and lag) instead of empty lists passing for none.
	Unavailable string `json:"unavailable,omitempty"`
}

// DescribeConsumerGroup describes one group through its coordinator, with
// committed offset, log-end offset and lag per partition.
func (c *Client) DescribeConsumerGroup(ctx context.Context, id string) (*GroupDetail, error) {
	ctx, cancel := context.WithTimeout(ctx, c.opts.Timeout)
	defer cancel()
	// Metadata first: it also names the topics KIP-848 assignments give by id.
	md, err := c.metadata(ctx, nil)
	if err != nil {
		return nil, err
	}
	g, err := c.coordinatorGroup(ctx, id)
	if err != nil {
		return nil, err
	}
	if g.State == "Dead" && len(g.Offsets) == 0 {
		return nil, errkind.NotFoundf("consumer group %q does not exist; list_consumer_groups shows the groups there are", id)
	}
	// Assigned partitions without a commit are listed too, with null offsets.
	seen := map[tp]bool{}
	for _, o := range g.Offsets {
		seen[tp{o.Topic, o.Partition}] = true
	}
	for _, m := range g.Members {
		for t, ps := range m.Assigned {
			for _, p := range ps {
				if !seen[tp{t, p}] {
					seen[tp{t, p}] = true
					g.Offsets = append(g.Offsets, report.Offset{Topic: t, Partition: p, Committed: -1, LogEnd: -1})
				}
			}
		}
	}
	groups := []report.Group{g}
	c.logEnds(ctx, md, groups)
	g = groups[0]
	d := &GroupDetail{GroupID: g.ID, State: g.State, ProtocolType: g.ProtocolType, Type: g.Type, Coordinator: g.Coordinator, Members: []MemberInfo{}, Offsets: []OffsetInfo{}, Error: g.Err, Unavailable: g.Unavailable}
	for _, m := range g.Members {
		mi := MemberInfo{MemberID: m.MemberID, ClientID: m.ClientID, ClientHost: m.ClientHost, Assigned: []AssignedPartitions{}}
		for t, ps := range m.Assigned {
			ps = slices.Clone(ps)
			slices.Sort(ps)
			mi.Assigned = append(mi.Assigned, AssignedPartitions{Topic: t, Partitions: ps})
		}
		sort.Slice(mi.Assigned, func(i, j int) bool { return mi.Assigned[i].Topic < mi.Assigned[j].Topic })
		d.Members = append(d.Members, mi)
	}
	var total int64
	for _, o := range g.Offsets {
		oi := OffsetInfo{Topic: o.Topic, Partition: o.Partition, Error: o.Err}
		if o.Committed >= 0 {
			oi.CommittedOffset = ptr(o.Committed)
		}
		if o.LogEnd >= 0 && o.Err == "" {
			oi.LogEndOffset = ptr(o.LogEnd)
		}
		if oi.CommittedOffset != nil && oi.LogEndOffset != nil {
			lag := o.LogEnd - o.Committed
			oi.Lag = &lag
			total += max(lag, 0)
		}
		if o.Committed < 0 && oi.Error == "log-end offset unknown" {
			oi.Error = ""
		}
		d.Offsets = append(d.Offsets, oi)
	}
	if g.Unavailable == "" {
		d.TotalLag = &total
	}
	sort.Slice(d.Offsets, func(i, j int) bool {
		if d.Offsets[i].Topic != d.Offsets[j].Topic {
			return d.Offsets[i].Topic < d.Offsets[j].Topic
		}
		return d.Offsets[i].Partition < d.Offsets[j].Partition
	})
	return d, nil
}

// Message is one consumed record.
type Message struct {
	Partition     int32           `json:"partition"`
	Offset        int64           `json:"offset"`
	Timestamp     string          `json:"timestamp"`
	Key           *string         `json:"key"`
	KeyEncoding   string          `json:"key_encoding"`
	Value         *string         `json:"value"`
	ValueEncoding string          `json:"value_encoding"`
	Headers       []MessageHeader `json:"headers"`
}

// MessageHeader is one record header.
type MessageHeader struct {
	Key      string `json:"key"`
	Value    string `json:"value"`
	Encoding string `json:"encoding"`
}

// ConsumeRequest says what to peek at.
type ConsumeRequest struct {
	Topic     string
	Partition int32
	// Offset is the first offset to read; -1 with Last > 0 reads the last
	// Last messages; -2 reads from the earliest offset.
	Offset   int64
	Last     int
	MaxCount int   // messages returned
	MaxBytes int32 // key+value bytes scanned (returned or not)
	// Key, when non-nil, returns only the messages with exactly this key;
	// the others are scanned (and count against MaxBytes) but not returned.
	Key []byte
}

// ConsumeResult is consume_messages' answer.
type ConsumeResult struct {
	Topic          string    `json:"topic"`
	Partition      int32     `json:"partition"`
	EarliestOffset int64     `json:"earliest_offset"`
	LatestOffset   int64     `json:"latest_offset"`
	Messages       []Message `json:"messages"`
	NextOffset     int64     `json:"next_offset"`
	Truncated      bool      `json:"truncated"` // stopped by max_messages or max_bytes
	// With a key filter only: what was scanned to find the messages, and
	// the bound that stopped the scan ("" when it reached the log end).
	Scanned      *int    `json:"scanned_messages,omitempty"`
	ScannedBytes *int64  `json:"scanned_bytes,omitempty"`
	StoppedBy    *string `json:"stopped_by,omitempty"`
}

// Consume peeks at one partition with plain Fetch requests to its leader:
// no consumer group, no commits.
func (c *Client) Consume(ctx context.Context, r ConsumeRequest) (*ConsumeResult, error) {
	ctx, cancel := context.WithTimeout(ctx, c.opts.Timeout)
	defer cancel()
	md, err := c.metadata(ctx, []string{r.Topic})
	if err != nil {
		return nil, err
	}
	if len(md.Topics) == 0 || md.Topics[0].Err == sarama.ErrUnknownTopicOrPartition {
		return nil, errkind.NotFoundf("topic %q does not exist; list_topics shows the topics there are", r.Topic)
	}
	var leader int32 = -1
	found := false
	for _, p := range md.Topics[0].Partitions {
		if p.ID == r.Partition {
			leader, found = p.Leader, true
		}
	}
	if !found {
		return nil, errkind.NotFoundf("topic %q has no partition %d (it has %d)", r.Topic, r.Partition, len(md.Topics[0].Partitions))
	}
	addr := brokerAddrs(md)[leader]
	if addr == "" {
		return nil, errkind.New(errkind.Unavailable, fmt.Sprintf("read %s/%d", r.Topic, r.Partition), errors.New("the partition has no live leader"), "retry after the partition is back online")
	}
	k := tp{r.Topic, r.Partition}
	parts := map[tp]bool{k: true}
	oldest, oerrs := c.offsetsAt(ctx, md, parts, sarama.OffsetOldest)
	newest, nerrs := c.offsetsAt(ctx, md, parts, sarama.OffsetNewest)
	if msg := firstNonEmpty(oerrs[k], nerrs[k]); msg != "" {
		return nil, errkind.New(errkind.Unavailable, fmt.Sprintf("read offsets of %s/%d", r.Topic, r.Partition), errors.New(msg), "retry in a moment")
	}
	res := &ConsumeResult{Topic: r.Topic, Partition: r.Partition, EarliestOffset: oldest[k], LatestOffset: newest[k], Messages: []Message{}}
	start := r.Offset
	switch {
	case r.Offset == -1 || r.Last > 0 && r.Offset < 0:
		start = max(res.LatestOffset-int64(r.Last), res.EarliestOffset)
	case r.Offset == -2:
		start = res.EarliestOffset
	case r.Offset < res.EarliestOffset:
		start = res.EarliestOffset
	}
	res.NextOffset = start
	var used int32
	scanned := 0
	for start < res.LatestOffset && len(res.Messages) < r.MaxCount && used < r.MaxBytes {
		req := &sarama.FetchRequest{Version: fetchVersion(c.conf.Version), MaxWaitTime: 100, MinBytes: 1, MaxBytes: r.MaxBytes, Isolation: sarama.ReadUncommitted}
		req.AddBlock(r.Topic, r.Partition, start, r.MaxBytes, -1)
		resp, err := call(ctx, c, addr, APIFetch, fmt.Sprintf("fetch %s/%d", r.Topic, r.Partition), func(b *sarama.Broker) (*sarama.FetchResponse, error) {
			return b.Fetch(req)
		})
		if err != nil {
			return nil, err
		}
		blk := resp.GetBlock(r.Topic, r.Partition)
		if blk == nil {
			break
		}
		if blk.Err != sarama.ErrNoError {
			return nil, errkind.New(kerrKind(blk.Err), fmt.Sprintf("fetch %s/%d at offset %d", r.Topic, r.Partition, start), fmt.Errorf("%s: %w", ErrorName(blk.Err), blk.Err), "")
		}
		progressed := false
		for _, recs := range blk.RecordsSet {
			for _, m := range decodeRecords(recs) {
				if m.Offset < start {
					continue
				}
				if len(res.Messages) >= r.MaxCount || used >= r.MaxBytes {
					res.Truncated = true
					break
				}
				if r.Key == nil || m.rawKey != nil && bytes.Equal(m.rawKey, r.Key) {
					m.Partition = r.Partition
					res.Messages = append(res.Messages, m.Message)
				}
				scanned++
				used += m.size
				start = m.Offset + 1
				progressed = true
			}
		}
		res.NextOffset = start
		if !progressed {
			break
		}
	}
	if start < res.LatestOffset && (len(res.Messages) >= r.MaxCount || used >= r.MaxBytes) {
		res.Truncated = true
	}
	if r.Key != nil {
		stopped := ""
		if res.Truncated {
			stopped = StoppedByMaxBytes
			if len(res.Messages) >= r.MaxCount {
				stopped = StoppedByMaxMessages
			}
		}
		n, b := scanned, int64(used)
		res.Scanned, res.ScannedBytes, res.StoppedBy = &n, &b, &stopped
	}
	return res, nil
}

type decoded struct {
	Message
	size   int32
	ts     time.Time
	rawKey []byte
}

func decodeRecords(r *sarama.Records) []decoded {
	var out []decoded
	switch {
	case r.RecordBatch != nil:
		b := r.RecordBatch
		if b.Control {
			return nil
		}
		for _, rec := range b.Records {
			ts := b.FirstTimestamp.Add(rec.TimestampDelta)
			if b.LogAppendTime {
				ts = b.MaxTimestamp
			}
			d := decoded{Message: message(b.FirstOffset+rec.OffsetDelta, ts, rec.Key, rec.Value), size: int32(len(rec.Key) + len(rec.Value)), ts: ts, rawKey: rec.Key}
			for _, h := range rec.Headers {
				v, enc := encode(h.Value)
				d.Headers = append(d.Headers, MessageHeader{Key: string(h.Key), Value: *v, Encoding: enc})
			}
			out = append(out, d)
		}
	case r.MsgSet != nil:
		for _, mb := range r.MsgSet.Messages {
			if mb.Msg == nil {
				continue
			}
			out = append(out, decoded{Message: message(mb.Offset, mb.Msg.Timestamp, mb.Msg.Key, mb.Msg.Value), size: int32(len(mb.Msg.Key) + len(mb.Msg.Value)), ts: mb.Msg.Timestamp, rawKey: mb.Msg.Key})
		}
	}
	return out
}

func message(off int64, ts time.Time, key, value []byte) Message {
	m := Message{Offset: off, Timestamp: report.Timestamp(ts), Headers: []MessageHeader{}}
	if key != nil {
		m.Key, m.KeyEncoding = encode(key)
	}
	if value != nil {
		m.Value, m.ValueEncoding = encode(value)
	}
	return m
}

// encode shows b as UTF-8 text when it is valid UTF-8, base64 otherwise.
func encode(b []byte) (*string, string) {
	if utf8.Valid(b) {
		s := string(b)
		return &s, "utf8"
	}
	s := base64.StdEncoding.EncodeToString(b)
	return &s, "base64"
}

// ProduceRequest is one message to write.
type ProduceRequest struct {
	Topic     string
	Partition *int32
	Key       *string
	Value     string
	Headers   map[string]string
}

// ProduceResult says where the message landed.
type ProduceResult struct {
	Topic     string `json:"topic"`
	Partition int32  `json:"partition"`
	Offset    int64  `json:"offset"`
}

// Produce writes one message with a short-lived synchronous producer
// (acks=all). Writes are rare; a dedicated producer keeps reads simple.
func (c *Client) Produce(ctx context.Context, r ProduceRequest) (_ *ProduceResult, err error) {
	// sarama's producer sends its own Metadata and Produce requests: one
	// recorded call for the whole send.
	_, rc := c.opts.Recorder.Start(ctx, string(APIProduce), attribute.String("kafka.topic", r.Topic))
	defer func() { endCall(ctx, rc, err) }()
	conf := c.SaramaConfig()
	conf.Producer.Return.Successes = true
	conf.Producer.RequiredAcks = sarama.WaitForAll
	conf.Producer.Retry.Max = 1
	conf.Producer.Timeout = c.opts.Timeout
	msg := &sarama.ProducerMessage{Topic: r.Topic, Value: sarama.StringEncoder(r.Value)}
	if r.Key != nil {
		msg.Key = sarama.StringEncoder(*r.Key)
	}
	if r.Partition != nil {
		conf.Producer.Partitioner = sarama.NewManualPartitioner
		msg.Partition = *r.Partition
	}
	keys := make([]string, 0, len(r.Headers))
	for k := range r.Headers {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		msg.Headers = append(msg.Headers, sarama.RecordHeader{Key: []byte(k), Value: []byte(r.Headers[k])})
	}
	type result struct {
		res *ProduceResult
		err error
	}
	if ctx.Err() != nil { // the caller gave up: no producer, nothing sent
		return nil, ctxError(ctx, "produce to "+r.Topic+" (nothing was sent)", c.opts.Timeout)
	}
	done := make(chan result, 1)
	go func() {
		p, err := sarama.NewSyncProducer(c.opts.Brokers, conf)
		if err != nil {
			done <- result{nil, err}
			return
		}
		defer p.Close()
		part, off, err := p.SendMessage(msg)
		done <- result{&ProduceResult{Topic: r.Topic, Partition: part, Offset: off}, err}
	}()
	select {
	case res := <-done:
		if res.err != nil {
			return nil, errkind.Wrap(unwrapProducer(res.err), "produce a message to topic "+r.Topic, "check that the topic and partition exist and the brokers are reachable")
		}
		return res.res, nil
	case <-ctx.Done():
		return nil, ctxError(ctx, "produce a message to topic "+r.Topic, c.opts.Timeout)
	}
}

func unwrapProducer(err error) error {
	var pe *sarama.ProducerError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// CreateTopic creates a topic through the controller.
func (c *Client) CreateTopic(ctx context.Context, name string, partitions int32, rf int16, configs map[string]string) error {
	ctx, cancel := context.WithTimeout(ctx, c.opts.Timeout)
	defer cancel()
	md, err := c.metadata(ctx, []string{})
	if err != nil {
		return err
	}
	addr := brokerAddrs(md)[md.ControllerID]
	if addr == "" {
		return errkind.New(errkind.Unavailable, "create topic "+name, errors.New("no controller is available"), "retry in a moment")
	}
	detail := &sarama.TopicDetail{NumPartitions: partitions, ReplicationFactor: rf, ConfigEntries: map[string]*string{}}
	for k, v := range configs {
		detail.ConfigEntries[k] = &v
	}
	req := &sarama.CreateTopicsRequest{Version: createTopicsVersion(c.conf.Version), TopicDetails: map[string]*sarama.TopicDetail{name: detail}, Timeout: c.opts.Timeout}
	resp, err := callWrite(ctx, c, addr, APICreateTopics, "create topic "+name, func(b *sarama.Broker) (*sarama.CreateTopicsResponse, error) {
		return b.CreateTopics(req)
	})
	if err != nil {
		return err
	}
	if te := resp.TopicErrors[name]; te != nil && te.Err != sarama.ErrNoError {
		msg := ErrorName(te.Err)
		if te.ErrMsg != nil {
			msg += ": " + *te.ErrMsg
		}
		return errkind.New(kerrKind(te.Err), "create topic "+name, errors.New(msg), "")
	}
	return nil
}

func nonNilIDs(ids []int32) []int32 {
	if ids == nil {
		return []int32{}
	}
	return ids
}

func ptr[T any](v T) *T { return &v }

func firstNonEmpty(s ...string) string {
	for _, v := range s {
		if strings.TrimSpace(v) != "" {
			return v
		}
	}
	return ""
}
