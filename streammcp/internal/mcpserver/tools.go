package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/mcpfleet/mcpfleet/shared/mcperr"
	"github.com/mcpfleet/mcpfleet/streammcp/internal/kafka"
)

// Limits for consume_messages.
const (
	defaultMessages = 10
	maxMessages     = 100
	defaultBytes    = 64 << 10
	maxBytes        = 1 << 20
)

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

func tool(name, desc string, opts ...mcp.ToolOption) mcp.Tool {
	return mcp.NewTool(name, append([]mcp.ToolOption{mcp.WithDescription(desc)}, opts...)...)
}

func (h *Handler) registerTools(s *server.MCPServer) {
	s.AddTool(tool("list_brokers", "List the live Kafka brokers: id, host, port, rack and whether it is the controller.",
		readOnly("List brokers")...), h.listBrokers)
	s.AddTool(tool("list_topics", "List every topic with its partition count, replication factor and whether it is internal.",
		readOnly("List topics")...), h.listTopics)
	s.AddTool(tool("describe_topic", "Describe one topic: per partition the leader, replicas, ISR, offline replicas, earliest and latest offsets; and the topic's non-default configs.",
		append(readOnly("Describe topic"), mcp.WithString("topic", mcp.Required(), mcp.Description("topic name")))...), h.describeTopic)
	s.AddTool(tool("list_consumer_groups", "List every consumer group with its state, protocol type, member count and coordinator broker.",
		readOnly("List consumer groups")...), h.listGroups)
	s.AddTool(tool("describe_consumer_group", "Describe one consumer group (is it consuming or stuck?): members with client id, host and assigned partitions; per partition the committed offset, log-end offset and lag (null when the partition was never committed).",
		append(readOnly("Describe consumer group"), mcp.WithString("group_id", mcp.Required(), mcp.Description("consumer group id")))...), h.describeGroup)
	s.AddTool(tool("describe_configs", "Show every config of a broker or a topic with its value, source and whether it is the default, read-only or sensitive (sensitive values are hidden).",
		append(readOnly("Describe configs"),
			mcp.WithString("resource_type", mcp.Required(), mcp.Enum("topic", "broker"), mcp.Description("topic or broker")),
			mcp.WithString("resource_name", mcp.Required(), mcp.Description("topic name, or broker id (e.g. \"1\")")))...), h.describeConfigs)
	s.AddTool(tool("consume_messages", fmt.Sprintf("Peek at messages of one partition without a consumer group and without committing anything: from an offset, or the last N messages (default: the last %d). Keys, values and headers are shown as UTF-8 when valid, base64 otherwise. Bounded by max_messages (≤ %d) and max_bytes (≤ %d).", defaultMessages, maxMessages, maxBytes),
		append(readOnly("Peek at messages"),
			mcp.WithString("topic", mcp.Required(), mcp.Description("topic name")),
			mcp.WithInteger("partition", mcp.Description("partition number (default 0)"), mcp.Min(0)),
			mcp.WithInteger("offset", mcp.Description("first offset to read; omit to read the last messages"), mcp.Min(0)),
			mcp.WithInteger("last", mcp.Description(fmt.Sprintf("read the last N messages (default %d); not with offset", defaultMessages)), mcp.Min(1), mcp.Max(maxMessages)),
			mcp.WithInteger("max_messages", mcp.Description(fmt.Sprintf("at most this many messages (default %d, max %d)", defaultMessages, maxMessages)), mcp.Min(1), mcp.Max(maxMessages)),
			mcp.WithInteger("max_bytes", mcp.Description(fmt.Sprintf("at most this many key+value bytes (default %d, max %d)", defaultBytes, maxBytes)), mcp.Min(1), mcp.Max(maxBytes)),
		)...), h.consume)
	if !h.opts.AllowWrites {
		return
	}
	s.AddTool(tool("produce_message", "Write one message to a topic (acks=all). Enabled by STREAM_ALLOW_WRITES=true.",
		append(writes("Produce message"),
			mcp.WithString("topic", mcp.Required(), mcp.Description("topic name")),
			mcp.WithString("value", mcp.Required(), mcp.Description("message value (UTF-8)")),
			mcp.WithString("key", mcp.Description("message key; omit for a null key")),
			mcp.WithInteger("partition", mcp.Description("partition to write to; omit to let the key choose"), mcp.Min(0)),
			mcp.WithObject("headers", mcp.Description("message headers, name to string value"), mcp.AdditionalProperties(map[string]any{"type": "string"})),
		)...), h.produce)
	s.AddTool(tool("create_topic", "Create a topic. Enabled by STREAM_ALLOW_WRITES=true.",
		append(writes("Create topic"),
			mcp.WithString("name", mcp.Required(), mcp.Description("topic name")),
			mcp.WithInteger("partitions", mcp.Description("number of partitions (default 1)"), mcp.Min(1)),
			mcp.WithInteger("replication_factor", mcp.Description("replicas per partition (default: the broker's default.replication.factor)"), mcp.Min(1)),
			mcp.WithObject("configs", mcp.Description("topic configs, e.g. {\"retention.ms\": \"86400000\"}"), mcp.AdditionalProperties(map[string]any{"type": "string"})),
		)...), h.createTopic)
}

