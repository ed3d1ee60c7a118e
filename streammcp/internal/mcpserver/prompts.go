package mcpserver

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

func (h *Handler) registerPrompts(s *server.MCPServer) {
	s.AddPrompt(mcp.NewPrompt("troubleshoot_replication",
		mcp.WithPromptDescription("Walk through under-replicated and offline partitions and offline brokers, find the cause and propose safe next steps."),
		mcp.WithArgument("topic", mcp.ArgumentDescription("focus on this topic (optional)")),
	), h.troubleshootReplication)
	s.AddPrompt(mcp.NewPrompt("investigate_consumer_lag",
		mcp.WithPromptDescription("Find which consumer groups lag, whether they are consuming or stuck, and what to do about it."),
		mcp.WithArgument("group_id", mcp.ArgumentDescription("focus on this consumer group (optional)")),
		mcp.WithArgument("threshold", mcp.ArgumentDescription(fmt.Sprintf("lag threshold in messages (optional, default %d)", h.defaultCluster().LagThreshold))),
	), h.investigateLag)
}

func (h *Handler) troubleshootReplication(_ context.Context, req mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
	topic := strings.TrimSpace(req.Params.Arguments["topic"])
	focus := "the whole cluster"
	if topic != "" {
		focus = "topic " + strconv.Quote(topic)
	}
	steps := []string{
		fmt.Sprintf("You are troubleshooting Kafka replication for %s. Only read; never change the cluster unless the user asks.", focus),
		"1. Read the resource " + URIHealthCheck + ". Note overall_status, broker_status.offline_broker_ids, partition_status (offline, under-replicated, under min ISR).",
		"2. Read " + URIURP + ". Group the details by missing_replicas: a broker missing from many ISRs is the likely cause. Offline partitions (no live leader) block producers and consumers and come first; partitions under min.insync.replicas reject acks=all writes and come next.",
		"3. Call list_brokers to compare the live brokers with the offline ids; call describe_configs with resource_type=broker for a suspect broker if its settings matter (replica.lag.time.max.ms, num.replica.fetchers).",
	}
	if topic != "" {
		steps = append(steps, "4. Call describe_topic with topic="+strconv.Quote(topic)+" for its leaders, replicas, ISR, offline replicas and non-default configs (min.insync.replicas, unclean.leader.election.enable).")
	} else {
		steps = append(steps, "4. Call describe_topic for the most affected topics to see leaders, ISR and min.insync.replicas.")
	}
	steps = append(steps,
		"5. Summarise: what is wrong (with counts), the most likely cause (named brokers), the impact on producers/consumers, and safe next steps in order (restart or repair the named broker, check disk/network, wait for ISR to catch up, avoid unclean leader election unless data loss is acceptable).",
	)
	return mcp.NewGetPromptResult("Troubleshoot Kafka replication", []mcp.PromptMessage{
		mcp.NewPromptMessage(mcp.RoleUser, mcp.NewTextContent(strings.Join(steps, "\n"))),
	}), nil
}

func (h *Handler) investigateLag(_ context.Context, req mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
	group := strings.TrimSpace(req.Params.Arguments["group_id"])
	threshold := h.defaultCluster().LagThreshold
	if t := strings.TrimSpace(req.Params.Arguments["threshold"]); t != "" {
		n, err := strconv.ParseInt(t, 10, 64)
		if err != nil || n < 0 {
			return nil, fmt.Errorf("invalid argument threshold=%q: accepted is a non-negative integer number of messages", t)
		}
		threshold = n
	}
	uri := fmt.Sprintf("%s?threshold=%d", URILagReport, threshold)
	steps := []string{
		"You are investigating Kafka consumer lag. Only read; never change offsets or the cluster unless the user asks.",
		"1. Read the resource " + uri + ". A group has high lag when any partition lags more than " + strconv.FormatInt(threshold, 10) + " messages.",
	}
	if group != "" {
		steps = append(steps, "2. Focus on group "+strconv.Quote(group)+": call describe_consumer_group with group_id="+strconv.Quote(group)+".")
	} else {
		steps = append(steps, "2. For each group with has_high_lag=true, call describe_consumer_group.")
	}
	steps = append(steps,
		"3. Decide per group: state Empty (or no members) with lag = no active consumer; Stable with lag = consumers too slow or one partition stuck (compare lag across partitions and members' assignments); PreparingRebalance/CompletingRebalance = rebalancing, look for crashing consumers or long processing (max.poll.interval.ms). Partitions with a null committed offset were never committed and are not counted as lag.",
		"4. Optionally call consume_messages on a stuck partition at its committed offset to see the message a consumer may be failing on (this does not commit anything).",
		"5. Summarise per group: consuming or stuck, the evidence (lag, state, members), and concrete next steps (scale consumers up to the partition count, fix the failing message, restart consumers, or delete an abandoned group).",
	)
	return mcp.NewGetPromptResult("Investigate consumer lag", []mcp.PromptMessage{
		mcp.NewPromptMessage(mcp.RoleUser, mcp.NewTextContent(strings.Join(steps, "\n"))),
	}), nil
}
