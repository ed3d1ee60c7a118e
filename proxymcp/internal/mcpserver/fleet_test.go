package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcpfleet/mcpfleet/proxymcp/internal/fleet"
	"github.com/mcpfleet/mcpfleet/proxymcp/internal/haproxy"
	"github.com/mcpfleet/mcpfleet/proxymcp/internal/haproxytest"
	"github.com/mcpfleet/mcpfleet/proxymcp/internal/runtimeapi"
	"github.com/mcpfleet/mcpfleet/shared/approval"
	"github.com/mcpfleet/mcpfleet/shared/audit"
	"github.com/mcpfleet/mcpfleet/shared/toolcall"
)

// fleetBackend: servers without health checks, whose state only commands
// change (the standard backends' checks can pass through "UP 1/2" on a
// loaded machine, a real but transient divergence tests must not rely on).
const fleetBackend = `
backend be_fleet
    balance roundrobin
    server f1 127.0.0.1:9 weight 100
    server f2 127.0.0.1:9 weight 50
`

// fleetEnv is proxymcp in fleet mode over real HAProxy processes, driven
// through mcp-go's in-process client (the pipeline's schema check included).
type fleetEnv struct {
	t     *testing.T
	hs    []*haproxytest.HAProxy
	names []string
	c     *client.Client
}

func startHAProxies(t *testing.T, extras ...string) []*haproxytest.HAProxy {
	t.Helper()
	haproxytest.Require(t, "")
	var hs []*haproxytest.HAProxy
	for _, extra := range extras {
		// One after the other: concurrent starts could pick the same free port.
		hs = append(hs, haproxytest.Run(t, haproxytest.Options{Extra: fleetBackend + extra}))
	}
	return hs
}

