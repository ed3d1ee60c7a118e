package mcpserver

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcpfleet/mcpfleet/proxymcp/internal/haproxytest"
	"github.com/mcpfleet/mcpfleet/proxymcp/internal/runtimeapi"
	"github.com/mcpfleet/mcpfleet/proxymcp/internal/statspage"
)

func deadRuntime(h *haproxytest.HAProxy) *runtimeapi.Client {
	return &runtimeapi.Client{Network: "unix", Address: filepath.Join(h.Dir, "gone.sock"), Timeout: time.Second}
}

func deadStats() *statspage.Client {
	return &statspage.Client{URL: "http://127.0.0.1:1/stats", Timeout: time.Second}
}

// TestFallbackToStatsPage: the runtime API cannot be reached, so reads come
// from the stats page CSV and state changes go through its admin form.
func TestFallbackToStatsPage(t *testing.T) {
	h := haproxytest.Run(t, haproxytest.Options{})
	waitStatus(t, h, "be_app", "app1", "UP")
	waitStatus(t, h, "be_app", "app3", "DOWN")
	e := newEnv(t, h, deadRuntime(h), statsClient(h), Options{})

	for _, tc := range []struct {
		tool string
		args map[string]any
	}{
		{"show_stat", map[string]any{"filter": ""}},
		{"list_frontends", nil},
		{"list_backends", nil},
		{"get_backend", map[string]any{"backend": "be_app"}},
		{"list_servers", map[string]any{"backend": "be_app"}},
		{"get_server", map[string]any{"backend": "be_app", "server": "app1"}},
	} {
		out := e.call(t, tc.tool, tc.args)
		if out["source"] != "stats_page" {
			t.Errorf("%s: source = %v", tc.tool, out["source"])
		}
	}
	servers := list(t, e.call(t, "list_servers", map[string]any{"backend": "be_app"}), "servers")
	if s := find(servers, "name", "app1"); s == nil || s["status"] != "UP" || s["weight"].(float64) != 100 {
		t.Errorf("app1 from the stats page = %v", s)
	}

	for _, tc := range []struct {
		tool  string
		args  map[string]any
		check func() bool
	}{
		{"set_server_state", map[string]any{"backend": "be_app", "server": "app2", "state": "drain"},
			func() bool { return strings.HasPrefix(serverStatus(t, h, "be_app", "app2"), "DRAIN") }},
		{"set_server_state", map[string]any{"backend": "be_app", "server": "app2", "state": "ready"},
			func() bool { return strings.HasPrefix(serverStatus(t, h, "be_app", "app2"), "UP") }},
		{"disable_server", map[string]any{"backend": "be_app", "server": "app2"},
			func() bool { return serverStatus(t, h, "be_app", "app2") == "MAINT" }},
		{"enable_server", map[string]any{"backend": "be_app", "server": "app2"},
			func() bool { return serverStatus(t, h, "be_app", "app2") != "MAINT" }},
		{"disable_health", map[string]any{"backend": "be_app", "server": "app2"},
			func() bool { return strings.Contains(serverStatus(t, h, "be_app", "app2"), "no check") }},
		{"enable_health", map[string]any{"backend": "be_app", "server": "app2"},
			func() bool { return !strings.Contains(serverStatus(t, h, "be_app", "app2"), "no check") }},
		{"set_server_health", map[string]any{"backend": "be_app", "server": "app2", "health": "up"}, func() bool { return true }},
		{"disable_agent", map[string]any{"backend": "be_api", "server": "api1"},
			func() bool { return strings.Contains(exec(t, h, "show servers state be_api"), "be_api 1 api1") }},
		{"enable_agent", map[string]any{"backend": "be_api", "server": "api1"}, func() bool { return true }},
		{"set_server_agent", map[string]any{"backend": "be_api", "server": "api1", "state": "up"}, func() bool { return true }},
	} {
		out := e.call(t, tc.tool, tc.args)
		if out["source"] != "stats_page" {
			t.Errorf("%s: source = %v", tc.tool, out["source"])
		}
		if !tc.check() {
			t.Errorf("%s(%v): HAProxy state not changed: %q", tc.tool, tc.args, serverStatus(t, h, "be_app", "app2"))
		}
	}
	e.fail(t, "set_server_state", map[string]any{"backend": "be_app", "server": "nosuch", "state": "drain"}, "ERRP")
	// Runtime-only tools say what was tried.
	e.fail(t, "show_info", nil, "runtime API at unix", "gone.sock")
	e.fail(t, "set_server_weight", map[string]any{"backend": "be_app", "server": "app1", "weight": 5}, "gone.sock")
	// The agent's address cannot be changed through the page.
	e.fail(t, "set_server_agent", map[string]any{"backend": "be_api", "server": "api1", "state": "up", "port": 1234}, "gone.sock")
}

