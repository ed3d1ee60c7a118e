package mcpserver

import (
	"context"
	"encoding/json"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcpfleet/mcpfleet/proxymcp/internal/fleet"
	"github.com/mcpfleet/mcpfleet/proxymcp/internal/haproxy"
	"github.com/mcpfleet/mcpfleet/proxymcp/internal/haproxytest"
	"github.com/mcpfleet/mcpfleet/proxymcp/internal/master"
	"github.com/mcpfleet/mcpfleet/proxymcp/internal/persist"
	"github.com/mcpfleet/mcpfleet/shared/approval"
	"github.com/mcpfleet/mcpfleet/shared/audit"
	"github.com/mcpfleet/mcpfleet/shared/envconfig"
	"github.com/mcpfleet/mcpfleet/shared/toolcall"
)

// lifecycleCovered are the write tools whose calls need a master-worker
// HAProxy and PROXY_PERSIST: this file tests them, not writeCases.
var lifecycleCovered = map[string]bool{"reload": true, "persist_now": true, "set_ssl_cert": true}

// lcEnv is proxymcp over master-worker HAProxies, through the pipeline
// (no approval, audit to a file).
type lcEnv struct {
	t     *testing.T
	c     *client.Client
	audit string
}

// pooled is the runtime API client as proxymcp configures it (pooled
// connections, PROXY_RUNTIME_MAX_CONNS=4): a reload must not leave the
// tools talking to the old worker.
func pooled(h *haproxytest.MasterWorker) *haproxy.Client {
	rt := h.Runtime()
	rt.MaxConns = 4
	return haproxy.New(rt, nil)
}

func lifecycleOf(h *haproxytest.MasterWorker, persistOn bool) *Lifecycle {
	return &Lifecycle{
		Persist:     persistOn,
		Master:      &master.Client{Network: "unix", Address: h.MasterSocket, Timeout: 20 * time.Second},
		Check:       master.Checker{Command: h.Check, Files: []string{h.ConfigPath}, Dir: h.Dir},
		Root:        persist.Root{Dir: h.Dir},
		ConfigFiles: []string{h.ConfigPath},
	}
}

// newLC serves one instance (names nil) or a fleet named names.
func newLC(t *testing.T, hs []*haproxytest.MasterWorker, names []string, lives []*Lifecycle) *lcEnv {
	t.Helper()
	cfg := toolcall.Config{Approval: approval.Config{Policy: approval.None}, Audit: audit.Config{Dest: filepath.Join(t.TempDir(), "audit.log")}}
	_, c := pipelineClient(t, cfg, "lifecycle-test", func(p *toolcall.Pipeline) {
		opts := Options{Lifecycle: map[string]*Lifecycle{}}
		if names == nil {
			opts.Lifecycle[envconfig.DefaultName] = lives[0]
			New(one(pooled(hs[0])), opts).Register(p)
			return
		}
		var ms []fleet.Member
		for i, h := range hs {
			ms = append(ms, fleet.Member{Name: names[i], Client: pooled(h)})
			opts.Lifecycle[names[i]] = lives[i]
		}
		f, err := fleet.New(ms...)
		if err != nil {
			t.Fatal(err)
		}
		New(f, opts).Register(p)
	})
	return &lcEnv{t: t, c: c, audit: cfg.Audit.Dest}
}

func (e *lcEnv) raw(name string, args map[string]any) *mcp.CallToolResult {
	e.t.Helper()
	req := mcp.CallToolRequest{}
	req.Params.Name, req.Params.Arguments = name, args
	ctx, cancel := context.WithTimeout(e.t.Context(), 2*time.Minute)
	defer cancel()
	res, err := e.c.CallTool(ctx, req)
	if err != nil {
		e.t.Fatalf("call %s: %v", name, err)
	}
	return res
}

func (e *lcEnv) ok(name string, args map[string]any) map[string]any {
	e.t.Helper()
	res := e.raw(name, args)
	if res.IsError {
		e.t.Fatalf("%s(%v): %s", name, args, text(res))
	}
	b, _ := json.Marshal(res.StructuredContent)
	var out map[string]any
	_ = json.Unmarshal(b, &out)
	return out
}

