package mcpserver

import (
	"flag"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/mcpfleet/mcpfleet/proxymcp/internal/haproxytest"
	"github.com/mcpfleet/mcpfleet/shared/e2e"
)

var _ = flag.Bool("update", false, "rewrite golden files")

// volatile are fields whose values depend on timing or the run.
var volatile = map[string]bool{
	"bytes_in": true, "bytes_out": true, "total_sessions": true, "downtime_seconds": true, "last_change_seconds": true,
	"current_sessions": true, "max_sessions": true, "entry_id": true, "port": true, "haproxy_version": true,
	"check_failures": true, "requests_total": true, "request_rate": true, "queue_current": true, "status": true,
	"check_status": true, "check_code": true, "check_desc": true, "last_check": true, "agent_status": true, "last_agent": true,
	"srv_time_since_last_change": true, "srv_port": true, "srv_op_state": true, "srv_check_status": true,
	"srv_check_result": true, "srv_check_health": true, "srv_check_state": true, "srv_agent_state": true,
}

var (
	hexPtr   = regexp.MustCompile(`0x[0-9a-f]{6,}`)
	loopPort = regexp.MustCompile(`127\.0\.0\.1:[0-9]+`)
)

// reportedOnceChecked are fields HAProxy reports only after a server's
// health or agent check has run once, which on a loaded machine may or may
// not have happened when the call is made: their presence is as volatile as
// their value, so they are left out.
var reportedOnceChecked = map[string]bool{"check_code": true, "last_check": true, "agent_status": true, "last_agent": true}

func normalize(v any, dir string) any {
	switch x := v.(type) {
	case map[string]any:
		for k, val := range x {
			if reportedOnceChecked[k] {
				delete(x, k)
				continue
			}
			if volatile[k] {
				x[k] = "<volatile>"
				continue
			}
			x[k] = normalize(val, dir)
		}
		return x
	case []any:
		for i := range x {
			x[i] = normalize(x[i], dir)
		}
		return x
	case string:
		x = strings.ReplaceAll(x, dir, "$DIR")
		x = hexPtr.ReplaceAllString(x, "0xPTR")
		return loopPort.ReplaceAllString(x, "127.0.0.1:PORT")
	}
	return v
}

