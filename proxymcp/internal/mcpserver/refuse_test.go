package mcpserver

import (
	"fmt"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/mcpfleet/mcpfleet/proxymcp/internal/haproxy"
	"github.com/mcpfleet/mcpfleet/proxymcp/internal/haproxytest"
	"github.com/mcpfleet/mcpfleet/proxymcp/internal/runtimeapi"
)

// refusalConfig adds what the standard test configuration lacks to make
// HAProxy refuse: a backend with a static balance algorithm, a server
// without checks and a server tracking another (be_app/app1).
const refusalConfig = `
backend be_static
    balance static-rr
    server st1 127.0.0.1:1 weight 10
    server trk 127.0.0.1:2 track be_app/app1
`

// writeSnapshot is HAProxy's changeable state: snapshot's servers, maps,
// ACLs and limits, plus which checks are configured and enabled and every
// frontend's status. Health results, which move on their own, are left out.
func writeSnapshot(t *testing.T, h *haproxytest.HAProxy) string {
	t.Helper()
	var b strings.Builder
	b.WriteString(snapshot(t, h))
	for _, row := range haproxy.ParseTable(exec(t, h, "show servers state")) {
		// Bit 0x01 is "check in progress": it flips on its own.
		fmt.Fprintf(&b, "%v/%v check_state=%d agent_state=%d\n", row["be_name"], row["srv_name"],
			row["srv_check_state"].(int64)&^1, row["srv_agent_state"].(int64)&^1)
	}
	for _, r := range statRows(t, h) {
		if r.Type() == "frontend" {
			fmt.Fprintf(&b, "%s status=%s\n", r.Str("pxname"), r.Str("status"))
		}
	}
	// HAProxy 2.6 decrements a list's entry_cnt on every refused "add map"
	// or "add acl" (down to 2^64-1) while its entries stay as they were; the
	// entries themselves are compared above ("show map|acl <file>").
	return entryCount.ReplaceAllString(b.String(), "entry_cnt=N")
}

var entryCount = regexp.MustCompile(`entry_cnt=[0-9]+`)

