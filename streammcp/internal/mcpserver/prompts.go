package mcpserver

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/mcpfleet/mcpfleet/shared/mcperr"
)

func (h *Handler) registerPrompts(s *server.MCPServer) {
	clusterArg := mcp.WithArgument("cluster", mcp.ArgumentDescription(fmt.Sprintf(
		"Kafka cluster to investigate, as named in STREAM_CLUSTERS (%s); omit for the default cluster (%s). Given, the prompt reads the cluster's stream-mcp://clusters/{cluster}/ reports and passes cluster to each tool it names",
		strings.Join(h.names(), ", "), h.defaultCluster().Name)))
	s.AddPrompt(mcp.NewPrompt("troubleshoot_replication",
		mcp.WithPromptDescription("Walk through under-replicated and offline partitions and offline brokers, find the cause and propose safe next steps."),
		mcp.WithArgument("topic", mcp.ArgumentDescription("focus on this topic (optional)")),
		clusterArg,
	), h.troubleshootReplication)
	s.AddPrompt(mcp.NewPrompt("investigate_consumer_lag",
		mcp.WithPromptDescription("Find which consumer groups lag, whether they are consuming or stuck, and what to do about it."),
		mcp.WithArgument("group_id", mcp.ArgumentDescription("focus on this consumer group (optional)")),
		mcp.WithArgument("threshold", mcp.ArgumentDescription(h.thresholdHelp())),
		clusterArg,
	), h.investigateLag)
}

// thresholdHelp describes the lag prompt's threshold: each cluster's own
// default when they differ.
func (h *Handler) thresholdHelp() string {
	def := h.defaultCluster().LagThreshold
	var others []string
	for _, c := range h.clusters[1:] {
		if c.LagThreshold != def {
			others = append(others, fmt.Sprintf("%s %d", c.Name, c.LagThreshold))
		}
	}
	if len(others) == 0 {
		return fmt.Sprintf("lag threshold in messages (optional, default %d)", def)
	}
	return fmt.Sprintf("lag threshold in messages (optional, default %d; the cluster's own with cluster: %s)", def, strings.Join(others, ", "))
}

// promptTarget is what a prompt points at: the seed URIs without cluster
// (the default cluster, so a one-cluster prompt reads unchanged), the cluster's own URIs and a
// cluster argument for every tool with one. An unknown name is refused
// like a tool's cluster; an empty value counts as omitted, since clients
// send "" for an optional prompt argument left blank.
type promptTarget struct {
	cl    *clusterState
	named bool
}

func (h *Handler) promptTarget(req mcp.GetPromptRequest) (promptTarget, error) {
	name, ok := req.Params.Arguments["cluster"]
	if !ok || name == "" {
		return promptTarget{cl: h.defaultCluster()}, nil
	}
	cl, err := h.cluster(clusterArg{Cluster: &name})
	if err != nil {
		return promptTarget{}, err
	}
	return promptTarget{cl: cl, named: true}, nil
}

// uri is a report's URI for the target: the seed URI or the cluster's own.
func (p promptTarget) uri(report string) string {
	if !p.named {
		return "stream-mcp://" + report
	}
	return ClusterURI(p.cl.Name, report)
}

// call names a tool with the target's cluster argument and others.
func (p promptTarget) call(tool string, args ...string) string {
	if p.named {
		args = append([]string{"cluster=" + strconv.Quote(p.cl.Name)}, args...)
	}
	if len(args) == 0 {
		return tool
	}
	return tool + " with " + strings.Join(args, ", ")
}

