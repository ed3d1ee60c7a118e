package toolcall_test

import (
	"maps"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpfleet/mcpfleet/shared/approval"
	"github.com/mcpfleet/mcpfleet/shared/toolcall"
)

// decisions collects Options.OnDecision calls as "tool decision" counts.
type decisions struct {
	mu sync.Mutex
	n  map[string]int
}

func (d *decisions) record(tool, decision string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.n == nil {
		d.n = map[string]int{}
	}
	d.n[tool+" "+decision]++
}

func (d *decisions) counts() map[string]int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return maps.Clone(d.n)
}

// TestEveryDecisionIsCounted: each approval decision (policy, person,
// confirmation_code, declined, timeout, refused, pending) reaches
// OnDecision (mcpfleet_approvals_total) exactly once per call, with the tool
// and the very word of the audit outcome record; dry runs and read calls
// decide nothing and count nothing.
func TestEveryDecisionIsCounted(t *testing.T) {
	type step struct {
		tool string
		args map[string]any
		// code: pass the confirmation code the previous step returned.
		code bool
	}
	for _, tc := range []struct {
		name    string
		cfg     toolcall.Config
		person  *answer
		version string
		steps   []step
		want    map[string]int
	}{
		{name: "policy", cfg: toolcall.Config{}, steps: []step{{tool: "set_value", args: map[string]any{"key": "a", "value": 5}}},
			want: map[string]int{"set_value policy": 1}},
		{name: "policy none", cfg: toolcall.Config{Approval: approval.Config{Policy: approval.None}},
			steps: []step{{tool: "delete_value", args: map[string]any{"key": "a"}}}, want: map[string]int{"delete_value policy": 1}},
		{name: "person", person: ptr(accept), steps: []step{{tool: "delete_value", args: map[string]any{"key": "b"}}},
			want: map[string]int{"delete_value person": 1}},
		{name: "declined", person: ptr(decline), steps: []step{{tool: "delete_value", args: map[string]any{"key": "b"}}},
			want: map[string]int{"delete_value declined": 1}},
		{name: "cancelled", person: ptr(cancel), steps: []step{{tool: "delete_value", args: map[string]any{"key": "b"}}},
			want: map[string]int{"delete_value declined": 1}},
		{name: "timeout", cfg: toolcall.Config{Approval: approval.Config{Timeout: time.Second}}, person: ptr(silent),
			steps: []step{{tool: "delete_value", args: map[string]any{"key": "b"}}}, want: map[string]int{"delete_value timeout": 1}},
		{name: "pending then confirmation code, replay refused", steps: []step{
			{tool: "delete_value", args: map[string]any{"key": "b"}},
			{tool: "delete_value", args: map[string]any{"key": "b"}, code: true},
			{tool: "delete_value", args: map[string]any{"key": "b"}, code: true},
		}, want: map[string]int{"delete_value pending": 1, "delete_value confirmation_code": 1, "delete_value refused": 1}},
		{name: "fallback refuse", cfg: toolcall.Config{Approval: approval.Config{Fallback: approval.Refuse}},
			steps: []step{{tool: "delete_value", args: map[string]any{"key": "b"}}}, want: map[string]int{"delete_value refused": 1}},
		{name: "invalid arguments and planner errors are refusals", steps: []step{
			{tool: "set_value", args: map[string]any{"key": "NOT VALID", "value": 1}},
			{tool: "delete_value", args: map[string]any{"key": ""}},
		}, want: map[string]int{"set_value refused": 1, "delete_value refused": 1}},
		{name: "input required then person", person: ptr(accept), version: "2026-07-28",
			steps: []step{{tool: "delete_value", args: map[string]any{"key": "b"}}},
			want:  map[string]int{"delete_value pending": 1, "delete_value person": 1}},
		{name: "dry run and reads count nothing", steps: []step{
			{tool: "delete_value", args: map[string]any{"key": "b", "dryRun": true}},
			{tool: "set_value", args: map[string]any{"key": "a", "value": 1, "dryRun": true}},
			{tool: "get_value", args: map[string]any{"key": "a"}},
		}, want: map[string]int{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var d decisions
			version := tc.version
			if version == "" {
				version = "2025-11-25"
			}
			e := newSDKEnvVersion(t, tc.cfg, tc.person, version, d.record)
			var last string
			for _, s := range tc.steps {
				args := maps.Clone(s.args)
				if s.code {
					i := strings.Index(last, `confirm: "`)
					if i < 0 {
						t.Fatalf("no confirmation code in %q", last)
					}
					i += len(`confirm: "`)
					args["confirm"] = last[i : i+strings.Index(last[i:], `"`)]
				}
				_, text := e.call(t, s.tool, args)
				if !s.code {
					last = text
				}
			}
			got := d.counts()
			if got == nil {
				got = map[string]int{}
			}
			if !maps.Equal(got, tc.want) {
				t.Errorf("decisions %v, want %v", got, tc.want)
			}
			// The count is the audit trail's own word, record for record.
			fromAudit := map[string]int{}
			for _, r := range e.records(t) {
				if r["event"] == "outcome" && r["approval"] != nil && r["approval"] != "" {
					fromAudit[r["tool"].(string)+" "+r["approval"].(string)]++
				}
			}
			if !maps.Equal(got, fromAudit) {
				t.Errorf("decisions %v, audit outcome records %v", got, fromAudit)
			}
		})
	}
}

func ptr(a answer) *answer { return &a }
