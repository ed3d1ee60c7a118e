package mcpserver

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/mcpfleet/mcpfleet/proxymcp/internal/haproxy"
	"github.com/mcpfleet/mcpfleet/proxymcp/internal/haproxytest"
	"github.com/mcpfleet/mcpfleet/shared/approval"
	"github.com/mcpfleet/mcpfleet/shared/toolcall"
)

// The tests below judge a call's class by what real HTTP traffic through
// HAProxy does before and after it, not by reading the class table back.
// fe_fx routes by a map (fx_route.map), denies by an ACL (fx_block.acl) and
// sets response headers only from another map and ACL (fx_tier.map,
// fx_tag.acl); be_fx has three active servers a1-a3, d1 whose port is
// closed (always DOWN) and a backup bk1; be_other has o1; alt is a
// listener no server uses. Each server answers with its name.

// pool are be_fx's active servers: traffic moving among them is a change.
var pool = map[string]bool{"a1": true, "a2": true, "a3": true}

type fxEnv struct {
	h   *haproxytest.HAProxy
	e   *env
	fe  string // fe_fx's address
	alt string // the spare listener's address
}

func namedServer(t *testing.T, name string) string {
	t.Helper()
	l, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, name) }),
		ReadHeaderTimeout: 5 * time.Second}
	go srv.Serve(l)
	t.Cleanup(func() { srv.Close() })
	return l.Addr().String()
}

func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// closedAddr is a loopback port that refuses connections for the whole
// test: a socket bound to it but never listening keeps any other process
// from taking it (a released port can be, and d1 would then come UP).
func closedAddr(t *testing.T) string {
	t.Helper()
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Close(fd) })
	if err := syscall.Bind(fd, &syscall.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		t.Fatal(err)
	}
	sa, err := syscall.Getsockname(fd)
	if err != nil {
		t.Fatal(err)
	}
	return loopbackAddr(sa.(*syscall.SockaddrInet4).Port)
}

func loopbackAddr(port int) string { return net.JoinHostPort("127.0.0.1", strconv.Itoa(port)) }

// fxConfig is fe_fx and its backends; its maps and ACLs are written by
// Options.Files.
func fxConfig(t *testing.T) (extra, fe, alt string) {
	fe, closed := freeAddr(t), closedAddr(t)
	alt = namedServer(t, "alt")
	// Checks every 10 s keep a forced health state for the test's few
	// requests; d1's fail at once.
	extra = fmt.Sprintf(`
frontend fe_fx
    bind %s
    acl fx_blocked src -f {{dir}}/fx_block.acl
    acl fx_tagged src -f {{dir}}/fx_tag.acl
    http-request deny if fx_blocked
    http-response set-header X-Tagged yes if fx_tagged
    http-response set-header X-Tier %%[src,map_ip({{dir}}/fx_tier.map,none)]
    use_backend %%[req.hdr(host),lower,map({{dir}}/fx_route.map,be_fx)]
    default_backend be_fx

backend be_fx
    balance roundrobin
    default-server check inter 10s fall 1 rise 1
    server a1 %s
    server a2 %s
    server a3 %s
    server d1 %s inter 100ms
    server bk1 %s backup

backend be_other
    server o1 %s
`, fe, namedServer(t, "a1"), namedServer(t, "a2"), namedServer(t, "a3"), closed, namedServer(t, "bk1"), namedServer(t, "o1"))
	return extra, fe, alt
}

var fxFiles = map[string]string{"fx_route.map": "www.fx be_fx\n", "fx_tier.map": "", "fx_block.acl": "", "fx_tag.acl": ""}

