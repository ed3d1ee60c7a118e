package report

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"
)

var t0 = time.Date(2026, 1, 2, 3, 4, 5, 6e6, time.UTC)

func brokers(ids ...int32) []Broker {
	var out []Broker
	for _, id := range ids {
		out = append(out, Broker{ID: id, Host: "127.0.0.1", Port: 9092 + id})
	}
	return out
}

func part(id, leader int32, replicas, isr []int32) Partition {
	return Partition{ID: id, Leader: leader, Replicas: replicas, ISR: isr}
}

func TestAnalyzeAndLabels(t *testing.T) {
	tests := []struct {
		name          string
		c             Cluster
		live          int
		offlineIDs    []int32
		urp, offline  int
		underMinISR   int
		broker, parts string
		health        string
	}{
		{
			name: "healthy",
			c: Cluster{ControllerID: 1, Brokers: brokers(0, 1, 2), Topics: []Topic{
				{Name: "a", Partitions: []Partition{part(0, 0, []int32{0, 1, 2}, []int32{0, 1, 2})}},
			}},
			live: 3, offlineIDs: []int32{}, broker: Healthy, parts: Healthy, health: Healthy,
		},
		{
			name: "under-replicated is a warning and not offline",
			c: Cluster{ControllerID: 1, Brokers: brokers(0, 1, 2), Topics: []Topic{
				{Name: "a", MinISR: 1, Partitions: []Partition{part(0, 0, []int32{0, 1, 2}, []int32{0, 1})}},
			}},
			live: 3, offlineIDs: []int32{}, urp: 1, broker: Healthy, parts: Warning, health: Warning,
		},
		{
			name: "below min.insync.replicas is critical",
			c: Cluster{ControllerID: 1, Brokers: brokers(0, 1, 2), Topics: []Topic{
				{Name: "a", MinISR: 2, Partitions: []Partition{part(0, 0, []int32{0, 1, 2}, []int32{0})}},
			}},
			live: 3, offlineIDs: []int32{}, urp: 1, underMinISR: 1, broker: Healthy, parts: Critical, health: Critical,
		},
		{
			name: "leaderless partition is offline, not under-replicated",
			c: Cluster{ControllerID: 1, Brokers: brokers(0, 1, 2), Topics: []Topic{
				{Name: "a", Partitions: []Partition{{ID: 0, Leader: -1, Replicas: []int32{0, 1}, ISR: []int32{}, Err: "LEADER_NOT_AVAILABLE"}}},
			}},
			live: 3, offlineIDs: []int32{}, offline: 1, broker: Healthy, parts: Critical, health: Critical,
		},
		{
			name: "leader-not-available error with a leader id is offline",
			c: Cluster{ControllerID: 1, Brokers: brokers(0, 1, 2), Topics: []Topic{
				{Name: "a", Partitions: []Partition{{ID: 0, Leader: 0, Replicas: []int32{}, ISR: []int32{}, Err: "LEADER_NOT_AVAILABLE"}}},
			}},
			live: 3, offlineIDs: []int32{}, offline: 1, broker: Healthy, parts: Critical, health: Critical,
		},
		{
			name: "dead broker: referenced, offline replica, leader not live",
			c: Cluster{ControllerID: 0, Brokers: brokers(0, 2), Topics: []Topic{
				{Name: "a", Partitions: []Partition{
					{ID: 0, Leader: 1, Replicas: []int32{1, 2, 0}, ISR: []int32{2, 0}, OfflineReplicas: []int32{1}},
					{ID: 1, Leader: 2, Replicas: []int32{2, 0, 1}, ISR: []int32{2, 0}, OfflineReplicas: []int32{1}},
				}},
			}},
			live: 2, offlineIDs: []int32{1}, urp: 1, offline: 1, broker: Warning, parts: Critical, health: Critical,
		},
		{
			name: "fenced broker is not live",
			c: Cluster{ControllerID: 0, Brokers: brokers(0, 1, 2), Fenced: []int32{2}, Topics: []Topic{
				{Name: "a", Partitions: []Partition{part(0, 0, []int32{0, 1}, []int32{0, 1})}},
			}},
			live: 2, offlineIDs: []int32{2}, broker: Warning, parts: Healthy, health: Warning,
		},
		{
			name: "expected broker missing with no replicas",
			c:    Cluster{ControllerID: 0, Brokers: brokers(0, 1), Expected: []int32{0, 1, 5}},
			live: 2, offlineIDs: []int32{5}, broker: Warning, parts: Healthy, health: Warning,
		},
		{
			name: "no controller is critical",
			c:    Cluster{ControllerID: -1, Brokers: brokers(0)},
			live: 1, offlineIDs: []int32{}, broker: Healthy, parts: Healthy, health: Critical,
		},
		{
			name: "no live broker is critical",
			c:    Cluster{ControllerID: -1},
			live: 0, offlineIDs: []int32{}, broker: Critical, parts: Healthy, health: Critical,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.c.Time = t0
			a := Analyze(&tt.c)
			if a.LiveCount != tt.live {
				t.Errorf("live = %d, want %d", a.LiveCount, tt.live)
			}
			if !reflect.DeepEqual(a.OfflineBrokerIDs, tt.offlineIDs) {
				t.Errorf("offline ids = %v, want %v", a.OfflineBrokerIDs, tt.offlineIDs)
			}
			if len(a.UnderReplicated) != tt.urp || len(a.Offline) != tt.offline || a.UnderMinISR != tt.underMinISR {
				t.Errorf("urp=%d offline=%d underMinISR=%d, want %d %d %d", len(a.UnderReplicated), len(a.Offline), a.UnderMinISR, tt.urp, tt.offline, tt.underMinISR)
			}
			if a.BrokerStatus() != tt.broker || a.PartitionStatus() != tt.parts {
				t.Errorf("broker=%s partitions=%s, want %s %s", a.BrokerStatus(), a.PartitionStatus(), tt.broker, tt.parts)
			}
			o := NewOverview(&tt.c)
			if o.HealthStatus != tt.health {
				t.Errorf("health = %s, want %s", o.HealthStatus, tt.health)
			}
			if o.BrokerCount != tt.live || o.UnderReplicatedPartitions != tt.urp || o.OfflinePartitions != tt.offline {
				t.Errorf("overview counts %+v", o)
			}
			u := NewURPReport(&tt.c)
			if u.UnderReplicatedPartitionCount != len(u.Details) {
				t.Errorf("count %d != len(details) %d", u.UnderReplicatedPartitionCount, len(u.Details))
			}
			if len(u.Recommendations) == 0 {
				t.Error("no recommendations")
			}
			h := NewHealthCheck(&tt.c, &Groups{Time: t0}, "", 1000)
			if h.BrokerStatus.TotalBrokers != tt.live+len(tt.offlineIDs) || h.BrokerStatus.OfflineBrokers != len(tt.offlineIDs) {
				t.Errorf("broker status %+v", h.BrokerStatus)
			}
			if h.OverallStatus != tt.health {
				t.Errorf("overall = %s, want %s", h.OverallStatus, tt.health)
			}
		})
	}
}

