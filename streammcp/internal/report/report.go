package report

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"
)

// Health labels.
const (
	Healthy  = "healthy"
	Warning  = "warning"
	Critical = "critical"
	Unknown  = "unknown"
)

// rank orders labels from best to worst: critical > warning > unknown > healthy.
func rank(label string) int {
	switch label {
	case Critical:
		return 3
	case Warning:
		return 2
	case Unknown:
		return 1
	}
	return 0
}

// Worst returns the worst of labels (healthy when none are given).
func Worst(labels ...string) string {
	w := Healthy
	for _, l := range labels {
		if rank(l) > rank(w) {
			w = l
		}
	}
	return w
}

// Timestamp renders t as the ISO 8601 UTC string every report carries.
func Timestamp(t time.Time) string {
	return t.UTC().Format("2006-01-02T15:04:05.000Z")
}

// Analysis is the classification of a cluster snapshot that all
// cluster-side reports share.
type Analysis struct {
	Live             map[int32]bool // listed in metadata and not fenced
	LiveCount        int
	OfflineBrokerIDs []int32 // ascending, never nil
	TopicCount       int
	PartitionCount   int
	Offline          []PartitionRef
	UnderReplicated  []URPDetail // sorted by topic, partition; excludes offline partitions
	UnderMinISR      int         // non-offline partitions with |ISR| < min.insync.replicas
}

// PartitionRef names one partition.
type PartitionRef struct {
	Topic     string `json:"topic"`
	Partition int32  `json:"partition"`
	Leader    int32  `json:"leader"`
	Reason    string `json:"reason"`
}

// Analyze classifies c. A partition is offline when it has no leader, its
// metadata carries a leader-not-available style error, or its leader is not
// a live broker; it is under-replicated when it is not offline and its ISR
// is smaller than its replica set.
func Analyze(c *Cluster) Analysis {
	a := Analysis{Live: map[int32]bool{}}
	fenced := map[int32]bool{}
	for _, id := range c.Fenced {
		fenced[id] = true
	}
	for _, b := range c.Brokers {
		if !fenced[b.ID] {
			a.Live[b.ID] = true
		}
	}
	a.LiveCount = len(a.Live)
	offline := map[int32]bool{}
	for _, id := range c.Fenced {
		offline[id] = true
	}
	for _, id := range c.Expected {
		if !a.Live[id] {
			offline[id] = true
		}
	}
	a.TopicCount = len(c.Topics)
	for _, t := range c.Topics {
		a.PartitionCount += len(t.Partitions)
		for _, p := range t.Partitions {
			for _, r := range p.Replicas {
				if !a.Live[r] {
					offline[r] = true
				}
			}
			for _, r := range p.OfflineReplicas {
				offline[r] = true
			}
			if reason := offlineReason(p, a.Live); reason != "" {
				a.Offline = append(a.Offline, PartitionRef{Topic: t.Name, Partition: p.ID, Leader: p.Leader, Reason: reason})
				continue
			}
			if t.MinISR > 0 && len(p.ISR) < t.MinISR {
				a.UnderMinISR++
			}
			if len(p.ISR) < len(p.Replicas) {
				a.UnderReplicated = append(a.UnderReplicated, URPDetail{
					Topic:           t.Name,
					Partition:       p.ID,
					Leader:          p.Leader,
					ReplicaCount:    len(p.Replicas),
					ISRCount:        len(p.ISR),
					Replicas:        nonNil(p.Replicas),
					ISR:             nonNil(p.ISR),
					MissingReplicas: missing(p.Replicas, p.ISR),
					MinISR:          t.MinISR,
					UnderMinISR:     t.MinISR > 0 && len(p.ISR) < t.MinISR,
				})
			}
		}
	}
	a.OfflineBrokerIDs = sortedIDs(offline)
	sort.Slice(a.Offline, func(i, j int) bool {
		return lessTP(a.Offline[i].Topic, a.Offline[i].Partition, a.Offline[j].Topic, a.Offline[j].Partition)
	})
	sort.Slice(a.UnderReplicated, func(i, j int) bool {
		return lessTP(a.UnderReplicated[i].Topic, a.UnderReplicated[i].Partition, a.UnderReplicated[j].Topic, a.UnderReplicated[j].Partition)
	})
	if a.Offline == nil {
		a.Offline = []PartitionRef{}
	}
	if a.UnderReplicated == nil {
		a.UnderReplicated = []URPDetail{}
	}
	return a
}