// TestResultsGolden records representative results and error messages,
// so that changes to their shape or wording show up in review.
func TestResultsGolden(t *testing.T) {
	h := haproxytest.Run(t, haproxytest.Options{})
	e := newEnv(t, h, h.Runtime("unix"), statsClient(h), Options{ServerVersion: "v-test"})
	waitStatus(t, h, "be_app", "app3", "DOWN")
	calls := []struct {
		tool string
		args map[string]any
	}{
		{"list_backends", nil},
		{"get_backend", map[string]any{"backend": "be_api"}},
		{"get_server_weight", map[string]any{"backend": "be_app", "server": "app1"}},
		{"show_servers_state", map[string]any{"backend": "be_app"}},
		{"list_maps", nil},
		{"show_map", map[string]any{"map": h.MapFile}},
		{"get_map", map[string]any{"map": h.MapFile, "key": "www.example.com"}},
		{"add_map_entry", map[string]any{"map": h.MapFile, "key": "new.example", "value": "be app"}},
		{"list_tables", nil},
		{"echo", map[string]any{"text": "hello"}},
		{"add_server", map[string]any{"backend": "be_app", "server": "app9", "address": "127.0.0.1", "port": 1}},
		{"set_server_state", map[string]any{"backend": "be_app", "server": "app9", "state": "drain"}},
		{"del_server", map[string]any{"backend": "be_app", "server": "app9"}},
		{"set_server_weight", map[string]any{"backend": "be_app", "server": "nosuch", "weight": 5}},
		{"set_server_weight", map[string]any{"backend": "be_app;show info", "server": "app1", "weight": 5}},
		{"set_server_weight", map[string]any{"backend": "be_app", "server": "app1", "weight": 2.5}},
		{"get_backend", map[string]any{"backend": "nosuch"}},
		{"add_acl_entry", map[string]any{"acl": h.ACLFile, "pattern": "not-an-ip"}},
		{"add_map_entry", map[string]any{"map": h.MapFile, "key": "a\nb", "value": "v"}},
		{"shutdown_session", map[string]any{"session_id": "0x1"}},
		{"enable_agent", map[string]any{"backend": "be_app", "server": "app1"}},
		// show_stat's two representations of the same rows (issue 31): the
		// objects asked for, the table by default.
		{"show_stat", map[string]any{"proxy": "be_api", "fields": []any{"pxname", "svname", "weight", "act", "bck", "slim", "iid"}, "format": "objects"}},
		{"show_stat", map[string]any{"proxy": "be_api", "fields": []any{"pxname", "svname", "weight", "act", "bck", "slim", "iid"}}},
	}
	var got []map[string]any
	for _, c := range calls {
		res := e.raw(t, c.tool, c.args)
		entry := map[string]any{"tool": c.tool, "arguments": normalize(c.args, h.Dir), "isError": res.IsError}
		if res.IsError {
			entry["error"] = normalize(text(res), h.Dir)
		} else {
			entry["result"] = normalize(structured(t, c.tool, res), h.Dir)
		}
		got = append(got, entry)
		if c.tool == "add_map_entry" && !res.IsError {
			// keep later calls independent of this one
			e.call(t, "del_map_entry", map[string]any{"map": h.MapFile, "key": "new.example"})
		}
	}
	e2e.Golden(t, "testdata/results.golden.json", got)
}

// goldConfig is a backend whose statistics stay still while nobody sends
// it traffic: servers without checks, one a backup, one in maintenance.
const goldConfig = `
backend be_gold
    balance roundrobin
    server g1 127.0.0.1:1 weight 10
    server g2 127.0.0.1:2 weight 20 backup
    server g3 127.0.0.1:3 disabled
`

// TestShowStatDefaultGolden records the exact default answer of show_stat
// (no arguments but the backend: the default columns, the table format)
// for a small known configuration — fields, layouts and every row — and
// the objects answer asked for on the same input, which it decodes to.
// lastchg (seconds since the last change) is the one volatile column.
func TestShowStatDefaultGolden(t *testing.T) {
	h := haproxytest.Run(t, haproxytest.Options{Extra: goldConfig})
	e := newEnv(t, h, h.Runtime("unix"), nil, Options{})
	table := e.call(t, "show_stat", map[string]any{"proxy": "be_gold"})
	objects := e.call(t, "show_stat", map[string]any{"proxy": "be_gold", "format": "objects"})
	fields, _ := table["fields"].([]any)
	lastchg := slices.Index(fields, any("lastchg"))
	for _, r := range table["rows"].([]any) {
		row := r.([]any)
		layout := table["layouts"].([]any)[int(row[0].(float64))].(map[string]any)
		for i, f := range layout["fields"].([]any) {
			if int(f.(float64)) == lastchg && i+1 < len(row) && row[i+1] != nil {
				row[i+1] = "<volatile>"
			}
		}
	}
	rows := list(t, objects, "rows")
	for _, r := range rows {
		if _, ok := r["lastchg"]; ok {
			r["lastchg"] = "<volatile>"
		}
	}
	if got := tableRows(t, table); lastchg < 0 || len(got) != 4 || !reflect.DeepEqual(got, rows) {
		t.Errorf("the table decodes to\n%v\nthe objects answer is\n%v", got, rows)
	}
	e2e.Golden(t, "testdata/show_stat_default.golden.json", []map[string]any{
		{"arguments": map[string]any{"proxy": "be_gold"}, "result": table},
		{"arguments": map[string]any{"proxy": "be_gold", "format": "objects"}, "result": objects},
	})
}