func startFX(t *testing.T, branch string) *fxEnv {
	t.Helper()
	haproxytest.Require(t, branch)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var h *haproxytest.HAProxy
	var fe, alt string
	// fe_fx's port was free when picked; a parallel test may take it
	// before HAProxy binds it, so a failed start picks new ones.
	for attempt := 0; h == nil; attempt++ {
		var extra string
		extra, fe, alt = fxConfig(t)
		var err error
		h, err = haproxytest.Start(ctx, haproxytest.Options{Version: branch, Extra: extra, Files: fxFiles})
		if err != nil && attempt == 2 {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() { _ = h.Stop() })
	if err := h.WaitServerStatus(ctx, "be_fx", "d1", "DOWN"); err != nil {
		t.Fatal(err)
	}
	return &fxEnv{h: h, e: newEnv(t, h, h.Runtime("unix"), statsClient(h), Options{}), fe: fe, alt: alt}
}

// traffic counts who answered requests through fe_fx (a server's name)
// and how the others failed (an HTTP status, "refused").
type traffic map[string]int

func (t traffic) String() string {
	var keys []string
	for k, n := range t {
		keys = append(keys, fmt.Sprintf("%s:%d", k, n))
	}
	sort.Strings(keys)
	return strings.Join(keys, " ")
}

// observe sends requests for a host fx_route.map routes (www.fx) and for
// one it does not yet (new.fx).
func (f *fxEnv) observe(t *testing.T) traffic {
	t.Helper()
	c := &http.Client{Timeout: 3 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	out := traffic{}
	for _, host := range []string{"www.fx", "new.fx"} {
		for range 8 {
			req, _ := http.NewRequest(http.MethodGet, "http://"+f.fe+"/", nil)
			req.Host = host
			resp, err := c.Do(req)
			if err != nil {
				out["refused"]++
				continue
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				out[string(body)]++
			} else {
				out[fmt.Sprint(resp.StatusCode)]++
			}
		}
	}
	return out
}

// observedClass is the class traffic shows: destructive when requests now
// fail in a way they did not (503 stopped, 403 denied, refused), or reach
// a server or listener outside be_fx's active pool that did not answer
// them before (a backup, another backend, another address); a change when
// they are answered as before, among the pool's servers.
func observedClass(before, after traffic) toolcall.Class {
	for k := range after {
		if before[k] == 0 && !pool[k] {
			return toolcall.Destructive
		}
	}
	return toolcall.Change
}

type effectCase struct {
	name  string
	setup []string // runtime API commands run first
	tool  string
	args  map[string]any
	want  toolcall.Class // the class traffic must show, and the call must have
	// refused: the name does not exist, so the preview cannot read it and
	// HAProxy refuses the call; traffic must show nothing moved.
	refused bool
}

func effectCases(alt, dir string) []effectCase {
	altHost, altPort, _ := net.SplitHostPort(alt)
	var port int
	fmt.Sscan(altPort, &port)
	srv := func(s string, kv ...any) map[string]any {
		m := map[string]any{"backend": "be_fx", "server": s}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i].(string)] = kv[i+1]
		}
		return m
	}
	maint := func(names ...string) []string {
		var out []string
		for _, n := range names {
			out = append(out, "set server be_fx/"+n+" state maint")
		}
		return out
	}
	D, C := toolcall.Destructive, toolcall.Change
	return []effectCase{
		// Out of rotation: one of several, or the last one serving.
		{"drain one of three", nil, "set_server_state", srv("a1", "state", "drain"), C, false},
		{"drain the last active so the backup takes over", maint("a2", "a3"), "set_server_state", srv("a1", "state", "drain"), D, false},
		{"maint the last server", maint("a2", "a3", "bk1"), "set_server_state", srv("a1", "state", "maint"), D, false},
		{"disable the last with others in DRAIN and at weight 0", []string{"set server be_fx/a2 state drain", "set server be_fx/a3 weight 0", "set server be_fx/bk1 state maint"}, "disable_server", srv("a1"), D, false},
		{"disable a server already DOWN", maint("a2", "a3"), "disable_server", srv("d1"), C, false},
		{"disable a server already in maintenance", maint("a2", "a3"), "disable_server", srv("a2"), C, false},
		{"enable a server back into the pool", maint("a2"), "enable_server", srv("a2"), C, false},
		{"weight 0 on the last", maint("a2", "a3", "bk1"), "set_server_weight", srv("a1", "weight", 0), D, false},
		{"weight 0% on the last", maint("a2", "a3", "bk1"), "set_server_weight", srv("a1", "weight", "0%"), D, false},
		{"weight 1% of 1 rounds to 0 on the last", maint("a2", "a3", "bk1"), "set_server_weight", srv("a1", "weight", "1%"), D, false},
		{"weight 0% on one of three", nil, "set_server_weight", srv("a1", "weight", "0%"), C, false},
		{"weight 50 on the last", maint("a2", "a3", "bk1"), "set_server_weight", srv("a1", "weight", 50), C, false},
		{"maint the backup while actives serve", nil, "set_server_state", srv("bk1", "state", "maint"), C, false},
		{"maint the backup when it is the last", maint("a1", "a2", "a3"), "set_server_state", srv("bk1", "state", "maint"), D, false},
		{"force the last down", maint("a2", "a3", "bk1"), "set_server_health", srv("a1", "health", "down"), D, false},
		{"force one of three stopping", nil, "set_server_health", srv("a1", "health", "stopping"), C, false},
		{"force the last up", maint("a2", "a3", "bk1"), "set_server_health", srv("a1", "health", "up"), C, false},
		// Names are exact: another case is another (missing) server, so
		// HAProxy refuses and nothing moves.
		{"upper-case server name of the last", maint("a2", "a3", "bk1"), "set_server_state", srv("A1", "state", "maint"), C, true},
		{"upper-case backend name of the last", maint("a2", "a3", "bk1"), "set_server_state", map[string]any{"backend": "BE_FX", "server": "a1", "state": "maint"}, C, true},
		// Addresses: another listener, the same one, a server taking no traffic.
		{"move a serving server to another listener", nil, "set_server_addr", srv("a1", "address", altHost, "port", port), D, false},
		{"move a server to the address it has", nil, "set_server_addr", srv("a1", "address", "127.0.0.1", "port", 0), C, false},
		{"move a server in maintenance", maint("a1"), "set_server_addr", srv("a1", "address", altHost, "port", port), C, false},
		{"add a server in service", nil, "add_server", srv("n1", "address", altHost, "port", port, "enable", true), D, false},
		{"add a server in maintenance", nil, "add_server", srv("n1", "address", altHost, "port", port), C, false},
		// Frontends.
		{"pause an open frontend", nil, "disable_frontend", map[string]any{"frontend": "fe_fx"}, D, false},
		{"pause a paused frontend", []string{"disable frontend fe_fx"}, "disable_frontend", map[string]any{"frontend": "fe_fx"}, C, false},
		{"resume a paused frontend", []string{"disable frontend fe_fx"}, "enable_frontend", map[string]any{"frontend": "fe_fx"}, C, false},
		// Maps and ACLs: used to route or deny, or only for a header.
		{"add a route to the routing map", nil, "add_map_entry", map[string]any{"map": dir + "/fx_route.map", "key": "new.fx", "value": "be_other"}, D, false},
		{"reroute a key of the routing map", nil, "set_map_entry", map[string]any{"map": dir + "/fx_route.map", "key": "www.fx", "value": "be_other"}, D, false},
		{"add to a header-only map", nil, "add_map_entry", map[string]any{"map": dir + "/fx_tier.map", "key": "127.0.0.1", "value": "gold"}, C, false},
		{"add to the deny ACL", nil, "add_acl_entry", map[string]any{"acl": dir + "/fx_block.acl", "pattern": "127.0.0.1"}, D, false},
		{"add to a header-only ACL", nil, "add_acl_entry", map[string]any{"acl": dir + "/fx_tag.acl", "pattern": "127.0.0.1"}, C, false},
	}
}