func TestWorst(t *testing.T) {
	tests := []struct {
		in   []string
		want string
	}{
		{nil, Healthy},
		{[]string{Healthy, Unknown}, Unknown},
		{[]string{Unknown, Warning}, Warning},
		{[]string{Warning, Critical, Unknown}, Critical},
	}
	for _, tt := range tests {
		if got := Worst(tt.in...); got != tt.want {
			t.Errorf("Worst(%v) = %s, want %s", tt.in, got, tt.want)
		}
	}
}

func TestURPDetailsAndAdvice(t *testing.T) {
	c := &Cluster{Time: t0, ControllerID: 0, Brokers: brokers(0, 1, 2), Topics: []Topic{
		{Name: "b", MinISR: 2, Partitions: []Partition{part(1, 2, []int32{2, 0, 1}, []int32{2})}},
		{Name: "a", Partitions: []Partition{part(3, 0, []int32{0, 1, 2}, []int32{0, 2}), part(0, 1, []int32{1, 2, 0}, []int32{1, 2, 0})}},
	}}
	u := NewURPReport(c)
	want := []URPDetail{
		{Topic: "a", Partition: 3, Leader: 0, ReplicaCount: 3, ISRCount: 2, Replicas: []int32{0, 1, 2}, ISR: []int32{0, 2}, MissingReplicas: []int32{1}},
		{Topic: "b", Partition: 1, Leader: 2, ReplicaCount: 3, ISRCount: 1, Replicas: []int32{2, 0, 1}, ISR: []int32{2}, MissingReplicas: []int32{0, 1}, MinISR: 2, UnderMinISR: true},
	}
	if !reflect.DeepEqual(u.Details, want) {
		t.Fatalf("details\n got %+v\nwant %+v", u.Details, want)
	}
	all := strings.Join(u.Recommendations, "\n")
	for _, s := range []string{"a, b", "broker(s) 0, 1", "below min.insync.replicas"} {
		if !strings.Contains(all, s) {
			t.Errorf("recommendations lack %q:\n%s", s, all)
		}
	}
	healthy := NewURPReport(&Cluster{Time: t0, ControllerID: 0, Brokers: brokers(0)})
	if len(healthy.Details) != 0 || healthy.Details == nil || !strings.Contains(healthy.Recommendations[0], "nothing to do") {
		t.Errorf("healthy report: %+v", healthy)
	}
}