// leaderErrors are the partition errors that mean "no usable leader".
var leaderErrors = map[string]bool{
	"LEADER_NOT_AVAILABLE":       true,
	"NOT_LEADER_OR_FOLLOWER":     true,
	"NOT_LEADER_FOR_PARTITION":   true,
	"REPLICA_NOT_AVAILABLE":      false, // some replica is down; the leader still serves
	"UNKNOWN_TOPIC_OR_PARTITION": true,
	"KAFKA_STORAGE_ERROR":        true,
	"FENCED_LEADER_EPOCH":        true,
	"UNKNOWN_LEADER_EPOCH":       true,
	"OFFLINE_PARTITION":          true,
}

func offlineReason(p Partition, live map[int32]bool) string {
	switch {
	case p.Leader < 0:
		return "no leader"
	case p.Err != "" && leaderErrors[p.Err]:
		return p.Err
	case !live[p.Leader]:
		return fmt.Sprintf("leader %d is not a live broker", p.Leader)
	}
	return ""
}

// BrokerStatus labels the broker side: critical with no live broker,
// warning with any offline broker id.
func (a Analysis) BrokerStatus() string {
	switch {
	case a.LiveCount == 0:
		return Critical
	case len(a.OfflineBrokerIDs) > 0:
		return Warning
	}
	return Healthy
}

// ControllerStatus is critical when there is no controller.
func ControllerStatus(id int32) string {
	if id < 0 {
		return Critical
	}
	return Healthy
}

// PartitionStatus is critical when any partition is offline or below its
// min.insync.replicas, warning when any is under-replicated.
func (a Analysis) PartitionStatus() string {
	switch {
	case len(a.Offline) > 0 || a.UnderMinISR > 0:
		return Critical
	case len(a.UnderReplicated) > 0:
		return Warning
	}
	return Healthy
}

// Overview is the stream-mcp://overview report.
type Overview struct {
	Timestamp                 string  `json:"timestamp"`
	ClusterID                 string  `json:"cluster_id"`
	BrokerCount               int     `json:"broker_count"`
	ControllerID              int32   `json:"controller_id"`
	TopicCount                int     `json:"topic_count"`
	PartitionCount            int     `json:"partition_count"`
	UnderReplicatedPartitions int     `json:"under_replicated_partitions"`
	OfflinePartitions         int     `json:"offline_partitions"`
	UnderMinISRPartitions     int     `json:"under_min_isr_partitions"`
	OfflineBrokerIDs          []int32 `json:"offline_broker_ids"`
	HealthStatus              string  `json:"health_status"`
}

// NewOverview builds the overview from cluster metadata only.
func NewOverview(c *Cluster) Overview {
	a := Analyze(c)
	return Overview{
		Timestamp:                 Timestamp(c.Time),
		ClusterID:                 c.ClusterID,
		BrokerCount:               a.LiveCount,
		ControllerID:              c.ControllerID,
		TopicCount:                a.TopicCount,
		PartitionCount:            a.PartitionCount,
		UnderReplicatedPartitions: len(a.UnderReplicated),
		OfflinePartitions:         len(a.Offline),
		UnderMinISRPartitions:     a.UnderMinISR,
		OfflineBrokerIDs:          a.OfflineBrokerIDs,
		HealthStatus:              Worst(a.BrokerStatus(), ControllerStatus(c.ControllerID), a.PartitionStatus()),
	}
}

// HealthCheck is the stream-mcp://health-check report.
type HealthCheck struct {
	Timestamp        string          `json:"timestamp"`
	BrokerStatus     BrokerStatus    `json:"broker_status"`
	ControllerStatus ControllerState `json:"controller_status"`
	PartitionStatus  PartitionState  `json:"partition_status"`
	ConsumerStatus   ConsumerState   `json:"consumer_status"`
	OverallStatus    string          `json:"overall_status"`
}