// TestFallbackToRuntimeAPI: the stats page cannot be reached; the runtime API answers.
func TestFallbackToRuntimeAPI(t *testing.T) {
	h := haproxytest.Run(t, haproxytest.Options{})
	e := newEnv(t, h, h.Runtime("tcp4"), deadStats(), Options{})
	for _, tool := range []string{"show_stat", "list_frontends", "list_backends", "list_servers"} {
		if out := e.call(t, tool, nil); out["source"] != "runtime_api" {
			t.Errorf("%s: source = %v", tool, out["source"])
		}
	}
	if out := e.call(t, "set_server_state", map[string]any{"backend": "be_app", "server": "app1", "state": "drain"}); out["source"] != "runtime_api" {
		t.Errorf("set_server_state source = %v", out["source"])
	}
	// The stats page alone (runtime API disabled) also answers reads.
	only := newEnv(t, h, nil, statsClient(h), Options{})
	if out := only.call(t, "list_servers", nil); out["source"] != "stats_page" {
		t.Errorf("stats only: source = %v", out["source"])
	}
	only.fail(t, "show_info", nil, "PROXY_RUNTIME_ENABLED=false")
}

// TestNoBackEndAnswers: both fail, and the error says what was tried and why.
func TestNoBackEndAnswers(t *testing.T) {
	h := haproxytest.Run(t, haproxytest.Options{})
	e := newEnv(t, h, deadRuntime(h), deadStats(), Options{})
	msg := e.fail(t, "list_servers", nil, "no back end could answer", "runtime_api:", "gone.sock", "stats_page:", "127.0.0.1:1")
	if strings.Count(msg, "connection refused") < 1 {
		t.Errorf("msg = %s", msg)
	}
	e.fail(t, "set_server_state", map[string]any{"backend": "be_app", "server": "app1", "state": "drain"}, "runtime_api:", "stats_page:")

	// A page without "stats admin" refuses the change: said plainly.
	noAdmin := newEnv(t, h, deadRuntime(h), &statspage.Client{URL: h.StatsNoAdminURL, Timeout: time.Second}, Options{})
	noAdmin.fail(t, "set_server_state", map[string]any{"backend": "be_app", "server": "app1", "state": "drain"}, "DENY", "stats admin")
	if s := serverStatus(t, h, "be_app", "app1"); strings.HasPrefix(s, "DRAIN") {
		t.Errorf("a refused change changed the state: %s", s)
	}
	// Wrong credentials: 401 named with the variables to check.
	badAuth := newEnv(t, h, deadRuntime(h), &statspage.Client{URL: h.StatsURL, Username: "admin", Password: "wrong", Timeout: time.Second}, Options{})
	badAuth.fail(t, "list_servers", nil, "HTTP 401", "PROXY_STATS_PASSWORD")

	// HAProxy stopped: both back ends fail, clearly.
	h.Stop()
	gone := newEnv(t, h, h.Runtime("unix"), statsClient(h), Options{})
	gone.fail(t, "list_backends", nil, "runtime_api:", "stats_page:")
}

// TestReadOnlyRegistersOnlyReads: PROXY_READ_ONLY=true offers no tool that changes anything.
func TestReadOnlyRegistersOnlyReads(t *testing.T) {
	e := newEnv(t, nil, nil, deadStats(), Options{ReadOnly: true})
	all := newEnv(t, nil, nil, deadStats(), Options{})
	tools := e.srv.ListTools()
	if len(tools) == 0 || len(tools) >= len(all.srv.ListTools()) {
		t.Fatalf("read-only tools = %d of %d", len(tools), len(all.srv.ListTools()))
	}
	for name, st := range tools {
		a := st.Tool.Annotations
		if a.ReadOnlyHint == nil || !*a.ReadOnlyHint {
			t.Errorf("%s registered in read-only mode", name)
		}
	}
	for _, name := range []string{"show_info", "show_stat", "list_servers", "show_map", "help", "version_info", "echo"} {
		if tools[name] == nil {
			t.Errorf("%s missing in read-only mode", name)
		}
	}
	for _, name := range []string{"add_server", "del_server", "set_server_weight", "clear_map", "shutdown_session", "clear_counters"} {
		if tools[name] != nil {
			t.Errorf("%s offered in read-only mode", name)
		}
	}
}

