package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcpfleet/mcpfleet/proxymcp/internal/haproxytest"
	"github.com/mcpfleet/mcpfleet/proxymcp/internal/persist"
	"github.com/mcpfleet/mcpfleet/shared/approval"
	"github.com/mcpfleet/mcpfleet/shared/audit"
	"github.com/mcpfleet/mcpfleet/shared/envconfig"
	"github.com/mcpfleet/mcpfleet/shared/toolcall"
)

// stateFileServer reads one server from a server-state file; ok is false
// when the file is missing or does not list it.
func stateFileServer(t *testing.T, file, backend, server string) (persist.Server, bool) {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		return persist.Server{}, false
	}
	for _, s := range persist.ParseServersState(string(b)) {
		if s.Backend == backend && s.Server == server {
			return s, true
		}
	}
	return persist.Server{}, false
}

// TestFleetPersistFailureIsNotSuccess: in a fleet with PROXY_PERSIST=on, a
// change applied on every instance whose state file could not be written
// on one of them is not reported as success: the call is an error result,
// that instance's outcome says "applied at run time, NOT persisted: <why>"
// with the persist_now call (naming the instance) that retries it, the
// other instance's file is written, nothing is written where lb2's file
// could not be, and the audit's outcome record says which write failed.
// The retry then writes the file. Each row is one way lb2's state file
// cannot be written (the tests run as root, for whom a read-only mode
// changes nothing).
func TestFleetPersistFailureIsNotSuccess(t *testing.T) {
	var hs []*haproxytest.MasterWorker
	var lives []*Lifecycle
	for range 2 {
		h := haproxytest.RunMaster(t, haproxytest.MasterOptions{Version: haproxytest.SystemBranch, StateFile: true})
		hs = append(hs, h)
		lives = append(lives, lifecycleOf(h, true))
	}
	e := newLC(t, hs, []string{"lb1", "lb2"}, lives)
	state := hs[1].StateFile
	outside := filepath.Join(t.TempDir(), "outside.state")
	for i, c := range []struct {
		name  string
		block func(t *testing.T)
		why   string
		kept  func() string // how what is at lb2's path was changed ("" when not)
	}{
		{"a directory in its place", func(t *testing.T) { must(t, os.MkdirAll(filepath.Join(state, "keep"), 0o755)) }, "not a regular file",
			func() string {
				if st, err := os.Stat(filepath.Join(state, "keep")); err != nil || !st.IsDir() {
					return "the directory was replaced"
				}
				return ""
			}},
		{"a link to a file outside HAProxy's directory", func(t *testing.T) {
			must(t, os.WriteFile(outside, []byte("1\n# outside\n"), 0o644))
			must(t, os.Symlink(outside, state))
		}, "outside HAProxy's directory", func() string {
			if tg, err := os.Readlink(state); err != nil || tg != outside {
				return "the link was replaced"
			}
			return fileIs(outside, "1\n# outside\n")()
		}},
		{"a named pipe in its place", func(t *testing.T) { must(t, syscall.Mkfifo(state, 0o644)) }, "not a regular file",
			func() string {
				if st, err := os.Lstat(state); err != nil || st.Mode()&os.ModeNamedPipe == 0 {
					return "the pipe was replaced"
				}
				return ""
			}},
		{"a dangling link", func(t *testing.T) { must(t, os.Symlink(filepath.Join(t.TempDir(), "gone", "x.state"), state)) }, "which does not exist",
			func() string {
				if _, err := os.Readlink(state); err != nil {
					return "the link was replaced"
				}
				return ""
			}},
	} {
		t.Run(c.name, func(t *testing.T) {
			must(t, os.RemoveAll(state))
			c.block(t)
			defer func() { must(t, os.RemoveAll(state)) }()
			weight := 7 + i
			if s, ok := stateFileServer(t, hs[0].StateFile, "be_app", "app1"); ok && s.Weight == weight {
				t.Fatalf("lb1's state file already says weight %d before the change", weight)
			}
			res := e.raw("set_server_weight", map[string]any{"backend": "be_app", "server": "app1", "weight": weight})
			msg := text(res)
			if !res.IsError {
				t.Fatalf("a fleet write NOT persisted on lb2 was reported as success:\n%s", msg)
			}
			for _, want := range []string{"applied at run time on lb1, lb2", "NOT persisted on 1 of them", "lb2: applied at run time, NOT persisted:",
				c.why, `retry with persist_now {"instance":"lb2","kind":"server_state"}`} {
				if !strings.Contains(msg, want) {
					t.Errorf("result lacks %q:\n%s", want, msg)
				}
			}
			if strings.Contains(msg, "lb1: applied at run time, NOT persisted") {
				t.Errorf("lb1 is said not persisted:\n%s", msg)
			}
			var out map[string]any
			b, _ := json.Marshal(res.StructuredContent)
			_ = json.Unmarshal(b, &out)
			if got, _ := json.Marshal(out["not_persisted_on"]); string(got) != `["lb2"]` {
				t.Errorf("not_persisted_on = %s", got)
			}
			if got, _ := json.Marshal(out["applied_on"]); string(got) != `["lb1","lb2"]` {
				t.Errorf("applied_on = %s", got)
			}
			for _, o := range out["outcomes"].([]any) {
				o := o.(map[string]any)
				switch o["instance"] {
				case "lb1":
					if o["persisted"] != nil || o["result"].(map[string]any)["persisted"] != true {
						t.Errorf("lb1's outcome: %v", o)
					}
				case "lb2":
					np, _ := o["not_persisted"].(string)
					rw, _ := json.Marshal(o["retry_with"])
					if o["persisted"] != false || !strings.HasPrefix(np, "applied at run time, NOT persisted: ") ||
						string(rw) != `{"arguments":{"instance":"lb2","kind":"server_state"},"tool":"persist_now"}` {
						t.Errorf("lb2's outcome: %v (retry_with %s)", o, rw)
					}
				}
			}

			// HAProxy: applied on both. Files: lb1's written, lb2's as
			// the row left it, no temporary file left.
			for i, h := range hs {
				if w, err := h.Exec(t.Context(), "get weight be_app/app1"); err != nil || !strings.HasPrefix(w, fmt.Sprintf("%d ", weight)) {
					t.Errorf("lb%d: runtime weight %q %v, want %d", i+1, w, err, weight)
				}
			}
			if s, ok := stateFileServer(t, hs[0].StateFile, "be_app", "app1"); !ok || s.Weight != weight {
				t.Errorf("lb1's state file after the change: %+v (listed %v), want weight %d", s, ok, weight)
			}
			if d := c.kept(); d != "" {
				t.Errorf("lb2: %s", d)
			}
			ents, _ := os.ReadDir(filepath.Dir(state))
			for _, en := range ents {
				if strings.Contains(en.Name(), ".proxymcp-") {
					t.Errorf("a temporary file was left in lb2's directory: %s", en.Name())
				}
			}

			// The audit's outcome record: an error, naming lb2's failed write.
			recs := auditRecords(t, e.audit)
			last := recs[len(recs)-1]
			cmds, _ := json.Marshal(last["commands"])
			if last["event"] != "outcome" || last["outcome"] != "error" || !strings.Contains(last["error"].(string), "NOT persisted on 1") ||
				!strings.Contains(string(cmds), "lb2: persist: FAILED") || !strings.Contains(string(cmds), "lb1: persist: rewrote "+hs[0].StateFile) {
				t.Errorf("audit outcome record: %v", last)
			}

			// The retry the result names writes lb2's file once it can be written.
			must(t, os.RemoveAll(state))
			e.ok("persist_now", map[string]any{"instance": "lb2", "kind": "server_state"})
			if s, ok := stateFileServer(t, state, "be_app", "app1"); !ok || s.Weight != weight {
				t.Errorf("lb2's state file after persist_now: %+v (listed %v), want weight %d", s, ok, weight)
			}
		})
	}

	// Partially applied and not persisted where applied: lb1 has a server
	// lb2 does not, and lb1's state file cannot be written. The result
	// says both, and names the retry of each.
	t.Run("partially applied", func(t *testing.T) {
		if _, err := hs[0].Exec(t.Context(), "add server be_app/extra 127.0.0.1:1"); err != nil {
			t.Fatal(err)
		}
		st1 := hs[0].StateFile
		must(t, os.RemoveAll(st1))
		must(t, os.Mkdir(st1, 0o755))
		defer func() { must(t, os.RemoveAll(st1)) }()
		res := e.raw("set_server_weight", map[string]any{"backend": "be_app", "server": "extra", "weight": 5})
		msg := text(res)
		if !res.IsError {
			t.Fatalf("reported as success:\n%s", msg)
		}
		for _, want := range []string{"partially applied", "lb1: applied at run time, NOT persisted:", "not a regular file",
			`retry with persist_now {"instance":"lb1","kind":"server_state"}`} {
			if !strings.Contains(msg, want) {
				t.Errorf("result lacks %q:\n%s", want, msg)
			}
		}
		var out map[string]any
		b, _ := json.Marshal(res.StructuredContent)
		_ = json.Unmarshal(b, &out)
		for k, want := range map[string]string{"applied_on": `["lb1"]`, "not_applied_on": `["lb2"]`, "not_persisted_on": `["lb1"]`} {
			if got, _ := json.Marshal(out[k]); string(got) != want {
				t.Errorf("%s = %s, want %s", k, got, want)
			}
		}
		if w, err := hs[0].Exec(t.Context(), "get weight be_app/extra"); err != nil || !strings.HasPrefix(w, "5 ") {
			t.Errorf("lb1: runtime weight %q %v, want 5", w, err)
		}
		if st, err := os.Stat(st1); err != nil || !st.IsDir() {
			t.Errorf("lb1's blocked state file path was replaced")
		}
	})
}