// BrokerStatus is the broker section of the health check.
type BrokerStatus struct {
	TotalBrokers     int     `json:"total_brokers"`
	LiveBrokers      int     `json:"live_brokers"`
	OfflineBrokers   int     `json:"offline_brokers"`
	OfflineBrokerIDs []int32 `json:"offline_broker_ids"`
	Status           string  `json:"status"`
}

// ControllerState is the controller section of the health check.
type ControllerState struct {
	ControllerID int32  `json:"controller_id"`
	Status       string `json:"status"`
}

// PartitionState is the partition section of the health check.
type PartitionState struct {
	TotalPartitions           int    `json:"total_partitions"`
	UnderReplicatedPartitions int    `json:"under_replicated_partitions"`
	OfflinePartitions         int    `json:"offline_partitions"`
	UnderMinISRPartitions     int    `json:"under_min_isr_partitions"`
	Status                    string `json:"status"`
}

// ConsumerState is the consumer section of the health check.
type ConsumerState struct {
	TotalGroups       int    `json:"total_groups"`
	GroupsWithHighLag int    `json:"groups_with_high_lag"`
	LagThreshold      int64  `json:"lag_threshold"`
	Status            string `json:"status"`
	Error             string `json:"error"`
}

// NewHealthCheck combines the cluster and group snapshots. g may be nil
// when groups could not be read at all; groupsErr then says why.
func NewHealthCheck(c *Cluster, g *Groups, groupsErr string, threshold int64) HealthCheck {
	a := Analyze(c)
	h := HealthCheck{
		Timestamp: Timestamp(c.Time),
		BrokerStatus: BrokerStatus{
			TotalBrokers:     a.LiveCount + len(a.OfflineBrokerIDs),
			LiveBrokers:      a.LiveCount,
			OfflineBrokers:   len(a.OfflineBrokerIDs),
			OfflineBrokerIDs: a.OfflineBrokerIDs,
			Status:           a.BrokerStatus(),
		},
		ControllerStatus: ControllerState{ControllerID: c.ControllerID, Status: ControllerStatus(c.ControllerID)},
		PartitionStatus: PartitionState{
			TotalPartitions:           a.PartitionCount,
			UnderReplicatedPartitions: len(a.UnderReplicated),
			OfflinePartitions:         len(a.Offline),
			UnderMinISRPartitions:     a.UnderMinISR,
			Status:                    a.PartitionStatus(),
		},
		ConsumerStatus: ConsumerState{LagThreshold: threshold, Status: Healthy},
	}
	cs := &h.ConsumerStatus
	if g == nil {
		cs.Status = Unknown
		cs.Error = groupsErr
		if cs.Error == "" {
			cs.Error = "consumer groups could not be read"
		}
	} else {
		lag := NewLagReport(g, threshold)
		cs.TotalGroups = lag.GroupCount
		cs.GroupsWithHighLag = lag.GroupsWithHighLag
		if lag.GroupsWithHighLag > 0 {
			cs.Status = Warning
		}
		if g.Err != "" {
			cs.Error = g.Err
			cs.Status = Worst(cs.Status, Unknown)
		}
	}
	h.OverallStatus = Worst(h.BrokerStatus.Status, h.ControllerStatus.Status, h.PartitionStatus.Status, cs.Status)
	return h
}

// URPReport is the stream-mcp://under-replicated-partitions report.
type URPReport struct {
	Timestamp                     string         `json:"timestamp"`
	UnderReplicatedPartitionCount int            `json:"under_replicated_partition_count"`
	Details                       []URPDetail    `json:"details"`
	OfflinePartitions             []PartitionRef `json:"offline_partitions"`
	OfflineBrokerIDs              []int32        `json:"offline_broker_ids"`
	Recommendations               []string       `json:"recommendations"`
}

