package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/mark3labs/mcp-go/mcp"

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

func readOnly(title string) []mcp.ToolOption {
	return []mcp.ToolOption{
		mcp.WithToolTitle(title),
		mcp.WithReadOnlyHintAnnotation(true),
		mcp.WithDestructiveHintAnnotation(false),
		mcp.WithIdempotentHintAnnotation(true),
		mcp.WithOpenWorldHintAnnotation(true),
	}
}

func writes(title string) []mcp.ToolOption {
	return []mcp.ToolOption{
		mcp.WithToolTitle(title),
		mcp.WithReadOnlyHintAnnotation(false),
		mcp.WithDestructiveHintAnnotation(true),
		mcp.WithIdempotentHintAnnotation(false),
		mcp.WithOpenWorldHintAnnotation(true),
	}
}

// tool declares a tool with the optional cluster argument every tool takes.
func (h *Handler) tool(name, desc string, opts ...mcp.ToolOption) mcp.Tool {
	opts = append(opts, mcp.WithString("cluster", mcp.Enum(h.names()...),
		mcp.Description(fmt.Sprintf("Kafka cluster to use, as named in STREAM_CLUSTERS; omit for the default cluster (%s)", h.defaultCluster().Name))))
	// An argument the schema does not name is refused, not ignored: a
	// misspelt partition or key must not send a message somewhere else.
	return mcp.NewTool(name, append([]mcp.ToolOption{mcp.WithDescription(desc), mcp.WithSchemaAdditionalProperties(false)}, opts...)...)
}

// clusterArg returns the cluster a call names (the default one without
// cluster).
func (h *Handler) clusterArg(req mcp.CallToolRequest) (*clusterState, error) {
	v, ok := req.GetArguments()["cluster"]
	if !ok || v == nil {
		return h.defaultCluster(), nil
	}
	name, _ := v.(string)
	if cl, ok := h.byName[name]; ok {
		return cl, nil
	}
	return nil, h.unknownCluster(fmt.Sprint(v))
}

