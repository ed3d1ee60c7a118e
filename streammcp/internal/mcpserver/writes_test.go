package mcpserver_test

import (
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpfleet/mcpfleet/shared/approval"
	"github.com/mcpfleet/mcpfleet/shared/envconfig"
	"github.com/mcpfleet/mcpfleet/streammcp/internal/config"
	"github.com/mcpfleet/mcpfleet/streammcp/internal/kafkatest"
	"github.com/mcpfleet/mcpfleet/streammcp/internal/mcpserver"
)

// TestWriteSwitchesAcrossAFleet: production read-only next to a writable
// staging with allowlists, configured through the STREAM_* variables.
// Every refusal names the variable or list that refused it and sends no
// request to either cluster.
func TestWriteSwitchesAcrossAFleet(t *testing.T) {
	var prod, staging *kafkatest.Cluster
	var wg sync.WaitGroup
	wg.Go(func() { prod = startChanges(t) })
	wg.Go(func() { staging = startChanges(t) })
	wg.Wait()
	env := map[string]string{
		"STREAM_CLUSTERS": "prod,staging", "STREAM_BROKERS": strings.Join(prod.Addrs(), ","),
		"STREAM_STAGING_BROKERS":      strings.Join(staging.Addrs(), ","),
		"STREAM_STAGING_ALLOW_WRITES": "true", "STREAM_STAGING_WRITE_TOPICS": "click*,orders-*", "STREAM_WRITE_GROUPS": "clicks-*",
	}
	r := envconfig.New(func(k string) string { return env[k] })
	cfg := config.FromEnv(r)
	if err := r.Err(); err != nil {
		t.Fatal(err)
	}
	var clusters []mcpserver.Cluster
	for _, cc := range cfg.Clusters {
		clusters = append(clusters, mcpserver.Cluster{Name: cc.Name, Client: newClient(t, cc.Brokers, 5*time.Second), LagThreshold: 1000, Writes: &cc.Writes})
	}
	e := newChangeEnv(t, staging, approval.Config{Policy: approval.None}, clusters...)

	reset := map[string]any{"group_id": groupSink, "topic": topicClicks, "to_earliest": true}
	for _, tc := range []struct {
		name string
		tool string
		args map[string]any
		want []string
	}{
		{"prod is read-only (default cluster)", "reset_consumer_group_offsets", reset,
			[]string{"cluster prod is read-only: STREAM_PROD_ALLOW_WRITES is unset and STREAM_ALLOW_WRITES is not true", "set STREAM_PROD_ALLOW_WRITES=true"}},
		{"prod is read-only (named)", "produce_message", map[string]any{"cluster": "prod", "topic": topicClicks, "value": "x"},
			[]string{"cluster prod is read-only"}},
		{"prod dry run too", "reset_consumer_group_offsets", with(reset, "cluster", "prod", "dryRun", true),
			[]string{"cluster prod is read-only"}},
		{"topic outside the list", "reset_consumer_group_offsets", map[string]any{"cluster": "staging", "group_id": groupSink, "topic": "payments", "to_earliest": true},
			[]string{`write to topic "payments" on cluster staging`, "it matches none of STREAM_STAGING_WRITE_TOPICS=click*,orders-*"}},
		{"group outside the list", "reset_consumer_group_offsets", map[string]any{"cluster": "staging", "group_id": "billing", "topic": topicClicks, "to_earliest": true},
			[]string{`write to consumer group "billing" on cluster staging`, "STREAM_WRITE_GROUPS=clicks-*"}},
		{"create_topic outside the list", "create_topic", map[string]any{"cluster": "staging", "name": "payments-v2"},
			[]string{"STREAM_STAGING_WRITE_TOPICS=click*,orders-*"}},
	} {
		prod.ResetCounts()
		staging.ResetCounts()
		res := e.call(tc.tool, tc.args)
		for _, w := range tc.want {
			if !res.IsError || !strings.Contains(text(res), w) {
				t.Errorf("%s: lacks %q: %s", tc.name, w, text(res))
			}
		}
		if n := prod.Total() + staging.Total(); n != 0 {
			t.Errorf("%s: %d requests sent (prod %v, staging %v)", tc.name, n, prod.Counts(), staging.Counts())
		}
	}
	// Allowed on staging: it runs there, and prod's group is untouched.
	prodBefore := committedVia(t, prod)
	if res := e.call("reset_consumer_group_offsets", with(reset, "cluster", "staging")); res.IsError {
		t.Fatal(text(res))
	}
	if got := e.committed(groupSink); got["clicks/0"] != 0 {
		t.Fatalf("staging committed %v", got)
	}
	if after := committedVia(t, prod); after != prodBefore {
		t.Fatalf("prod moved: %s → %s", prodBefore, after)
	}
	// Refusals are audited as refused, with the cluster's target.
	refused := 0
	for _, r := range e.records() {
		if r["approval"] == "refused" {
			refused++
		}
	}
	if refused != 6 {
		t.Errorf("%d refused records", refused)
	}
}

func committedVia(t *testing.T, kc *kafkatest.Cluster) string {
	t.Helper()
	e := &changeEnv{t: t, kc: kc}
	cl, err := kc.Client()
	if err != nil {
		t.Fatal(err)
	}
	e.adm = kadmClient(cl)
	return e.snapshot(groupSink)
}