// TestWriteToolsReportRefusals puts every write tool in a state where HAProxy
// must refuse: each call is an isError result saying it was not applied,
// with HAProxy's own words, and HAProxy's state is the same before and
// after. Refusals HAProxy answers at severity 4 or 5, or not at all (an
// empty answer to disabling a check that is not configured), are caught by
// reading the state back.
func TestWriteToolsReportRefusals(t *testing.T) {
	h := haproxytest.Run(t, haproxytest.Options{Extra: refusalConfig})
	admin := newEnv(t, h, h.Runtime("unix"), nil, Options{})
	operator := newEnv(t, h, &runtimeapi.Client{Network: "unix", Address: h.OperatorSocket, Timeout: h.Runtime("unix").Timeout}, nil, Options{})
	waitStatus(t, h, "be_app", "app3", "DOWN")
	waitStatus(t, h, "be_app", "app1", "UP")

	const notApplied = "not applied"
	type tc struct {
		tool string
		args map[string]any
		want []string // besides "not applied"
		op   bool     // through the operator-level socket
	}
	srvArgs := func(b, s string, kv ...any) map[string]any {
		m := map[string]any{"backend": b, "server": s}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i].(string)] = kv[i+1]
		}
		return m
	}
	noCheck := "health checks are not enabled on this server"
	noAgent := "agent checks are not enabled on this server"
	cases := []tc{
		// Pool.
		{tool: "add_server", args: srvArgs("be_static", "new1", "address", "127.0.0.1", "port", 9), want: []string{"Backend must use a dynamic load balancing"}},
		{tool: "add_server", args: srvArgs("be_static", "new2", "address", "::1", "port", 9, "enable", true, "check", true), want: []string{"Backend must use a dynamic load balancing"}},
		{tool: "add_server", args: srvArgs("be_app", "app1", "address", "127.0.0.1", "port", 9), want: []string{"Already exists a server with the same name"}},
		{tool: "add_server", args: srvArgs("nosuch", "x", "address", "127.0.0.1", "port", 9), want: []string{"No such backend"}},
		{tool: "del_server", args: srvArgs("be_app", "app2"), want: []string{"Only servers in maintenance mode can be deleted"}},
		{tool: "del_server", args: srvArgs("be_app", "app1"), want: []string{"cannot be removed at runtime"}},
		{tool: "del_server", args: srvArgs("be_static", "st1"), want: []string{"Only servers in maintenance mode can be deleted"}},
		{tool: "del_server", args: srvArgs("be_app", "nosuch"), want: []string{"No such server"}},
		{tool: "set_server_state", args: srvArgs("be_app", "nosuch", "state", "maint"), want: []string{"No such server"}},
		{tool: "set_server_state", args: srvArgs("nosuch", "app1", "state", "drain"), want: []string{"No such backend"}},
		{tool: "enable_server", args: srvArgs("be_app", "nosuch"), want: []string{"No such server"}},
		{tool: "disable_server", args: srvArgs("nosuch", "app1"), want: []string{"No such backend"}},
		{tool: "set_server_weight", args: srvArgs("be_static", "st1", "weight", 5), want: []string{"static LB algorithm"}},
		{tool: "set_server_weight", args: srvArgs("be_static", "st1", "weight", 256), want: []string{"static LB algorithm"}},
		{tool: "set_server_weight", args: srvArgs("be_static", "st1", "weight", "50%"), want: []string{"static LB algorithm"}},
		{tool: "set_server_weight", args: srvArgs("be_static", "st1", "weight", "200%"), want: []string{"static LB algorithm"}},
		{tool: "set_server_weight", args: srvArgs("be_static", "st1", "weight", "9"), want: []string{"static LB algorithm"}},
		{tool: "set_server_addr", args: srvArgs("be_app", "nosuch", "address", "127.0.0.2"), want: []string{"No such server"}},
		{tool: "set_server_addr", args: srvArgs("nosuch", "app1", "address", "::1", "port", 80), want: []string{"No such backend"}},
		{tool: "set_server_maxconn", args: srvArgs("be_app", "nosuch", "maxconn", 10), want: []string{"No such server"}},
		{tool: "set_frontend_maxconn", args: map[string]any{"frontend": "be_app", "maxconn": 10}, want: []string{"No such frontend"}},
		{tool: "set_frontend_maxconn", args: map[string]any{"frontend": "nosuch", "maxconn": 0}, want: []string{"No such frontend"}},
		{tool: "enable_frontend", args: map[string]any{"frontend": "be_static"}, want: []string{"No such frontend"}},
		{tool: "disable_frontend", args: map[string]any{"frontend": "nosuch"}, want: []string{"No such frontend"}},
		// Sessions and counters.
		{tool: "shutdown_session", args: map[string]any{"session_id": "0x1"}, want: []string{"No such session"}},
		{tool: "shutdown_session", args: map[string]any{"session_id": "0xdeadbeefdeadbeef"}, want: []string{"No such session"}},
		{tool: "shutdown_server_sessions", args: srvArgs("be_app", "nosuch"), want: []string{"No such server"}},
		{tool: "clear_counters", args: map[string]any{"all": true}, want: []string{"Permission denied"}, op: true},
		// Maps and ACLs: missing, wrong kind, wrong pattern type.
		{tool: "add_map_entry", args: map[string]any{"map": "/nosuch.map", "key": "k", "value": "v"}, want: []string{"Unknown map identifier"}},
		{tool: "add_map_entry", args: map[string]any{"map": "#99", "key": "k", "value": "v"}, want: []string{"Unknown map identifier"}},
		{tool: "add_map_entry", args: map[string]any{"map": h.ACLFile, "key": "k", "value": "v"}, want: []string{"is not a valid IPv4 or IPv6 address"}},
		{tool: "set_map_entry", args: map[string]any{"map": h.MapFile, "key": "nokey.example", "value": "be_api"}, want: []string{"entry not found"}},
		{tool: "set_map_entry", args: map[string]any{"map": "/nosuch.map", "key": "www.example.com", "value": "be_api"}, want: []string{"Unknown map identifier"}},
		{tool: "del_map_entry", args: map[string]any{"map": h.MapFile, "key": "nokey.example"}, want: []string{"Key not found"}},
		{tool: "clear_map", args: map[string]any{"map": "/nosuch.map"}, want: []string{"Unknown map identifier"}},
		{tool: "replace_map", args: map[string]any{"map": "/nosuch.map", "entries": []any{map[string]any{"key": "a", "value": "b"}}}, want: []string{"Unknown map identifier"}},
		{tool: "replace_map", args: map[string]any{"map": h.ACLFile, "entries": []any{map[string]any{"key": "a", "value": "b"}}}, want: []string{"Unknown map identifier"}},
		{tool: "add_acl_entry", args: map[string]any{"acl": h.MapFile, "pattern": "192.0.2.99"}, want: []string{"shared with a map containing samples"}},
		{tool: "add_acl_entry", args: map[string]any{"acl": h.ACLFile, "pattern": "not-an-ip"}, want: []string{"is not a valid IPv4 or IPv6 address"}},
		{tool: "add_acl_entry", args: map[string]any{"acl": "/nosuch.acl", "pattern": "192.0.2.99"}, want: []string{"Unknown ACL identifier"}},
		{tool: "del_acl_entry", args: map[string]any{"acl": h.ACLFile, "pattern": "203.0.113.7"}, want: []string{"Key not found"}},
		{tool: "clear_acl", args: map[string]any{"acl": "#999"}, want: []string{"Unknown ACL identifier"}},
		// Health checks and agents: HAProxy's warnings (severity 4) and
		// silent acceptances are caught by reading the state back.
		{tool: "set_server_check_port", args: srvArgs("be_static", "st1", "port", 80), want: []string{noCheck, "has check port 0"}},
		{tool: "set_server_check_port", args: srvArgs("be_static", "st1", "port", 65535), want: []string{noCheck, "has check port 0"}},
		{tool: "set_server_check_port", args: srvArgs("be_static", "trk", "port", 1), want: []string{noCheck}},
		{tool: "enable_health", args: srvArgs("be_static", "st1"), want: []string{"Health check was not configured on this server"}},
		{tool: "disable_health", args: srvArgs("be_static", "st1"), want: []string{"has no health check configured"}},
		{tool: "set_server_health", args: srvArgs("be_static", "trk", "health", "down"), want: []string{"cannot change health on a tracking server"}},
		{tool: "set_server_health", args: srvArgs("be_app", "nosuch", "health", "up"), want: []string{"No such server"}},
		{tool: "enable_agent", args: srvArgs("be_app", "app1"), want: []string{"Agent was not configured on this server"}},
		{tool: "disable_agent", args: srvArgs("be_app", "app1"), want: []string{"has no agent check configured"}},
		{tool: "disable_agent", args: srvArgs("be_static", "st1"), want: []string{"has no agent check configured"}},
		{tool: "set_server_agent", args: srvArgs("be_app", "app1", "state", "up"), want: []string{noAgent}},
		{tool: "set_server_agent", args: srvArgs("be_app", "app1", "address", "127.0.0.9"), want: []string{noAgent, "has agent address -"}},
		{tool: "set_server_agent", args: srvArgs("be_app", "app1", "port", 9999), want: []string{noAgent, "has agent port 0"}},
		{tool: "set_server_agent", args: srvArgs("be_app", "app1", "send", "hello agent"), want: []string{noAgent}},
	}

	covered := map[string]bool{}
	for _, c := range cases {
		covered[c.tool] = true
	}
	var missing []string
	for name, tool := range admin.srv.ListTools() {
		if ro := tool.Tool.Annotations.ReadOnlyHint; ro != nil && !*ro && !covered[name] && !lifecycleCovered[name] {
			missing = append(missing, name)
		}
	}
	sort.Strings(missing)
	if len(missing) > 0 {
		t.Errorf("write tools without a refusal case: %v", missing)
	}

	for _, c := range cases {
		t.Run(c.tool, func(t *testing.T) {
			e := admin
			if c.op {
				e = operator
			}
			before := writeSnapshot(t, h)
			msg := e.fail(t, c.tool, c.args, append([]string{notApplied}, c.want...)...)
			if strings.Contains(msg, `"changed":true`) {
				t.Errorf("error carries a success: %s", msg)
			}
			if after := writeSnapshot(t, h); after != before {
				t.Errorf("%s(%v) changed HAProxy's state:\n%s", c.tool, c.args, diffLines(before, after))
			}
		})
	}
}

