package mcpserver

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/mcpfleet/mcpfleet/proxymcp/internal/haproxytest"
)

// TestToolsAgainstHAProxy exercises every tool against a real HAProxy over
// the runtime API's Unix socket and its TCP port.
func TestToolsAgainstHAProxy(t *testing.T) {
	for _, mode := range []string{"unix", "tcp4"} {
		t.Run(mode, func(t *testing.T) {
			h := haproxytest.Run(t, haproxytest.Options{})
			e := newEnv(t, h, h.Runtime(mode), statsClient(h), Options{ServerVersion: "v-test"})
			waitStatus(t, h, "be_app", "app1", "UP")
			waitStatus(t, h, "be_app", "app3", "DOWN")
			t.Run("stats", func(t *testing.T) { testStats(t, e) })
			t.Run("topology", func(t *testing.T) { testTopology(t, e) })
			t.Run("pool", func(t *testing.T) { testPool(t, e) })
			t.Run("sessions", func(t *testing.T) { testSessions(t, e) })
			t.Run("maps", func(t *testing.T) { testMaps(t, e) })
			t.Run("acls", func(t *testing.T) { testACLs(t, e) })
			t.Run("health", func(t *testing.T) { testHealth(t, e) })
			t.Run("misc", func(t *testing.T) { testMisc(t, e) })
		})
	}
}

func testStats(t *testing.T, e *env) {
	info := e.call(t, "show_info", nil)["info"].(map[string]any)
	if info["Name"] != "HAProxy" || !strings.HasPrefix(info["Version"].(string), "2.") {
		t.Errorf("info = %v", info)
	}
	if _, ok := info["Uptime_sec"].(float64); !ok {
		t.Errorf("Uptime_sec is not a number: %#v", info["Uptime_sec"])
	}
	all := e.call(t, "show_stat", map[string]any{"filter": ""})
	rows := tableRows(t, all)
	if len(rows) < 12 || all["count"].(float64) != float64(len(rows)) {
		t.Fatalf("rows = %d", len(rows))
	}
	if _, ok := rows[0]["pxname"]; !ok {
		t.Errorf("row keys: %v", rows[0])
	}
	be := tableRows(t, e.call(t, "show_stat", map[string]any{"filter": "be_app"}))
	if len(be) != 4 {
		t.Errorf("be_app rows = %d, want 4 (3 servers + BACKEND)", len(be))
	}
	srvRows := tableRows(t, e.call(t, "show_stat", map[string]any{"proxy": "be_app", "type": "server", "server": "app2"}))
	if len(srvRows) != 1 || srvRows[0]["weight"].(float64) != 50 || srvRows[0]["object_type"] != "server" {
		t.Errorf("app2 rows = %v", srvRows)
	}
	e.fail(t, "show_stat", map[string]any{"type": "pool"}, `"type"`, `"frontend", "backend", "server", "listener"`)
	e.call(t, "clear_counters", nil)
	e.call(t, "clear_counters", map[string]any{"all": true})
	act := e.call(t, "show_activity", nil)
	if !strings.Contains(act["text"].(string), "thread") && !strings.Contains(act["text"].(string), "ctxsw") {
		t.Errorf("activity = %.200s", act["text"])
	}
	if v := e.call(t, "show_version", nil)["version"].(string); v != e.h.Version {
		t.Errorf("version = %q, want %q", v, e.h.Version)
	}
}

