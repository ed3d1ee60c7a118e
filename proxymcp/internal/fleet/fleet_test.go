package fleet_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpfleet/mcpfleet/proxymcp/internal/config"
	"github.com/mcpfleet/mcpfleet/proxymcp/internal/fleet"
	"github.com/mcpfleet/mcpfleet/proxymcp/internal/haproxy"
	"github.com/mcpfleet/mcpfleet/proxymcp/internal/haproxytest"
	"github.com/mcpfleet/mcpfleet/proxymcp/internal/runtimeapi"
	"github.com/mcpfleet/mcpfleet/proxymcp/internal/statspage"
	"github.com/mcpfleet/mcpfleet/shared/envconfig"
)

// startFleet starts one real HAProxy per option and waits until every
// health check has settled, so that the instances agree before a test makes
// them differ. They start one after the other: haproxytest picks free ports
// and releases them for HAProxy, which two concurrent starts could both
// pick; a start that still loses its ports to another test is retried.
func startFleet(t testing.TB, opts ...haproxytest.Options) []*haproxytest.HAProxy {
	t.Helper()
	needHAProxy(t)
	hs := make([]*haproxytest.HAProxy, len(opts))
	for i, o := range opts {
		o.Extra = fleetBackend + o.Extra
		var err error
		for attempt := 0; attempt < 3; attempt++ {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			hs[i], err = haproxytest.Start(ctx, o)
			cancel()
			if err == nil || !strings.Contains(err.Error(), "Address already in use") {
				break
			}
		}
		if err != nil {
			t.Fatalf("starting HAProxy %d: %v", i+1, err)
		}
		h := hs[i]
		t.Cleanup(func() { _ = h.Stop() })
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, h := range hs {
		// app3's check port is closed: it goes DOWN after two checks.
		if err := h.WaitServerStatus(ctx, "be_app", "app3", "DOWN"); err != nil {
			t.Fatal(err)
		}
	}
	return hs
}

func needHAProxy(t testing.TB) {
	t.Helper()
	haproxytest.Require(t, "")
}

// member is a fleet member on h's admin socket and its stats page.
func member(name string, h *haproxytest.HAProxy) fleet.Member {
	return fleet.Member{Name: name, ReadTimeout: 10 * time.Second, Client: haproxy.New(
		&runtimeapi.Client{Network: "unix", Address: h.Socket, Timeout: 5 * time.Second, MaxConns: 2},
		&statspage.Client{URL: h.StatsURL, Username: haproxytest.StatsUser, Password: haproxytest.StatsPassword, Timeout: 5 * time.Second})}
}

func newFleet(t testing.TB, hs []*haproxytest.HAProxy) (*fleet.Fleet, []string) {
	t.Helper()
	var ms []fleet.Member
	var names []string
	for i, h := range hs {
		names = append(names, fmt.Sprintf("lb%d", i+1))
		ms = append(ms, member(names[i], h))
	}
	f, err := fleet.New(ms...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = f.Close() })
	return f, names
}

// raw sends one command over a plain connection to the admin socket, the
// way an operator's socat does: behind proxymcp's back.
func raw(t testing.TB, h *haproxytest.HAProxy, cmd string) string {
	t.Helper()
	c, err := net.Dial("unix", h.Socket)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.WriteString(c, cmd+"\n"); err != nil {
		t.Fatal(err)
	}
	out, err := io.ReadAll(c)
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}

// state is one instance's server states as HAProxy holds them, read over
// a raw socket (no proxymcp code involved but the parser).
func state(t testing.TB, h *haproxytest.HAProxy) []fleet.Item {
	t.Helper()
	return fleet.StateItems(haproxy.ParseTable(raw(t, h, "show servers state")))
}

// fleetBackend is added to every test HAProxy: servers without health
// checks, whose state nothing but a command changes. The standard
// backends' checks run every 500 ms against helpers in the test process and
// on a loaded machine pass through "UP 1/2" now and then, on any instance:
// a real (transient) divergence that the tests must not depend on.
const fleetBackend = `
backend be_fleet
    balance roundrobin
    server f1 127.0.0.1:9 weight 100
    server f2 127.0.0.1:9 weight 50
    server f3 127.0.0.1:9 maxconn 30
`