// TestWriteToolsPartialChange: a change of several steps that HAProxy stops
// part way says which steps took effect, and they did.
func TestWriteToolsPartialChange(t *testing.T) {
	h := haproxytest.Run(t, haproxytest.Options{Extra: refusalConfig})
	e := newEnv(t, h, h.Runtime("unix"), nil, Options{})
	// be_static/trk tracks app1, so HAProxy refuses to delete it only at the
	// last step, after the drain and the maintenance took effect.
	msg := e.fail(t, "del_server", map[string]any{"backend": "be_app", "server": "app1", "drain": true, "drain_timeout": 1},
		"partially applied", "set to drain", "put in maintenance", "cannot be removed at runtime")
	if strings.Contains(msg, "nothing was changed") {
		t.Errorf("a partial change claims nothing changed: %s", msg)
	}
	if got := serverStatus(t, h, "be_app", "app1"); got != "MAINT" {
		t.Errorf("app1 status = %q, want MAINT as the error says", got)
	}
}

// TestWriteToolsAlreadyInState: HAProxy's "nothing to do" answers (severity
// 5 for frontends, 4 for addresses) are successes with changed=false, and
// its warning-level success for addresses is a change.
func TestWriteToolsAlreadyInState(t *testing.T) {
	h := haproxytest.Run(t, haproxytest.Options{Extra: refusalConfig})
	e := newEnv(t, h, h.Runtime("unix"), nil, Options{})
	out := e.call(t, "enable_frontend", map[string]any{"frontend": "fe_api"})
	if out["changed"] != false || !strings.Contains(fmt.Sprint(out["message"]), "already enabled") {
		t.Errorf("enable_frontend on an open frontend = %v", out)
	}
	out = e.call(t, "disable_frontend", map[string]any{"frontend": "fe_api"})
	if out["changed"] != true {
		t.Errorf("disable_frontend = %v", out)
	}
	out = e.call(t, "disable_frontend", map[string]any{"frontend": "fe_api"})
	if out["changed"] != false || !strings.Contains(fmt.Sprint(out["state_read_back"]), "PAUSED") {
		t.Errorf("disable_frontend twice = %v", out)
	}
	out = e.call(t, "set_server_addr", map[string]any{"backend": "be_static", "server": "st1", "address": "127.0.0.1", "port": 1})
	if out["changed"] != false || !strings.Contains(fmt.Sprint(out["message"]), "no need to change") {
		t.Errorf("set_server_addr to the same address = %v", out)
	}
	out = e.call(t, "set_server_addr", map[string]any{"backend": "be_static", "server": "st1", "address": "::1", "port": 3})
	if out["changed"] != true || !strings.Contains(fmt.Sprint(out["message"]), "IP changed from") {
		t.Errorf("set_server_addr = %v", out)
	}
	row := haproxy.ParseTable(exec(t, h, "show servers state be_static"))[0]
	if row["srv_addr"] != "::1" || row["srv_port"] != int64(3) {
		t.Errorf("st1 after set_server_addr: %v", row)
	}
	out = e.call(t, "set_server_check_port", map[string]any{"backend": "be_app", "server": "app1", "port": 8080})
	if out["changed"] != true {
		t.Errorf("set_server_check_port on a checked server = %v", out)
	}
}

// diffLines lists the lines that differ between two snapshots.
func diffLines(a, b string) string {
	al, bl := strings.Split(a, "\n"), strings.Split(b, "\n")
	var d strings.Builder
	for i := 0; i < max(len(al), len(bl)); i++ {
		var x, y string
		if i < len(al) {
			x = al[i]
		}
		if i < len(bl) {
			y = bl[i]
		}
		if x != y {
			fmt.Fprintf(&d, "- %s\n+ %s\n", x, y)
		}
	}
	return d.String()
}
