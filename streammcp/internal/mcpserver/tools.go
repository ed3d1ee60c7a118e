package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcpfleet/mcpfleet/shared/apps"
	"github.com/mcpfleet/mcpfleet/shared/mcperr"
	"github.com/mcpfleet/mcpfleet/shared/toolcall"
	"github.com/mcpfleet/mcpfleet/streammcp/internal/kafka"
)

// Limits for consume_messages.
const (
	defaultMessages = 10
	maxMessages     = 100
	defaultBytes    = 64 << 10
	maxBytes        = 1 << 20
	// maxKeyFilter bounds consume_messages' key: a filter, not a payload.
	maxKeyFilter = 4096
	// maxFuture is how far ahead of now from_datetime may be.
	maxFuture = 24 * time.Hour
)

// keyFilter checks consume_messages' key: UTF-8 text without control
// characters, at most maxKeyFilter bytes. A key that arrives with U+FFFD
// was binary before JSON decoding replaced its bytes: it could never match
// what the producer wrote, so it is refused rather than silently unmatched.
func keyFilter(v any) ([]byte, error) {
	s, ok := v.(string)
	if !ok {
		return nil, fmt.Errorf("key must be a string (the exact key text)")
	}
	if len(s) > maxKeyFilter {
		return nil, fmt.Errorf("key is %d bytes; a key filter is at most %d bytes", len(s), maxKeyFilter)
	}
	if !utf8.ValidString(s) || strings.ContainsRune(s, utf8.RuneError) || strings.ContainsFunc(s, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
		return nil, fmt.Errorf("key %s holds control characters or bytes that are not UTF-8: key matches UTF-8 text keys only (binary keys show as base64 in the answer and cannot be filtered on; read without key instead)", quoteShort(s))
	}
	return []byte(s), nil
}

// reads is the Effect of every read tool: it changes nothing, and asking
// again asks the same cluster the same question.
func reads(title string) toolcall.Effect {
	return toolcall.Effect{Title: title, Most: toolcall.Read, Idempotent: true, OpenWorld: true}
}

// writes is the Effect of a tool whose updates a client should treat as
// destructive: a produced message or a created topic cannot be taken back.
func writes(title string) toolcall.Effect {
	return toolcall.Effect{Title: title, Most: toolcall.Change, Destructive: true, OpenWorld: true}
}

// destructive is the Effect of a tool whose calls can lose data or cannot
// be undone.
func destructive(title string, idempotent bool) toolcall.Effect {
	return toolcall.Effect{Title: title, Most: toolcall.Destructive, Idempotent: idempotent, OpenWorld: true}
}

// clusterArg is the optional cluster argument every tool takes; its enum
// and description name the configured clusters (see tool).
type clusterArg struct {
	Cluster *string `json:"cluster,omitempty"`
}

func (c clusterArg) names() []string {
	if c.Cluster == nil {
		return nil
	}
	return []string{*c.Cluster}
}

// tool declares a tool with the cluster argument every tool takes, named
// after the configured clusters. A change tool shows its dry-run preview
// and outcome in the change-preview view when views are on.
func (h *Handler) tool(name, desc string, e toolcall.Effect) toolcall.Tool {
	var opts []mcp.ToolOption
	if v := h.opts.Views; v != nil && e.Most != toolcall.Read {
		opts = v.Tool(apps.ChangePreviewView)
	}
	return toolcall.Tool{Name: name, Description: desc, Effect: e, Options: opts, Schema: func(s *jsonschema.Schema) {
		p := s.Properties["cluster"]
		p.Description = fmt.Sprintf("Kafka cluster to use, as named in STREAM_CLUSTERS; omit for the default cluster (%s)", h.defaultCluster().Name)
		for _, n := range h.names() {
			p.Enum = append(p.Enum, n)
		}
	}}
}

// cluster returns the cluster a call names (the default one without
// cluster).
func (h *Handler) cluster(a clusterArg) (*clusterState, error) {
	names, err := h.members.Select(a.names()...)
	if err != nil {
		return nil, mcperr.New(mcperr.Invalid, err.Error(), nil, "")
	}
	return h.byName[names[0]], nil
}

// nonEmpty refuses a required text argument that is blank.
func nonEmpty(name, s string) error {
	if strings.TrimSpace(s) == "" {
		return mcperr.Invalidf("%s must be a non-empty string", name)
	}
	return nil
}

