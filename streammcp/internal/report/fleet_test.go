package report

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestClusteredPutsClusterFirstAndKeepsEveryField(t *testing.T) {
	c := &Cluster{Time: t0, ControllerID: 0, Brokers: brokers(0)}
	bare, _ := json.Marshal(NewOverview(c))
	got, err := json.Marshal(Clustered{Cluster: "prod", Report: NewOverview(c)})
	if err != nil {
		t.Fatal(err)
	}
	want := `{"cluster":"prod",` + string(bare[1:])
	if string(got) != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
	if _, err := json.Marshal(Clustered{Cluster: "x", Report: []int{1}}); err == nil || !strings.Contains(err.Error(), "not a JSON object") {
		t.Fatalf("a non-object report: %v", err)
	}
	b, err := json.MarshalIndent(Clustered{Cluster: "a\"b", Report: struct{}{}}, "", "  ")
	if err != nil || string(b) != "{\n  \"cluster\": \"a\\\"b\"\n}" {
		t.Fatalf("empty report: %s %v", b, err)
	}
}

func TestFleetEntry(t *testing.T) {
	healthy := &Cluster{Time: t0, ControllerID: 0, Brokers: brokers(0, 1, 2)}
	degraded := &Cluster{Time: t0, ControllerID: 0, Brokers: brokers(0, 1), Expected: []int32{0, 1, 2},
		Topics: []Topic{{Name: "t", Partitions: []Partition{part(0, 0, []int32{0, 2}, []int32{0}), part(1, 2, []int32{2}, []int32{2})}}}}
	lagging := &Groups{Time: t0, Groups: []Group{{ID: "g", State: "Empty", Offsets: []Offset{{Topic: "t", Committed: 0, LogEnd: 5000}}}}}
	tests := []struct {
		name string
		c    *Cluster
		cerr string
		g    *Groups
		gerr string
		want string
	}{
		{"healthy", healthy, "", &Groups{Time: t0}, "",
			`{"cluster":"c","health_status":"healthy","broker_count":3,"offline_broker_ids":[],"under_replicated_partitions":0,"offline_partitions":0,"groups_with_high_lag":0,"error":""}`},
		{"lagging", healthy, "", lagging, "",
			`{"cluster":"c","health_status":"warning","broker_count":3,"offline_broker_ids":[],"under_replicated_partitions":0,"offline_partitions":0,"groups_with_high_lag":1,"error":""}`},
		{"broker offline", degraded, "", &Groups{Time: t0}, "",
			`{"cluster":"c","health_status":"critical","broker_count":2,"offline_broker_ids":[2],"under_replicated_partitions":1,"offline_partitions":1,"groups_with_high_lag":0,"error":""}`},
		{"unreachable", nil, "read cluster metadata from Kafka: no broker answered", nil, "",
			`{"cluster":"c","health_status":"unknown","broker_count":null,"offline_broker_ids":[],"under_replicated_partitions":null,"offline_partitions":null,"groups_with_high_lag":null,"error":"read cluster metadata from Kafka: no broker answered"}`},
		{"unreachable without a message", nil, "", nil, "",
			`{"cluster":"c","health_status":"unknown","broker_count":null,"offline_broker_ids":[],"under_replicated_partitions":null,"offline_partitions":null,"groups_with_high_lag":null,"error":"cluster metadata could not be read"}`},
		{"groups unreadable", healthy, "", nil, "list groups: timeout",
			`{"cluster":"c","health_status":"unknown","broker_count":3,"offline_broker_ids":[],"under_replicated_partitions":0,"offline_partitions":0,"groups_with_high_lag":null,"error":"consumer groups: list groups: timeout"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, _ := json.Marshal(NewFleetEntry("c", tt.c, tt.cerr, tt.g, tt.gerr, 1000))
			if string(b) != tt.want {
				t.Errorf("got  %s\nwant %s", b, tt.want)
			}
		})
	}
}

func TestFleetHealthIsTheWorstCluster(t *testing.T) {
	f := NewFleet(t0, []FleetEntry{{HealthStatus: Healthy}, {HealthStatus: Unknown}, {HealthStatus: Warning}})
	if f.HealthStatus != Warning || f.Timestamp != "2026-01-02T03:04:05.006Z" {
		t.Errorf("%+v", f)
	}
	if f := NewFleet(t0, nil); f.HealthStatus != Healthy || f.Clusters == nil {
		t.Errorf("empty fleet %+v", f)
	}
}