// steady keeps the objects only commands change: frontends, be_fleet's servers.
func steady(items []fleet.Item) []fleet.Item {
	return slices.DeleteFunc(items, func(it fleet.Item) bool {
		return it.Kind == fleet.KindServer && !strings.HasPrefix(it.Key, "be_fleet/")
	})
}

// settable keeps what a command sets (admin state, weight, address), not
// the operational state health checks move on their own.
func settable(items []fleet.Item) []fleet.Item {
	for i := range items {
		items[i].Fields = slices.DeleteFunc(items[i].Fields, func(f fleet.Field) bool { return f.Name == fleet.FieldOpState })
	}
	return items
}

func listServers(ctx context.Context, m fleet.Member) ([]haproxy.Server, haproxy.Source, error) {
	c := m.Client
	return c.ListServers(ctx, "")
}

func TestReadMergesInstances(t *testing.T) {
	needHAProxy(t)
	hs := startFleet(t, haproxytest.Options{}, haproxytest.Options{}, haproxytest.Options{})
	f, names := newFleet(t, hs)
	ms, err := f.Select(nil)
	if err != nil {
		t.Fatal(err)
	}
	ans, err := fleet.Read(context.Background(), ms, listServers)
	if err != nil {
		t.Fatal(err)
	}
	if len(ans) != 3 {
		t.Fatalf("%d answers", len(ans))
	}
	for i, a := range ans {
		if a.Instance != names[i] || a.Err != nil || a.Source != haproxy.SourceRuntime {
			t.Errorf("answer %d: %s %v %s", i, a.Instance, a.Err, a.Source)
		}
		// Each instance's own servers: the addresses are per HAProxy (each
		// test HAProxy has its own helper servers), so a mixed-up answer shows.
		var want []string
		for _, it := range state(t, hs[i]) {
			want = append(want, it.Key+" "+it.Fields[3].Value)
		}
		var got []string
		for _, s := range a.Value {
			got = append(got, fmt.Sprintf("%s/%s %s:%d", s.Backend, s.Name, s.Address, s.Port))
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: servers %v, HAProxy holds %v", a.Instance, got, want)
		}
	}
	// Freshly started identical configurations: no divergence.
	items := map[string][]fleet.Item{}
	for _, a := range ans {
		items[a.Instance] = steady(fleet.ServerItems(a.Value))
	}
	if d := fleet.Diverge(names, items); len(d) != 0 {
		t.Errorf("identical instances diverge: %v", fleet.Summaries(d))
	}

	// A selection: one name, a list, "all", an unknown name (refused, naming the known ones).
	for _, tc := range []struct {
		sel  []string
		want []string
	}{
		{[]string{"lb2"}, []string{"lb2"}},
		{[]string{"lb3", "lb1", "lb3"}, []string{"lb1", "lb3"}},
		{[]string{"all"}, names},
		{nil, names},
	} {
		ms, err := f.Select(tc.sel)
		var got []string
		for _, m := range ms {
			got = append(got, m.Name)
		}
		if err != nil || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("Select(%v) = %v, %v", tc.sel, got, err)
		}
	}
	_, err = f.Select([]string{"lb1", "lb9"})
	var ue *envconfig.UnknownMemberError
	if !errors.As(err, &ue) || !strings.Contains(err.Error(), `"lb9"`) || !strings.Contains(err.Error(), "lb1, lb2, lb3") {
		t.Errorf("unknown instance: %v", err)
	}
}

