package main

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/mcpfleet/mcpfleet/proxymcp/internal/haproxytest"
	"github.com/mcpfleet/mcpfleet/shared/e2e"
)

// TestFleetEndToEnd: the binary with PROXY_INSTANCES over stdio, per-instance
// runtime API and stats page, credentials given once: every tool has an
// "instance" argument, list_servers merges both instances with "instance"
// on every row, and a drain made on one instance only is the divergence.
func TestFleetEndToEnd(t *testing.T) {
	a := haproxytest.Run(t, haproxytest.Options{})
	b := haproxytest.Run(t, haproxytest.Options{})
	bin := e2e.Build(t, ".")
	cs := e2e.Stdio(t, bin, []string{
		"PROXY_INSTANCES=lb1,lb2",
		"PROXY_LB1_RUNTIME_URL=unix://" + a.Socket, "PROXY_LB1_STATS_URL=" + a.StatsURL,
		"PROXY_LB2_RUNTIME_URL=tcp://" + b.RuntimeTCP, "PROXY_LB2_STATS_URL=" + b.StatsURL,
		"PROXY_STATS_USERNAME=" + haproxytest.StatsUser, "PROXY_STATS_PASSWORD=" + haproxytest.StatsPassword,
		"MCP_APPROVAL=none",
	})
	surface := e2e.List(t, cs)
	raw, _ := json.Marshal(surface)
	if n := strings.Count(string(raw), `"instance":{`); n < 60 {
		t.Errorf("%d tools have an instance argument", n)
	}
	if _, err := b.Exec(context.Background(), "set server be_app/app1 state drain"); err != nil {
		t.Fatal(err)
	}
	res := e2e.CallTool(t, cs, "list_servers", map[string]any{"backend": "be_app"})
	var out struct {
		Servers []struct {
			Instance string `json:"instance"`
			Name     string `json:"name"`
		} `json:"servers"`
		Divergence []struct {
			Object      string                       `json:"object"`
			Differences map[string]map[string]string `json:"differences"`
		} `json:"divergence"`
	}
	body, _ := json.Marshal(res.StructuredContent)
	if err := json.Unmarshal(body, &out); err != nil || res.IsError {
		t.Fatalf("list_servers: %v %s", err, e2e.Text(res))
	}
	per := map[string]int{}
	for _, s := range out.Servers {
		per[s.Instance]++
	}
	if per["lb1"] != 3 || per["lb2"] != 3 {
		t.Errorf("rows per instance %v", per)
	}
	found := false
	for _, d := range out.Divergence {
		if d.Object == "be_app/app1" && strings.HasPrefix(d.Differences["status"]["lb1"], "UP") && d.Differences["status"]["lb2"] == "DRAIN" {
			found = true
		}
	}
	if !found {
		t.Errorf("drain on lb2 not in the divergence: %s", body)
	}
}