// maxQuoted bounds a caller's value echoed in an error: enough to recognise
// it, never a megabyte back to the client and into the log.
const maxQuoted = 64

// quoteShort quotes s (Go syntax, so invisible and look-alike characters
// show as escapes), cut to maxQuoted runes with its full length said.
func quoteShort(s string) string {
	r := []rune(s)
	if len(r) <= maxQuoted {
		return strconv.QuoteToASCII(s)
	}
	return fmt.Sprintf("%s… (%d characters)", strconv.QuoteToASCII(string(r[:maxQuoted])), len(r))
}

type topicIn struct {
	clusterArg
	Topic string `json:"topic" jsonschema:"topic name"`
}

type groupIn struct {
	clusterArg
	GroupID string `json:"group_id" jsonschema:"consumer group id"`
}

type describeConfigsIn struct {
	clusterArg
	ResourceType string `json:"resource_type" jsonschema:"topic or broker" enum:"topic,broker"`
	ResourceName string `json:"resource_name" jsonschema:"topic name, or broker id (e.g. \"1\")"`
}

type consumeIn struct {
	clusterArg
	Topic        string  `json:"topic" jsonschema:"topic name"`
	Partition    *int32  `json:"partition,omitempty" jsonschema:"partition number (default 0)" minimum:"0"`
	Offset       *int64  `json:"offset,omitempty" jsonschema:"first offset to read; omit to read the last messages" minimum:"0"`
	Last         *int    `json:"last,omitempty" jsonschema:"read the last N messages (default 10); not with offset" minimum:"1" maximum:"100"`
	MaxMessages  *int    `json:"max_messages,omitempty" jsonschema:"at most this many messages (default 10, max 100)" minimum:"1" maximum:"100"`
	MaxBytes     *int32  `json:"max_bytes,omitempty" jsonschema:"at most this many key+value bytes (default 65536, max 1048576)" minimum:"1" maximum:"1048576"`
	FromDatetime *string `json:"from_datetime,omitempty" jsonschema:"read from the first offset at or after this time (RFC 3339 with a zone, e.g. 2026-11-24T09:00:00Z; ListOffsets by time), across ALL partitions of the topic unless partition is given, merged by timestamp and bounded by max_messages and max_bytes; not with offset or last. The answer gives per partition the start offset and the next offset to resume from"`
	Key          *string `json:"key,omitempty" jsonschema:"return only messages whose key is exactly this UTF-8 text (at most 4096 bytes; null keys never match). The bounds differ: max_messages counts the messages returned, max_bytes the key+value bytes scanned, matching or not. The answer says scanned_messages, scanned_bytes and stopped_by (max_messages or max_bytes when the scan stopped at that bound with messages left, truncated true; empty when it read to the end): a rare key may need a larger max_bytes or a later from_datetime"`
}

type offsetsForTimesIn struct {
	clusterArg
	Topic    string `json:"topic" jsonschema:"topic name"`
	Datetime string `json:"datetime" jsonschema:"RFC 3339 time with a zone, e.g. 2026-11-24T09:00:00Z or 2026-11-24T10:00:00+01:00"`
}

type produceIn struct {
	clusterArg
	Topic     string            `json:"topic" jsonschema:"topic name"`
	Value     string            `json:"value" jsonschema:"message value (UTF-8)"`
	Key       *string           `json:"key,omitempty" jsonschema:"message key; omit for a null key"`
	Partition *int32            `json:"partition,omitempty" jsonschema:"partition to write to; omit to let the key choose" minimum:"0"`
	Headers   map[string]string `json:"headers,omitempty" jsonschema:"message headers, name to string value"`
}

type createTopicIn struct {
	clusterArg
	Name              string            `json:"name" jsonschema:"topic name"`
	Partitions        *int32            `json:"partitions,omitempty" jsonschema:"number of partitions (default 1)" minimum:"1"`
	ReplicationFactor *int16            `json:"replication_factor,omitempty" jsonschema:"replicas per partition (default: the broker's default.replication.factor)" minimum:"1"`
	Configs           map[string]string `json:"configs,omitempty" jsonschema:"topic configs, e.g. {\"retention.ms\": \"86400000\"}"`
}