func (h *Handler) troubleshootReplication(_ context.Context, req mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
	pt, err := h.promptTarget(req)
	if err != nil {
		return nil, fmt.Errorf("%s", mcperr.Message(err))
	}
	topic := strings.TrimSpace(req.Params.Arguments["topic"])
	focus := "the whole cluster"
	if pt.named {
		focus = "the whole cluster " + pt.cl.Name
	}
	if topic != "" {
		focus = "topic " + strconv.Quote(topic)
		if pt.named {
			focus += " on cluster " + pt.cl.Name
		}
	}
	steps := []string{
		fmt.Sprintf("You are troubleshooting Kafka replication for %s. Only read; never change the cluster unless the user asks.", focus),
		"1. Read the resource " + pt.uri("health-check") + ". Note overall_status, broker_status.offline_broker_ids, partition_status (offline, under-replicated, under min ISR).",
		"2. Read " + pt.uri("under-replicated-partitions") + ". Group the details by missing_replicas: a broker missing from many ISRs is the likely cause. Offline partitions (no live leader) block producers and consumers and come first; partitions under min.insync.replicas reject acks=all writes and come next.",
		"3. Call " + pt.call("list_brokers") + " to compare the live brokers with the offline ids; call " + pt.call("describe_configs", "resource_type=broker") + " for a suspect broker if its settings matter (replica.lag.time.max.ms, num.replica.fetchers).",
	}
	if topic != "" {
		steps = append(steps, "4. Call "+pt.call("describe_topic", "topic="+strconv.Quote(topic))+" for its leaders, replicas, ISR, offline replicas and non-default configs (min.insync.replicas, unclean.leader.election.enable).")
	} else {
		steps = append(steps, "4. Call "+pt.call("describe_topic")+" for the most affected topics to see leaders, ISR and min.insync.replicas.")
	}
	steps = append(steps,
		"5. Summarise: what is wrong (with counts), the most likely cause (named brokers), the impact on producers/consumers, and safe next steps in order (restart or repair the named broker, check disk/network, wait for ISR to catch up, avoid unclean leader election unless data loss is acceptable).",
		"6. A consumer group stuck behind an offline partition resumes by itself once the partition has a leader again: do not reset its offsets for that. Only if the user wants it to skip or replay data, propose "+pt.call("reset_consumer_group_offsets", "dryRun=true")+" and show its per-partition preview before anything moves.",
	)
	return mcp.NewGetPromptResult("Troubleshoot Kafka replication", []mcp.PromptMessage{
		mcp.NewPromptMessage(mcp.RoleUser, mcp.NewTextContent(strings.Join(steps, "\n"))),
	}), nil
}

func (h *Handler) investigateLag(_ context.Context, req mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
	pt, err := h.promptTarget(req)
	if err != nil {
		return nil, fmt.Errorf("%s", mcperr.Message(err))
	}
	group := strings.TrimSpace(req.Params.Arguments["group_id"])
	threshold := pt.cl.LagThreshold
	if t := strings.TrimSpace(req.Params.Arguments["threshold"]); t != "" {
		n, err := strconv.ParseInt(t, 10, 64)
		if err != nil || n < 0 {
			return nil, fmt.Errorf("invalid argument threshold=%q: accepted is a non-negative integer number of messages", t)
		}
		threshold = n
	}
	uri := fmt.Sprintf("%s?threshold=%d", pt.uri("consumer-lag-report"), threshold)
	intro := "You are investigating Kafka consumer lag."
	if pt.named {
		intro = "You are investigating Kafka consumer lag on cluster " + pt.cl.Name + "."
	}
	steps := []string{
		intro + " Only read; never change offsets or the cluster unless the user asks.",
		"1. Read the resource " + uri + ". A group has high lag when any partition lags more than " + strconv.FormatInt(threshold, 10) + " messages.",
	}
	if group != "" {
		steps = append(steps, "2. Focus on group "+strconv.Quote(group)+": call "+pt.call("describe_consumer_group", "group_id="+strconv.Quote(group))+".")
	} else {
		steps = append(steps, "2. For each group with has_high_lag=true, call "+pt.call("describe_consumer_group")+".")
	}
	steps = append(steps,
		"3. Decide per group: state Empty (or no members) with lag = no active consumer; Stable with lag = consumers too slow or one partition stuck (compare lag across partitions and members' assignments); PreparingRebalance/CompletingRebalance = rebalancing, look for crashing consumers or long processing (max.poll.interval.ms). Partitions with a null committed offset were never committed and are not counted as lag.",
		"4. Optionally call "+pt.call("consume_messages")+" on a stuck partition at its committed offset to see the message a consumer may be failing on (this does not commit anything).",
		"5. Summarise per group: consuming or stuck, the evidence (lag, state, members), and concrete next steps (scale consumers up to the partition count, fix the failing message, restart consumers, or delete an abandoned group).",
		"6. When a group is stuck (the same committed offset while messages arrive, or Empty with lag) and the user wants to move it, propose "+pt.call("reset_consumer_group_offsets", "dryRun=true")+" — shift_by=1 on the stuck partition to skip a poison message, to_datetime to replay since a time, to_latest to jump to now — and show its per-partition preview (committed → new, messages re-consumed or skipped). The group must be empty first (stop its consumers); run it without dryRun only after the user approves the preview.",
	)
	return mcp.NewGetPromptResult("Investigate consumer lag", []mcp.PromptMessage{
		mcp.NewPromptMessage(mcp.RoleUser, mcp.NewTextContent(strings.Join(steps, "\n"))),
	}), nil
}
