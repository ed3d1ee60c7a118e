package mcpserver

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcpfleet/mcpfleet/shared/mcperr"
	"github.com/mcpfleet/mcpfleet/shared/toolcall"
	"github.com/mcpfleet/mcpfleet/streammcp/internal/kafka"
)

// topicConfigs are the topic-level configs of Kafka 4.0 (LogConfig) with
// the kind of value each takes: "int" (a long, -1 allowed where Kafka
// allows it), "bool", "ratio", "policy", or "" (any string Kafka checks).
// A key outside this list is refused before any request: a typo, or a
// broker/client setting (sasl.jaas.config, ssl.keystore.password) that
// must never travel as a topic config.
var topicConfigs = map[string]string{
	"cleanup.policy": "policy", "compression.type": "", "compression.gzip.level": "int", "compression.lz4.level": "int",
	"compression.zstd.level": "int", "delete.retention.ms": "int", "file.delete.delay.ms": "int", "flush.messages": "int",
	"flush.ms": "int", "follower.replication.throttled.replicas": "", "index.interval.bytes": "int",
	"leader.replication.throttled.replicas": "", "local.retention.bytes": "int", "local.retention.ms": "int",
	"max.compaction.lag.ms": "int", "max.message.bytes": "int", "message.timestamp.after.max.ms": "int",
	"message.timestamp.before.max.ms": "int", "message.timestamp.type": "", "min.cleanable.dirty.ratio": "ratio",
	"min.compaction.lag.ms": "int", "min.insync.replicas": "int", "preallocate": "bool", "remote.storage.enable": "bool",
	"remote.log.copy.disable": "bool", "remote.log.delete.on.disable": "bool", "retention.bytes": "int", "retention.ms": "int",
	"segment.bytes": "int", "segment.index.bytes": "int", "segment.jitter.ms": "int", "segment.ms": "int",
	"unclean.leader.election.enable": "bool",
}

// secretLike recognises keys that name a credential: they are refused
// without echoing the value (the audit log redacts such fields too).
func secretLike(k string) bool {
	k = strings.ToLower(k)
	for _, w := range []string{"password", "secret", "jaas", "token", "credential", "key"} {
		if strings.Contains(k, w) {
			return true
		}
	}
	return false
}

// configChange is a validated alter_topic_config call.
type configChange struct {
	topic string
	set   map[string]string
	del   []string
}

func (c configChange) keys() []string {
	keys := slices.Sorted(func(yield func(string) bool) {
		for k := range c.set {
			if !yield(k) {
				return
			}
		}
	})
	return append(keys, c.del...)
}

func configArgs(in alterConfigIn) (configChange, error) {
	c := configChange{topic: in.Topic, set: in.Set, del: slices.Clone(in.Delete)}
	if err := validTopic("topic", c.topic); err != nil {
		return c, err
	}
	if len(c.set) == 0 && len(c.del) == 0 {
		return c, mcperr.Invalidf("set, delete: give at least one config to set or delete (set is empty); nothing was sent")
	}
	check := func(arg, k string) error {
		if _, ok := topicConfigs[k]; ok {
			return nil
		}
		if secretLike(k) || strings.HasPrefix(k, "sasl.") || strings.HasPrefix(k, "ssl.") {
			return mcperr.Invalidf("%s: %s is not a topic config: it names a broker or client security setting, which this tool never sends (its value is not repeated here); nothing was sent", arg, quoteShort(k))
		}
		return mcperr.Invalidf("%s: unknown topic config %s; topic configs are %s; nothing was sent", arg, quoteShort(k), strings.Join(slices.Sorted(mapKeys(topicConfigs)), ", "))
	}
	for k, v := range c.set {
		if err := check("set", k); err != nil {
			return c, err
		}
		if err := checkValue(k, v); err != nil {
			return c, err
		}
	}
	seen := map[string]bool{}
	for _, k := range c.del {
		if err := check("delete", k); err != nil {
			return c, err
		}
		if _, both := c.set[k]; both || seen[k] {
			return c, mcperr.Invalidf("delete: %s is named twice (in set and delete, or twice in delete); nothing was sent", quoteShort(k))
		}
		seen[k] = true
	}
	slices.Sort(c.del)
	return c, nil
}