func (h *Handler) registerTools(calls *toolcall.Pipeline) {
	toolcall.AddRead(calls, h.tool("list_brokers", "List the live Kafka brokers: id, host, port, rack and whether it is the controller.",
		reads("List brokers")), h.listBrokers)
	toolcall.AddRead(calls, h.tool("list_topics", "List every topic with its partition count, replication factor and whether it is internal.",
		reads("List topics")), h.listTopics)
	toolcall.AddRead(calls, h.tool("describe_topic", "Describe one topic: per partition the leader, replicas, ISR, offline replicas, earliest and latest offsets; and the topic's non-default configs.",
		reads("Describe topic")), h.describeTopic)
	toolcall.AddRead(calls, h.tool("list_consumer_groups", "List every consumer group with its state, protocol type, member count and coordinator broker.",
		reads("List consumer groups")), h.listGroups)
	describeGroup := h.tool("describe_consumer_group", "Describe one consumer group (is it consuming or stuck?): members with client id, host and assigned partitions; per partition the committed offset, log-end offset and lag (null when the partition was never committed).",
		reads("Describe consumer group"))
	toolcall.AddRead(calls, describeGroup, h.describeGroup)
	toolcall.AddRead(calls, h.tool("describe_configs", "Show every config of a broker or a topic with its value, source and whether it is the default, read-only or sensitive (sensitive values are hidden).",
		reads("Describe configs")), h.describeConfigs)
	toolcall.AddRead(calls, h.tool("consume_messages", fmt.Sprintf("Peek at messages of one partition without a consumer group and without committing anything: from an offset, or the last N messages (default: the last %d). Keys, values and headers are shown as UTF-8 when valid, base64 otherwise. Bounded by max_messages (≤ %d) and max_bytes (≤ %d).", defaultMessages, maxMessages, maxBytes),
		reads("Peek at messages")), h.consume)
	toolcall.AddRead(calls, h.tool("get_offsets_for_times", "For every partition of a topic, the first offset whose timestamp is at or after a time (ListOffsets), with that message's timestamp and the log start and end: where a consumer or a reset to that time would start.",
		reads("Offsets for a time")), h.offsetsForTimes)
	h.registerViews(calls)
	if !h.anyWritable() {
		return
	}
	toolcall.AddChange(calls, h.tool("produce_message", "Write one message to a topic (acks=all). Enabled by STREAM_ALLOW_WRITES=true.",
		writes("Produce message")), mapped(h.planProduce))
	toolcall.AddChange(calls, h.tool("create_topic", "Create a topic. Enabled by STREAM_ALLOW_WRITES=true.",
		writes("Create topic")), mapped(h.planCreateTopic))
	h.registerChanges(calls)
	h.registerAdmin(calls)
}

// result wraps v as structured content with its JSON as text.
func result(v any) *mcp.CallToolResult {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return mcperr.ToolResult(err)
	}
	return mcp.NewToolResultStructured(v, string(b))
}

func (h *Handler) listBrokers(ctx context.Context, in clusterArg) (*mcp.CallToolResult, error) {
	cl, err := h.cluster(in)
	if err != nil {
		return mcperr.ToolResult(err), nil
	}
	b, err := cl.Client.ListBrokers(ctx)
	if err != nil {
		return toolError(err), nil
	}
	return result(map[string]any{"brokers": b}), nil
}

func (h *Handler) listTopics(ctx context.Context, in clusterArg) (*mcp.CallToolResult, error) {
	cl, err := h.cluster(in)
	if err != nil {
		return mcperr.ToolResult(err), nil
	}
	t, err := cl.Client.ListTopics(ctx)
	if err != nil {
		return toolError(err), nil
	}
	return result(map[string]any{"topics": t}), nil
}

func (h *Handler) describeTopic(ctx context.Context, in topicIn) (*mcp.CallToolResult, error) {
	cl, err := h.cluster(in.clusterArg)
	if err == nil {
		err = nonEmpty("topic", in.Topic)
	}
	if err != nil {
		return mcperr.ToolResult(err), nil
	}
	d, err := cl.Client.DescribeTopic(ctx, in.Topic)
	if err != nil {
		return toolError(err), nil
	}
	return result(d), nil
}