// TestClassIsTheEffectOnTraffic: for every write tool whose class depends
// on the call, each variant's class (from its dry run) is the class the
// traffic through HAProxy shows once it runs.
func TestClassIsTheEffectOnTraffic(t *testing.T) {
	haproxytest.EachVersion(t, func(t *testing.T, branch string) {
		for i, named := range effectCases("127.0.0.1:1", "") {
			t.Run(named.name, func(t *testing.T) {
				f := startFX(t, branch)
				// The variant with this run's spare listener.
				c := effectCases(f.alt, f.h.Dir)[i]
				args := map[string]any{}
				for k, v := range c.args {
					if k != "port" || v != 0 {
						args[k] = v
					}
				}
				for _, cmd := range c.setup {
					exec(t, f.h, cmd)
				}
				before := f.observe(t)
				dry := map[string]any{"dryRun": true}
				for k, v := range args {
					dry[k] = v
				}
				res := f.e.raw(t, c.tool, dry)
				if c.refused {
					if !res.IsError || !strings.Contains(text(res), "not found") || !strings.Contains(text(res), "nothing was changed") {
						t.Fatalf("dry run of a missing name: %s", text(res))
					}
					if res := f.e.raw(t, c.tool, args); !res.IsError {
						t.Fatalf("HAProxy accepted a missing name: %s", text(res))
					}
					if after := f.observe(t); observedClass(before, after) != toolcall.Change {
						t.Errorf("a refused call moved traffic: before %v after %v", before, after)
					}
					return
				}
				p := preview(t, res)
				if res := f.e.raw(t, c.tool, args); res.IsError {
					t.Fatalf("%s %v: %s", c.tool, args, text(res))
				}
				after := f.observe(t)
				seen := observedClass(before, after)
				if seen != c.want || p.Class != c.want.String() {
					t.Errorf("%s %v: classified %s, traffic shows %s (want %s)\nbefore: %v\nafter:  %v\npreview: %s",
						c.tool, args, p.Class, seen, c.want, before, after, p.Summary)
				}
			})
		}
	})
}