// URPDetail is one under-replicated partition.
type URPDetail struct {
	Topic           string  `json:"topic"`
	Partition       int32   `json:"partition"`
	Leader          int32   `json:"leader"`
	ReplicaCount    int     `json:"replica_count"`
	ISRCount        int     `json:"isr_count"`
	Replicas        []int32 `json:"replicas"`
	ISR             []int32 `json:"isr"`
	MissingReplicas []int32 `json:"missing_replicas"`
	MinISR          int     `json:"min_insync_replicas"`
	UnderMinISR     bool    `json:"under_min_isr"`
}

// NewURPReport lists the under-replicated partitions with advice.
func NewURPReport(c *Cluster) URPReport {
	a := Analyze(c)
	return URPReport{
		Timestamp:                     Timestamp(c.Time),
		UnderReplicatedPartitionCount: len(a.UnderReplicated),
		Details:                       a.UnderReplicated,
		OfflinePartitions:             a.Offline,
		OfflineBrokerIDs:              a.OfflineBrokerIDs,
		Recommendations:               urpAdvice(a, c.ConfigErr),
	}
}

func urpAdvice(a Analysis, configErr string) []string {
	var out []string
	if len(a.OfflineBrokerIDs) > 0 {
		out = append(out, fmt.Sprintf("Broker(s) %s are offline or fenced: restart them or check their logs and network; until they return, their replicas cannot catch up.", joinIDs(a.OfflineBrokerIDs)))
	}
	if len(a.Offline) > 0 {
		out = append(out, fmt.Sprintf("%d partition(s) are offline (%s): no leader can serve them, so producers and consumers of these topics are blocked. Bring the replicas' brokers back; use unclean leader election only if you accept data loss.", len(a.Offline), joinTopics(refTopics(a.Offline))))
	}
	if len(a.UnderReplicated) > 0 {
		lagging := map[int32]bool{}
		var topics []string
		minISR := 0
		var minISRTopics []string
		for _, d := range a.UnderReplicated {
			for _, id := range d.MissingReplicas {
				lagging[id] = true
			}
			topics = append(topics, d.Topic)
			if d.UnderMinISR {
				minISR++
				minISRTopics = append(minISRTopics, d.Topic)
			}
		}
		out = append(out, fmt.Sprintf("%d partition(s) of %s are under-replicated; broker(s) %s are missing from their ISR. Check those brokers' health (disk, network, GC pauses, replica fetcher errors) and replica.lag.time.max.ms.",
			len(a.UnderReplicated), joinTopics(topics), joinIDs(sortedIDs(lagging))))
		if minISR > 0 {
			out = append(out, fmt.Sprintf("%d partition(s) of %s are below min.insync.replicas: producers using acks=all fail on them until the ISR grows back.", minISR, joinTopics(minISRTopics)))
		}
		out = append(out, "If a reassignment is in progress, under-replication is expected until it completes; otherwise run the troubleshoot_replication prompt or describe_topic for the affected topics.")
	}
	if configErr != "" {
		out = append(out, "min.insync.replicas could not be read ("+configErr+"), so partitions below it are not flagged.")
	}
	if len(out) == 0 {
		out = append(out, "All partitions are fully replicated and every broker is online; nothing to do.")
	}
	return out
}

// LagReport is the stream-mcp://consumer-lag-report report.
type LagReport struct {
	Timestamp         string         `json:"timestamp"`
	LagThreshold      int64          `json:"lag_threshold"`
	GroupCount        int            `json:"group_count"`
	GroupsWithHighLag int            `json:"groups_with_high_lag"`
	GroupSummary      []GroupSummary `json:"group_summary"`
	HighLagDetails    []LagDetail    `json:"high_lag_details"`
	Recommendations   []string       `json:"recommendations"`
	Errors            []string       `json:"errors"`
}