func (e *lcEnv) fails(name string, args map[string]any, want ...string) string {
	e.t.Helper()
	res := e.raw(name, args)
	msg := text(res)
	if !res.IsError {
		e.t.Fatalf("%s(%v) succeeded, want an error with %q: %s", name, args, want, msg)
	}
	for _, w := range want {
		if !strings.Contains(msg, w) {
			e.t.Errorf("%s: error lacks %q:\n%s", name, w, msg)
		}
	}
	return msg
}

// lostLines words persistence_status's answer, paths relative to dir.
func lostLines(st map[string]any, dir string) []string {
	var out []string
	l, _ := st["would_be_lost"].([]any)
	for _, x := range l {
		c := x.(map[string]any)
		s := c["kind"].(string) + " " + c["object"].(string) + " " + c["field"].(string) + ": " + c["runtime"].(string) + " -> " + c["on_reload"].(string)
		out = append(out, strings.ReplaceAll(s, dir+"/", ""))
	}
	slices.Sort(out)
	return out
}

// changeAll makes the changes through the tools and returns their results.
func changeAll(e *lcEnv, h *haproxytest.MasterWorker) []map[string]any {
	_, spare, _ := net.SplitHostPort(h.Servers[2])
	var out []map[string]any
	for _, c := range []struct {
		tool string
		args map[string]any
	}{
		{"set_server_state", map[string]any{"backend": "be_app", "server": "app1", "state": "drain"}},
		{"set_server_weight", map[string]any{"backend": "be_app", "server": "app2", "weight": 20}},
		{"set_server_addr", map[string]any{"backend": "be_app", "server": "app2", "address": "127.0.0.1", "port": mustAtoi(spare)}},
		{"add_map_entry", map[string]any{"map": h.MapFile, "key": "new.example.com", "value": "be_other"}},
		{"del_acl_entry", map[string]any{"acl": h.ACLFile, "pattern": "192.0.2.10"}},
		{"add_acl_entry", map[string]any{"acl": h.ACLFile, "pattern": "203.0.113.7"}},
	} {
		r := e.ok(c.tool, c.args)
		r["tool"] = c.tool
		out = append(out, r)
	}
	return out
}

func mustAtoi(s string) int {
	n := 0
	for _, r := range s {
		n = n*10 + int(r-'0')
	}
	return n
}

func serversState(t *testing.T, h *haproxytest.MasterWorker) []persist.Server {
	t.Helper()
	out, err := h.Exec(t.Context(), "show servers state")
	if err != nil {
		t.Fatal(err)
	}
	return persist.ParseServersState(out)
}