// result wraps v as structured content with its JSON as text.
func result(v any) *mcp.CallToolResult {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return mcperr.ToolResult(err)
	}
	return mcp.NewToolResultStructured(v, string(b))
}

func (h *Handler) listBrokers(ctx context.Context, _ mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	b, err := h.kc.ListBrokers(ctx)
	if err != nil {
		return mcperr.ToolResult(err), nil
	}
	return result(map[string]any{"brokers": b}), nil
}

func (h *Handler) listTopics(ctx context.Context, _ mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	t, err := h.kc.ListTopics(ctx)
	if err != nil {
		return mcperr.ToolResult(err), nil
	}
	return result(map[string]any{"topics": t}), nil
}

func (h *Handler) describeTopic(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	topic, err := stringArg(req, "topic", true)
	if err != nil {
		return mcperr.ToolResult(err), nil
	}
	d, err := h.kc.DescribeTopic(ctx, topic)
	if err != nil {
		return mcperr.ToolResult(err), nil
	}
	return result(d), nil
}

func (h *Handler) listGroups(ctx context.Context, _ mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	g, err := h.kc.ListConsumerGroups(ctx)
	if err != nil {
		return mcperr.ToolResult(err), nil
	}
	return result(g), nil
}

func (h *Handler) describeGroup(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	id, err := stringArg(req, "group_id", true)
	if err != nil {
		return mcperr.ToolResult(err), nil
	}
	d, err := h.kc.DescribeConsumerGroup(ctx, id)
	if err != nil {
		return mcperr.ToolResult(err), nil
	}
	return result(d), nil
}

func (h *Handler) describeConfigs(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
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
	c, err := h.kc.DescribeConfigs(ctx, rt, name)
	if err != nil {
		return mcperr.ToolResult(err), nil
	}
	return result(map[string]any{"resource_type": rt, "resource_name": name, "configs": c}), nil
}

func (h *Handler) consume(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
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
	if len(errs) > 0 {
		return mcperr.ToolResult(mcperr.Invalidf("invalid arguments: %s", strings.Join(errs, "; "))), nil
	}
	if hasOffset {
		r.Offset = off
	} else {
		r.Last = int(min(last, count))
	}
	r.MaxCount, r.MaxBytes = int(count), int32(bytes)
	res, err := h.kc.Consume(ctx, r)
	if err != nil {
		return mcperr.ToolResult(err), nil
	}
	return result(res), nil
}

func (h *Handler) produce(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	topic, err := stringArg(req, "topic", true)
	if err != nil {
		return mcperr.ToolResult(err), nil
	}
	args := req.GetArguments()
	value, ok := args["value"].(string)
	if !ok {
		return mcperr.ToolResult(mcperr.Invalidf("value is required and must be a string")), nil
	}
	r := kafka.ProduceRequest{Topic: topic, Value: value}
	if k, ok := args["key"]; ok && k != nil {
		ks, ok := k.(string)
		if !ok {
			return mcperr.ToolResult(mcperr.Invalidf("key must be a string")), nil
		}
		r.Key = &ks
	}
	p, hasP, err := intArg(req, "partition", 0, 0, math.MaxInt32)
	if err != nil {
		return mcperr.ToolResult(mcperr.Invalidf("%v", err)), nil
	}
	if hasP {
		p32 := int32(p)
		r.Partition = &p32
	}
	if r.Headers, err = stringMap(args, "headers"); err != nil {
		return mcperr.ToolResult(err), nil
	}
	res, err := h.kc.Produce(ctx, r)
	if err != nil {
		return mcperr.ToolResult(err), nil
	}
	h.log.Info("message produced", "topic", res.Topic, "partition", res.Partition, "offset", res.Offset)
	return result(res), nil
}

func (h *Handler) createTopic(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	name, err := stringArg(req, "name", true)
	if err != nil {
		return mcperr.ToolResult(err), nil
	}
	parts, _, err := intArg(req, "partitions", 1, 1, math.MaxInt32)
	if err != nil {
		return mcperr.ToolResult(mcperr.Invalidf("%v", err)), nil
	}
	rf, _, err := intArg(req, "replication_factor", -1, 1, math.MaxInt16)
	if err != nil {
		return mcperr.ToolResult(mcperr.Invalidf("%v", err)), nil
	}
	configs, err := stringMap(req.GetArguments(), "configs")
	if err != nil {
		return mcperr.ToolResult(err), nil
	}
	if err := h.kc.CreateTopic(ctx, name, int32(parts), int16(rf), configs); err != nil {
		return mcperr.ToolResult(err), nil
	}
	h.log.Info("topic created", "topic", name, "partitions", parts, "replication_factor", rf)
	return result(map[string]any{"created": true, "name": name, "partitions": parts, "replication_factor": rf}), nil
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