// GroupSummary summarises one group's lag.
type GroupSummary struct {
	GroupID      string `json:"group_id"`
	State        string `json:"state"`
	ProtocolType string `json:"protocol_type"`
	// Type is classic, consumer (KIP-848, group.protocol=consumer) or share
	// (KIP-932).
	Type string `json:"type"`
	// MemberCount and TotalLag are null when the group's members and lag
	// cannot be read (Unavailable): absent data is not zero.
	MemberCount *int   `json:"member_count"`
	TopicCount  int    `json:"topic_count"`
	TotalLag    *int64 `json:"total_lag"`
	HasHighLag  bool   `json:"has_high_lag"`
	// PartitionsWithoutCommit counts assigned partitions the group has never
	// committed: they have no lag figure and are left out of total_lag.
	PartitionsWithoutCommit int `json:"partitions_without_commit"`
	// PartitionsWithErrors counts partitions whose lag could not be computed
	// (for example no leader to ask for the log-end offset).
	PartitionsWithErrors int    `json:"partitions_with_errors"`
	Error                string `json:"error"`
	// Unavailable says what this server cannot read for the group's type
	// (share groups: members and lag), absent when everything was read.
	Unavailable string `json:"unavailable,omitempty"`
}

// LagDetail is one partition whose lag is above the threshold.
type LagDetail struct {
	GroupID       string `json:"group_id"`
	Topic         string `json:"topic"`
	Partition     int32  `json:"partition"`
	CurrentOffset int64  `json:"current_offset"`
	LogEndOffset  int64  `json:"log_end_offset"`
	Lag           int64  `json:"lag"`
}

// NewLagReport computes per-group lag. Lag is log-end offset minus the
// committed offset; partitions without a commit or without a log-end offset
// are counted separately and never added to total_lag; a negative lag (a
// commit ahead of the log end, e.g. after truncation) adds 0. A group is
// high-lag when any partition's lag is strictly above threshold.
func NewLagReport(g *Groups, threshold int64) LagReport {
	r := LagReport{
		Timestamp:      Timestamp(g.Time),
		LagThreshold:   threshold,
		GroupSummary:   []GroupSummary{},
		HighLagDetails: []LagDetail{},
		Errors:         []string{},
	}
	if g.Err != "" {
		r.Errors = append(r.Errors, g.Err)
	}
	var idleWithLag, stableHigh, rebalancing, erred []string
	for _, grp := range g.Groups {
		s := GroupSummary{
			GroupID:      grp.ID,
			State:        grp.State,
			ProtocolType: grp.ProtocolType,
			Type:         grp.Type,
			Error:        grp.Err,
			Unavailable:  grp.Unavailable,
		}
		var total int64
		topics := map[string]bool{}
		committed := map[string]map[int32]bool{} // every partition with an offset entry
		for _, o := range grp.Offsets {
			topics[o.Topic] = true
			if committed[o.Topic] == nil {
				committed[o.Topic] = map[int32]bool{}
			}
			committed[o.Topic][o.Partition] = true
			switch {
			case o.Committed < 0:
				s.PartitionsWithoutCommit++
				continue
			case o.Err != "" || o.LogEnd < 0:
				s.PartitionsWithErrors++
			default:
				lag := o.LogEnd - o.Committed
				if lag > 0 {
					total += lag
				}
				if lag > threshold {
					s.HasHighLag = true
					r.HighLagDetails = append(r.HighLagDetails, LagDetail{
						GroupID: grp.ID, Topic: o.Topic, Partition: o.Partition,
						CurrentOffset: o.Committed, LogEndOffset: o.LogEnd, Lag: lag,
					})
				}
			}
		}
		for _, m := range grp.Members {
			for t, ps := range m.Assigned {
				topics[t] = true
				for _, p := range ps {
					if !committed[t][p] {
						s.PartitionsWithoutCommit++
					}
				}
			}
		}
		s.TopicCount = len(topics)
		if grp.Unavailable == "" {
			s.MemberCount, s.TotalLag = ptr(len(grp.Members)), &total
		}
		if s.HasHighLag {
			r.GroupsWithHighLag++
		}
		switch {
		case grp.Err != "":
			erred = append(erred, grp.ID)
		case s.HasHighLag && (grp.State == "Empty" || len(grp.Members) == 0 && grp.State != "Stable"):
			idleWithLag = append(idleWithLag, grp.ID)
		case s.HasHighLag && grp.State == "Stable":
			stableHigh = append(stableHigh, grp.ID)
		case s.HasHighLag:
			rebalancing = append(rebalancing, grp.ID)
		}
		r.GroupSummary = append(r.GroupSummary, s)
	}
	r.GroupCount = len(r.GroupSummary)
	sort.Slice(r.GroupSummary, func(i, j int) bool { return r.GroupSummary[i].GroupID < r.GroupSummary[j].GroupID })
	sort.Slice(r.HighLagDetails, func(i, j int) bool {
		a, b := r.HighLagDetails[i], r.HighLagDetails[j]
		if a.GroupID != b.GroupID {
			return a.GroupID < b.GroupID
		}
		return lessTP(a.Topic, a.Partition, b.Topic, b.Partition)
	})
	slices.Sort(idleWithLag)
	slices.Sort(stableHigh)
	slices.Sort(rebalancing)
	slices.Sort(erred)
	if len(stableHigh) > 0 {
		r.Recommendations = append(r.Recommendations, fmt.Sprintf("Group(s) %s have active members but lag above %d: the consumers cannot keep up. Add consumers (up to the partition count), speed up processing, or check for a stuck partition with describe_consumer_group.", strings.Join(stableHigh, ", "), threshold))
	}
	if len(idleWithLag) > 0 {
		r.Recommendations = append(r.Recommendations, fmt.Sprintf("Group(s) %s have no active consumer and lag above %d: start their consumers, or delete the group if it is no longer used.", strings.Join(idleWithLag, ", "), threshold))
	}
	if len(rebalancing) > 0 {
		r.Recommendations = append(r.Recommendations, fmt.Sprintf("Group(s) %s are rebalancing with lag above %d: if they stay in rebalance, look for consumers that crash or exceed max.poll.interval.ms.", strings.Join(rebalancing, ", "), threshold))
	}
	if len(erred) > 0 {
		r.Recommendations = append(r.Recommendations, fmt.Sprintf("Group(s) %s could not be read completely (see their error field); retry, and check the coordinator broker if it persists.", strings.Join(erred, ", ")))
	}
	if len(r.Errors) > 0 {
		r.Recommendations = append(r.Recommendations, "Some brokers could not list their consumer groups (see errors), so this report may be incomplete.")
	}
	if len(r.Recommendations) == 0 {
		r.Recommendations = []string{fmt.Sprintf("No consumer group has a partition lagging more than %d messages; nothing to do.", threshold)}
	}
	return r
}