// TestPersistThroughReload: with persistence on, the changes made
// through the tools survive a reload made through the tool; with it off,
// they are lost and every result said so; persistence_status lists exactly
// the difference before and nothing after.
func TestPersistThroughReload(t *testing.T) {
	haproxytest.EachVersion(t, func(t *testing.T, branch string) {
		for _, on := range []bool{true, false} {
			h := haproxytest.RunMaster(t, haproxytest.MasterOptions{Version: branch, StateFile: true})
			e := newLC(t, []*haproxytest.MasterWorker{h}, nil, []*Lifecycle{lifecycleOf(h, on)})
			if got := lostLines(e.ok("persistence_status", nil), h.Dir); len(got) != 0 {
				t.Fatalf("status at start: %q", got)
			}
			results := changeAll(e, h)
			_, spare, _ := net.SplitHostPort(h.Servers[2])
			_, app2Port, _ := net.SplitHostPort(h.Servers[1])
			stRaw := e.ok("persistence_status", nil)
			st := lostLines(stRaw, h.Dir)
			if !on {
				b, _ := json.MarshalIndent(stRaw, "", "  ")
				t.Logf("persistence_status:\n%s", b)
			}
			if on {
				for _, r := range results {
					p, _ := r["persistence"].(map[string]any)
					if r["persisted"] != true || p == nil || p["persisted"] != true {
						t.Errorf("persist on, %s: %v", r["tool"], r)
					}
				}
				if len(st) != 0 {
					t.Errorf("persist on: status after the changes %q, want nothing", st)
				}
			} else {
				for _, r := range results {
					note, _ := r["note"].(string)
					if r["persisted"] == true || !strings.Contains(strings.ToLower(note), "lost") {
						t.Errorf("persist off, %s did not say the change is lost on reload: %v", r["tool"], r)
					}
				}
				want := []string{
					"acl blocked.acl 192.0.2.10:  -> present",
					"acl blocked.acl 203.0.113.7: present -> ",
					"map hosts.map new.example.com: be_other -> ",
					"server be_app/app1 admin_state: drain -> ready",
					"server be_app/app2 port: " + spare + " -> " + app2Port,
					"server be_app/app2 weight: 20 -> 50",
				}
				if !slices.Equal(st, want) {
					t.Errorf("persist off: status\n got  %q\n want %q", st, want)
				}
			}
			before := serversState(t, h)
			pv := preview(t, e.raw("reload", map[string]any{"dryRun": true}))
			if !strings.Contains(pv.Summary, "haproxy -c accepts the configuration") {
				t.Errorf("reload preview: %s", pv.Summary)
			}
			if !on && !strings.Contains(pv.Summary, "6 runtime value(s) would be lost") {
				t.Errorf("reload preview does not say what would be lost: %s", pv.Summary)
			}
			if !on {
				t.Logf("reload preview: %s", pv.Summary)
			}
			r := e.ok("reload", nil)
			if !on {
				b, _ := json.MarshalIndent(r, "", "  ")
				t.Logf("reload result:\n%s", b)
			}
			if r["reloaded"] != true || len(r["new_workers"].([]any)) != 1 {
				t.Fatalf("reload: %v", r)
			}
			cmp, _ := r["compared"].(map[string]any)
			after := serversState(t, h)
			if on {
				if cmp == nil || cmp["identical"] != true {
					t.Errorf("persist on: reload compared %v", r["compared"])
				}
				if !slices.Equal(before, after) {
					t.Errorf("persist on: state before %+v after %+v", before, after)
				}
				if code, err := h.Get(t.Context(), "new.example.com"); err != nil || code != 200 {
					t.Errorf("the persisted map entry does not route after reload: %d %v", code, err)
				}
			} else {
				if cmp == nil || cmp["identical"] != false {
					t.Errorf("persist off: reload compared %v", r["compared"])
				}
				if after[0].Admin != "ready" || after[1].Weight != 50 {
					t.Errorf("persist off: the changes survived: %+v", after)
				}
			}
			if got := lostLines(e.ok("persistence_status", nil), h.Dir); len(got) != 0 {
				t.Errorf("status after the reload: %q", got)
			}
			t.Logf("%s persist=%v: reload %v", h.Version, on, r["compared"])
		}
	})
}

// TestReloadInvalidConfig: a configuration broken behind proxymcp's back
// is reported by the preview and refused without force; a forced reload
// is refused by HAProxy, the old worker keeps serving, and the result
// quotes HAProxy.
func TestReloadInvalidConfig(t *testing.T) {
	haproxytest.EachVersion(t, func(t *testing.T, branch string) {
		h := haproxytest.RunMaster(t, haproxytest.MasterOptions{Version: branch})
		e := newLC(t, []*haproxytest.MasterWorker{h}, nil, []*Lifecycle{lifecycleOf(h, false)})
		breakConfig(t, h)
		pv := preview(t, e.raw("reload", map[string]any{"dryRun": true}))
		if !strings.Contains(pv.Summary, "REFUSES") || !strings.Contains(pv.Summary, "bogus_keyword") {
			t.Errorf("preview does not report the validation error: %s", pv.Summary)
		}
		e.fails("reload", nil, "haproxy -c refuses the configuration", "bogus_keyword", "force=true")
		procs, _ := (&master.Client{Network: "unix", Address: h.MasterSocket}).ShowProc(t.Context())
		if procs.Master.Reloads != 0 {
			t.Errorf("a refused check still reloaded: %+v", procs.Master)
		}
		msg := e.fails("reload", map[string]any{"force": true}, "refused", "keep serving", "bogus_keyword")
		if code, err := h.Get(t.Context(), "www.example.com"); err != nil || code != 200 {
			t.Errorf("the old worker does not serve after a refused reload: %d %v", code, err)
		}
		t.Logf("%s forced reload: %s", branch, msg)
	})
}

