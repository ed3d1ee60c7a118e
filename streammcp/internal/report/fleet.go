package report

import (
	"encoding/json"
	"fmt"
	"time"
)

// Clustered is a report of one named cluster: the report's own fields with
// cluster first. The seed URIs serve reports bare; the
// stream-mcp://clusters/{cluster}/... URIs serve them Clustered.
type Clustered struct {
	Cluster string
	Report  any // Overview, HealthCheck, URPReport or LagReport
}

// MarshalJSON writes {"cluster": …, <the report's fields>}.
func (c Clustered) MarshalJSON() ([]byte, error) {
	b, err := json.Marshal(c.Report)
	if err != nil {
		return nil, err
	}
	if len(b) < 2 || b[0] != '{' {
		return nil, fmt.Errorf("report of cluster %s is not a JSON object", c.Cluster)
	}
	name, _ := json.Marshal(c.Cluster)
	out := append([]byte(`{"cluster":`), name...)
	if string(b) != "{}" {
		out = append(out, ',')
	}
	return append(out, b[1:]...), nil
}

// Fleet is the stream-mcp://clusters document: every configured cluster at
// a glance, in configuration order (the default cluster first).
type Fleet struct {
	Timestamp string `json:"timestamp"`
	// HealthStatus is the worst cluster health_status (extra).
	HealthStatus string       `json:"health_status"`
	Clusters     []FleetEntry `json:"clusters"`
}

// FleetEntry is one cluster of the fleet document. Figures that could not
// be read are null and error says why; error is "" when everything was read.
type FleetEntry struct {
	Cluster string `json:"cluster"`
	// HealthStatus is the cluster's health-check overall_status (brokers,
	// controller, partitions and consumer lag); unknown when the cluster
	// could not be read.
	HealthStatus              string  `json:"health_status"`
	BrokerCount               *int    `json:"broker_count"`
	OfflineBrokerIDs          []int32 `json:"offline_broker_ids"`
	UnderReplicatedPartitions *int    `json:"under_replicated_partitions"`
	OfflinePartitions         *int    `json:"offline_partitions"`
	GroupsWithHighLag         *int    `json:"groups_with_high_lag"`
	Error                     string  `json:"error"`
}

// NewFleetEntry summarises one cluster. c is nil when its metadata could
// not be read (clusterErr says why); g is nil when its groups could not be
// read (groupsErr says why). threshold is the cluster's lag threshold.
func NewFleetEntry(name string, c *Cluster, clusterErr string, g *Groups, groupsErr string, threshold int64) FleetEntry {
	e := FleetEntry{Cluster: name, HealthStatus: Unknown, OfflineBrokerIDs: []int32{}}
	if c == nil {
		e.Error = clusterErr
		if e.Error == "" {
			e.Error = "cluster metadata could not be read"
		}
		return e
	}
	h := NewHealthCheck(c, g, groupsErr, threshold)
	e.HealthStatus = h.OverallStatus
	e.BrokerCount = ptr(h.BrokerStatus.LiveBrokers)
	e.OfflineBrokerIDs = h.BrokerStatus.OfflineBrokerIDs
	e.UnderReplicatedPartitions = ptr(h.PartitionStatus.UnderReplicatedPartitions)
	e.OfflinePartitions = ptr(h.PartitionStatus.OfflinePartitions)
	if g != nil {
		e.GroupsWithHighLag = ptr(h.ConsumerStatus.GroupsWithHighLag)
	}
	if h.ConsumerStatus.Error != "" {
		e.Error = "consumer groups: " + h.ConsumerStatus.Error
	}
	return e
}

// NewFleet assembles the fleet document from its entries.
func NewFleet(t time.Time, entries []FleetEntry) Fleet {
	f := Fleet{Timestamp: Timestamp(t), HealthStatus: Healthy, Clusters: entries}
	if f.Clusters == nil {
		f.Clusters = []FleetEntry{}
	}
	for _, e := range entries {
		f.HealthStatus = Worst(f.HealthStatus, e.HealthStatus)
	}
	return f
}

func ptr[T any](v T) *T { return &v }