// unknownCluster is the error for a cluster name that is not configured,
// shared by tools and prompts.
func (h *Handler) unknownCluster(name string) error {
	return mcperr.Invalidf("unknown cluster %s: the configured clusters are %s (STREAM_CLUSTERS); omit cluster for the default one, %s",
		quoteShort(name), strings.Join(h.names(), ", "), h.defaultCluster().Name)
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

func (h *Handler) registerTools(calls *toolcall.Pipeline) {
	calls.Read(h.tool("list_brokers", "List the live Kafka brokers: id, host, port, rack and whether it is the controller.",
		readOnly("List brokers")...), h.listBrokers)
	calls.Read(h.tool("list_topics", "List every topic with its partition count, replication factor and whether it is internal.",
		readOnly("List topics")...), h.listTopics)
	calls.Read(h.tool("describe_topic", "Describe one topic: per partition the leader, replicas, ISR, offline replicas, earliest and latest offsets; and the topic's non-default configs.",
		append(readOnly("Describe topic"), mcp.WithString("topic", mcp.Required(), mcp.Description("topic name")))...), h.describeTopic)
	calls.Read(h.tool("list_consumer_groups", "List every consumer group with its state, protocol type, member count and coordinator broker.",
		readOnly("List consumer groups")...), h.listGroups)
	calls.Read(h.tool("describe_consumer_group", "Describe one consumer group (is it consuming or stuck?): members with client id, host and assigned partitions; per partition the committed offset, log-end offset and lag (null when the partition was never committed).",
		append(readOnly("Describe consumer group"), mcp.WithString("group_id", mcp.Required(), mcp.Description("consumer group id")))...), h.describeGroup)
	calls.Read(h.tool("describe_configs", "Show every config of a broker or a topic with its value, source and whether it is the default, read-only or sensitive (sensitive values are hidden).",
		append(readOnly("Describe configs"),
			mcp.WithString("resource_type", mcp.Required(), mcp.Enum("topic", "broker"), mcp.Description("topic or broker")),
			mcp.WithString("resource_name", mcp.Required(), mcp.Description("topic name, or broker id (e.g. \"1\")")))...), h.describeConfigs)
	calls.Read(h.tool("consume_messages", fmt.Sprintf("Peek at messages of one partition without a consumer group and without committing anything: from an offset, or the last N messages (default: the last %d). Keys, values and headers are shown as UTF-8 when valid, base64 otherwise. Bounded by max_messages (≤ %d) and max_bytes (≤ %d).", defaultMessages, maxMessages, maxBytes),
		append(readOnly("Peek at messages"),
			mcp.WithString("topic", mcp.Required(), mcp.Description("topic name")),
			mcp.WithInteger("partition", mcp.Description("partition number (default 0)"), mcp.Min(0)),
			mcp.WithInteger("offset", mcp.Description("first offset to read; omit to read the last messages"), mcp.Min(0)),
			mcp.WithInteger("last", mcp.Description(fmt.Sprintf("read the last N messages (default %d); not with offset", defaultMessages)), mcp.Min(1), mcp.Max(maxMessages)),
			mcp.WithInteger("max_messages", mcp.Description(fmt.Sprintf("at most this many messages (default %d, max %d)", defaultMessages, maxMessages)), mcp.Min(1), mcp.Max(maxMessages)),
			mcp.WithInteger("max_bytes", mcp.Description(fmt.Sprintf("at most this many key+value bytes (default %d, max %d)", defaultBytes, maxBytes)), mcp.Min(1), mcp.Max(maxBytes)),
			mcp.WithString("from_datetime", mcp.Description("read from the first offset at or after this time (RFC 3339 with a zone, e.g. 2026-11-24T09:00:00Z; ListOffsets by time), across ALL partitions of the topic unless partition is given, merged by timestamp and bounded by max_messages and max_bytes; not with offset or last. The answer gives per partition the start offset and the next offset to resume from")),
			mcp.WithString("key", mcp.Description(fmt.Sprintf("return only messages whose key is exactly this UTF-8 text (at most %d bytes; null keys never match). The bounds differ: max_messages counts the messages returned, max_bytes the key+value bytes scanned, matching or not. The answer says scanned_messages, scanned_bytes and stopped_by (max_messages or max_bytes when the scan stopped at that bound with messages left, truncated true; empty when it read to the end): a rare key may need a larger max_bytes or a later from_datetime", maxKeyFilter))),
		)...), h.consume)
	calls.Read(h.tool("get_offsets_for_times", "For every partition of a topic, the first offset whose timestamp is at or after a time (ListOffsets), with that message's timestamp and the log start and end: where a consumer or a reset to that time would start.",
		append(readOnly("Offsets for a time"),
			mcp.WithString("topic", mcp.Required(), mcp.Description("topic name")),
			mcp.WithString("datetime", mcp.Required(), mcp.Description("RFC 3339 time with a zone, e.g. 2026-11-24T09:00:00Z or 2026-11-24T10:00:00+01:00")),
		)...), h.offsetsForTimes)
	if !h.anyWritable() {
		return
	}
	calls.Change(h.tool("produce_message", "Write one message to a topic (acks=all). Enabled by STREAM_ALLOW_WRITES=true.",
		append(writes("Produce message"),
			mcp.WithString("topic", mcp.Required(), mcp.Description("topic name")),
			mcp.WithString("value", mcp.Required(), mcp.Description("message value (UTF-8)")),
			mcp.WithString("key", mcp.Description("message key; omit for a null key")),
			mcp.WithInteger("partition", mcp.Description("partition to write to; omit to let the key choose"), mcp.Min(0)),
			mcp.WithObject("headers", mcp.Description("message headers, name to string value"), mcp.AdditionalProperties(map[string]any{"type": "string"})),
		)...), toolcall.Change, h.planProduce)
	calls.Change(h.tool("create_topic", "Create a topic. Enabled by STREAM_ALLOW_WRITES=true.",
		append(writes("Create topic"),
			mcp.WithString("name", mcp.Required(), mcp.Description("topic name")),
			mcp.WithInteger("partitions", mcp.Description("number of partitions (default 1)"), mcp.Min(1)),
			mcp.WithInteger("replication_factor", mcp.Description("replicas per partition (default: the broker's default.replication.factor)"), mcp.Min(1)),
			mcp.WithObject("configs", mcp.Description("topic configs, e.g. {\"retention.ms\": \"86400000\"}"), mcp.AdditionalProperties(map[string]any{"type": "string"})),
		)...), toolcall.Change, h.planCreateTopic)
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

func (h *Handler) listBrokers(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	cl, err := h.clusterArg(req)
	if err != nil {
		return mcperr.ToolResult(err), nil
	}
	kc := cl.Client
	b, err := kc.ListBrokers(ctx)
	if err != nil {
		return mcperr.ToolResult(err), nil
	}
	return result(map[string]any{"brokers": b}), nil
}

func (h *Handler) listTopics(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	cl, err := h.clusterArg(req)
	if err != nil {
		return mcperr.ToolResult(err), nil
	}
	kc := cl.Client
	t, err := kc.ListTopics(ctx)
	if err != nil {
		return mcperr.ToolResult(err), nil
	}
	return result(map[string]any{"topics": t}), nil
}

func (h *Handler) describeTopic(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	cl, err := h.clusterArg(req)
	if err != nil {
		return mcperr.ToolResult(err), nil
	}
	kc := cl.Client
	topic, err := stringArg(req, "topic", true)
	if err != nil {
		return mcperr.ToolResult(err), nil
	}
	d, err := kc.DescribeTopic(ctx, topic)
	if err != nil {
		return mcperr.ToolResult(err), nil
	}
	return result(d), nil
}

func (h *Handler) listGroups(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	cl, err := h.clusterArg(req)
	if err != nil {
		return mcperr.ToolResult(err), nil
	}
	kc := cl.Client
	g, err := kc.ListConsumerGroups(ctx)
	if err != nil {
		return mcperr.ToolResult(err), nil
	}
	return result(g), nil
}

func (h *Handler) describeGroup(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	cl, err := h.clusterArg(req)
	if err != nil {
		return mcperr.ToolResult(err), nil
	}
	kc := cl.Client
	id, err := stringArg(req, "group_id", true)
	if err != nil {
		return mcperr.ToolResult(err), nil
	}
	d, err := kc.DescribeConsumerGroup(ctx, id)
	if err != nil {
		return mcperr.ToolResult(err), nil
	}
	return result(d), nil
}

func (h *Handler) describeConfigs(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	cl, err := h.clusterArg(req)
	if err != nil {
		return mcperr.ToolResult(err), nil
	}
	kc := cl.Client
	rt, err := stringArg(req, "resource_type", true)
	if err != nil {
		return mcperr.ToolResult(err), nil
	}
	if rt != "topic" && rt != "broker" {
		return mcperr.ToolResult(mcperr.Invalidf("resource_type %q is not supported; use topic or broker", rt)), nil
	}
	name, err := stringArg(req, "resource_name", true)
	if err != nil {
		return mcperr.ToolResult(err), nil
	}
	if rt == "broker" {
		if _, err := strconv.ParseUint(name, 10, 31); err != nil {
			return mcperr.ToolResult(mcperr.Invalidf("resource_name %q is not a broker id; give the numeric id (list_brokers shows them)", name)), nil
		}
	}
	c, err := kc.DescribeConfigs(ctx, rt, name)
	if err != nil {
		return mcperr.ToolResult(err), nil
	}
	return result(map[string]any{"resource_type": rt, "resource_name": name, "configs": c}), nil
}

func (h *Handler) consume(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	cl, err := h.clusterArg(req)
	if err != nil {
		return mcperr.ToolResult(err), nil
	}
	kc := cl.Client
	topic, err := stringArg(req, "topic", true)
	if err != nil {
		return mcperr.ToolResult(err), nil
	}
	r := kafka.ConsumeRequest{Topic: topic, Offset: -1}
	var errs []string
	check := func(err error) {
		if err != nil {
			errs = append(errs, err.Error())
		}
	}
	p, _, err := intArg(req, "partition", 0, 0, math.MaxInt32)
	check(err)
	r.Partition = int32(p)
	off, hasOffset, err := intArg(req, "offset", -1, 0, math.MaxInt64)
	check(err)
	last, hasLast, err := intArg(req, "last", defaultMessages, 1, maxMessages)
	check(err)
	count, _, err := intArg(req, "max_messages", defaultMessages, 1, maxMessages)
	check(err)
	bytes, _, err := intArg(req, "max_bytes", defaultBytes, 1, maxBytes)
	check(err)
	if hasOffset && hasLast {
		errs = append(errs, "give either offset or last, not both")
	}
	args := req.GetArguments()
	var key []byte
	if v, ok := args["key"]; ok && v != nil {
		k, err := keyFilter(v)
		check(err)
		key = k
	}
	var from time.Time
	_, hasFrom := args["from_datetime"]
	if hasFrom {
		s, _ := args["from_datetime"].(string)
		t, err := parseDatetime("from_datetime", s)
		if err == nil && t.After(time.Now().Add(maxFuture)) {
			err = mcperr.Invalidf("from_datetime: %s is more than a day ahead of now (%s): no message can be stamped that late (brokers refuse timestamps over message.timestamp.after.max.ms, 1 hour by default); nothing was sent",
				quoteShort(s), time.Now().UTC().Format(time.RFC3339))
		}
		if err != nil {
			errs = append(errs, strings.TrimSuffix(mcperr.Message(err), "; nothing was sent"))
		}
		from = t
		if hasOffset || hasLast {
			errs = append(errs, "from_datetime: give from_datetime, offset or last, not two of them (from_datetime decides where each partition starts)")
		}
	}
	if len(errs) > 0 {
		return mcperr.ToolResult(mcperr.Invalidf("invalid arguments: %s; nothing was sent", strings.Join(errs, "; "))), nil
	}
	if hasFrom {
		tr := kafka.TimeConsumeRequest{Topic: topic, From: from, Key: key, MaxCount: int(count), MaxBytes: int32(bytes)}
		if _, ok := args["partition"]; ok && args["partition"] != nil {
			tr.Partitions = []int32{int32(p)}
		}
		res, err := kc.ConsumeFromTime(ctx, tr)
		if err != nil {
			return mcperr.ToolResult(err), nil
		}
		return result(res), nil
	}
	r.Key = key
	if hasOffset {
		r.Offset = off
	} else {
		r.Last = int(min(last, count))
	}
	r.MaxCount, r.MaxBytes = int(count), int32(bytes)
	res, err := kc.Consume(ctx, r)
	if err != nil {
		return mcperr.ToolResult(err), nil
	}
	return result(res), nil
}

func (h *Handler) offsetsForTimes(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	cl, err := h.clusterArg(req)
	if err != nil {
		return mcperr.ToolResult(err), nil
	}
	topic, err := topicArg(req)
	if err != nil {
		return mcperr.ToolResult(err), nil
	}
	s, _ := req.GetArguments()["datetime"].(string)
	at, err := parseDatetime("datetime", s)
	if err != nil {
		return mcperr.ToolResult(err), nil
	}
	offs, err := cl.Client.OffsetsAtTime(ctx, topic, at)
	if err != nil {
		return mcperr.ToolResult(err), nil
	}
	return result(map[string]any{"topic": topic, "datetime": at.UTC().Format(time.RFC3339Nano), "partitions": offs}), nil
}

// target names the cluster a write goes to, for previews and audit records:
// "kafka <brokers>" when the only cluster is the unnamed default (as before
// clusters existed), "kafka cluster <name> at <brokers>" in a fleet.
func (h *Handler) target(cl *clusterState) string {
	brokers := strings.Join(cl.Client.Brokers(), ",")
	if len(h.clusters) == 1 && cl.Name == "default" {
		return "kafka " + brokers
	}
	return "kafka cluster " + cl.Name + " at " + brokers
}

// planProduce decodes produce_message's arguments once into the request that
// the preview describes and Run sends.
func (h *Handler) planProduce(ctx context.Context, req mcp.CallToolRequest) (toolcall.Plan, error) {
	cl, err := h.clusterArg(req)
	if err != nil {
		return toolcall.Plan{}, err
	}
	if err := h.writable(cl); err != nil {
		return toolcall.Plan{}, err
	}
	kc := cl.Client
	topic, err := stringArg(req, "topic", true)
	if err != nil {
		return toolcall.Plan{}, err
	}
	if err := topicAllowed(cl, topic); err != nil {
		return toolcall.Plan{}, err
	}
	args := req.GetArguments()
	value, ok := args["value"].(string)
	if !ok {
		return toolcall.Plan{}, mcperr.Invalidf("value is required and must be a string")
	}
	r := kafka.ProduceRequest{Topic: topic, Value: value}
	if k, ok := args["key"]; ok && k != nil {
		ks, ok := k.(string)
		if !ok {
			return toolcall.Plan{}, mcperr.Invalidf("key must be a string")
		}
		r.Key = &ks
	}
	p, hasP, err := intArg(req, "partition", 0, 0, math.MaxInt32)
	if err != nil {
		return toolcall.Plan{}, mcperr.Invalidf("%v", err)
	}
	if hasP {
		p32 := int32(p)
		r.Partition = &p32
	}
	if r.Headers, err = stringMap(args, "headers"); err != nil {
		return toolcall.Plan{}, err
	}
	target := h.target(cl)
	return toolcall.Plan{
		Class:    toolcall.Change,
		Target:   target,
		Commands: []string{produceCommand(r)},
		Describe: func(ctx context.Context) (toolcall.Preview, error) { return describeProduce(ctx, kc, r, target) },
		Run: func(ctx context.Context) (*mcp.CallToolResult, error) {
			res, err := kc.Produce(ctx, r)
			if err != nil {
				return nil, err
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
	if mcperr.KindOf(err) == mcperr.NotFound {
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

// planCreateTopic decodes create_topic's arguments once.
func (h *Handler) planCreateTopic(ctx context.Context, req mcp.CallToolRequest) (toolcall.Plan, error) {
	cl, err := h.clusterArg(req)
	if err != nil {
		return toolcall.Plan{}, err
	}
	if err := h.writable(cl); err != nil {
		return toolcall.Plan{}, err
	}
	kc := cl.Client
	name, err := stringArg(req, "name", true)
	if err != nil {
		return toolcall.Plan{}, err
	}
	if err := checkTopic("name", name); err != nil {
		return toolcall.Plan{}, err
	}
	if err := topicAllowed(cl, name); err != nil {
		return toolcall.Plan{}, err
	}
	parts, _, err := intArg(req, "partitions", 1, 1, math.MaxInt32)
	if err != nil {
		return toolcall.Plan{}, mcperr.Invalidf("%v", err)
	}
	rf, _, err := intArg(req, "replication_factor", -1, 1, math.MaxInt16)
	if err != nil {
		return toolcall.Plan{}, mcperr.Invalidf("%v", err)
	}
	configs, err := stringMap(req.GetArguments(), "configs")
	if err != nil {
		return toolcall.Plan{}, err
	}
	target := h.target(cl)
	rfText := strconv.FormatInt(rf, 10)
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
			case mcperr.KindOf(err) == mcperr.NotFound:
				return toolcall.Preview{
					Summary:      fmt.Sprintf("Create topic %s with %d partition(s), replication factor %s and configs %s on %s. No topic named %s exists now.", name, parts, rfText, cfgText, target, name),
					State:        map[string]any{"topic": name, "exists": false},
					Effect:       "the topic exists and producers can write to it; delete_topic is not offered, so removing it needs an operator",
					Precondition: "topic absent",
				}, nil
			case err != nil:
				return toolcall.Preview{}, err
			}
			return toolcall.Preview{
				Summary:      fmt.Sprintf("Topic %s already exists on %s with %d partition(s); creating it again fails with TOPIC_ALREADY_EXISTS and changes nothing.", name, target, len(d.Partitions)),
				State:        map[string]any{"topic": name, "exists": true, "partitions": len(d.Partitions)},
				Effect:       "none: the controller refuses the request",
				Precondition: "topic exists",
			}, nil
		},
		Run: func(ctx context.Context) (*mcp.CallToolResult, error) {
			if err := kc.CreateTopic(ctx, name, int32(parts), int16(rf), configs); err != nil {
				return nil, err
			}
			h.log.Info("topic created", "topic", name, "partitions", parts, "replication_factor", rf)
			return result(map[string]any{"created": true, "name": name, "partitions": parts, "replication_factor": rf}), nil
		},
	}, nil
}

// stringArg returns a non-empty string argument.
func stringArg(req mcp.CallToolRequest, name string, required bool) (string, error) {
	v, ok := req.GetArguments()[name]
	if !ok || v == nil {
		if required {
			return "", mcperr.Invalidf("%s is required", name)
		}
		return "", nil
	}
	s, ok := v.(string)
	if !ok || strings.TrimSpace(s) == "" {
		return "", mcperr.Invalidf("%s must be a non-empty string", name)
	}
	return s, nil
}

// intArg returns an integer argument in [lo, hi], or def when absent.
func intArg(req mcp.CallToolRequest, name string, def, lo, hi int64) (int64, bool, error) {
	v, ok := req.GetArguments()[name]
	if !ok || v == nil {
		return def, false, nil
	}
	var n int64
	switch x := v.(type) {
	case float64:
		if x != math.Trunc(x) || x < math.MinInt64 || x > math.MaxInt64 {
			return def, true, fmt.Errorf("%s must be an integer from %d to %d", name, lo, hi)
		}
		n = int64(x)
	case json.Number:
		i, err := x.Int64()
		if err != nil {
			return def, true, fmt.Errorf("%s must be an integer from %d to %d", name, lo, hi)
		}
		n = i
	case string:
		i, err := strconv.ParseInt(x, 10, 64)
		if err != nil {
			return def, true, fmt.Errorf("%s must be an integer from %d to %d", name, lo, hi)
		}
		n = i
	default:
		return def, true, fmt.Errorf("%s must be an integer from %d to %d", name, lo, hi)
	}
	if n < lo || n > hi {
		return def, true, fmt.Errorf("%s must be an integer from %d to %d, got %d", name, lo, hi, n)
	}
	return n, true, nil
}

func stringMap(args map[string]any, name string) (map[string]string, error) {
	v, ok := args[name]
	if !ok || v == nil {
		return nil, nil
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, mcperr.Invalidf("%s must be an object of string values", name)
	}
	out := map[string]string{}
	for k, x := range m {
		s, ok := x.(string)
		if !ok {
			return nil, mcperr.Invalidf("%s.%s must be a string", name, k)
		}
		out[k] = s
	}
	return out, nil
}
