package persist_test

import (
	"context"
	"net"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcpfleet/mcpfleet/proxymcp/internal/haproxytest"
	"github.com/mcpfleet/mcpfleet/proxymcp/internal/master"
	"github.com/mcpfleet/mcpfleet/proxymcp/internal/persist"
)

// TestSurviveReload, on every branch of the matrix: runtime changes are
// lost by a reload unless persisted, Status lists exactly what would be
// lost before and nothing after, and a server configured by IP address gets
// its port back from the state file but not its address.
func TestSurviveReload(t *testing.T) {
	haproxytest.EachVersion(t, func(t *testing.T, branch string) {
		h := haproxytest.RunMaster(t, haproxytest.MasterOptions{Version: branch, StateFile: true})
		ctx, cancel := context.WithTimeout(context.Background(), 50*time.Second)
		defer cancel()
		mc := &master.Client{Network: "unix", Address: h.MasterSocket}
		rt := h.Runtime()
		root := persist.Root{Dir: h.Dir}
		src := persist.Sources{ConfigFiles: []string{h.ConfigPath}, StateFile: h.StateFile, StateLoaded: true, Maps: []string{h.MapFile}, ACLs: []string{h.ACLFile}}
		_, sparePort, _ := net.SplitHostPort(h.Servers[2])

		status := func() []string {
			t.Helper()
			rep, err := persist.Status(ctx, rt, src)
			if err != nil {
				t.Fatal(err)
			}
			var out []string
			for _, c := range rep.Changes {
				s := c.Kind + " " + c.Object + " " + c.Field + ": " + c.Runtime + " -> " + c.OnReload
				if c.Note != "" {
					s += " (ip note)"
				}
				out = append(out, strings.ReplaceAll(s, h.Dir+"/", ""))
			}
			slices.Sort(out)
			return out
		}
		change := func() {
			t.Helper()
			for _, cmd := range []string{
				"set server be_app/app1 state drain",
				"set weight be_app/app2 20",
				"set server be_app/app2 addr 127.0.0.1 port " + sparePort,
				"set server be_other/other1 addr 127.0.0.2",
				"add map " + h.MapFile + " new.example.com be_other",
				"del acl " + h.ACLFile + " 192.0.2.10",
				"add acl " + h.ACLFile + " 203.0.113.7",
			} {
				if _, err := rt.Execute(ctx, cmd); err != nil {
					t.Fatalf("%s: %v", cmd, err)
				}
			}
		}
		reload := func() {
			t.Helper()
			if out, err := mc.Reload(ctx, master.ReloadOptions{}); err != nil || !out.Reloaded {
				t.Fatalf("reload: %+v %v\n%s", out, err, h.Log())
			}
			waitRuntime(ctx, t, h)
		}
		assertEq := func(what string, got, want []string) {
			t.Helper()
			if !slices.Equal(got, want) {
				t.Fatalf("%s:\n got  %q\n want %q", what, got, want)
			}
		}

		assertEq("status at start", status(), nil)
		change()
		_, app2Port, _ := net.SplitHostPort(h.Servers[1])
		lost := []string{
			"acl blocked.acl 192.0.2.10:  -> present",
			"acl blocked.acl 203.0.113.7: present -> ",
			"map hosts.map new.example.com: be_other -> ",
			"server be_app/app1 admin_state: drain -> ready",
			"server be_app/app2 port: " + sparePort + " -> " + app2Port,
			"server be_app/app2 weight: 20 -> 50",
			"server be_other/other1 address: 127.0.0.2 -> 127.0.0.1",
		}
		assertEq("status after the runtime changes", status(), lost)

		// Not persisted: a reload loses exactly that.
		reload()
		assertEq("status after a reload without persisting", status(), nil)
		state, _ := rt.Execute(ctx, "show servers state be_app")
		if s := persist.ParseServersState(state); s[0].Admin != "ready" || s[1].Weight != 50 {
			t.Fatalf("the changes survived a reload without persisting: %+v", s)
		}

		// Persisted: everything but the IP address survives.
		change()
		for _, p := range []struct{ kind, file string }{{persist.KindServerState, h.StateFile}, {persist.KindMap, h.MapFile}, {persist.KindACL, h.ACLFile}} {
			plan, err := root.Plan(p.kind, p.file)
			if err != nil {
				t.Fatal(err)
			}
			w, err := root.Persist(ctx, rt, plan)
			if err != nil || w.Before == w.After {
				t.Fatalf("persist %s: %+v %v", p.file, w, err)
			}
		}
		assertEq("status after persisting", status(), []string{"server be_other/other1 address: 127.0.0.2 -> 127.0.0.1 (ip note)"})
		before, _ := rt.Execute(ctx, "show servers state")
		reload()
		assertEq("status after reloading persisted changes", status(), nil)
		after, _ := rt.Execute(ctx, "show servers state")
		b, a := persist.ParseServersState(before), persist.ParseServersState(after)
		for i := range b {
			if b[i].Server == "other1" {
				// HAProxy's fact: the port comes back from the state file, the IP does not.
				if a[i].Addr != "127.0.0.1" {
					t.Errorf("other1 address %s after reload: HAProxy %s restored an IP address from the state file", a[i].Addr, branch)
				}
				continue
			}
			if b[i] != a[i] {
				t.Errorf("%s: before %+v after %+v", b[i].Server, b[i], a[i])
			}
		}
		t.Logf("%s after reload: %+v", h.Version, a)
		if code, err := h.Get(ctx, "new.example.com"); err != nil || code != 200 {
			t.Errorf("the persisted map entry does not route: %d %v", code, err)
		}
	})
}

// waitRuntime waits for the new worker's runtime API.
func waitRuntime(ctx context.Context, t *testing.T, h *haproxytest.MasterWorker) {
	t.Helper()
	for {
		if _, err := h.Exec(ctx, "show version"); err == nil {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatal("the runtime API did not come back after the reload")
		case <-time.After(20 * time.Millisecond):
		}
	}
}