func TestLagReport(t *testing.T) {
	g := &Groups{Time: t0, Groups: []Group{
		{ID: "zeta", State: "Stable", ProtocolType: "consumer", Members: []Member{{MemberID: "m1", Assigned: map[string][]int32{"t": {0, 1, 2}, "u": {0}}}}, Offsets: []Offset{
			{Topic: "t", Partition: 1, Committed: 10, LogEnd: 2011},
			{Topic: "t", Partition: 0, Committed: 5, LogEnd: 1005}, // exactly the threshold: not high
			// partition 2 and u/0 never committed
		}},
		{ID: "alpha", State: "Empty", Offsets: []Offset{
			{Topic: "t", Partition: 0, Committed: 0, LogEnd: 1500},
			{Topic: "t", Partition: 1, Committed: 50, LogEnd: 40},                             // negative: adds 0
			{Topic: "t", Partition: 2, Committed: 3, LogEnd: -1, Err: "LEADER_NOT_AVAILABLE"}, // error: excluded
			{Topic: "v", Partition: 0, Committed: -1, LogEnd: 10},                             // no commit: excluded
		}},
		{ID: "mid", State: "Empty", Offsets: []Offset{{Topic: "t", Partition: 0, Committed: 900, LogEnd: 1000}}},
	}}
	r := NewLagReport(g, 1000)
	if r.GroupCount != 3 || r.GroupsWithHighLag != 2 || r.LagThreshold != 1000 {
		t.Fatalf("counts: %+v", r)
	}
	wantSummary := []GroupSummary{
		{GroupID: "alpha", State: "Empty", MemberCount: ptr(0), TopicCount: 2, TotalLag: ptr[int64](1500), HasHighLag: true, PartitionsWithoutCommit: 1, PartitionsWithErrors: 1},
		{GroupID: "mid", State: "Empty", MemberCount: ptr(0), TopicCount: 1, TotalLag: ptr[int64](100)},
		{GroupID: "zeta", State: "Stable", ProtocolType: "consumer", MemberCount: ptr(1), TopicCount: 2, TotalLag: ptr[int64](3001), HasHighLag: true, PartitionsWithoutCommit: 2},
	}
	if !reflect.DeepEqual(r.GroupSummary, wantSummary) {
		t.Fatalf("summary\n got %+v\nwant %+v", r.GroupSummary, wantSummary)
	}
	wantDetails := []LagDetail{
		{GroupID: "alpha", Topic: "t", Partition: 0, CurrentOffset: 0, LogEndOffset: 1500, Lag: 1500},
		{GroupID: "zeta", Topic: "t", Partition: 1, CurrentOffset: 10, LogEndOffset: 2011, Lag: 2001},
	}
	if !reflect.DeepEqual(r.HighLagDetails, wantDetails) {
		t.Fatalf("details\n got %+v\nwant %+v", r.HighLagDetails, wantDetails)
	}
	all := strings.Join(r.Recommendations, "\n")
	if !strings.Contains(all, "zeta have active members") || !strings.Contains(all, "alpha have no active consumer") {
		t.Errorf("recommendations: %s", all)
	}
	// A higher threshold clears every group.
	r = NewLagReport(g, 5000)
	if r.GroupsWithHighLag != 0 || len(r.HighLagDetails) != 0 || !strings.Contains(r.Recommendations[0], "nothing to do") {
		t.Errorf("threshold 5000: %+v", r)
	}
}

func TestEmptyArraysAreNotNull(t *testing.T) {
	c := &Cluster{Time: t0, ControllerID: 0, Brokers: brokers(0)}
	g := &Groups{Time: t0}
	for name, v := range map[string]any{
		"overview": NewOverview(c),
		"health":   NewHealthCheck(c, g, "", 1000),
		"urp":      NewURPReport(c),
		"lag":      NewLagReport(g, 1000),
	} {
		b, _ := json.Marshal(v)
		if strings.Contains(string(b), "null") {
			t.Errorf("%s has a null: %s", name, b)
		}
		if !strings.Contains(string(b), `"timestamp":"2026-01-02T03:04:05.006Z"`) {
			t.Errorf("%s timestamp: %s", name, b)
		}
	}
}

func TestHealthConsumerStatus(t *testing.T) {
	c := &Cluster{Time: t0, ControllerID: 0, Brokers: brokers(0)}
	high := &Groups{Time: t0, Groups: []Group{{ID: "g", State: "Empty", Offsets: []Offset{{Topic: "t", Committed: 0, LogEnd: 5000}}}}}
	tests := []struct {
		name    string
		g       *Groups
		err     string
		status  string
		overall string
	}{
		{"no groups", &Groups{Time: t0}, "", Healthy, Healthy},
		{"high lag", high, "", Warning, Warning},
		{"groups unreadable", nil, "list groups: broker down", Unknown, Unknown},
		{"partial listing", &Groups{Time: t0, Err: "broker 1: down"}, "", Unknown, Unknown},
		{"partial listing with high lag", &Groups{Time: t0, Groups: high.Groups, Err: "broker 1: down"}, "", Warning, Warning},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := NewHealthCheck(c, tt.g, tt.err, 1000)
			if h.ConsumerStatus.Status != tt.status || h.OverallStatus != tt.overall {
				t.Errorf("consumer=%s overall=%s, want %s %s", h.ConsumerStatus.Status, h.OverallStatus, tt.status, tt.overall)
			}
			if tt.status == Unknown && h.ConsumerStatus.Error == "" {
				t.Error("unknown status without an error")
			}
		})
	}
}