func mapKeys[V any](m map[string]V) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// checkValue refuses values Kafka would refuse, naming the key.
func checkValue(k, v string) error {
	bad := func(want string) error {
		return mcperr.Invalidf("set: %s=%s is not valid: %s; nothing was sent", k, quoteShort(v), want)
	}
	switch topicConfigs[k] {
	case "int":
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return bad("an integer")
		}
		if n < -1 || n < 0 && !slices.Contains([]string{"retention.ms", "retention.bytes", "local.retention.ms", "local.retention.bytes"}, k) {
			return bad("a non-negative integer (-1, unlimited, only for retention)")
		}
		if k == "min.insync.replicas" && n < 1 {
			return bad("at least 1")
		}
	case "bool":
		if v != "true" && v != "false" {
			return bad("true or false")
		}
	case "ratio":
		f, err := strconv.ParseFloat(v, 64)
		if err != nil || f < 0 || f > 1 {
			return bad("a number from 0 to 1")
		}
	case "policy":
		parts := strings.Split(strings.ReplaceAll(v, " ", ""), ",")
		for _, p := range parts {
			if p != "delete" && p != "compact" {
				return bad("delete, compact, or compact,delete")
			}
		}
	}
	return nil
}

// configRow is one key of an alter_topic_config preview.
type configRow struct {
	Key         string `json:"key"`
	Old         string `json:"old_value"`
	OldSource   string `json:"old_source"`
	New         string `json:"new_value"`
	NewSource   string `json:"new_source"`
	Destructive string `json:"destructive,omitempty"` // why, when it is
}

// classify compares each key with its live value: lowering retention or
// min.insync.replicas, or changing cleanup.policy, is destructive.
func classify(c configChange, live map[string]kafka.ConfigValue) ([]configRow, toolcall.Class) {
	class := toolcall.Change
	var rows []configRow
	for _, k := range c.keys() {
		cur := live[k]
		row := configRow{Key: k, Old: cur.Value, OldSource: cur.Source}
		if v, ok := c.set[k]; ok {
			row.New, row.NewSource = v, "DynamicTopic"
		} else {
			row.New, row.NewSource = cur.Default, "default (override deleted)"
			if cur.Default == "" {
				row.New = "(the broker default, which Kafka did not report)"
			}
		}
		switch k {
		case "retention.ms", "retention.bytes", "local.retention.ms", "local.retention.bytes":
			if lowers(row.Old, row.New, true) {
				row.Destructive = "lowers " + k + ": older data becomes eligible for deletion"
			}
		case "min.insync.replicas":
			if lowers(row.Old, row.New, false) {
				row.Destructive = "lowers min.insync.replicas: acks=all writes survive fewer broker losses"
			}
		case "cleanup.policy":
			if normPolicy(row.Old) != normPolicy(row.New) {
				row.Destructive = "changes cleanup.policy: the cleaner deletes or compacts data differently"
			}
		}
		if row.Destructive != "" {
			class = toolcall.Destructive
		}
		rows = append(rows, row)
	}
	return rows, class
}

// lowers says whether new is below old; -1 means unlimited when
// unlimited, and an unknown value counts as lowering (the safe side).
func lowers(old, new string, unlimited bool) bool {
	o, err1 := strconv.ParseInt(old, 10, 64)
	n, err2 := strconv.ParseInt(new, 10, 64)
	if err1 != nil || err2 != nil {
		return true
	}
	if unlimited {
		if n == -1 {
			return false
		}
		if o == -1 {
			return true
		}
	}
	return n < o
}

func normPolicy(p string) string {
	parts := strings.Split(strings.ReplaceAll(p, " ", ""), ",")
	slices.Sort(parts)
	return strings.Join(parts, ",")
}

