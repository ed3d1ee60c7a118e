// Package report turns plain snapshots of a Kafka cluster into the four
// reports streammcp serves. It does no I/O: the kafka package fills the
// snapshots, and every rule (offline, under-replicated, lag, labels) lives
// here where table tests can reach it.
package report

import "time"

// Broker is one broker listed in cluster metadata.
type Broker struct {
	ID   int32
	Host string
	Port int32
	Rack string
}

// Partition is one partition as cluster metadata describes it.
type Partition struct {
	ID              int32
	Leader          int32   // -1 when there is none
	Replicas        []int32 // Kafka's order: the first is the preferred leader
	ISR             []int32
	OfflineReplicas []int32
	// Err is the partition's metadata error name (e.g. LEADER_NOT_AVAILABLE),
	// empty when there is none.
	Err string
}

// Topic is one topic with its partitions.
type Topic struct {
	Name       string
	Internal   bool
	Err        string // topic-level metadata error name, empty when none
	Partitions []Partition
	// MinISR is the topic's min.insync.replicas, 0 when unknown.
	MinISR int
}

// Cluster is what one Metadata (+ DescribeCluster + DescribeConfigs) read
// tells about the cluster.
type Cluster struct {
	Time         time.Time
	ClusterID    string
	ControllerID int32
	Brokers      []Broker // brokers listed in metadata
	Topics       []Topic
	// Fenced lists brokers Kafka reports as fenced (DescribeCluster v2).
	Fenced []int32
	// Expected lists the broker ids the operator expects (STREAM_EXPECTED_BROKERS).
	Expected []int32
	// ConfigErr says why min.insync.replicas could not be read ("" when it was).
	ConfigErr string
}

// Member is one member of a consumer group.
type Member struct {
	MemberID   string
	ClientID   string
	ClientHost string
	// Assigned maps topic to assigned partitions (consumer protocol only).
	Assigned map[string][]int32
}

// Offset is one partition's committed offset for a group, with the
// partition's log-end offset.
type Offset struct {
	Topic     string
	Partition int32
	Committed int64 // -1 when the group has no committed offset
	LogEnd    int64 // -1 when unknown (see Err)
	Err       string
}

// Group is one consumer group as its coordinator describes it.
type Group struct {
	ID           string
	State        string
	ProtocolType string
	Coordinator  int32
	Members      []Member
	Offsets      []Offset
	Err          string // describe/offset-fetch error, empty when none
	// Type is the group's type: classic, consumer (KIP-848) or share
	// (KIP-932).
	Type string
	// Unavailable says what could not be read for this kind of group and
	// why (share groups: members and lag), "" when everything was.
	Unavailable string
}

// Groups is the consumer-group side of the cluster.
type Groups struct {
	Time   time.Time
	Groups []Group
	// Err says why groups could not be listed completely ("" when they were).
	Err string
}