// TestConcurrentDrainsOfTheLastTwo: two drains of the last two serving
// servers at once never both pass as changes: one runs, the other is
// refused (state changed) or previewed as destructive; the backend keeps
// answering.
func TestConcurrentDrainsOfTheLastTwo(t *testing.T) {
	haproxytest.Require(t, "")
	f := startFX(t, "")
	e := newApEnv(t, f.h, toolcall.Config{Approval: approval.Config{Policy: approval.Destructive}})
	for round := range 10 {
		for _, cmd := range []string{"set server be_fx/a1 state ready", "set server be_fx/a2 state ready", "set server be_fx/a3 state maint", "set server be_fx/bk1 state maint"} {
			exec(t, f.h, cmd)
		}
		var wg sync.WaitGroup
		texts := make([]string, 2)
		ran := make([]bool, 2)
		for i, s := range []string{"a1", "a2"} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				res := e.call("set_server_state", map[string]any{"backend": "be_fx", "server": s, "state": "drain"})
				texts[i] = text(res)
				ran[i] = !res.IsError && res.StructuredContent != nil && !strings.Contains(texts[i], "Approval needed")
			}()
		}
		wg.Wait()
		if ran[0] && ran[1] {
			t.Fatalf("round %d: both drains ran as changes:\n%s\n%s", round, texts[0], texts[1])
		}
		for i := range 2 {
			if !ran[i] && !strings.Contains(texts[i], "state changed since the call was planned") && !strings.Contains(texts[i], "Approval needed") {
				t.Errorf("round %d: the drain that did not run says: %s", round, texts[i])
			}
		}
		if tr := f.observe(t); tr["503"] > 0 || tr["refused"] > 0 {
			t.Fatalf("round %d: be_fx stopped answering: %v", round, tr)
		}
	}
}