func (h *Handler) listGroups(ctx context.Context, in clusterArg) (*mcp.CallToolResult, error) {
	cl, err := h.cluster(in)
	if err != nil {
		return mcperr.ToolResult(err), nil
	}
	g, err := cl.Client.ListConsumerGroups(ctx)
	if err != nil {
		return toolError(err), nil
	}
	return result(g), nil
}

func (h *Handler) describeGroup(ctx context.Context, in groupIn) (*mcp.CallToolResult, error) {
	cl, err := h.cluster(in.clusterArg)
	if err == nil {
		err = nonEmpty("group_id", in.GroupID)
	}
	if err != nil {
		return mcperr.ToolResult(err), nil
	}
	d, err := cl.Client.DescribeConsumerGroup(ctx, in.GroupID)
	if err != nil {
		return toolError(err), nil
	}
	return result(d), nil
}

func (h *Handler) describeConfigs(ctx context.Context, in describeConfigsIn) (*mcp.CallToolResult, error) {
	cl, err := h.cluster(in.clusterArg)
	if err == nil {
		err = nonEmpty("resource_name", in.ResourceName)
	}
	if err != nil {
		return mcperr.ToolResult(err), nil
	}
	rt, name := in.ResourceType, in.ResourceName
	if rt == "broker" {
		if _, err := strconv.ParseUint(name, 10, 31); err != nil {
			return mcperr.ToolResult(mcperr.Invalidf("resource_name %q is not a broker id; give the numeric id (list_brokers shows them)", name)), nil
		}
	}
	c, err := cl.Client.DescribeConfigs(ctx, rt, name)
	if err != nil {
		return toolError(err), nil
	}
	return result(map[string]any{"resource_type": rt, "resource_name": name, "configs": c}), nil
}

func (h *Handler) consume(ctx context.Context, in consumeIn) (*mcp.CallToolResult, error) {
	cl, err := h.cluster(in.clusterArg)
	if err == nil {
		err = nonEmpty("topic", in.Topic)
	}
	if err != nil {
		return mcperr.ToolResult(err), nil
	}
	var errs []string
	if in.Offset != nil && in.Last != nil {
		errs = append(errs, "give either offset or last, not both")
	}
	var key []byte
	if in.Key != nil {
		k, err := keyFilter(*in.Key)
		if err != nil {
			errs = append(errs, err.Error())
		}
		key = k
	}
	var from time.Time
	if in.FromDatetime != nil {
		s := *in.FromDatetime
		t, err := parseDatetime("from_datetime", s)
		if err == nil && t.After(time.Now().Add(maxFuture)) {
			err = mcperr.Invalidf("from_datetime: %s is more than a day ahead of now (%s): no message can be stamped that late (brokers refuse timestamps over message.timestamp.after.max.ms, 1 hour by default); nothing was sent",
				quoteShort(s), time.Now().UTC().Format(time.RFC3339))
		}
		if err != nil {
			errs = append(errs, strings.TrimSuffix(mcperr.Message(err), "; nothing was sent"))
		}
		from = t
		if in.Offset != nil || in.Last != nil {
			errs = append(errs, "from_datetime: give from_datetime, offset or last, not two of them (from_datetime decides where each partition starts)")
		}
	}
	if len(errs) > 0 {
		return mcperr.ToolResult(mcperr.Invalidf("invalid arguments: %s; nothing was sent", strings.Join(errs, "; "))), nil
	}
	count, bytes := or(in.MaxMessages, defaultMessages), or(in.MaxBytes, defaultBytes)
	if in.FromDatetime != nil {
		tr := kafka.TimeConsumeRequest{Topic: in.Topic, From: from, Key: key, MaxCount: count, MaxBytes: bytes}
		if in.Partition != nil {
			tr.Partitions = []int32{*in.Partition}
		}
		res, err := cl.Client.ConsumeFromTime(ctx, tr)
		if err != nil {
			return toolError(err), nil
		}
		return result(res), nil
	}
	r := kafka.ConsumeRequest{Topic: in.Topic, Partition: or(in.Partition, 0), Offset: -1, Key: key, MaxCount: count, MaxBytes: bytes}
	if in.Offset != nil {
		r.Offset = *in.Offset
	} else {
		r.Last = min(or(in.Last, defaultMessages), count)
	}
	res, err := cl.Client.Consume(ctx, r)
	if err != nil {
		return toolError(err), nil
	}
	return result(res), nil
}