func newFleetEnv(t *testing.T, hs []*haproxytest.HAProxy, cfg toolcall.Config) *fleetEnv {
	t.Helper()
	e := &fleetEnv{t: t, hs: hs}
	var ms []fleet.Member
	for i, h := range hs {
		name := fmt.Sprintf("lb%d", i+1)
		e.names = append(e.names, name)
		ms = append(ms, fleet.Member{Name: name, ReadTimeout: 10 * time.Second,
			Client: haproxy.New(&runtimeapi.Client{Network: "unix", Address: h.Socket, Timeout: 5 * time.Second, MaxConns: 2}, statsClient(h))})
	}
	f, err := fleet.New(ms...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	if cfg.Audit.Dest == "" {
		cfg.Audit.Dest = "off"
	}
	_, c := pipelineClient(t, cfg, "fleet-test", func(p *toolcall.Pipeline) {
		New(f, Options{ServerVersion: "test"}).Register(p)
	})
	e.c = c
	return e
}

func noApprovalConfig() toolcall.Config {
	return toolcall.Config{Approval: approval.Config{Policy: approval.None}, Audit: audit.Config{Dest: "off"}}
}

func (e *fleetEnv) call(name string, args map[string]any) (*mcp.CallToolResult, map[string]any) {
	e.t.Helper()
	req := mcp.CallToolRequest{}
	req.Params.Name, req.Params.Arguments = name, args
	ctx, cancel := context.WithTimeout(e.t.Context(), time.Minute)
	defer cancel()
	res, err := e.c.CallTool(ctx, req)
	if err != nil {
		e.t.Fatalf("call %s: %v", name, err)
	}
	var out map[string]any
	if res.StructuredContent != nil {
		b, _ := json.Marshal(res.StructuredContent)
		_ = json.Unmarshal(b, &out)
	}
	return res, out
}

func (e *fleetEnv) ok(name string, args map[string]any) map[string]any {
	e.t.Helper()
	res, out := e.call(name, args)
	if res.IsError {
		e.t.Fatalf("%s(%v): %s", name, args, text(res))
	}
	return out
}

// fleetState is what a write could change on one instance, read straight
// from HAProxy, without what health checks move on their own (operational
// states, and the backends' weights that follow them).
func fleetState(t *testing.T, h *haproxytest.HAProxy) string {
	t.Helper()
	var b strings.Builder
	for _, row := range haproxy.ParseTable(exec(t, h, "show servers state")) {
		for _, c := range []string{"be_name", "srv_name", "srv_addr", "srv_port", "srv_admin_state", "srv_uweight", "srv_iweight", "srv_check_port"} {
			fmt.Fprintf(&b, "%s=%v ", c, row[c])
		}
		b.WriteString("\n")
	}
	for _, cmd := range []string{"show map " + h.MapFile, "show acl " + h.ACLFile} {
		fmt.Fprintf(&b, "== %s\n%s\n", cmd, exec(t, h, cmd))
	}
	return b.String()
}

func summaries(out map[string]any) []string {
	var s []string
	ds, _ := out["divergence"].([]any)
	for _, d := range ds {
		s = append(s, d.(map[string]any)["summary"].(string))
	}
	return s
}

func adminOf(t *testing.T, h *haproxytest.HAProxy, backend, server string) string {
	t.Helper()
	for _, r := range haproxy.ParseTable(exec(t, h, "show servers state "+backend)) {
		if r["srv_name"] == server {
			return haproxy.AdminStateName(r["srv_admin_state"].(int64))
		}
	}
	return "absent"
}

// Reads merge every instance's answer, each row and object carrying its
// instance; a change made behind proxymcp's back shows as divergence; one
// instance down is an error next to the others' data.
func TestFleetReads(t *testing.T) {
	hs := startHAProxies(t, "", "", "")
	e := newFleetEnv(t, hs, noApprovalConfig())

	out := e.ok("list_servers", map[string]any{"backend": "be_fleet"})
	rows := out["servers"].([]any)
	var got []string
	for _, r := range rows {
		m := r.(map[string]any)
		got = append(got, fmt.Sprint(m["instance"], " ", m["name"], " ", m["status"]))
	}
	want := []string{"lb1 f1 no check", "lb1 f2 no check", "lb2 f1 no check", "lb2 f2 no check", "lb3 f1 no check", "lb3 f2 no check"}
	if !reflect.DeepEqual(got, want) || out["count"] != float64(6) || len(out["errors"].([]any)) != 0 || len(summaries(out)) != 0 {
		t.Errorf("list_servers: %v count %v errors %v divergence %v", got, out["count"], out["errors"], summaries(out))
	}
	for i, in := range out["instances"].([]any) {
		m := in.(map[string]any)
		if m["instance"] != e.names[i] || m["source"] != "runtime_api" || m["count"] != float64(2) {
			t.Errorf("instance entry %v", m)
		}
	}

	// Behind proxymcp's back, as socat would.
	exec(t, hs[1], "set server be_fleet/f2 state drain")
	exec(t, hs[2], "set server be_fleet/f1 weight 7")
	out = e.ok("list_servers", map[string]any{"backend": "be_fleet"})
	if got := summaries(out); !reflect.DeepEqual(got, []string{
		"be_fleet/f1: lb1 weight 100, lb2 weight 100, lb3 weight 7",
		"be_fleet/f2: lb1 no check, lb2 DRAIN, lb3 no check",
	}) {
		t.Errorf("list_servers divergence %q", got)
	}
	if b, err := json.Marshal(out["divergence"]); err == nil {
		t.Logf("list_servers divergence: %s", b) // the README's excerpt
	}
	out = e.ok("get_server", map[string]any{"backend": "be_fleet", "server": "f2"})
	if got := summaries(out); !reflect.DeepEqual(got, []string{"be_fleet/f2: lb1 no check admin ready, lb2 DRAIN admin drain, lb3 no check admin ready"}) {
		t.Errorf("get_server divergence %q", got)
	}
	out = e.ok("show_servers_state", map[string]any{"backend": "be_fleet"})
	if got := summaries(out); !reflect.DeepEqual(got, []string{
		"be_fleet/f1: lb1 weight 100, lb2 weight 100, lb3 weight 7",
		"be_fleet/f2: lb1 admin ready, lb2 admin drain, lb3 admin ready",
	}) {
		t.Errorf("show_servers_state divergence %q", got)
	}
	// show_info's object (encoded once per shared answer) still carries
	// its instance, as every object of a fleet answer does.
	info := e.ok("show_info", nil)
	for i, in := range info["instances"].([]any) {
		m := in.(map[string]any)
		obj, _ := m["info"].(map[string]any)
		if m["instance"] != e.names[i] || obj["instance"] != e.names[i] || obj["Name"] != "HAProxy" || m["source"] != "runtime_api" {
			t.Errorf("show_info, instance entry %v", m)
		}
	}
	out = e.ok("show_stat", map[string]any{"proxy": "be_fleet", "format": "objects"})
	if got := summaries(out); len(got) != 2 || got[1] != "be_fleet/f2: lb1 no check, lb2 DRAIN, lb3 no check" {
		t.Errorf("show_stat divergence %q", got)
	}
	// The default, the table format: each instance's table under its
	// entry, holding that instance's rows of the objects answer, compared
	// the same way.
	res, tab := e.call("show_stat", map[string]any{"proxy": "be_fleet"})
	if res.IsError || !strings.HasSuffix(text(res), "\nrows of each instance in structuredContent.instances[].table (fields, layouts, rows)") {
		t.Errorf("show_stat table: summary %q", text(res))
	}
	if got := summaries(tab); !reflect.DeepEqual(got, summaries(out)) || tab["count"] != out["count"] || tab["rows"] != nil {
		t.Errorf("show_stat table: divergence %q (objects %q), count %v (objects %v), rows %v", got, summaries(out), tab["count"], out["count"], tab["rows"])
	}
	// The columns that stay still between the two calls (not counters).
	still := func(r map[string]any) string {
		return fmt.Sprint(r["object_type"], " ", r["pxname"], "/", r["svname"], " ", r["status"], " ", r["weight"], " ", r["act"], " ", r["bck"], " ", r["addr"])
	}
	objects := list(t, out, "rows")
	for i, in := range tab["instances"].([]any) {
		m := in.(map[string]any)
		table, _ := m["table"].(map[string]any)
		if m["instance"] != e.names[i] || m["format"] != "table" || table == nil || len(table["rows"].([]any)) != 3 || table["instance"] != nil {
			t.Errorf("show_stat table, instance entry %v", m)
			continue
		}
		var got, want []string
		for _, r := range tableRows(t, m) {
			got = append(got, still(r))
		}
		for _, r := range objects {
			if r["instance"] == e.names[i] {
				want = append(want, still(r))
			}
		}
		if !reflect.DeepEqual(got, want) || len(got) != 3 {
			t.Errorf("show_stat on %s: the table gives\n%q\nthe objects\n%q", e.names[i], got, want)
		}
	}
	// A free-text dump: each instance's text, under its name.
	if res, _ := e.call("help", map[string]any{"instance": []any{"lb1", "lb3"}}); res.IsError || !strings.Contains(text(res), "== lb1 ==\n") ||
		!strings.Contains(text(res), "== lb3 ==\n") || strings.Count(text(res), "show servers state") < 2 {
		t.Errorf("help: %.300s", text(res))
	}
	// One instance only: nothing to compare.
	out = e.ok("list_servers", map[string]any{"backend": "be_fleet", "instance": "lb2"})
	if len(out["servers"].([]any)) != 2 || len(summaries(out)) != 0 || out["instances"].([]any)[0].(map[string]any)["instance"] != "lb2" {
		t.Errorf("instance lb2: %v", out)
	}
	// Maps, by id (each test HAProxy has its own file path).
	maps := e.ok("list_maps", map[string]any{"instance": "lb1"})
	ref := fmt.Sprintf("#%v", maps["maps"].([]any)[0].(map[string]any)["id"])
	exec(t, hs[0], "set map "+ref+" api.example.com be_app")
	out = e.ok("show_map", map[string]any{"map": ref})
	if got := summaries(out); !reflect.DeepEqual(got, []string{"api.example.com: lb1 value be_app, lb2 value be_api, lb3 value be_api"}) {
		t.Errorf("show_map divergence %q", got)
	}
	out = e.ok("get_map", map[string]any{"map": ref, "key": "api.example.com", "instance": []any{"lb1", "lb3"}})
	if got := summaries(out); !reflect.DeepEqual(got, []string{"api.example.com: lb1 value be_app, lb3 value be_api"}) {
		t.Errorf("get_map divergence %q", got)
	}

	// ACLs: a pattern removed on one instance behind proxymcp's back.
	acls := e.ok("list_acls", map[string]any{"instance": "lb1"})
	var aref string
	for _, a := range acls["acls"].([]any) {
		if m := a.(map[string]any); strings.HasSuffix(fmt.Sprint(m["file"]), haproxytest.ACLFileName) {
			aref = fmt.Sprintf("#%v", m["id"])
		}
	}
	exec(t, hs[2], "del acl "+aref+" 192.0.2.10")
	out = e.ok("show_acl", map[string]any{"acl": aref})
	if got := summaries(out); !reflect.DeepEqual(got, []string{"192.0.2.10: lb1 present, lb2 present, lb3 absent"}) {
		t.Errorf("show_acl divergence %q", got)
	}
	out = e.ok("get_acl", map[string]any{"acl": aref, "value": "192.0.2.10"})
	if got := summaries(out); !reflect.DeepEqual(got, []string{"192.0.2.10: lb1 match true, lb2 match true, lb3 match false"}) {
		t.Errorf("get_acl divergence %q", got)
	}

	// A server missing on one instance: present elsewhere, absent there.
	exec(t, hs[0], "set server be_fleet/f2 state maint")
	exec(t, hs[0], "del server be_fleet/f2")
	out = e.ok("get_server", map[string]any{"backend": "be_fleet", "server": "f2", "instance": []any{"lb1", "lb3"}})
	if got := summaries(out); !reflect.DeepEqual(got, []string{"be_fleet/f2: lb1 absent, lb3 present"}) {
		t.Errorf("get_server absent %q (errors %v)", got, out["errors"])
	}

	// One instance down: its error next to the others' data.
	_ = hs[2].Stop()
	res, out = e.call("list_servers", map[string]any{"backend": "be_fleet"})
	if res.IsError || len(out["servers"].([]any)) != 3 {
		t.Fatalf("one down: %s", text(res))
	}
	errs := out["errors"].([]any)
	if len(errs) != 1 || errs[0].(map[string]any)["instance"] != "lb3" || !strings.Contains(text(res), "error on lb3:") {
		t.Errorf("errors %v; text %s", errs, text(res))
	}
	// Only the down one chosen: an error result.
	res, _ = e.call("list_servers", map[string]any{"instance": "lb3"})
	if !res.IsError || !strings.Contains(text(res), "lb3:") {
		t.Errorf("down only: %s", text(res))
	}
	// An unknown instance is refused, naming the known ones; nothing is asked.
	res, _ = e.call("list_servers", map[string]any{"instance": "lb9"})
	if !res.IsError || !strings.Contains(text(res), `argument "instance" must be one of "lb1", "lb2", "lb3", "all"`) || !strings.Contains(text(res), "nothing was run") {
		t.Errorf("unknown instance: %s", text(res))
	}
}

// A write fans out to every instance and reports each; a server missing on
// one instance makes an error result naming who changed and who did not,
// with the calls that complete and undo it; every write says where the
// change is lost on reload.
func TestFleetWrites(t *testing.T) {
	dir := t.TempDir()
	persist := fmt.Sprintf("\nglobal\n    server-state-file %s/state\n\nbackend be_persist\n    load-server-state-from-file global\n    server p1 127.0.0.1:9\n", dir)
	hs := startHAProxies(t, persist, "", "\nbackend be_pair\n    balance roundrobin\n    server s2 127.0.0.1:9\n")
	exec(t, hs[0], "add server be_fleet/s1 127.0.0.1:9")
	exec(t, hs[1], "add server be_fleet/s1 127.0.0.1:9")
	e := newFleetEnv(t, hs, noApprovalConfig())

	out := e.ok("set_server_state", map[string]any{"backend": "be_fleet", "server": "f2", "state": "drain"})
	if got := out["applied_on"]; !reflect.DeepEqual(got, []any{"lb1", "lb2", "lb3"}) {
		t.Errorf("applied_on %v", got)
	}
	for i, o := range out["outcomes"].([]any) {
		m := o.(map[string]any)
		if m["instance"] != e.names[i] || m["applied"] != true || !reflect.DeepEqual(m["sent"], []any{"set server be_fleet/f2 state drain"}) {
			t.Errorf("outcome %v", m)
		}
		if got := adminOf(t, hs[i], "be_fleet", "f2"); got != "drain" {
			t.Errorf("%s: f2 is %s", e.names[i], got)
		}
	}
	if p, _ := out["persistence"].(string); p != "Runtime change: lost on reload on lb2, lb3 (server-state-file and load-server-state-from-file are not configured there). Maps and ACLs changed at run time are lost on reload everywhere." {
		t.Errorf("persistence %q", p)
	}

	// s1 exists on lb1 and lb2 only (added at run time, stays in maint).
	res, out := e.call("set_server_state", map[string]any{"backend": "be_fleet", "server": "s1", "state": "ready"})
	if !res.IsError {
		t.Fatalf("partial change reported as success: %s", text(res))
	}
	msg := text(res)
	for _, w := range []string{
		"partially applied — changed on lb1, lb2; NOT changed on lb3",
		"lb3: ",
		"No such server",
		`call set_server_state {"backend":"be_fleet","instance":["lb3"],"server":"s1","state":"ready"}`,
		`to undo it, call set_server_state {"backend":"be_fleet","instance":["lb1","lb2"],"server":"s1","state":"maint"}`,
		"Runtime change: lost on reload on lb2, lb3",
	} {
		if !strings.Contains(msg, w) {
			t.Errorf("error lacks %q:\n%s", w, msg)
		}
	}
	if !reflect.DeepEqual(out["applied_on"], []any{"lb1", "lb2"}) || !reflect.DeepEqual(out["not_applied_on"], []any{"lb3"}) {
		t.Errorf("structured %v", out)
	}
	if adminOf(t, hs[0], "be_fleet", "s1") != "ready" || adminOf(t, hs[1], "be_fleet", "s1") != "ready" || adminOf(t, hs[2], "be_fleet", "s1") != "absent" {
		t.Error("HAProxy state does not match the report")
	}

	// Nowhere: not applied on any instance.
	before := []string{fleetState(t, hs[0]), fleetState(t, hs[1]), fleetState(t, hs[2])}
	res, _ = e.call("set_server_weight", map[string]any{"backend": "be_fleet", "server": "nosuch", "weight": 3})
	if !res.IsError || !strings.Contains(text(res), "not applied on any instance, nothing was changed") {
		t.Errorf("nowhere: %s", text(res))
	}
	for i, h := range hs {
		if got := fleetState(t, h); got != before[i] {
			t.Errorf("lb%d changed:\n%s\n%s", i+1, before[i], got)
		}
	}

	// version_info per instance, with whether changes survive a reload.
	out = e.ok("version_info", nil)
	for i, in := range out["instances"].([]any) {
		m := in.(map[string]any)
		sp := m["state_persistence"].(map[string]any)
		if m["instance"] != e.names[i] || m["haproxy_version"] != hs[i].Version || sp["configured"] != (i == 0) || sp["known"] != true {
			t.Errorf("version_info %s: %v %v", e.names[i], m["haproxy_version"], sp)
		}
	}
}

// With the approval policy, one approval covers the set of instances the
// preview named, and the preview shows every instance's state; the code
// does not work for another set.
func TestFleetApproval(t *testing.T) {
	hs := startHAProxies(t, "", "")
	cfg := toolcall.Config{Approval: approval.Config{Policy: approval.Change, Fallback: approval.Confirm, Timeout: time.Minute},
		Audit: audit.Config{Dest: filepath.Join(t.TempDir(), "audit.log")}}
	e := newFleetEnv(t, hs, cfg)
	args := map[string]any{"backend": "be_fleet", "server": "f1", "state": "maint"}
	res, _ := e.call("set_server_state", args)
	p := preview(t, res)
	for _, w := range []string{"lb1: ", "lb2: ", "one approval for all of them"} {
		if !strings.Contains(p.Summary, w) {
			t.Errorf("preview lacks %q: %s", w, p.Summary)
		}
	}
	st, _ := p.State.(map[string]any)
	if _, ok := st["lb1"]; !ok || st["lb2"] == nil || !strings.Contains(p.Target, "lb1 (unix://") || !strings.Contains(p.Target, "lb2 (unix://") {
		t.Errorf("preview state %v target %s", p.State, p.Target)
	}
	if adminOf(t, hs[0], "be_fleet", "f1") != "ready" || adminOf(t, hs[1], "be_fleet", "f1") != "ready" {
		t.Fatal("changed before approval")
	}
	code := codeOf(t, res)
	// The same code for one instance only: refused, nothing changes.
	bad := map[string]any{"backend": "be_fleet", "server": "f1", "state": "maint", "instance": "lb1", "confirm": code}
	if res, _ := e.call("set_server_state", bad); !res.IsError {
		t.Errorf("code accepted for another set: %s", text(res))
	}
	if adminOf(t, hs[0], "be_fleet", "f1") != "ready" {
		t.Fatal("changed by a refused code")
	}
	good := map[string]any{"backend": "be_fleet", "server": "f1", "state": "maint", "confirm": code}
	out := e.ok("set_server_state", good)
	if !reflect.DeepEqual(out["applied_on"], []any{"lb1", "lb2"}) || adminOf(t, hs[0], "be_fleet", "f1") != "maint" || adminOf(t, hs[1], "be_fleet", "f1") != "maint" {
		t.Errorf("approved change: %v", out)
	}
}

// Version-dependent tools are checked per instance: on a 2.6 and a 3.2
// instance, list_add_server_keywords (3.2+) answers from the 3.2 one and
// names the 2.6 one's version in its error; version_info gives each.
func TestFleetVersionsPerInstance(t *testing.T) {
	haproxytest.Require(t, "3.2")
	old := haproxytest.Run(t, haproxytest.Options{Extra: fleetBackend})
	cur := haproxytest.Run(t, haproxytest.Options{Version: "3.2", Extra: fleetBackend})
	e := newFleetEnv(t, []*haproxytest.HAProxy{old, cur}, noApprovalConfig())
	out := e.ok("version_info", nil)
	var got []string
	for _, in := range out["instances"].([]any) {
		m := in.(map[string]any)
		got = append(got, fmt.Sprint(m["instance"], " ", m["haproxy_version"]))
	}
	if want := []string{"lb1 " + old.Version, "lb2 " + cur.Version}; !reflect.DeepEqual(got, want) {
		t.Errorf("versions %v, want %v", got, want)
	}
	res, out := e.call("list_add_server_keywords", nil)
	if res.IsError {
		t.Fatalf("one instance has it, yet an error: %s", text(res))
	}
	errs := out["errors"].([]any)
	if len(errs) != 1 || errs[0].(map[string]any)["instance"] != "lb1" || !strings.Contains(fmt.Sprint(errs[0]), "needs HAProxy 3.2") ||
		len(out["instances"].([]any)) != 1 || out["instances"].([]any)[0].(map[string]any)["instance"] != "lb2" {
		t.Errorf("list_add_server_keywords: %v", out)
	}
}