// A change made on one instance behind proxymcp's back (a raw socket, as
// socat would) is found: servers (state, weight, address, maxconn),
// frontends, map entries and ACL entries, each named with every
// instance's value.
func TestDivergenceAfterChangeBehindTheBack(t *testing.T) {
	needHAProxy(t)
	hs := startFleet(t, haproxytest.Options{}, haproxytest.Options{}, haproxytest.Options{})
	f, names := newFleet(t, hs)
	ctx := context.Background()
	ms := f.Members()

	for _, c := range []struct {
		h   int
		cmd string
	}{
		{1, "set server be_fleet/f2 state drain"},
		{2, "set server be_fleet/f1 weight 10"},
		{0, "set maxconn server be_fleet/f3 25"},
		{1, "set server be_fleet/f3 addr 127.0.0.2 port 10"},
		{2, "set maxconn frontend fe_api 77"},
		{0, "set map " + hs[0].MapFile + " api.example.com be_app"},
		{1, "add map " + hs[1].MapFile + " new.example.com be_api"},
		{2, "del acl " + hs[2].ACLFile + " 192.0.2.10"},
	} {
		if out := raw(t, hs[c.h], c.cmd); strings.TrimSpace(out) != "" && !strings.HasPrefix(out, "IP changed from") {
			t.Fatalf("%s: %q", c.cmd, out)
		}
	}

	// list_servers / show_stat: statistics.
	stat, err := fleet.Read(ctx, ms, func(ctx context.Context, m fleet.Member) (haproxy.StatTable, haproxy.Source, error) {
		c := m.Client
		return c.ShowStat(ctx, haproxy.StatFilter{})
	})
	if err != nil {
		t.Fatal(err)
	}
	items := map[string][]fleet.Item{}
	for _, a := range stat {
		items[a.Instance] = steady(fleet.StatItems(a.Value.Rows))
	}
	got := fleet.Summaries(fleet.Diverge(names, items))
	want := []string{
		"fe_api: lb1 maxconn 4000, lb2 maxconn 4000, lb3 maxconn 77",
		"be_fleet/f1: lb1 weight 100, lb2 weight 100, lb3 weight 10",
		"be_fleet/f2: lb1 no check, lb2 DRAIN, lb3 no check",
		"be_fleet/f3: lb1 addr 127.0.0.1:9 maxconn 25, lb2 addr 127.0.0.2:10 maxconn 30, lb3 addr 127.0.0.1:9 maxconn 30",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("show_stat divergence:\n got %q\nwant %q", got, want)
	}

	// show_servers_state: the administrative state, as HAProxy keeps it.
	st, err := fleet.Read(ctx, ms, func(ctx context.Context, m fleet.Member) ([]map[string]any, haproxy.Source, error) {
		c := m.Client
		rows, err := c.ServersTable(ctx, "state", "")
		return rows, haproxy.SourceRuntime, err
	})
	if err != nil {
		t.Fatal(err)
	}
	items = map[string][]fleet.Item{}
	for _, a := range st {
		items[a.Instance] = steady(fleet.StateItems(a.Value))
	}
	ds := fleet.Diverge(names, items)
	got = fleet.Summaries(ds)
	want = []string{
		"be_fleet/f1: lb1 weight 100, lb2 weight 100, lb3 weight 10",
		"be_fleet/f2: lb1 admin ready, lb2 admin drain, lb3 admin ready",
		"be_fleet/f3: lb1 addr 127.0.0.1:9, lb2 addr 127.0.0.2:10, lb3 addr 127.0.0.1:9",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("show_servers_state divergence:\n got %q\nwant %q", got, want)
	}
	if d := ds[1].Differences[fleet.FieldAdminState]; !reflect.DeepEqual(d, map[string]string{"lb1": "ready", "lb2": "drain", "lb3": "ready"}) {
		t.Errorf("differences %v", d)
	}

	// show_map: values and presence; show_acl: presence.
	for _, tc := range []struct {
		kind  haproxy.MapKind
		ref   func(h *haproxytest.HAProxy) string
		items func([]haproxy.PatternEntry) []fleet.Item
		want  []string
	}{
		{haproxy.KindMap, func(h *haproxytest.HAProxy) string { return h.MapFile }, fleet.MapItems, []string{
			"api.example.com: lb1 value be_app, lb2 value be_api, lb3 value be_api",
			"new.example.com: lb1 absent, lb2 present, lb3 absent",
		}},
		{haproxy.KindACL, func(h *haproxytest.HAProxy) string { return h.ACLFile }, fleet.ACLItems, []string{
			"192.0.2.10: lb1 present, lb2 present, lb3 absent",
		}},
	} {
		items := map[string][]fleet.Item{}
		for i, m := range ms {
			// Each instance names its file by its own path.
			e, err := m.Client.ShowPatterns(ctx, tc.kind, tc.ref(hs[i]))
			if err != nil {
				t.Fatal(err)
			}
			items[m.Name] = tc.items(e)
		}
		if got := fleet.Summaries(fleet.Diverge(names, items)); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s divergence:\n got %q\nwant %q", tc.kind, got, tc.want)
		}
	}

	// get_map: the lookup of one sample on every instance.
	items = map[string][]fleet.Item{}
	for i, m := range ms {
		a, err := m.Client.GetPattern(ctx, haproxy.KindMap, hs[i].MapFile, "api.example.com")
		if err != nil {
			t.Fatal(err)
		}
		items[m.Name] = []fleet.Item{fleet.LookupItem(haproxy.KindMap, "api.example.com", a)}
	}
	if got := fleet.Summaries(fleet.Diverge(names, items)); !reflect.DeepEqual(got, []string{"api.example.com: lb1 value be_app, lb2 value be_api, lb3 value be_api"}) {
		t.Errorf("get_map divergence %q", got)
	}
}