// or is *p, or def when the argument was omitted.
func or[T any](p *T, def T) T {
	if p == nil {
		return def
	}
	return *p
}

func (h *Handler) offsetsForTimes(ctx context.Context, in offsetsForTimesIn) (*mcp.CallToolResult, error) {
	cl, err := h.cluster(in.clusterArg)
	if err == nil {
		err = validTopic("topic", in.Topic)
	}
	if err != nil {
		return mcperr.ToolResult(err), nil
	}
	at, err := parseDatetime("datetime", in.Datetime)
	if err != nil {
		return mcperr.ToolResult(err), nil
	}
	offs, err := cl.Client.OffsetsAtTime(ctx, in.Topic, at)
	if err != nil {
		return toolError(err), nil
	}
	return result(map[string]any{"topic": in.Topic, "datetime": at.UTC().Format(time.RFC3339Nano), "partitions": offs}), nil
}

// target names the cluster a write goes to, for previews and audit records:
// "kafka <brokers>" when the only cluster is the unnamed default (a server
// without STREAM_CLUSTERS, where a cluster name would be noise), "kafka
// cluster <name> at <brokers>" in a fleet.
func (h *Handler) target(cl *clusterState) string {
	brokers := strings.Join(cl.Client.Brokers(), ",")
	if len(h.clusters) == 1 && cl.Name == "default" {
		return "kafka " + brokers
	}
	return "kafka cluster " + cl.Name + " at " + brokers
}

// planProduce decodes produce_message's arguments once into the request that
// the preview describes and Run sends.
func (h *Handler) planProduce(ctx context.Context, in produceIn) (toolcall.Plan, error) {
	cl, err := h.writableCluster(in.clusterArg)
	if err == nil {
		err = nonEmpty("topic", in.Topic)
	}
	if err == nil {
		err = topicAllowed(cl, in.Topic)
	}
	if err != nil {
		return toolcall.Plan{}, err
	}
	kc, target := cl.Client, h.target(cl)
	r := kafka.ProduceRequest{Topic: in.Topic, Value: in.Value, Key: in.Key, Partition: in.Partition, Headers: in.Headers}
	return toolcall.Plan{
		Class:    toolcall.Change,
		Target:   target,
		Commands: []string{produceCommand(r)},
		Describe: func(ctx context.Context) (toolcall.Preview, error) { return describeProduce(ctx, kc, r, target) },
		Run: func(ctx context.Context) (*mcp.CallToolResult, error) {
			res, err := kc.Produce(ctx, r)
			if err != nil {
				return nil, backendError(err)
			}
			h.log.Info("message produced", "topic", res.Topic, "partition", res.Partition, "offset", res.Offset)
			return result(res), nil
		},
	}, nil
}

// produceCommand words the Kafka request produce_message sends.
func produceCommand(r kafka.ProduceRequest) string {
	part := "chosen by the key's partitioner"
	if r.Partition != nil {
		part = strconv.Itoa(int(*r.Partition))
	}
	key := "null"
	if r.Key != nil {
		key = strconv.Quote(*r.Key)
	}
	headers := "none"
	if len(r.Headers) > 0 {
		b, _ := json.Marshal(r.Headers)
		headers = string(b)
	}
	return fmt.Sprintf("Produce (acks=all) topic=%q partition=%s key=%s headers=%s value=%s (%d bytes)",
		r.Topic, part, key, headers, shorten(r.Value, 200), len(r.Value))
}

func shorten(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return strconv.Quote(s)
	}
	return strconv.Quote(string(r[:n])) + "…"
}