func testTopology(t *testing.T, e *env) {
	fe := list(t, e.call(t, "list_frontends", nil), "frontends")
	if find(fe, "name", "fe_web") == nil || find(fe, "name", "fe_api") == nil || find(fe, "name", "be_app") != nil {
		t.Errorf("frontends = %v", fe)
	}
	be := list(t, e.call(t, "list_backends", nil), "backends")
	app := find(be, "name", "be_app")
	if app == nil || app["servers"].(float64) != 3 || app["algorithm"] != "roundrobin" {
		t.Errorf("be_app = %v", app)
	}
	if find(be, "name", "be_api")["algorithm"] != "leastconn" {
		t.Errorf("backends = %v", be)
	}
	d := e.call(t, "get_backend", map[string]any{"backend": "be_api"})["backend"].(map[string]any)
	if d["name"] != "be_api" || len(d["server_list"].([]any)) != 2 {
		t.Errorf("get_backend = %v", d)
	}
	e.fail(t, "get_backend", map[string]any{"backend": "nosuch"}, `backend "nosuch" not found`)
	servers := list(t, e.call(t, "list_servers", map[string]any{"backend": "be_app"}), "servers")
	app1, app3 := find(servers, "name", "app1"), find(servers, "name", "app3")
	if app1 == nil || app1["address"] != "127.0.0.1" || app1["port"].(float64) == 0 || app1["status"] != "UP" || app1["weight"].(float64) != 100 || app1["check_status"] != "L7OK" {
		t.Errorf("app1 = %v", app1)
	}
	if app3 == nil || !strings.HasPrefix(app3["status"].(string), "DOWN") {
		t.Errorf("app3 = %v", app3)
	}
	if all := list(t, e.call(t, "list_servers", nil), "servers"); len(all) != 5 {
		t.Errorf("all servers = %d, want 5", len(all))
	}
	e.fail(t, "list_servers", map[string]any{"backend": "nosuch"}, "not found")
	s := e.call(t, "get_server", map[string]any{"backend": "be_app", "server": "app2"})["server"].(map[string]any)
	if s["name"] != "app2" || s["state"].(map[string]any)["srv_uweight"].(float64) != 50 {
		t.Errorf("get_server = %v", s)
	}
	e.fail(t, "get_server", map[string]any{"backend": "be_app", "server": "nosuch"}, `server "be_app/nosuch" not found`)
	st := list(t, e.call(t, "show_servers_state", map[string]any{"backend": "be_api"}), "servers")
	if len(st) != 2 || st[0]["be_name"] != "be_api" {
		t.Errorf("servers state = %v", st)
	}
	e.fail(t, "show_servers_state", map[string]any{"backend": "nosuch"}, "Can't find backend")
	if c := list(t, e.call(t, "show_servers_conn", nil), "servers"); len(c) < 5 {
		t.Errorf("servers conn = %v", c)
	}
	tables := list(t, e.call(t, "list_tables", nil), "tables")
	if find(tables, "name", "be_app") == nil {
		t.Errorf("tables = %v", tables)
	}
	// One request through fe_web creates a stick-table entry for 127.0.0.1.
	resp, err := http.Get("http://" + e.h.FrontendWeb + "/")
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	tab := e.call(t, "show_table", map[string]any{"table": "be_app"})
	entries := list(t, tab, "entries")
	if len(entries) != 1 || entries[0]["key"] != "127.0.0.1" {
		t.Errorf("table = %v", tab)
	}
	if n := list(t, e.call(t, "show_table", map[string]any{"table": "be_app", "key": "127.0.0.1"}), "entries"); len(n) != 1 {
		t.Errorf("by key = %v", n)
	}
	if n := list(t, e.call(t, "show_table", map[string]any{"table": "be_app", "filters": []any{map[string]any{"data": "gpc0", "op": "gt", "value": 5}}}), "entries"); len(n) != 0 {
		t.Errorf("filtered = %v", n)
	}
	e.fail(t, "show_table", map[string]any{"table": "nosuch"}, "No such table")
	e.fail(t, "show_table", map[string]any{"table": "be_app", "filters": []any{map[string]any{"data": "gpc0", "op": "like", "value": 1}}}, `"filters[0].op"`, `"eq", "ne", "lt", "le", "gt", "ge"`)
	e.call(t, "show_resolvers", nil)
}