// planAlterConfig validates the keys and values, then reads the live values
// of those keys (one DescribeConfigs) to classify the call.
func (h *Handler) planAlterConfig(ctx context.Context, in alterConfigIn) (toolcall.Plan, error) {
	c, err := configArgs(in)
	if err != nil {
		return toolcall.Plan{}, err
	}
	cl, target, err := h.writeTarget(in.clusterArg, c.topic, "")
	if err != nil {
		return toolcall.Plan{}, err
	}
	kc := cl.Client
	live, err := kc.TopicConfigs(ctx, c.topic, c.keys())
	if err != nil {
		return toolcall.Plan{}, err
	}
	rows, class := classify(c, live)
	var ops []string
	for _, k := range c.keys() {
		if v, ok := c.set[k]; ok {
			ops = append(ops, fmt.Sprintf("SET %s=%q", k, v))
		} else {
			ops = append(ops, "DELETE "+k)
		}
	}
	cmd := fmt.Sprintf("IncrementalAlterConfigs topic=%q %s", c.topic, strings.Join(ops, " "))
	fingerprint := func(live map[string]kafka.ConfigValue) string {
		var b strings.Builder
		for _, k := range c.keys() {
			fmt.Fprintf(&b, "%s=%s(%s) ", k, live[k].Value, live[k].Source)
		}
		return strings.TrimSpace(b.String())
	}
	return toolcall.Plan{
		Class:    class,
		Target:   target,
		Commands: []string{cmd},
		Describe: func(ctx context.Context) (toolcall.Preview, error) {
			live, err := kc.TopicConfigs(ctx, c.topic, c.keys())
			if err != nil {
				return toolcall.Preview{}, err
			}
			rows, class := classify(c, live)
			var b strings.Builder
			fmt.Fprintf(&b, "Change %d config(s) of topic %s on %s (%s).", len(rows), c.topic, target, class)
			for _, r := range rows {
				if r.Destructive != "" {
					b.WriteString(" " + strings.ToUpper(r.Destructive[:1]) + r.Destructive[1:] + ".")
				}
			}
			b.WriteString("\n\n")
			tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
			fmt.Fprintln(tw, "key\told (source)\tnew (source)")
			for _, r := range rows {
				fmt.Fprintf(tw, "%s\t%s (%s)\t%s (%s)\n", r.Key, r.Old, r.OldSource, r.New, r.NewSource)
			}
			tw.Flush()
			state := map[string]any{"topic": c.topic, "configs": rows}
			if est := h.retentionEstimate(ctx, kc, c.topic, rows); est != nil {
				state["eligible_for_deletion"] = est
				fmt.Fprintf(&b, "\n%s", est.Words)
			}
			if est := sizeEstimate(ctx, kc, c.topic, rows); est != nil {
				state["eligible_for_deletion_by_size"] = est
				fmt.Fprintf(&b, "\n%s", est.Words)
			}
			return toolcall.Preview{Summary: strings.TrimRight(b.String(), "\n"), State: state,
				Effect:       "the brokers apply the new values to " + c.topic + " within seconds; the log cleaner acts on retention at its next pass",
				Precondition: fingerprint(live)}, nil
		},
		Run: func(ctx context.Context) (*mcp.CallToolResult, error) {
			if err := kc.AlterTopicConfig(ctx, c.topic, c.set, c.del); err != nil {
				return nil, err
			}
			h.log.Info("topic configs altered", "cluster", cl.Name, "topic", c.topic, "keys", c.keys(), "class", class.String())
			return result(map[string]any{"topic": c.topic, "altered": rows}), nil
		},
	}, nil
}

// retentionEstimate is what a retention.ms decrease makes eligible for
// deletion: per partition the messages older than now minus the new
// retention (ListOffsets by time). nil when retention.ms is not lowered.
type retentionEstimate struct {
	Before     string         `json:"older_than"`
	Partitions []eligibleRows `json:"partitions"`
	Messages   int64          `json:"messages"`
	Words      string         `json:"-"`
}

type eligibleRows struct {
	Partition int32 `json:"partition"`
	LogStart  int64 `json:"log_start_offset"`
	UpTo      int64 `json:"eligible_before_offset"`
	Messages  int64 `json:"messages"`
}