// drain builds the change set_server_state makes, with its undo.
func drain(backend, server, state string) fleet.Change {
	cmd := "set server " + backend + "/" + server + " state " + state
	return fleet.Change{
		Call:     fleet.ToolCall{Tool: "set_server_state", Args: map[string]any{"backend": backend, "server": server, "state": state}},
		Commands: []string{cmd},
		Sent: func(_ fleet.Member, src haproxy.Source) []string {
			if src == haproxy.SourceStats {
				return []string{"stats page admin form: " + state + " " + backend + "/" + server}
			}
			return []string{cmd}
		},
		Apply: func(ctx context.Context, m fleet.Member) (haproxy.Applied, haproxy.Source, error) {
			c := m.Client
			src, res, err := c.SetServerState(ctx, backend, server, state)
			return res, src, err
		},
		Undo: func(ctx context.Context, m fleet.Member) (*fleet.ToolCall, error) {
			c := m.Client
			rows, err := c.ServersTable(ctx, "state", backend)
			if err != nil {
				return nil, err
			}
			for _, r := range rows {
				if r["srv_name"] == server {
					prev := haproxy.AdminStateName(r["srv_admin_state"].(int64))
					return &fleet.ToolCall{Tool: "set_server_state", Args: map[string]any{"backend": backend, "server": server, "state": prev}}, nil
				}
			}
			return nil, nil // absent: the change will fail here, nothing to undo
		},
	}
}

func adminState(t testing.TB, h *haproxytest.HAProxy, key string) string {
	t.Helper()
	for _, it := range state(t, h) {
		if it.Key == key {
			return it.Fields[0].Value
		}
	}
	return "absent"
}

func TestDrainAppliedToAll(t *testing.T) {
	needHAProxy(t)
	hs := startFleet(t, haproxytest.Options{}, haproxytest.Options{}, haproxytest.Options{})
	f, names := newFleet(t, hs)
	out, err := fleet.Write(context.Background(), f.Members(), drain("be_app", "app2", "drain"))
	if err != nil {
		t.Fatal(err)
	}
	for i, o := range out {
		if o.Instance != names[i] || !o.Applied || !o.Changed || o.Uncertain || o.Error != "" || o.Source != haproxy.SourceRuntime ||
			!reflect.DeepEqual(o.Sent, []string{"set server be_app/app2 state drain"}) {
			t.Errorf("outcome %+v", o)
		}
		if got := adminState(t, hs[i], "be_app/app2"); got != "drain" {
			t.Errorf("%s: HAProxy holds be_app/app2 %s", names[i], got)
		}
	}
}