func testPool(t *testing.T, e *env) {
	h := e.h
	add := e.call(t, "add_server", map[string]any{"backend": "be_app", "server": "app4", "address": "127.0.0.1", "port": 19999, "weight": 10, "maxconn": 5})
	if add["state"] != "maint" || !strings.Contains(add["note"].(string), "maintenance") {
		t.Errorf("add = %v", add)
	}
	if s := serverStatus(t, h, "be_app", "app4"); s != "MAINT" {
		t.Errorf("app4 status = %q", s)
	}
	e.fail(t, "add_server", map[string]any{"backend": "be_app", "server": "app4", "address": "127.0.0.1", "port": 19999}, "Already exists")
	e.fail(t, "add_server", map[string]any{"backend": "nosuch", "server": "x", "address": "127.0.0.1", "port": 1}, "No such backend")
	add5 := e.call(t, "add_server", map[string]any{"backend": "be_app", "server": "app5", "address": "127.0.0.1", "port": 19998, "enable": true})
	if add5["state"] != "ready" || serverStatus(t, h, "be_app", "app5") != "no check" {
		t.Errorf("app5: %v %q", add5, serverStatus(t, h, "be_app", "app5"))
	}
	// HAProxy refuses to delete a server that is not in maintenance.
	e.fail(t, "del_server", map[string]any{"backend": "be_app", "server": "app5"}, "Only servers in maintenance mode can be deleted")
	if serverStatus(t, h, "be_app", "app5") == "" {
		t.Fatal("refused deletion deleted the server")
	}
	del := e.call(t, "del_server", map[string]any{"backend": "be_app", "server": "app5", "drain": true, "drain_timeout": 5})
	if del["drained"] != true || serverStatus(t, h, "be_app", "app5") != "" {
		t.Errorf("del = %v", del)
	}
	e.call(t, "del_server", map[string]any{"backend": "be_app", "server": "app4"})
	e.fail(t, "del_server", map[string]any{"backend": "be_app", "server": "app4"}, "No such server")

	e.call(t, "set_server_state", map[string]any{"backend": "be_app", "server": "app1", "state": "drain"})
	if s := serverStatus(t, h, "be_app", "app1"); !strings.HasPrefix(s, "DRAIN") {
		t.Errorf("after drain: %q", s)
	}
	e.fail(t, "set_server_state", map[string]any{"backend": "be_app", "server": "app1", "state": "bogus"}, `"state"`, `"ready", "drain", "maint"`)
	e.call(t, "disable_server", map[string]any{"backend": "be_app", "server": "app1"})
	if s := serverStatus(t, h, "be_app", "app1"); s != "MAINT" {
		t.Errorf("after disable: %q", s)
	}
	e.call(t, "enable_server", map[string]any{"backend": "be_app", "server": "app1"})
	waitStatus(t, h, "be_app", "app1", "UP")
	e.fail(t, "enable_server", map[string]any{"backend": "be_app", "server": "nosuch"}, "No such server")

	e.call(t, "set_server_weight", map[string]any{"backend": "be_app", "server": "app2", "weight": 20})
	w := e.call(t, "get_server_weight", map[string]any{"backend": "be_app", "server": "app2"})
	if w["weight"].(float64) != 20 || w["initial_weight"].(float64) != 50 {
		t.Errorf("weight = %v", w)
	}
	e.call(t, "set_server_weight", map[string]any{"backend": "be_app", "server": "app2", "weight": "50%"})
	if w := e.call(t, "get_server_weight", map[string]any{"backend": "be_app", "server": "app2"}); w["weight"].(float64) != 25 {
		t.Errorf("50%% weight = %v", w)
	}
	e.fail(t, "set_server_weight", map[string]any{"backend": "be_app", "server": "nosuch", "weight": 5}, "No such server")
	e.fail(t, "set_server_weight", map[string]any{"backend": "be_app", "server": "app2", "weight": 300}, `"weight"`, "want 256")
	e.fail(t, "set_server_weight", map[string]any{"backend": "be_app", "server": "app2", "weight": 2.5}, `"weight"`)
	e.fail(t, "get_server_weight", map[string]any{"backend": "nosuch", "server": "x"}, "No such")

	addr := e.call(t, "set_server_addr", map[string]any{"backend": "be_app", "server": "app3", "address": "127.0.0.2", "port": 19003})
	if !strings.Contains(addr["message"].(string), "127.0.0.2") {
		t.Errorf("addr = %v", addr)
	}
	if !strings.Contains(exec(t, h, "show servers state be_app"), "app3 127.0.0.2") {
		t.Error("address not changed")
	}
	e.fail(t, "set_server_addr", map[string]any{"backend": "be_app", "server": "app3", "address": "example.com"}, `"address"`, "IPv4 or IPv6")
	e.call(t, "set_server_maxconn", map[string]any{"backend": "be_app", "server": "app2", "maxconn": 42})
	if !strings.Contains(exec(t, h, "show stat be_app 4 -1"), ",42,") {
		t.Error("maxconn not visible in stats")
	}
	e.call(t, "set_frontend_maxconn", map[string]any{"frontend": "fe_api", "maxconn": 77})
	e.fail(t, "set_frontend_maxconn", map[string]any{"frontend": "nosuch", "maxconn": 1}, "No such frontend")
	e.call(t, "disable_frontend", map[string]any{"frontend": "fe_api"})
	if s := frontendStatus(t, e, "fe_api"); s != "PAUSED" {
		t.Errorf("disabled frontend status = %q", s)
	}
	e.call(t, "enable_frontend", map[string]any{"frontend": "fe_api"})
	if s := frontendStatus(t, e, "fe_api"); s != "OPEN" {
		t.Errorf("enabled frontend status = %q", s)
	}
}

