// Package kafkatest is the in-process Kafka cluster (fakekafka) as
// streammcp's unit, integration and end-to-end tests use it: the cluster
// with the faults and probes only tests need (request counts, latency,
// stalls, fencing, stopped brokers) and helpers that tie a cluster to a test.
package kafkatest

import "github.com/mcpfleet/mcpfleet/streammcp/internal/fakekafka"

// Cluster is a running in-process cluster with the test-only faults.
type Cluster struct {
	*fakekafka.Cluster
}

type (
	// Options configure a cluster (fakekafka.Options).
	Options = fakekafka.Options
	// User is a SASL user of the cluster.
	User = fakekafka.User
	// Member is a live consumer-group member.
	Member = fakekafka.Member
)

// The seeded scenarios' topics and groups (see fakekafka).
const (
	TopicOrders          = fakekafka.TopicOrders
	TopicPayments        = fakekafka.TopicPayments
	TopicAudit           = fakekafka.TopicAudit
	TopicEvents          = fakekafka.TopicEvents
	GroupOrdersProcessor = fakekafka.GroupOrdersProcessor
	GroupOrdersReplay    = fakekafka.GroupOrdersReplay
	GroupPaymentsAudit   = fakekafka.GroupPaymentsAudit
	GroupAuditArchiver   = fakekafka.GroupAuditArchiver
	GroupEventsSink      = fakekafka.GroupEventsSink
)

// UnderReplicate drops the last replica from the ISR of topic/partition.
var UnderReplicate = fakekafka.UnderReplicate

// Start starts a cluster.
func Start(o Options) (*Cluster, error) {
	c, err := fakekafka.Start(o)
	if err != nil {
		return nil, err
	}
	return &Cluster{c}, nil
}
