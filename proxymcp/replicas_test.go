package main

import (
	"context"
	"strings"
	"testing"

	"github.com/mcpfleet/mcpfleet/proxymcp/internal/haproxytest"
	"github.com/mcpfleet/mcpfleet/shared/e2e"
	"github.com/mcpfleet/mcpfleet/shared/state/redistest"
)

// TestReplicaPairSharesCodes: two proxymcp processes sharing
// MCP_APPROVAL_SECRET and a real Redis (MCP_STATE_URL) in front of one
// real HAProxy. A code issued by A runs once on B; its replay is refused on
// A and B, and again after both restart; HAProxy saw the change once (the
// entry put back after the first run is still there).
func TestReplicaPairSharesCodes(t *testing.T) {
	bin := e2e.Build(t, ".")
	h := haproxytest.Run(t, haproxytest.Options{})
	rs := redistest.Start(t, true)
	env := append(haproxyEnv(h, "unix"), "MCP_STATE_URL="+rs.URL(),
		"MCP_APPROVAL_SECRET=proxymcp-replicas-secret-0123456789abcdef", "LOG_LEVEL=warn")
	ctx := context.Background()
	const victim = "victim.replicas.example"
	if _, err := h.Exec(ctx, "add map "+h.MapFile+" "+victim+" be_api"); err != nil {
		t.Fatal(err)
	}
	present := func() bool {
		out, err := h.Exec(ctx, "show map "+h.MapFile)
		if err != nil {
			t.Fatal(err)
		}
		return strings.Contains(out, victim)
	}
	pair := func() [2]*e2e.HTTPServer {
		return [2]*e2e.HTTPServer{e2e.StartHTTP(t, bin, env), e2e.StartHTTP(t, bin, env)}
	}
	replicas := pair()
	args := map[string]any{"map": h.MapFile, "key": victim}
	a := e2e.Connect(t, replicas[0].MCPURL(), nil)
	first := e2e.CallTool(t, a, "del_map_entry", args)
	text := e2e.Text(first)
	i := strings.Index(text, `confirm: "`)
	if i < 0 {
		t.Fatalf("no confirmation code: %s", text)
	}
	text = text[i+len(`confirm: "`):]
	code := text[:strings.Index(text, `"`)]
	withCode := map[string]any{"map": h.MapFile, "key": victim, "confirm": code}

	b := e2e.Connect(t, replicas[1].MCPURL(), nil)
	if res := e2e.CallTool(t, b, "del_map_entry", withCode); res.IsError {
		t.Fatalf("A's code on B: %s", e2e.Text(res))
	}
	if present() {
		t.Fatal("the confirmed call on B did not delete the entry")
	}
	// Put it back: a replay would delete it again.
	if _, err := h.Exec(ctx, "add map "+h.MapFile+" "+victim+" be_api"); err != nil {
		t.Fatal(err)
	}
	refused := func(when string, replicas [2]*e2e.HTTPServer) {
		t.Helper()
		for n, r := range replicas {
			res := e2e.CallTool(t, e2e.Connect(t, r.MCPURL(), nil), "del_map_entry", withCode)
			if !res.IsError || !strings.Contains(e2e.Text(res), "already been used") {
				t.Errorf("%s, replica %c: %s, want refused as already used", when, 'A'+n, e2e.Text(res))
			}
		}
		if !present() {
			t.Fatalf("%s: the change ran again", when)
		}
	}
	refused("replayed", replicas)
	for _, r := range replicas {
		r.Stop()
	}
	refused("after both restarted", pair())
}
