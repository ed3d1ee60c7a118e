package mcpserver

import (
	"context"
	"fmt"
	"io"
	"net"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpfleet/mcpfleet/proxymcp/internal/haproxy"
	"github.com/mcpfleet/mcpfleet/proxymcp/internal/haproxytest"
	"github.com/mcpfleet/mcpfleet/proxymcp/internal/runtimeapi"
)

// countingRelay forwards TCP connections to HAProxy's runtime API and counts
// them. It is not a fake: HAProxy answers everything; the relay only lets the
// test prove that a rejected call never opened a connection.
type countingRelay struct {
	l     net.Listener
	n     atomic.Int64
	wg    sync.WaitGroup
	close func()
}

func newRelay(t *testing.T, target string) *countingRelay {
	r := newRelayAt(t, "127.0.0.1:0", target)
	if r == nil {
		t.Fatal("cannot listen on a loopback port")
	}
	return r
}

// newRelayAt listens on addr; nil when it cannot.
func newRelayAt(t *testing.T, addr, target string) *countingRelay {
	l, err := net.Listen("tcp4", addr)
	if err != nil {
		return nil
	}
	r := &countingRelay{l: l}
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			r.n.Add(1)
			r.wg.Add(1)
			go func() {
				defer r.wg.Done()
				defer c.Close()
				up, err := net.Dial("tcp4", target)
				if err != nil {
					return
				}
				defer up.Close()
				go func() { io.Copy(up, c); up.(*net.TCPConn).CloseWrite() }()
				io.Copy(c, up)
			}()
		}
	}()
	t.Cleanup(func() { l.Close(); r.wg.Wait() })
	return r
}

// Hostile values for identifiers, enums, references, addresses and session
// ids: every one must be refused.
var hostileNames = []string{
	"be_app;set weight be_app/app1 3",
	"x\nset weight be_app/app2 4",
	"be_app <<",
	"app1;set server be_app/app1 state drain",
	"\r\nshow info",
	"a\x00b",
	"be_app set weight be_app/app1 9",
	`be_app\;set weight be_app/app1 9`,
	`"be_app"`, "'be_app'",
	"be_app\u2028set weight be_app/app1 7",
	"be_app\uff1bset",       // fullwidth semicolon
	"be_\u200bapp",          // zero-width space
	"\u202eppa_eb",          // right-to-left override
	"be_app\u0085show info", // NEL
	"../../etc/passwd",
	"$(reboot)", "`id`", "%0aset weight",
	"#1;clear map #1",
	strings.Repeat("A", 5000),
	"\xff\xfe",
	" ",
}

// Hostile free text: map/ACL keys and values, echo text, agent-send. Free
// text may contain ";" and spaces (they are escaped and stored whole), so
// only what can never be sent safely is refused.
var hostileText = []string{
	"k\nset weight be_app/app1 3",
	"k\rshow info",
	"k\x00",
	"k\tv",
	"k <<",
	"<<EOF",
	"k\u2028v",
	"k\u0085v",
	"k\x1b[31m",
	"\xff",
	strings.Repeat("B", 5000),
}

// Hostile numbers for integer, port and weight arguments.
var hostileNumbers = []any{1.5, -1.0, 1e20, "1;show info", "1\nx", "50%;x", true, map[string]any{}, []any{1}}

// valid is a known-good value for every argument name.
func valid(h *haproxytest.HAProxy, tool, arg string) any {
	switch arg {
	case "backend", "proxy":
		if tool == "show_errors" {
			return "fe_web"
		}
		return "be_app"
	case "server":
		if tool == "add_server" {
			return "newsrv"
		}
		return "app1"
	case "frontend":
		return "fe_web"
	case "table":
		return "be_app"
	case "map":
		return h.MapFile
	case "acl":
		return h.ACLFile
	case "key", "value", "text", "send":
		return "k"
	case "pattern":
		return "10.9.9.9"
	case "session_id":
		return "0x1"
	case "address":
		return "127.0.0.1"
	case "port", "maxconn", "drain_timeout":
		return float64(1)
	case "weight":
		return float64(1)
	case "state":
		if tool == "set_server_agent" {
			return "up"
		}
		return "maint"
	case "health":
		return "down"
	case "direction":
		return "request"
	case "type":
		return "server"
	case "filter":
		return "be_app"
	case "all", "check", "backup", "enable", "drain":
		return false
	case "entries":
		return []any{map[string]any{"key": "k", "value": "v"}}
	case "filters":
		return []any{map[string]any{"data": "gpc0", "op": "eq", "value": float64(0)}}
	}
	return nil
}

var freeText = map[string]bool{"key": true, "value": true, "text": true, "send": true, "pattern": true}
var numeric = map[string]bool{"port": true, "maxconn": true, "drain_timeout": true, "weight": true}

// snapshot is the HAProxy state an injection could change. Health-check
// results are left out: they move on their own when the machine is busy.
func snapshot(t *testing.T, h *haproxytest.HAProxy) string {
	t.Helper()
	var b strings.Builder
	cols := []string{"be_name", "srv_name", "srv_addr", "srv_admin_state", "srv_uweight", "srv_iweight", "srv_port",
		"srv_check_port", "srv_agent_addr", "srv_agent_port", "srv_use_ssl"}
	for _, row := range haproxy.ParseTable(exec(t, h, "show servers state")) {
		for _, c := range cols {
			fmt.Fprintf(&b, "%s=%v ", c, row[c])
		}
		b.WriteString("\n")
	}
	for _, cmd := range []string{"show map " + h.MapFile, "show acl " + h.ACLFile, "show backend", "show map", "show acl",
		"get weight be_app/app1", "get weight be_app/app2", "get weight be_api/api1"} {
		fmt.Fprintf(&b, "== %s\n%s\n", cmd, exec(t, h, cmd))
	}
	for _, r := range statRows(t, h) {
		fmt.Fprintf(&b, "%s/%s weight=%d slim=%d\n", r.Str("pxname"), r.Str("svname"), r.Int("weight"), r.Int("slim"))
	}
	return b.String()
}