// TestMapFileReplacedBeforeApproval: with PROXY_PERSIST=on, the preview a
// person approves names the map file HAProxy loaded and its digest; a file
// replaced behind proxymcp's back before the approval arrives is not
// clobbered: the approved call is refused (the precondition changed), the
// runtime map is not changed, the replaced file keeps its content, and the
// audit says refused. Both approval flows: a confirmation code (a client
// without elicitation) and an elicitation answered with accept (the file
// is replaced while the person reads the preview). The control, with the
// file left alone, applies and persists.
func TestMapFileReplacedBeforeApproval(t *testing.T) {
	h := haproxytest.RunMaster(t, haproxytest.MasterOptions{Version: haproxytest.SystemBranch, StateFile: true})
	life := lifecycleOf(h, true)
	replaced := "# replaced by the operator's editor\nreplaced.example be_other\n"
	replace := func(t *testing.T) {
		t.Helper()
		tmp := h.MapFile + ".edit"
		if err := os.WriteFile(tmp, []byte(replaced), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(tmp, h.MapFile); err != nil {
			t.Fatal(err)
		}
	}
	runtimeHas := func(t *testing.T, key string) bool {
		out, err := h.Exec(t.Context(), "show map "+h.MapFile)
		if err != nil {
			t.Fatal(err)
		}
		return strings.Contains(out, " "+key+" ")
	}
	newEnv := func(t *testing.T, copts ...client.ClientOption) *lcEnv {
		cfg := toolcall.Config{Approval: approval.Config{Policy: approval.Change, Timeout: time.Minute},
			Audit: audit.Config{Dest: filepath.Join(t.TempDir(), "audit.log")}}
		_, c := pipelineClient(t, cfg, "approval-test", func(p *toolcall.Pipeline) {
			New(one(pooled(h)), Options{Lifecycle: map[string]*Lifecycle{envconfig.DefaultName: life}}).Register(p)
		}, copts...)
		return &lcEnv{t: t, c: c, audit: cfg.Audit.Dest}
	}
	// refused checks a refused approved call: nothing in the runtime, the
	// file as the change behind proxymcp's back left it (kept says how it
	// differs, "" when it is as left), the audit says refused.
	refused := func(t *testing.T, e *lcEnv, res *mcp.CallToolResult, key string, kept func() string) {
		t.Helper()
		msg := text(res)
		if !res.IsError || !strings.Contains(msg, "state changed since the preview") || !strings.Contains(msg, "Nothing was changed") {
			t.Errorf("the approved call on a replaced map file was not refused:\n%s", msg)
		}
		if runtimeHas(t, key) {
			t.Errorf("the refused call changed the runtime map: %s is there", key)
		}
		if d := kept(); d != "" {
			t.Errorf("the map file changed behind proxymcp's back was written over: %s", d)
		}
		recs := auditRecords(t, e.audit)
		last := recs[len(recs)-1]
		if last["approval"] != "refused" {
			t.Errorf("audit outcome record %v", last)
		}
		for _, r := range recs {
			if r["event"] == "intent" {
				t.Errorf("an intent record was written for a refused call: %v", r)
			}
		}
	}
	restore := func(t *testing.T, content string) {
		t.Helper()
		if err := os.RemoveAll(h.MapFile); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(h.MapFile, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	original, err := os.ReadFile(h.MapFile)
	if err != nil {
		t.Fatal(err)
	}
	isReplaced := fileIs(h.MapFile, replaced)

	t.Run("confirmation code", func(t *testing.T) {
		defer restore(t, string(original))
		e := newEnv(t)
		args := map[string]any{"map": h.MapFile, "key": "code.example", "value": "be_other"}
		first := e.raw("add_map_entry", args)
		pv := preview(t, first)
		digest, _ := persist.Digest(h.MapFile)
		if !strings.Contains(pv.Summary, "Then rewrites "+h.MapFile+" (now "+digest+")") {
			t.Errorf("the preview does not name the file and its digest %s:\n%s", digest, pv.Summary)
		}
		replace(t)
		refused(t, e, e.raw("add_map_entry", withArgs(args, "confirm", codeOf(t, first))), "code.example", isReplaced)
	})

	// Every way the file can change behind proxymcp's back between the
	// preview and the approved call: refused, and the file left as it was
	// left. The last row is the control: the same bytes written again (a
	// new inode, the same digest) do not stop the call.
	outside := filepath.Join(t.TempDir(), "outside.map")
	other := filepath.Join(h.Dir, "other.map")
	for _, c := range []struct {
		name   string
		change func(t *testing.T)
		kept   func() string
	}{
		{"replaced by rename", replace, isReplaced},
		{"edited in place (a line appended)", func(t *testing.T) { appendTo(t, h.MapFile, "late.example be_app\n") },
			fileIs(h.MapFile, string(original)+"late.example be_app\n")},
		{"truncated", func(t *testing.T) { must(t, os.Truncate(h.MapFile, 0)) }, fileIs(h.MapFile, "")},
		{"one byte changed", func(t *testing.T) {
			must(t, os.WriteFile(h.MapFile, []byte(strings.Replace(string(original), "be_app", "be_apq", 1)), 0o644))
		}, fileIs(h.MapFile, strings.Replace(string(original), "be_app", "be_apq", 1))},
		{"comment added", func(t *testing.T) {
			must(t, os.WriteFile(h.MapFile, append([]byte("# reviewed\n"), original...), 0o644))
		},
			fileIs(h.MapFile, "# reviewed\n"+string(original))},
		{"deleted", func(t *testing.T) { must(t, os.Remove(h.MapFile)) }, func() string {
			if _, err := os.Lstat(h.MapFile); err == nil {
				return "the deleted file was written again"
			}
			return ""
		}},
		{"a link to a file outside HAProxy's directory", func(t *testing.T) {
			must(t, os.WriteFile(outside, []byte("keep.example be_app\n"), 0o644))
			must(t, os.Remove(h.MapFile))
			must(t, os.Symlink(outside, h.MapFile))
		}, func() string {
			if tg, err := os.Readlink(h.MapFile); err != nil || tg != outside {
				return "the link was replaced"
			}
			return fileIs(outside, "keep.example be_app\n")()
		}},
		{"a link to another file inside", func(t *testing.T) {
			must(t, os.WriteFile(other, []byte("other.example be_app\n"), 0o644))
			must(t, os.Remove(h.MapFile))
			must(t, os.Symlink(other, h.MapFile))
		}, fileIs(other, "other.example be_app\n")},
		{"a directory in its place", func(t *testing.T) {
			must(t, os.Remove(h.MapFile))
			must(t, os.Mkdir(h.MapFile, 0o755))
		}, func() string {
			if st, err := os.Stat(h.MapFile); err != nil || !st.IsDir() {
				return "the directory was replaced"
			}
			return ""
		}},
		{"control: the same bytes written again", func(t *testing.T) {
			must(t, os.Remove(h.MapFile))
			must(t, os.WriteFile(h.MapFile, original, 0o644))
		}, nil},
	} {
		t.Run("behind the back/"+c.name, func(t *testing.T) {
			defer restore(t, string(original))
			e := newEnv(t)
			key := "back" + strings.Map(func(r rune) rune {
				if r >= 'a' && r <= 'z' {
					return r
				}
				return -1
			}, c.name) + ".example"
			args := map[string]any{"map": h.MapFile, "key": key, "value": "be_other"}
			first := e.raw("add_map_entry", args)
			c.change(t)
			res := e.raw("add_map_entry", withArgs(args, "confirm", codeOf(t, first)))
			if c.kept == nil {
				if res.IsError || !runtimeHas(t, key) {
					t.Fatalf("the same bytes stopped the call: %s", text(res))
				}
				if got, _ := os.ReadFile(h.MapFile); !strings.Contains(string(got), key+" be_other") {
					t.Errorf("the map file was not rewritten: %q", got)
				}
				return
			}
			refused(t, e, res, key, c.kept)
		})
	}

	t.Run("elicitation accept", func(t *testing.T) {
		defer restore(t, string(original))
		var seen []string
		ask := elicitor(func(ctx context.Context, req mcp.ElicitationRequest) (*mcp.ElicitationResult, error) {
			seen = append(seen, req.Params.Message)
			replace(t) // while the person reads the preview
			return &mcp.ElicitationResult{ElicitationResponse: mcp.ElicitationResponse{Action: mcp.ElicitationResponseActionAccept}}, nil
		})
		e := newEnv(t, client.WithElicitationHandler(ask), client.WithClientCapabilities(mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapability{}}))
		digest, _ := persist.Digest(h.MapFile)
		res := e.raw("add_map_entry", map[string]any{"map": h.MapFile, "key": "ask.example", "value": "be_other"})
		if len(seen) != 1 || !strings.Contains(seen[0], h.MapFile+" (now "+digest+")") {
			t.Errorf("the person did not see the file and its digest %s: %q", digest, seen)
		}
		refused(t, e, res, "ask.example", isReplaced)
	})

	t.Run("control: file left alone", func(t *testing.T) {
		defer restore(t, string(original))
		e := newEnv(t)
		args := map[string]any{"map": h.MapFile, "key": "kept.example", "value": "be_other"}
		code := codeOf(t, e.raw("add_map_entry", args))
		r := e.ok("add_map_entry", withArgs(args, "confirm", code))
		if r["persisted"] != true || !runtimeHas(t, "kept.example") {
			t.Errorf("the approved call was not applied and persisted: %v", r)
		}
		if got, _ := os.ReadFile(h.MapFile); !strings.Contains(string(got), "kept.example be_other") {
			t.Errorf("the map file was not rewritten: %q", got)
		}
	})
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func appendTo(t *testing.T, file, line string) {
	t.Helper()
	f, err := os.OpenFile(file, os.O_APPEND|os.O_WRONLY, 0)
	must(t, err)
	_, err = f.WriteString(line)
	must(t, err)
	must(t, f.Close())
}

// fileIs says how file differs from want ("" when it does not).
func fileIs(file, want string) func() string {
	return func() string {
		got, err := os.ReadFile(file)
		if err != nil {
			return fmt.Sprintf("%s: %v", file, err)
		}
		if string(got) != want {
			return fmt.Sprintf("%s is %q, want %q", file, got, want)
		}
		return ""
	}
}

// TestFleetMapPersistedIsNotSaidLost: in a fleet with PROXY_PERSIST=on, a
// map entry persisted on every instance is not said to be lost on reload,
// even where server changes would be (no server-state file); where
// PROXY_PERSIST is off, it is.
func TestFleetMapPersistedIsNotSaidLost(t *testing.T) {
	for _, c := range []struct {
		name     string
		persist  [2]bool
		want     string
		wantNone string
	}{
		{"on everywhere", [2]bool{true, true}, "", "Maps and ACLs changed at run time are lost"},
		{"off on lb2", [2]bool{true, false}, "Maps and ACLs changed at run time are lost on reload on lb2 (PROXY_PERSIST is off there).", "everywhere"},
		{"off everywhere", [2]bool{false, false}, "Maps and ACLs changed at run time are lost on reload everywhere.", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			var hs []*haproxytest.MasterWorker
			var lives []*Lifecycle
			for i := range 2 {
				h := haproxytest.RunMaster(t, haproxytest.MasterOptions{Version: haproxytest.SystemBranch})
				hs = append(hs, h)
				lives = append(lives, lifecycleOf(h, c.persist[i]))
			}
			e := newLC(t, hs, []string{"lb1", "lb2"}, lives)
			// Each HAProxy has its own directory: the map is named by its
			// id, the same on both.
			maps := e.ok("list_maps", map[string]any{"instance": "lb1"})
			ref := fmt.Sprintf("#%v", maps["maps"].([]any)[0].(map[string]any)["id"])
			res := e.raw("add_map_entry", map[string]any{"map": ref, "key": "kept.example", "value": "be_other"})
			msg := text(res)
			if res.IsError {
				t.Fatalf("add_map_entry: %s", msg)
			}
			for i, h := range hs {
				if got, _ := os.ReadFile(h.MapFile); strings.Contains(string(got), "kept.example") != c.persist[i] {
					t.Errorf("lb%d (PROXY_PERSIST %v): map file %q", i+1, c.persist[i], got)
				}
			}
			if c.want != "" && !strings.Contains(msg, c.want) || c.wantNone != "" && strings.Contains(msg, c.wantNone) {
				t.Errorf("result:\n%s\nwant %q, not %q", msg, c.want, c.wantNone)
			}
		})
	}
}