// describeProduce reads the topic's partitions and latest offsets: where
// the message would land and at which offset.
func describeProduce(ctx context.Context, kc *kafka.Client, r kafka.ProduceRequest, target string) (toolcall.Preview, error) {
	d, err := kc.DescribeTopic(ctx, r.Topic)
	if isNotFound(err) {
		return toolcall.Preview{
			Summary:      fmt.Sprintf("Produce one message (%d-byte value) to topic %s on %s. The topic does not exist: the brokers either refuse the message or create the topic with their defaults (auto.create.topics.enable).", len(r.Value), r.Topic, target),
			State:        map[string]any{"topic": r.Topic, "exists": false},
			Effect:       "the message is refused, or the topic is auto-created and the message appended to it",
			Precondition: "topic absent",
		}, nil
	}
	if err != nil {
		return toolcall.Preview{}, err
	}
	type part struct {
		Partition    int32 `json:"partition"`
		Leader       int32 `json:"leader"`
		LatestOffset int64 `json:"latest_offset"`
	}
	parts := make([]part, 0, len(d.Partitions))
	for _, p := range d.Partitions {
		parts = append(parts, part{p.Partition, p.Leader, p.LatestOffset})
	}
	where := "the partition the key's partitioner picks"
	if r.Partition != nil {
		where = fmt.Sprintf("partition %d", *r.Partition)
		found := false
		for _, p := range parts {
			if p.Partition == *r.Partition {
				where += fmt.Sprintf(" (latest offset %d, so the message would get offset %d)", p.LatestOffset, p.LatestOffset)
				found = true
			}
		}
		if !found {
			where += fmt.Sprintf(", which does not exist (the topic has %d partitions): the brokers will refuse the message", len(parts))
		}
	}
	return toolcall.Preview{
		Summary: fmt.Sprintf("Produce one message (%d-byte value) to topic %s, %s, on %s. The topic has %d partition(s).",
			len(r.Value), r.Topic, where, target, len(parts)),
		State:        map[string]any{"topic": r.Topic, "exists": true, "partitions": parts},
		Effect:       "one message is appended to the topic; consumers of " + r.Topic + " will read it",
		Precondition: fmt.Sprintf("topic exists with %d partitions", len(parts)),
	}, nil
}

func (h *Handler) planCreateTopic(ctx context.Context, in createTopicIn) (toolcall.Plan, error) {
	name := in.Name
	cl, err := h.writableCluster(in.clusterArg)
	if err == nil {
		err = validTopic("name", name)
	}
	if err == nil {
		err = topicAllowed(cl, name)
	}
	if err != nil {
		return toolcall.Plan{}, err
	}
	kc, target := cl.Client, h.target(cl)
	parts, rf, configs := or(in.Partitions, 1), or(in.ReplicationFactor, -1), in.Configs
	rfText := strconv.Itoa(int(rf))
	if rf < 0 {
		rfText = "the broker default (default.replication.factor)"
	}
	cfgText := "none"
	if len(configs) > 0 {
		b, _ := json.Marshal(configs)
		cfgText = string(b)
	}
	cmd := fmt.Sprintf("CreateTopics name=%q partitions=%d replication_factor=%s configs=%s (sent to the controller)", name, parts, rfText, cfgText)
	return toolcall.Plan{
		Class:    toolcall.Change,
		Target:   target,
		Commands: []string{cmd},
		Describe: func(ctx context.Context) (toolcall.Preview, error) {
			d, err := kc.DescribeTopic(ctx, name)
			switch {
			case isNotFound(err):
				return toolcall.Preview{
					Summary:      fmt.Sprintf("Create topic %s with %d partition(s), replication factor %s and configs %s on %s. No topic named %s exists now.", name, parts, rfText, cfgText, target, name),
					State:        map[string]any{"topic": name, "exists": false},
					Effect:       "the topic exists and producers can write to it; delete_topic is not offered, so removing it needs an operator",
					Precondition: "topic absent",
				}, nil
			case err != nil:
				return toolcall.Preview{}, backendError(err)
			}
			return toolcall.Preview{
				Summary:      fmt.Sprintf("Topic %s already exists on %s with %d partition(s); creating it again fails with TOPIC_ALREADY_EXISTS and changes nothing.", name, target, len(d.Partitions)),
				State:        map[string]any{"topic": name, "exists": true, "partitions": len(d.Partitions)},
				Effect:       "none: the controller refuses the request",
				Precondition: "topic exists",
			}, nil
		},
		Run: func(ctx context.Context) (*mcp.CallToolResult, error) {
			if err := kc.CreateTopic(ctx, name, parts, rf, configs); err != nil {
				return nil, backendError(err)
			}
			h.log.Info("topic created", "topic", name, "partitions", parts, "replication_factor", rf)
			return result(map[string]any{"created": true, "name": name, "partitions": parts, "replication_factor": rf}), nil
		},
	}, nil
}