func breakConfig(t *testing.T, h *haproxytest.MasterWorker) {
	t.Helper()
	f, err := os.OpenFile(h.ConfigPath, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString("\nbackend be_broken\n    bogus_keyword on\n"); err != nil {
		t.Fatal(err)
	}
	f.Close()
}

// TestFleetReloadStops: a fleet reload one at a time stops at a failing
// member and leaves the members after it untouched.
func TestFleetReloadStops(t *testing.T) {
	branch := haproxytest.SystemBranch
	var hs []*haproxytest.MasterWorker
	var lives []*Lifecycle
	for range 3 {
		h := haproxytest.RunMaster(t, haproxytest.MasterOptions{Version: branch})
		hs = append(hs, h)
		lives = append(lives, lifecycleOf(h, false))
	}
	breakConfig(t, hs[1])
	e := newLC(t, hs, []string{"lb1", "lb2", "lb3"}, lives)
	msg := e.fails("reload", map[string]any{"force": true}, "reload failed on lb2", "lb3 not reloaded", "bogus_keyword")
	reloads := func(h *haproxytest.MasterWorker) int {
		p, err := (&master.Client{Network: "unix", Address: h.MasterSocket}).ShowProc(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		return p.Master.Reloads
	}
	if reloads(hs[0]) != 1 || reloads(hs[2]) != 0 {
		t.Errorf("reloads lb1 %d (want 1) lb3 %d (want 0)", reloads(hs[0]), reloads(hs[2]))
	}
	t.Logf("fleet reload: %s", msg)
}

// TestPersistRefusals: with persistence on, a change whose file cannot be
// written is applied at run time and reported as NOT persisted, with the
// call that retries it, and nothing outside HAProxy's directory is touched.
func TestPersistRefusals(t *testing.T) {
	h := haproxytest.RunMaster(t, haproxytest.MasterOptions{Version: haproxytest.SystemBranch})
	life := lifecycleOf(h, true)
	if notes := life.StartupNotes(); len(notes) != 1 || !strings.Contains(notes[0], "server-state-file and load-server-state-from-file are not both configured") {
		t.Errorf("start-up notes without a state file: %q", notes)
	}
	e := newLC(t, []*haproxytest.MasterWorker{h}, nil, []*Lifecycle{life})
	// No state file configured: every server change says so.
	msg := e.fails("set_server_weight", map[string]any{"backend": "be_app", "server": "app1", "weight": 7},
		"applied at run time, NOT persisted", "server-state-file and load-server-state-from-file are not both configured", "persist_now")
	if w, _ := h.Exec(t.Context(), "get weight be_app/app1"); !strings.HasPrefix(w, "7 ") {
		t.Errorf("the runtime change was not applied: %q (%s)", w, msg)
	}
	// A map file replaced by a link to a file outside HAProxy's directory.
	outside := filepath.Join(t.TempDir(), "outside.map")
	if err := os.WriteFile(outside, []byte("keep.example be_app\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(h.MapFile); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, h.MapFile); err != nil {
		t.Fatal(err)
	}
	res := e.raw("add_map_entry", map[string]any{"map": h.MapFile, "key": "evil.example", "value": "be_other"})
	if !res.IsError || !strings.Contains(text(res), "NOT persisted") {
		t.Errorf("a link outside the directory was not refused: %s", text(res))
	}
	b, _ := json.Marshal(res.StructuredContent)
	if !strings.Contains(string(b), `"retry_with":{"arguments":{"file":"`+h.MapFile+`","kind":"map"},"tool":"persist_now"}`) {
		t.Errorf("no retry call in %s", b)
	}
	if got, _ := os.ReadFile(outside); string(got) != "keep.example be_app\n" {
		t.Errorf("the file outside HAProxy's directory was written: %q", got)
	}
	for _, c := range []map[string]any{
		{"kind": "map", "file": h.Dir + "/../etc/passwd"},
		{"kind": "map", "file": "/etc/passwd"},
		{"kind": "acl", "file": h.MapFile},
		{"kind": "map"},
		{"kind": "map", "file": h.MapFile + ";show info"},
	} {
		res := e.raw("persist_now", c)
		if !res.IsError {
			t.Errorf("persist_now %v: %s", c, text(res))
		}
	}
	if got, _ := os.ReadFile(outside); string(got) != "keep.example be_app\n" {
		t.Errorf("persist_now wrote outside HAProxy's directory: %q", got)
	}
}