func statRows(t *testing.T, h *haproxytest.HAProxy) []haproxy.StatRow {
	rows, err := haproxy.ParseStatCSV([]byte(exec(t, h, "show stat")))
	if err != nil {
		t.Fatal(err)
	}
	return rows
}

// TestInjectionCorpusChangesNothing sends hostile values in every argument
// of every tool to a real HAProxy: each call must be refused naming the
// argument, open no connection to HAProxy, and leave its state unchanged.
func TestInjectionCorpusChangesNothing(t *testing.T) {
	h := haproxytest.Run(t, haproxytest.Options{})
	relay := newRelay(t, h.RuntimeTCP)
	rt := &runtimeapi.Client{Network: "tcp4", Address: relay.l.Addr().String(), Timeout: 5 * time.Second}
	e := newEnv(t, h, rt, nil, Options{})
	waitStatus(t, h, "be_app", "app3", "DOWN")
	waitStatus(t, h, "be_app", "app1", "UP")
	before := snapshot(t, h)
	relay.n.Store(0)

	var names []string
	for name := range e.srv.ListTools() {
		names = append(names, name)
	}
	sort.Strings(names)
	calls := 0
	for _, name := range names {
		tool := e.srv.GetTool(name).Tool
		props := tool.InputSchema.Properties
		for arg := range props {
			if arg == "dryRun" || arg == "confirm" {
				// The pipeline's own arguments never reach HAProxy; the
				// approval tests cover them.
				continue
			}
			base := map[string]any{}
			for other := range props {
				if v := valid(h, name, other); v != nil {
					base[other] = v
				}
			}
			var values []any
			switch {
			case freeText[arg]:
				for _, v := range hostileText {
					values = append(values, v)
				}
			case numeric[arg]:
				values = hostileNumbers
			case arg == "entries":
				for _, v := range hostileText {
					values = append(values, []any{map[string]any{"key": v, "value": "v"}}, []any{map[string]any{"key": "k", "value": v}})
				}
				values = append(values, "k v", []any{"k v"})
			case arg == "filters":
				for _, v := range hostileNames {
					values = append(values, []any{map[string]any{"data": v, "op": "eq", "value": float64(0)}}, []any{map[string]any{"data": "gpc0", "op": v, "value": float64(0)}})
				}
			case arg == "all" || arg == "check" || arg == "backup" || arg == "enable" || arg == "drain":
				values = []any{"true;show info", float64(1)}
			default:
				for _, v := range hostileNames {
					values = append(values, v)
				}
			}
			for _, v := range values {
				args := map[string]any{}
				for k, bv := range base {
					args[k] = bv
				}
				args[arg] = v
				res := e.raw(t, name, args)
				calls++
				msg := text(res)
				if !res.IsError || !strings.Contains(msg, "invalid argument") {
					t.Errorf("%s %s=%.60q: not refused as invalid: %.200s", name, arg, fmt.Sprint(v), msg)
					continue
				}
				if !strings.Contains(msg, `"`+arg) {
					t.Errorf("%s %s=%.60q: error does not name the argument: %s", name, arg, fmt.Sprint(v), msg)
				}
			}
		}
		// Unknown arguments are refused too.
		if res := e.raw(t, name, map[string]any{"cmd": "show env"}); !res.IsError {
			t.Errorf("%s accepted an unknown argument", name)
		}
	}
	if n := relay.n.Load(); n != 0 {
		t.Errorf("%d connections reached HAProxy during %d refused calls", n, calls)
	}
	if after := snapshot(t, h); after != before {
		t.Errorf("HAProxy state changed:\n--- before\n%s\n--- after\n%s", before, after)
	}
	t.Logf("%d hostile calls over %d tools refused", calls, len(names))
}

// TestSeparatorsInFreeTextAreStoredWhole shows that command separators in
// map keys and values are escaped: stored as data, never executed.
func TestSeparatorsInFreeTextAreStoredWhole(t *testing.T) {
	h := haproxytest.Run(t, haproxytest.Options{})
	e := newEnv(t, h, h.Runtime("unix"), nil, Options{})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = ctx
	weights := exec(t, h, "get weight be_app/app1")
	for _, kv := range [][2]string{
		{"k1;set weight be_app/app1 3", "v;set weight be_app/app1 4"},
		{`k2\;set weight be_app/app1 5`, `v\\;x`},
		{"k3 set weight be_app/app1 6", "a b c"},
		{"'k4'", `"v4"`},
		{"k5\uff1b", "\u202ev"},
	} {
		e.call(t, "add_map_entry", map[string]any{"map": h.MapFile, "key": kv[0], "value": kv[1]})
		g := e.call(t, "get_map", map[string]any{"map": h.MapFile, "key": kv[0]})
		if g["matched"] != true || g["result"].(map[string]any)["value"] != kv[1] {
			t.Errorf("%q: stored %v", kv[0], g)
		}
	}
	if got := exec(t, h, "get weight be_app/app1"); got != weights {
		t.Errorf("weight changed: %q -> %q", weights, got)
	}
	e.call(t, "echo", map[string]any{"text": "a;show info"})
}