// The server is missing on one instance: the other two change, and the
// error names which changed, which did not, HAProxy's refusal, and the
// calls that complete or undo it. Those calls are real: the undo restores.
func TestPartialFailureReportedExactly(t *testing.T) {
	needHAProxy(t)
	pair := "\nbackend be_pair\n    balance roundrobin\n    server s1 127.0.0.1:9 weight 10\n    server s2 127.0.0.1:9\n"
	lone := "\nbackend be_pair\n    balance roundrobin\n    server s2 127.0.0.1:9\n"
	hs := startFleet(t, haproxytest.Options{Extra: pair}, haproxytest.Options{Extra: pair}, haproxytest.Options{Extra: lone})
	f, _ := newFleet(t, hs)
	ctx := context.Background()
	before := settable(state(t, hs[2]))

	out, err := fleet.Write(ctx, f.Members(), drain("be_pair", "s1", "drain"))
	var pe *fleet.PartialError
	if !errors.As(err, &pe) {
		t.Fatalf("want a partial error, got %v", err)
	}
	if !reflect.DeepEqual(pe.Applied, []string{"lb1", "lb2"}) || !reflect.DeepEqual(pe.Failed, []string{"lb3"}) || len(pe.Uncertain) != 0 {
		t.Errorf("applied %v failed %v uncertain %v", pe.Applied, pe.Failed, pe.Uncertain)
	}
	msg := err.Error()
	for _, w := range []string{
		"partially applied: changed on lb1, lb2; NOT changed on lb3",
		`lb3: HAProxy refused "set server be_pair/s1 state drain": No such server`,
		`To complete it, fix the cause and call set_server_state {"backend":"be_pair","instance":["lb3"],"server":"s1","state":"drain"}`,
		`to undo it, call set_server_state {"backend":"be_pair","instance":["lb1","lb2"],"server":"s1","state":"ready"}`,
	} {
		if !strings.Contains(msg, w) {
			t.Errorf("error lacks %q:\n%s", w, msg)
		}
	}
	if o := out[2]; o.Applied || o.Uncertain || o.Answer != "No such server." || o.Instance != "lb3" {
		t.Errorf("lb3 outcome %+v", o)
	}
	for i := range 2 {
		if got := adminState(t, hs[i], "be_pair/s1"); got != "drain" {
			t.Errorf("lb%d: be_pair/s1 is %s", i+1, got)
		}
	}
	if after := settable(state(t, hs[2])); !reflect.DeepEqual(before, after) {
		t.Errorf("lb3 changed:\n%v\n%v", before, after)
	}

	// The suggested undo call, made: lb1 and lb2 are ready again.
	undo := pe.Undo[0]
	sel, err := f.Select(undo.Args["instance"].([]string))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := fleet.Write(ctx, sel, drain("be_pair", "s1", undo.Args["state"].(string))); err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		if got := adminState(t, hs[i], "be_pair/s1"); got != "ready" {
			t.Errorf("after undo lb%d: be_pair/s1 is %s", i+1, got)
		}
	}

	// Missing everywhere: not applied anywhere, nothing changed, no partial.
	snap := [][]fleet.Item{settable(state(t, hs[0])), settable(state(t, hs[1])), settable(state(t, hs[2]))}
	_, err = fleet.Write(ctx, f.Members(), drain("be_pair", "nosuch", "maint"))
	var na *fleet.NotAppliedError
	if !errors.As(err, &na) || !strings.Contains(err.Error(), "not applied on any instance, nothing was changed") || errors.As(err, &pe) {
		t.Errorf("missing everywhere: %v", err)
	}
	for i, h := range hs {
		if got := settable(state(t, h)); !reflect.DeepEqual(got, snap[i]) {
			t.Errorf("lb%d changed", i+1)
		}
	}
}

// hungListener accepts connections and never answers: a fake, because no
// real HAProxy can be made to hang on its socket and stats page.
func hungListener(t testing.TB, network, addr string) net.Listener {
	t.Helper()
	l, err := net.Listen(network, addr)
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var conns []net.Conn
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c) // held open, never read or written
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		l.Close()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			c.Close()
		}
	})
	return l
}