// TestAnnotations checks the hints the issue requires.
func TestAnnotations(t *testing.T) {
	e := newEnv(t, nil, nil, deadStats(), Options{})
	// destructiveHint: the tools one of whose calls can be destructive.
	destructive := map[string]bool{}
	for _, name := range wantDestructive {
		destructive[name] = true
	}
	required := []string{"show_info", "show_stat", "clear_counters", "show_activity", "show_version", "list_frontends", "list_backends",
		"get_backend", "list_servers", "get_server", "show_servers_state", "show_servers_conn", "list_tables", "show_table", "show_resolvers",
		"add_server", "del_server", "set_server_state", "enable_server", "disable_server", "set_server_weight", "get_server_weight",
		"set_server_addr", "set_server_maxconn", "set_frontend_maxconn", "enable_frontend", "disable_frontend", "show_sessions",
		"show_session", "shutdown_session", "shutdown_server_sessions", "list_maps", "show_map", "get_map", "add_map_entry",
		"set_map_entry", "del_map_entry", "clear_map", "replace_map", "list_acls", "show_acl", "get_acl", "add_acl_entry",
		"del_acl_entry", "clear_acl", "enable_health", "disable_health", "set_server_health", "enable_agent", "disable_agent",
		"set_server_agent", "set_server_check_port", "show_errors", "echo", "help", "version_info",
		"list_ssl_certs", "show_ssl_cert", "show_ssl_sni", "list_add_server_keywords", "wait_server_removable"}
	tools := e.srv.ListTools()
	for _, name := range required {
		if tools[name] == nil {
			t.Errorf("required tool %s missing", name)
		}
	}
	for name, st := range tools {
		a := st.Tool.Annotations
		if a.DestructiveHint == nil || *a.DestructiveHint != destructive[name] {
			t.Errorf("%s: destructiveHint = %v", name, a.DestructiveHint)
		}
		if a.OpenWorldHint == nil || *a.OpenWorldHint {
			t.Errorf("%s: openWorldHint must be false", name)
		}
		if st.Tool.Title == "" || len(st.Tool.Description) < 20 {
			t.Errorf("%s: title/description missing", name)
		}
		ro := strings.HasPrefix(name, "show_") || strings.HasPrefix(name, "list_") || strings.HasPrefix(name, "get_") ||
			name == "echo" || name == "help" || name == "version_info" || name == "wait_server_removable" || name == "persistence_status"
		if a.ReadOnlyHint == nil || *a.ReadOnlyHint != ro {
			t.Errorf("%s: readOnlyHint = %v, want %v", name, a.ReadOnlyHint, ro)
		}
		if ro && (a.IdempotentHint == nil || !*a.IdempotentHint) {
			t.Errorf("%s: reads are idempotent", name)
		}
		var schema struct {
			AdditionalProperties any `json:"additionalProperties"`
		}
		if err := json.Unmarshal(st.Tool.RawInputSchema, &schema); err != nil || schema.AdditionalProperties != false {
			t.Errorf("%s: input schema allows extra properties", name)
		}
	}
}

// TestFallbackWhenSocketStops: a running server switches to the stats page
// when the runtime API stops answering, and back when it returns.
func TestFallbackWhenSocketStops(t *testing.T) {
	h := haproxytest.Run(t, haproxytest.Options{})
	relay := newRelay(t, h.RuntimeTCP)
	addr := relay.l.Addr().String()
	rt := &runtimeapi.Client{Network: "tcp4", Address: addr, Timeout: time.Second}
	e := newEnv(t, h, rt, statsClient(h), Options{})
	if out := e.call(t, "list_servers", nil); out["source"] != "runtime_api" {
		t.Fatalf("source = %v", out["source"])
	}
	relay.l.Close() // the runtime API stops answering
	if out := e.call(t, "list_servers", nil); out["source"] != "stats_page" {
		t.Errorf("after the socket stopped: source = %v", out["source"])
	}
	if out := e.call(t, "set_server_state", map[string]any{"backend": "be_app", "server": "app2", "state": "drain"}); out["source"] != "stats_page" {
		t.Errorf("change after the socket stopped: source = %v", out["source"])
	}
	back := newRelayAt(t, addr, h.RuntimeTCP)
	if back == nil {
		t.Fatal("the relay's port was taken meanwhile")
	}
	if out := e.call(t, "list_servers", nil); out["source"] != "runtime_api" {
		t.Errorf("after the socket returned: source = %v", out["source"])
	}
}

// TestOperatorLevelSocket: the recommended read-only set-up (level operator
// with PROXY_READ_ONLY=true) answers every read tool, and a change through
// such a socket is refused as a permission error, never reported as done.
func TestOperatorLevelSocket(t *testing.T) {
	h := haproxytest.Run(t, haproxytest.Options{})
	op := &runtimeapi.Client{Network: "unix", Address: h.OperatorSocket, Timeout: 5 * time.Second}
	ro := newEnv(t, h, op, nil, Options{ReadOnly: true})
	for _, tc := range []struct {
		tool string
		args map[string]any
	}{
		{"show_info", nil}, {"show_stat", nil}, {"list_servers", nil}, {"get_server", map[string]any{"backend": "be_app", "server": "app1"}},
		{"show_servers_state", nil}, {"show_sessions", nil}, {"show_errors", nil}, {"list_maps", nil},
		{"show_map", map[string]any{"map": h.MapFile}}, {"list_tables", nil}, {"get_server_weight", map[string]any{"backend": "be_app", "server": "app1"}},
		{"help", nil}, {"version_info", nil},
	} {
		ro.call(t, tc.tool, tc.args)
	}
	rw := newEnv(t, h, op, nil, Options{})
	rw.fail(t, "set_server_weight", map[string]any{"backend": "be_app", "server": "app1", "weight": 7}, "Permission denied", "level admin")
	// Note: before 3.4 HAProxy lets map and ACL changes through at any level
	// (the README says so); only PROXY_READ_ONLY keeps them away.
	if w := exec(t, h, "get weight be_app/app1"); !strings.HasPrefix(w, "100 ") {
		t.Errorf("weight changed through an operator socket: %q", w)
	}
}