// TestApprovedPlanGoesStale: a drain previewed as a change while another
// server served is refused once that server went down before the
// approval was used; nothing changes.
func TestApprovedPlanGoesStale(t *testing.T) {
	haproxytest.Require(t, "")
	f := startFX(t, "")
	e := newApEnv(t, f.h, toolcall.Config{Approval: approval.Config{Policy: approval.Change}})
	exec(t, f.h, "set server be_fx/a3 state maint")
	exec(t, f.h, "set server be_fx/bk1 state maint")
	args := map[string]any{"backend": "be_fx", "server": "a1", "state": "maint"}
	res := e.call("set_server_state", args)
	if p := preview(t, res); p.Class != "change" || !strings.Contains(p.Summary, "Other active servers of be_fx take traffic (a2)") {
		t.Fatalf("preview %s: %s", p.Class, p.Summary)
	}
	code := codeOf(t, res)
	exec(t, f.h, "set server be_fx/a2 state maint") // the second server goes down
	confirmed := map[string]any{"confirm": code}
	for k, v := range args {
		confirmed[k] = v
	}
	res = e.call("set_server_state", confirmed)
	if !res.IsError || !strings.Contains(text(res), "state changed since the preview") || !strings.Contains(text(res), "last server of be_fx taking traffic") {
		t.Fatalf("stale approval: %s", text(res))
	}
	if tr := f.observe(t); tr["a1"] == 0 || tr["503"] > 0 {
		t.Fatalf("the stale approval changed traffic: %v", tr)
	}
}

// TestFleetClassIsTheWidest: where one instance has other servers serving
// and the other does not, the call is destructive for the fleet and a
// change on the first instance alone.
func TestFleetClassIsTheWidest(t *testing.T) {
	haproxytest.Require(t, "")
	extra1, _, _ := fxConfig(t)
	extra2, fe2, _ := fxConfig(t)
	h1 := haproxytest.Run(t, haproxytest.Options{Extra: extra1, Files: fxFiles})
	h2 := haproxytest.Run(t, haproxytest.Options{Extra: extra2, Files: fxFiles})
	for _, h := range []*haproxytest.HAProxy{h1, h2} {
		waitStatus(t, h, "be_fx", "d1", "DOWN")
	}
	for _, cmd := range []string{"set server be_fx/a2 state maint", "set server be_fx/a3 state maint", "set server be_fx/bk1 state maint"} {
		exec(t, h2, cmd)
	}
	e := newFleetEnv(t, []*haproxytest.HAProxy{h1, h2}, noApprovalConfig())
	args := func(kv ...any) map[string]any {
		m := map[string]any{"backend": "be_fx", "server": "a1", "dryRun": true}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i].(string)] = kv[i+1]
		}
		return m
	}
	if p := preview(t, mustRes(e.call("disable_server", args()))); p.Class != "destructive" || !strings.Contains(p.Summary, "lb2: ") {
		t.Errorf("fleet: %s %s", p.Class, p.Summary)
	}
	if p := preview(t, mustRes(e.call("disable_server", args("instance", "lb1")))); p.Class != "change" {
		t.Errorf("lb1 alone: %s %s", p.Class, p.Summary)
	}
	f2 := &fxEnv{h: h2, fe: fe2}
	before := f2.observe(t)
	run := args()
	delete(run, "dryRun")
	e.ok("disable_server", run)
	if after := f2.observe(t); observedClass(before, after) != toolcall.Destructive {
		t.Errorf("lb2's traffic: before %v after %v", before, after)
	}
}

func mustRes[T any](res T, _ map[string]any) T { return res }

// The effect of a map write depends on the configuration line using it.
func TestPatternUseReadsTheConfiguration(t *testing.T) {
	haproxytest.Require(t, "")
	f := startFX(t, "")
	c := haproxy.New(f.h.Runtime("unix"), nil)
	for _, v := range []struct {
		kind   haproxy.MapKind
		ref    string
		routes bool
		line   string
	}{
		{haproxy.KindMap, f.h.Dir + "/fx_route.map", true, "use_backend"},
		{haproxy.KindMap, f.h.Dir + "/fx_tier.map", false, "http-response set-header X-Tier"},
		{haproxy.KindACL, f.h.Dir + "/fx_block.acl", true, "http-request deny if fx_blocked"},
		{haproxy.KindACL, f.h.Dir + "/fx_tag.acl", false, "http-response set-header X-Tagged"},
		{haproxy.KindMap, f.h.MapFile, true, "use_backend"},
	} {
		u, err := c.PatternUse(context.Background(), v.kind, v.ref)
		if err != nil || !u.Known || u.Routes != v.routes || !strings.Contains(u.Why, v.line) {
			t.Errorf("%s %s: %+v %v", v.kind, v.ref, u, err)
		}
	}
}