// One instance is down (its HAProxy stopped: socket and stats page closed)
// and one hangs (accepts, never answers, on both back ends): the two others
// answer, each within its own time, next to the two errors.
func TestDownAndHungInstances(t *testing.T) {
	needHAProxy(t)
	hs := startFleet(t, haproxytest.Options{}, haproxytest.Options{}, haproxytest.Options{})
	_ = hs[2].Stop()
	rt := hungListener(t, "unix", filepath.Join(t.TempDir(), "hung.sock"))
	page := hungListener(t, "tcp4", "127.0.0.1:0")
	// The runtime API gives up after 2 s, the stats page fallback is cut
	// by the instance's own 3 s limit.
	const hungLimit = 3 * time.Second
	hung := fleet.Member{Name: "hung", ReadTimeout: hungLimit, Client: haproxy.New(
		&runtimeapi.Client{Network: "unix", Address: rt.Addr().String(), Timeout: 2 * time.Second, MaxConns: 2},
		&statspage.Client{URL: "http://" + page.Addr().String() + "/stats", Timeout: 2 * time.Second})}
	// The hung instance first: asked one after the other, the others could
	// not answer before its limit.
	f, err := fleet.New(hung, member("lb1", hs[0]), member("lb2", hs[1]), member("down", hs[2]))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	start := time.Now()
	ans, err := fleet.Read(context.Background(), f.Members(), listServers)
	took := time.Since(start)
	if err != nil {
		t.Fatal(err)
	}
	if ans[0].Err == nil || !strings.Contains(ans[0].Err.Error(), "runtime_api") || !strings.Contains(ans[0].Err.Error(), "stats_page") ||
		!strings.Contains(ans[0].Err.Error(), "no answer within this instance's 3s") {
		t.Errorf("hung: %v", ans[0].Err)
	}
	if ans[3].Err == nil || !strings.Contains(ans[3].Err.Error(), "connect") {
		t.Errorf("down: %v", ans[3].Err)
	}
	for _, a := range ans[1:3] {
		if a.Err != nil || len(a.Value) != 8 {
			t.Errorf("%s: %d servers, %v", a.Instance, len(a.Value), a.Err)
		}
		if a.Elapsed >= ans[0].Elapsed {
			t.Errorf("%s answered after %s, not before the hung instance gave up (%s): the instances were not asked concurrently", a.Instance, a.Elapsed, ans[0].Elapsed)
		}
	}
	// The whole read ends with the hung instance's own limit (generous
	// slack for a loaded machine; asked in turn it would be the sum).
	if took > hungLimit+5*time.Second {
		t.Errorf("the read took %s; the hung instance's limit is %s", took, hungLimit)
	}
	t.Logf("read took %s; lb1 %s, lb2 %s, down %s, hung %s", took, ans[1].Elapsed, ans[2].Elapsed, ans[3].Elapsed, ans[0].Elapsed)

	// A write on the same fleet: lb1 and lb2 change; down did not; the hung
	// instance's outcome is unknown, and the error says so.
	out, err := fleet.Write(context.Background(), f.Members(), drain("be_app", "app1", "drain"))
	var pe *fleet.PartialError
	if !errors.As(err, &pe) {
		t.Fatalf("want partial, got %v", err)
	}
	if !reflect.DeepEqual(pe.Applied, []string{"lb1", "lb2"}) || !slices.Contains(append(pe.Failed, pe.Uncertain...), "hung") || !slices.Contains(pe.Failed, "down") {
		t.Errorf("applied %v failed %v uncertain %v: %v", pe.Applied, pe.Failed, pe.Uncertain, err)
	}
	if out[3].Sent != nil || out[0].Sent != nil {
		// With an undo, the state is read first; an instance that cannot be
		// read is sent nothing.
		t.Errorf("sent to an unreadable instance: %+v / %+v", out[0], out[3])
	}

	// Every instance down: an error listing each.
	only, _ := f.Select([]string{"down", "hung"})
	_, err = fleet.Read(context.Background(), only, listServers)
	var ne *fleet.NoAnswerError
	if !errors.As(err, &ne) || len(ne.Errors) != 2 || !strings.Contains(err.Error(), "no HAProxy instance answered (hung: ") || !strings.Contains(err.Error(), "; down: ") {
		t.Errorf("no answer: %v", err)
	}
}