func frontendStatus(t *testing.T, e *env, name string) string {
	f := find(list(t, e.call(t, "list_frontends", nil), "frontends"), "name", name)
	if f == nil {
		return ""
	}
	return f["status"].(string)
}

func testSessions(t *testing.T, e *env) {
	h := e.h
	// A request to /slow stays open until released, so a stream exists.
	done := make(chan error, 2)
	for range 2 {
		go func() {
			resp, err := http.Get("http://" + h.FrontendAPI + "/slow")
			if err == nil {
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
			done <- err
		}()
	}
	var sessions []map[string]any
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		sessions = list(t, e.call(t, "show_sessions", map[string]any{"frontend": "fe_api"}), "sessions")
		if len(sessions) == 2 {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if len(sessions) != 2 {
		t.Fatalf("sessions = %v", sessions)
	}
	s := sessions[0]
	if s["backend"] != "be_api" || !strings.HasPrefix(s["id"].(string), "0x") {
		t.Errorf("session = %v", s)
	}
	if all := list(t, e.call(t, "show_sessions", nil), "sessions"); find(all, "frontend", "GLOBAL") != nil {
		t.Error("the CLI's own session is listed")
	}
	if n := list(t, e.call(t, "show_sessions", map[string]any{"backend": "be_app"}), "sessions"); len(n) != 0 {
		t.Errorf("be_app sessions = %v", n)
	}
	detail := e.call(t, "show_session", map[string]any{"session_id": s["id"]})
	if !strings.Contains(detail["text"].(string), "fe_api") {
		t.Errorf("detail = %v", detail)
	}
	e.call(t, "shutdown_session", map[string]any{"session_id": s["id"]})
	e.fail(t, "shutdown_session", map[string]any{"session_id": "0x1"}, "No such session")
	e.fail(t, "shutdown_session", map[string]any{"session_id": "1; shutdown sessions server be_api/api1"}, `"session_id"`)
	srvName := sessions[1]["server"].(string)
	e.call(t, "shutdown_server_sessions", map[string]any{"backend": "be_api", "server": srvName})
	e.fail(t, "shutdown_server_sessions", map[string]any{"backend": "be_api", "server": "nosuch"}, "No such server")
	for range 2 {
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			t.Fatal("a shut-down session's client did not return")
		}
	}
	if n := list(t, e.call(t, "show_sessions", map[string]any{"frontend": "fe_api"}), "sessions"); len(n) != 0 {
		t.Errorf("sessions left = %v", n)
	}
}

func testMaps(t *testing.T, e *env) {
	h := e.h
	maps := list(t, e.call(t, "list_maps", nil), "maps")
	m := find(maps, "file", h.MapFile)
	if m == nil || m["entry_count"].(float64) != 2 || m["ref"] != h.MapFile {
		t.Fatalf("maps = %v", maps)
	}
	ref := h.MapFile
	byID := m["ref"].(string)
	entries := list(t, e.call(t, "show_map", map[string]any{"map": byID}), "entries")
	if find(entries, "key", "www.example.com")["value"] != "be_app" {
		t.Errorf("entries = %v", entries)
	}
	idRef := fmt.Sprintf("#%d", int(m["id"].(float64)))
	if n := list(t, e.call(t, "show_map", map[string]any{"map": idRef}), "entries"); len(n) != 2 {
		t.Errorf("by %s: %v", idRef, n)
	}
	g := e.call(t, "get_map", map[string]any{"map": ref, "key": "api.example.com"})
	if g["matched"] != true || g["result"].(map[string]any)["value"] != "be_api" {
		t.Errorf("get_map = %v", g)
	}
	if g := e.call(t, "get_map", map[string]any{"map": ref, "key": "none.example"}); g["matched"] != false {
		t.Errorf("get_map miss = %v", g)
	}
	// Keys and values with spaces, semicolons, backslashes and quotes are stored whole.
	add := e.call(t, "add_map_entry", map[string]any{"map": ref, "key": `new key;1`, "value": `value with "spaces" \ and ;`})
	if add["persisted"] != false || !strings.Contains(add["note"].(string), "not written to the map") {
		t.Errorf("add = %v", add)
	}
	if g := e.call(t, "get_map", map[string]any{"map": ref, "key": "new key;1"}); g["result"].(map[string]any)["value"] != `value with "spaces" \ and ;` {
		t.Errorf("stored value = %v", g)
	}
	e.call(t, "set_map_entry", map[string]any{"map": ref, "key": "www.example.com", "value": "be_api"})
	if g := e.call(t, "get_map", map[string]any{"map": ref, "key": "www.example.com"}); g["result"].(map[string]any)["value"] != "be_api" {
		t.Errorf("after set = %v", g)
	}
	e.fail(t, "set_map_entry", map[string]any{"map": ref, "key": "nokey", "value": "x"}, "entry")
	e.call(t, "del_map_entry", map[string]any{"map": ref, "key": "new key;1"})
	e.fail(t, "del_map_entry", map[string]any{"map": ref, "key": "nokey"}, "Key not found")
	e.fail(t, "show_map", map[string]any{"map": "/nosuch.map"}, "Unknown map identifier")
	rep := e.call(t, "replace_map", map[string]any{"map": ref, "entries": []any{
		map[string]any{"key": "a.example", "value": "be_app"}, map[string]any{"key": "b example", "value": "be api"}}})
	if rep["entries"].(float64) != 2 {
		t.Errorf("replace = %v", rep)
	}
	got := list(t, e.call(t, "show_map", map[string]any{"map": ref}), "entries")
	if len(got) != 2 || find(got, "key", "a.example") == nil {
		t.Errorf("after replace = %v", got)
	}
	if g := e.call(t, "get_map", map[string]any{"map": ref, "key": "b example"}); g["result"].(map[string]any)["value"] != "be api" {
		t.Errorf("replaced value = %v", g)
	}
	e.fail(t, "replace_map", map[string]any{"map": ref, "entries": []any{map[string]any{"key": "x\ny", "value": "v"}}}, "entries.key")
	e.call(t, "clear_map", map[string]any{"map": ref})
	if n := list(t, e.call(t, "show_map", map[string]any{"map": ref}), "entries"); len(n) != 0 {
		t.Errorf("after clear = %v", n)
	}
	if data := readFile(t, h.MapFile); !strings.Contains(data, "www.example.com be_app") {
		t.Errorf("map file changed: %q", data)
	}
}

func testACLs(t *testing.T, e *env) {
	h := e.h
	acls := list(t, e.call(t, "list_acls", nil), "acls")
	if a := find(acls, "file", h.ACLFile); a == nil || a["entry_count"].(float64) != 2 {
		t.Fatalf("acls = %v", acls)
	}
	ref := h.ACLFile
	if n := list(t, e.call(t, "show_acl", map[string]any{"acl": ref}), "entries"); find(n, "key", "198.51.100.0/24") == nil {
		t.Errorf("show_acl = %v", n)
	}
	if g := e.call(t, "get_acl", map[string]any{"acl": ref, "value": "198.51.100.7"}); g["matched"] != true {
		t.Errorf("get_acl = %v", g)
	}
	if g := e.call(t, "get_acl", map[string]any{"acl": ref, "value": "10.1.1.1"}); g["matched"] != false {
		t.Errorf("get_acl miss = %v", g)
	}
	e.call(t, "add_acl_entry", map[string]any{"acl": ref, "pattern": "10.1.1.0/24"})
	if g := e.call(t, "get_acl", map[string]any{"acl": ref, "value": "10.1.1.1"}); g["matched"] != true {
		t.Errorf("after add = %v", g)
	}
	e.fail(t, "add_acl_entry", map[string]any{"acl": ref, "pattern": "bad"}, "not a valid IPv4 or IPv6 address")
	e.call(t, "del_acl_entry", map[string]any{"acl": ref, "pattern": "10.1.1.0/24"})
	e.fail(t, "del_acl_entry", map[string]any{"acl": ref, "pattern": "10.9.9.9"}, "not found")
	e.call(t, "clear_acl", map[string]any{"acl": ref})
	if n := list(t, e.call(t, "show_acl", map[string]any{"acl": ref}), "entries"); len(n) != 0 {
		t.Errorf("after clear = %v", n)
	}
	e.fail(t, "show_acl", map[string]any{"acl": "#999"}, "Unknown ACL identifier")
}

func testHealth(t *testing.T, e *env) {
	h := e.h
	e.call(t, "disable_health", map[string]any{"backend": "be_app", "server": "app2"})
	if !strings.Contains(serverStatus(t, h, "be_app", "app2"), "no check") {
		t.Errorf("after disable_health: %q", serverStatus(t, h, "be_app", "app2"))
	}
	e.call(t, "set_server_health", map[string]any{"backend": "be_app", "server": "app2", "health": "down"})
	e.call(t, "enable_health", map[string]any{"backend": "be_app", "server": "app2"})
	waitStatus(t, h, "be_app", "app2", "UP")
	e.call(t, "set_server_health", map[string]any{"backend": "be_app", "server": "app2", "health": "stopping"})
	e.fail(t, "set_server_health", map[string]any{"backend": "be_app", "server": "app2", "health": "sideways"}, `"health"`)
	e.call(t, "set_server_health", map[string]any{"backend": "be_app", "server": "app2", "health": "up"})

	e.call(t, "disable_agent", map[string]any{"backend": "be_api", "server": "api1"})
	e.call(t, "enable_agent", map[string]any{"backend": "be_api", "server": "api1"})
	e.fail(t, "enable_agent", map[string]any{"backend": "be_app", "server": "app1"}, "Agent was not configured")
	ag := e.call(t, "set_server_agent", map[string]any{"backend": "be_api", "server": "api1", "state": "up", "send": "hello world; ok"})
	if ag["changed"] != true {
		t.Errorf("agent = %v", ag)
	}
	e.call(t, "set_server_agent", map[string]any{"backend": "be_api", "server": "api1", "address": "127.0.0.1", "port": 19104})
	if st := exec(t, h, "show servers state be_api"); !strings.Contains(st, " 19104") {
		t.Errorf("agent port not set: %s", st)
	}
	e.fail(t, "set_server_agent", map[string]any{"backend": "be_api", "server": "api1"}, "at least one")
	e.call(t, "set_server_check_port", map[string]any{"backend": "be_api", "server": "api2", "port": 19005})
	e.fail(t, "set_server_check_port", map[string]any{"backend": "be_api", "server": "api2", "port": 0}, `"port"`, "must be at least 1")
}

func testMisc(t *testing.T, e *env) {
	errs := e.call(t, "show_errors", nil)
	if _, ok := errs["total_events"].(float64); !ok {
		t.Errorf("errors = %v", errs)
	}
	e.call(t, "show_errors", map[string]any{"proxy": "fe_web", "direction": "request"})
	echo := e.call(t, "echo", map[string]any{"text": "hello; world"})
	if echo["text"] != "hello; world" || echo["answered_by"] != "proxymcp" {
		t.Errorf("echo = %v", echo)
	}
	help := e.raw(t, "help", nil)
	if help.IsError || !strings.Contains(text(help), "show stat") {
		t.Errorf("help = %.300s", text(help))
	}
	vi := e.call(t, "version_info", nil)
	if vi["proxymcp_version"] != "v-test" || vi["haproxy_version"] != e.h.Version {
		t.Errorf("version_info = %v", vi)
	}
	cmds := list(t, vi, "commands")
	if c := find(cmds, "command", "echo"); c == nil || c["supported"] != false || c["min_version"] != "3.1" {
		t.Errorf("echo support = %v", c)
	}
	e.fail(t, "show_info", map[string]any{"unexpected": 1}, `"unexpected"`, "not in the tool's input schema")
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