func lessTP(t1 string, p1 int32, t2 string, p2 int32) bool {
	if t1 != t2 {
		return t1 < t2
	}
	return p1 < p2
}

func nonNil(ids []int32) []int32 {
	if ids == nil {
		return []int32{}
	}
	return slices.Clone(ids)
}

// missing returns the replicas not in isr, in replica order.
func missing(replicas, isr []int32) []int32 {
	out := []int32{}
	for _, r := range replicas {
		if !slices.Contains(isr, r) {
			out = append(out, r)
		}
	}
	return out
}

func sortedIDs(set map[int32]bool) []int32 {
	out := make([]int32, 0, len(set))
	for id := range set {
		out = append(out, id)
	}
	slices.Sort(out)
	return out
}

func joinIDs(ids []int32) string {
	s := make([]string, len(ids))
	for i, id := range ids {
		s[i] = fmt.Sprint(id)
	}
	return strings.Join(s, ", ")
}

func refTopics(refs []PartitionRef) []string {
	out := make([]string, len(refs))
	for i, r := range refs {
		out[i] = r.Topic
	}
	return out
}

// joinTopics lists distinct topic names, at most 10, then "and N more".
func joinTopics(topics []string) string {
	u := slices.Clone(topics)
	slices.Sort(u)
	u = slices.Compact(u)
	if len(u) > 10 {
		return strings.Join(u[:10], ", ") + fmt.Sprintf(" and %d more", len(u)-10)
	}
	return strings.Join(u, ", ")
}