// Each instance's stats page has its own credentials: given per instance
// (PROXY_<NAME>_STATS_*), read through the configuration, each works;
// swapped, the instance with the wrong one fails alone, naming its page.
func TestPerInstanceCredentials(t *testing.T) {
	needHAProxy(t)
	ports := freePorts(t, 2)
	page := func(port int, user, pw string) string {
		return fmt.Sprintf("\nlisten stats_own\n    bind 127.0.0.1:%d\n    stats enable\n    stats uri /own\n    stats auth %s:%s\n", port, user, pw)
	}
	startFleet(t, haproxytest.Options{Extra: page(ports[0], "alice", "pw-one")}, haproxytest.Options{Extra: page(ports[1], "bob", "pw-two")})
	env := map[string]string{
		"PROXY_INSTANCES":           "lb1,lb2",
		"PROXY_RUNTIME_ENABLED":     "false", // only the stats pages: credentials matter
		"PROXY_LB1_STATS_URL":       fmt.Sprintf("http://127.0.0.1:%d/own", ports[0]),
		"PROXY_LB1_STATS_USERNAME":  "alice",
		"PROXY_LB1_STATS_PASSWORD":  "pw-one",
		"PROXY_LB2_STATS_URL":       fmt.Sprintf("http://bob:pw-two@127.0.0.1:%d/own", ports[1]),
		"PROXY_STATS_USERNAME":      "someone",
		"PROXY_LB2_RUNTIME_ENABLED": "false",
		"PROXY_LB1_RUNTIME_ENABLED": "false",
		"PROXY_STATS_TIMEOUT":       "5s",
	}
	read := func(env map[string]string) []fleet.Answer[[]haproxy.Server] {
		r := envconfig.New(func(k string) string { return env[k] })
		cf := config.FleetFromEnv(r)
		if err := r.Err(); err != nil {
			t.Fatal(err)
		}
		f, err := fleet.FromConfig(cf)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		ans, _ := fleet.Read(context.Background(), f.Members(), listServers)
		return ans
	}
	// lb2's user comes from its URL only when no variable names one:
	// PROXY_STATS_USERNAME is set, so give lb2 its own.
	env["PROXY_LB2_STATS_USERNAME"] = "bob"
	for _, a := range read(env) {
		if a.Err != nil || a.Source != haproxy.SourceStats || len(a.Value) != 8 {
			t.Errorf("%s: %d servers from %s, %v", a.Instance, len(a.Value), a.Source, a.Err)
		}
	}
	env["PROXY_LB1_STATS_PASSWORD"] = "pw-two"
	ans := read(env)
	if ans[0].Err == nil || !strings.Contains(ans[0].Err.Error(), "HTTP 401") || strings.Contains(ans[0].Err.Error(), "pw-") {
		t.Errorf("lb1 with lb2's password: %v", ans[0].Err)
	}
	if ans[1].Err != nil {
		t.Errorf("lb2: %v", ans[1].Err)
	}
}

func freePorts(t testing.TB, n int) []int {
	t.Helper()
	var ports []int
	for range n {
		l, err := net.Listen("tcp4", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
		defer l.Close()
	}
	return ports
}

// versionInfo is what version_info reports of one instance.
type versionInfo struct {
	Capabilities     haproxy.Capabilities
	StatePersistence haproxy.StatePersistence
}

// version_info per instance: the version, and whether runtime changes
// survive a reload, read from each HAProxy's own configuration.
func TestVersionsAndStatePersistence(t *testing.T) {
	needHAProxy(t)
	dir := t.TempDir()
	persist := fmt.Sprintf("\nglobal\n    server-state-file %s/state\n\nbackend be_persist\n    load-server-state-from-file global\n    server p1 127.0.0.1:9\n", dir)
	hs := startFleet(t, haproxytest.Options{Extra: persist}, haproxytest.Options{})
	f, _ := newFleet(t, hs)
	ans, err := fleet.Read(context.Background(), f.Members(), func(ctx context.Context, m fleet.Member) (versionInfo, haproxy.Source, error) {
		c := m.Client
		cp, err := c.Capabilities(ctx)
		if err != nil {
			return versionInfo{}, haproxy.SourceRuntime, err
		}
		sp, err := c.StatePersistence(ctx)
		return versionInfo{Capabilities: cp, StatePersistence: sp}, haproxy.SourceRuntime, err
	})
	if err != nil {
		t.Fatal(err)
	}
	for i, a := range ans {
		if a.Err != nil || a.Value.Capabilities.Version.Raw != hs[i].Version {
			t.Errorf("%s: version %q (HAProxy says %q) %v", a.Instance, a.Value.Capabilities.Version.Raw, hs[i].Version, a.Err)
		}
	}
	p1, p2 := ans[0].Value.StatePersistence, ans[1].Value.StatePersistence
	if !p1.Known || !p1.Configured || p1.ServerStateFile != dir+"/state" || !reflect.DeepEqual(p1.LoadedBy, []string{"backend be_persist: global"}) ||
		!reflect.DeepEqual(p1.ConfigFiles, []string{hs[0].ConfigPath}) {
		t.Errorf("lb1: %+v", p1)
	}
	if !p2.Known || p2.Configured || !strings.Contains(p2.Detail, "lost on reload: the global section has no server-state-file") {
		t.Errorf("lb2: %+v", p2)
	}
}