func (h *Handler) retentionEstimate(ctx context.Context, kc *kafka.Client, topic string, rows []configRow) *retentionEstimate {
	for _, r := range rows {
		if r.Key != "retention.ms" || r.Destructive == "" {
			continue
		}
		ms, err := strconv.ParseInt(r.New, 10, 64)
		if err != nil || ms < 0 {
			return nil
		}
		cut := time.Now().Add(-time.Duration(min(ms, math.MaxInt64/int64(time.Millisecond))) * time.Millisecond)
		offs, err := kc.OffsetsAtTime(ctx, topic, cut)
		if err != nil {
			return &retentionEstimate{Words: "Data eligible for deletion could not be estimated: " + errorText(err)}
		}
		est := &retentionEstimate{Before: cut.UTC().Format(time.RFC3339)}
		for _, o := range offs {
			upTo := o.LogEnd
			if o.Offset != nil {
				upTo = *o.Offset
			}
			e := eligibleRows{Partition: o.Partition, LogStart: o.LogStart, UpTo: upTo, Messages: max(upTo-o.LogStart, 0)}
			est.Messages += e.Messages
			est.Partitions = append(est.Partitions, e)
		}
		est.Words = fmt.Sprintf("With retention.ms=%s, messages older than %s become eligible for deletion: about %d message(s) over %d partition(s) (Kafka deletes whole segments, so somewhat fewer at first).",
			r.New, est.Before, est.Messages, len(est.Partitions))
		return est
	}
	return nil
}

// sizeRetentionEstimate is what a retention.bytes decrease makes eligible
// for deletion: per partition, the bytes of its leader's log above the new
// limit (DescribeLogDirs) and the messages they hold, assuming even message
// sizes. Known false means the brokers did not tell: "unknown", never 0.
type sizeRetentionEstimate struct {
	RetentionBytes int64          `json:"retention_bytes"`
	Known          bool           `json:"known"`
	Unknown        string         `json:"unknown,omitempty"` // why
	Bytes          *int64         `json:"bytes"`             // null when unknown
	Messages       *int64         `json:"messages"`          // null when unknown
	Partitions     []eligibleSize `json:"partitions"`
	Words          string         `json:"-"`
}

type eligibleSize struct {
	Partition int32 `json:"partition"`
	Size      int64 `json:"size_bytes"`
	Bytes     int64 `json:"eligible_bytes"`
	LogStart  int64 `json:"log_start_offset"`
	UpTo      int64 `json:"eligible_before_offset"` // estimated
	Messages  int64 `json:"messages"`               // estimated
}

func sizeEstimate(ctx context.Context, kc *kafka.Client, topic string, rows []configRow) *sizeRetentionEstimate {
	for _, r := range rows {
		if r.Key != "retention.bytes" || r.Destructive == "" {
			continue
		}
		limit, err := strconv.ParseInt(r.New, 10, 64)
		if err != nil || limit < 0 {
			return nil
		}
		est := &sizeRetentionEstimate{RetentionBytes: limit, Partitions: []eligibleSize{}}
		sizes, err := kc.PartitionSizes(ctx, topic)
		if err != nil {
			est.Unknown = errorText(err)
			est.Words = fmt.Sprintf("With retention.bytes=%s, the data that becomes eligible for deletion is unknown: the partition sizes could not be read (%s).", r.New, est.Unknown)
			return est
		}
		var bytes, msgs int64
		for _, p := range sizes {
			e := eligibleSize{Partition: p.Partition, Size: p.Bytes, LogStart: p.LogStart, UpTo: p.LogStart}
			if p.Bytes > limit {
				e.Bytes = p.Bytes - limit
				if n := p.LogEnd - p.LogStart; n > 0 && p.Bytes > 0 {
					e.Messages = int64(float64(n) * float64(e.Bytes) / float64(p.Bytes))
				}
				e.UpTo = p.LogStart + e.Messages
			}
			bytes += e.Bytes
			msgs += e.Messages
			est.Partitions = append(est.Partitions, e)
		}
		est.Known, est.Bytes, est.Messages = true, &bytes, &msgs
		est.Words = fmt.Sprintf("With retention.bytes=%s (a limit per partition), %d byte(s) over %d partition(s) become eligible for deletion: about %d message(s), from each partition's log start (sizes from DescribeLogDirs on each leader; messages assume even sizes, and Kafka deletes whole segments, so somewhat fewer at first).",
			r.New, bytes, countOver(est.Partitions), msgs)
		return est
	}
	return nil
}

func countOver(ps []eligibleSize) int {
	n := 0
	for _, p := range ps {
		if p.Bytes > 0 {
			n++
		}
	}
	return n
}
