package mcpserver

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/mcpfleet/mcpfleet/proxymcp/internal/haproxy"
	"github.com/mcpfleet/mcpfleet/proxymcp/internal/haproxytest"
	"github.com/mcpfleet/mcpfleet/shared/approval"
	"github.com/mcpfleet/mcpfleet/shared/toolcall"
)

// apEnv is proxymcp's tools behind a configured tool-call pipeline on a
// real HAProxy, driven by mcp-go's client (protocol 2026-07-28).
type apEnv struct {
	t     *testing.T
	h     *haproxytest.HAProxy
	srv   *server.MCPServer
	c     *client.Client
	audit string
}

func newApEnv(t *testing.T, h *haproxytest.HAProxy, cfg toolcall.Config, copts ...client.ClientOption) *apEnv {
	t.Helper()
	if cfg.Audit.Dest == "" {
		cfg.Audit.Dest = filepath.Join(t.TempDir(), "audit.log")
	}
	srv, c := pipelineClient(t, cfg, "approval-test", func(p *toolcall.Pipeline) {
		New(one(haproxy.New(h.Runtime("unix"), statsClient(h))), Options{}).Register(p)
	}, copts...)
	return &apEnv{t: t, h: h, srv: srv, c: c, audit: cfg.Audit.Dest}
}

func (e *apEnv) call(name string, args map[string]any) *mcp.CallToolResult {
	e.t.Helper()
	req := mcp.CallToolRequest{}
	req.Params.Name, req.Params.Arguments = name, args
	ctx, cancel := context.WithTimeout(e.t.Context(), time.Minute)
	defer cancel()
	res, err := e.c.CallTool(ctx, req)
	if err != nil {
		e.t.Fatalf("call %s: %v", name, err)
	}
	return res
}

// records reads the audit log.
func (e *apEnv) records() []map[string]any {
	e.t.Helper()
	return auditRecords(e.t, e.audit)
}

func auditRecords(t *testing.T, path string) []map[string]any {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []map[string]any
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("audit line %q: %v", sc.Text(), err)
		}
		out = append(out, m)
	}
	return out
}

// preview is the structured content of a dry run or a confirmation request.
func preview(t *testing.T, res *mcp.CallToolResult) toolcall.PreviewResult {
	t.Helper()
	if res.IsError {
		t.Fatalf("want a preview, got an error: %s", text(res))
	}
	b, _ := json.Marshal(res.StructuredContent)
	var p toolcall.PreviewResult
	if err := json.Unmarshal(b, &p); err != nil {
		t.Fatalf("not a preview: %s", b)
	}
	return p
}

// codeOf returns the confirmation code of a preview.
func codeOf(t *testing.T, res *mcp.CallToolResult) string {
	t.Helper()
	p := preview(t, res)
	if p.Confirmation == nil || !strings.HasPrefix(p.Confirmation.Code, "mcpc1.") {
		t.Fatalf("no confirmation code in %s", text(res))
	}
	if !strings.Contains(text(res), `confirm: "`+p.Confirmation.Code+`"`) {
		t.Fatalf("the text does not tell how to confirm: %s", text(res))
	}
	return p.Confirmation.Code
}

// state is what any proxymcp write could change, read straight from
// HAProxy: snapshot (servers, weights, maps, ACLs, limits) plus the
// enabled bits of health and agent checks, the frontends' status and the
// statistics maxima that clear_counters resets. Health-check results are
// left out: they move on their own.
func state(t *testing.T, h *haproxytest.HAProxy) string {
	t.Helper()
	var b strings.Builder
	b.WriteString(snapshot(t, h))
	for _, row := range haproxy.ParseTable(exec(t, h, "show servers state")) {
		ck, _ := row["srv_check_state"].(int64)
		ag, _ := row["srv_agent_state"].(int64)
		fmt.Fprintf(&b, "%v/%v check=%#x agent=%#x\n", row["be_name"], row["srv_name"], ck&0x6, ag&0x6)
	}
	for _, r := range statRows(t, h) {
		switch r.Type() {
		case "frontend":
			fmt.Fprintf(&b, "%s status=%s smax=%d\n", r.Str("pxname"), r.Str("status"), r.Int("smax"))
		case "backend":
			fmt.Fprintf(&b, "%s smax=%d\n", r.Str("pxname"), r.Int("smax"))
		}
	}
	fmt.Fprintf(&b, "sessions:\n")
	var ids []string
	for _, s := range haproxy.ParseSessions(exec(t, h, "show sess")) {
		if s.Frontend != "GLOBAL" {
			ids = append(ids, s.ID)
		}
	}
	sort.Strings(ids)
	b.WriteString(strings.Join(ids, " "))
	return b.String()
}

// slowSession opens a request through fe_web that the test back end holds
// until h.Release, and returns its stream id.
func slowSession(t *testing.T, h *haproxytest.HAProxy) string {
	t.Helper()
	go func() {
		req, _ := http.NewRequest(http.MethodGet, "http://"+h.FrontendWeb+"/slow", nil)
		req.Host = "www.example.com"
		if resp, err := http.DefaultClient.Do(req); err == nil {
			resp.Body.Close()
		}
	}()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		for _, s := range haproxy.ParseSessions(exec(t, h, "show sess")) {
			if s.Frontend == "fe_web" && s.Server != "" && s.Server != "<NONE>" {
				return s.ID
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatal("no session on fe_web appeared")
	return ""
}

// writeCase is a call of one write tool that would change HAProxy if it
// ran, after its set-up (raw runtime commands).
type writeCase struct {
	setup []string
	args  map[string]any
	// first is what the first planned command starts with.
	first string
}

func writeCases(h *haproxytest.HAProxy, session string) map[string]writeCase {
	m, a := h.MapFile, h.ACLFile
	app1 := map[string]any{"backend": "be_app", "server": "app1"}
	with := func(base map[string]any, kv ...any) map[string]any {
		out := map[string]any{}
		for k, v := range base {
			out[k] = v
		}
		for i := 0; i < len(kv); i += 2 {
			out[kv[i].(string)] = kv[i+1]
		}
		return out
	}
	return map[string]writeCase{
		"add_server":               {args: map[string]any{"backend": "be_app", "server": "dry1", "address": "127.0.0.1", "port": 1, "check": true, "enable": true}, first: "add server be_app/dry1 127.0.0.1:1 check"},
		"del_server":               {args: with(app1, "drain", true, "drain_timeout", 0), first: "set server be_app/app1 state drain"},
		"set_server_state":         {args: with(app1, "state", "maint"), first: "set server be_app/app1 state maint"},
		"enable_server":            {setup: []string{"set server be_app/app2 state maint"}, args: map[string]any{"backend": "be_app", "server": "app2"}, first: "set server be_app/app2 state ready"},
		"disable_server":           {args: app1, first: "set server be_app/app1 state maint"},
		"set_server_weight":        {args: with(app1, "weight", 7), first: "set server be_app/app1 weight 7"},
		"set_server_addr":          {args: with(app1, "address", "127.0.0.9", "port", 9), first: "set server be_app/app1 addr 127.0.0.9 port 9"},
		"set_server_maxconn":       {args: with(app1, "maxconn", 42), first: "set maxconn server be_app/app1 42"},
		"set_frontend_maxconn":     {args: map[string]any{"frontend": "fe_web", "maxconn": 42}, first: "set maxconn frontend fe_web 42"},
		"enable_frontend":          {setup: []string{"disable frontend fe_api"}, args: map[string]any{"frontend": "fe_api"}, first: "enable frontend fe_api"},
		"disable_frontend":         {args: map[string]any{"frontend": "fe_web"}, first: "disable frontend fe_web"},
		"set_map_entry":            {args: map[string]any{"map": m, "key": "www.example.com", "value": "be_api"}, first: "set map " + m + " www.example.com be_api"},
		"replace_map":              {args: map[string]any{"map": m, "entries": []any{map[string]any{"key": "only.example", "value": "be_api"}}}, first: "prepare map " + m},
		"add_map_entry":            {args: map[string]any{"map": m, "key": "dry.example", "value": "be_api"}, first: "add map " + m + " dry.example be_api"},
		"del_map_entry":            {args: map[string]any{"map": m, "key": "www.example.com"}, first: "del map " + m + " www.example.com"},
		"clear_map":                {args: map[string]any{"map": m}, first: "clear map " + m},
		"add_acl_entry":            {args: map[string]any{"acl": a, "pattern": "10.9.9.9"}, first: "add acl " + a + " 10.9.9.9"},
		"del_acl_entry":            {args: map[string]any{"acl": a, "pattern": "192.0.2.10"}, first: "del acl " + a + " 192.0.2.10"},
		"clear_acl":                {args: map[string]any{"acl": a}, first: "clear acl " + a},
		"shutdown_session":         {args: map[string]any{"session_id": session}, first: "shutdown session " + session},
		"shutdown_server_sessions": {args: app1, first: "shutdown sessions server be_app/app1"},
		"clear_counters":           {args: map[string]any{"all": true}, first: "clear counters all"},
		"enable_health":            {setup: []string{"disable health be_app/app2"}, args: map[string]any{"backend": "be_app", "server": "app2"}, first: "enable health be_app/app2"},
		"disable_health":           {args: app1, first: "disable health be_app/app1"},
		"enable_agent":             {setup: []string{"disable agent be_api/api1"}, args: map[string]any{"backend": "be_api", "server": "api1"}, first: "enable agent be_api/api1"},
		"disable_agent":            {setup: []string{"enable agent be_api/api1"}, args: map[string]any{"backend": "be_api", "server": "api1"}, first: "disable agent be_api/api1"},
		"set_server_health":        {args: with(app1, "health", "stopping"), first: "set server be_app/app1 health stopping"},
		"set_server_agent":         {args: map[string]any{"backend": "be_api", "server": "api1", "state": "down", "address": "127.0.0.8", "port": 9, "send": "hello"}, first: "set server be_api/api1 agent down"},
		"set_server_check_port":    {args: with(app1, "port", 9), first: "set server be_app/app1 check-port 9"},
	}
}

// The tools one of whose calls can be destructive (their declared widest
// class): every other write tool is always a change. Which class a call
// has is decided per call (effect_test.go checks it against traffic).
var wantDestructive = append(alwaysDestructive, "reload", "set_ssl_cert", "set_server_state", "disable_server", "set_server_weight", "set_server_addr", "disable_frontend",
	"set_server_health", "set_server_agent", "add_server", "add_map_entry", "set_map_entry", "add_acl_entry")

// alwaysDestructive are the tools every call of which is destructive.
var alwaysDestructive = []string{"del_server", "shutdown_session", "shutdown_server_sessions", "clear_counters",
	"clear_map", "clear_acl", "replace_map", "del_map_entry", "del_acl_entry"}

// TestClassTable: the write tools and their classes are the table,
// and every tool that is not read-only is in it (registered through the
// pipeline), so a new write tool cannot skip approval.
func TestClassTable(t *testing.T) {
	classes := classes()
	var destructive []string
	for name, c := range classes {
		if c == toolcall.Destructive {
			destructive = append(destructive, name)
		} else if c != toolcall.Change {
			t.Errorf("%s: class %s", name, c)
		}
	}
	sort.Strings(destructive)
	want := append([]string(nil), wantDestructive...)
	sort.Strings(want)
	if strings.Join(destructive, " ") != strings.Join(want, " ") {
		t.Errorf("destructive tools %v, want %v", destructive, want)
	}
	srv := server.NewMCPServer("proxymcp", "test")
	New(one(haproxy.New(nil, nil)), Options{}).Register(noApproval(srv))
	for name, tool := range srv.ListTools() {
		ro := tool.Tool.Annotations.ReadOnlyHint
		_, planned := classes[name]
		if (ro == nil || !*ro) != planned {
			t.Errorf("%s: readOnlyHint %v but planned=%v", name, ro, planned)
		}
		if planned && !strings.Contains(tool.Tool.Description, "Risk class: "+classes[name].String()) {
			t.Errorf("%s: description lacks its class: %s", name, tool.Tool.Description)
		}
	}
	if len(classes) != 32 { // 29 + persist_now, reload, set_ssl_cert (issue 26)
		t.Errorf("%d write tools, want 32", len(classes))
	}
}

// TestDryRunChangesNothing dry-runs every write tool (the list comes from
// the registered tools, so a new one without a case fails) on a real
// HAProxy: the answer is the class, the exact commands, the current state
// and the effect, and HAProxy's state is byte-identical afterwards.
func TestDryRunChangesNothing(t *testing.T) {
	h := settled(t)
	t.Cleanup(h.Release)
	e := newApEnv(t, h, toolcall.Config{})
	// Traffic, so that the maxima clear_counters resets are not zero.
	if resp, err := http.Get("http://" + h.FrontendWeb + "/"); err == nil {
		resp.Body.Close()
	}
	session := slowSession(t, h)
	cases := writeCases(h, session)
	target := "unix://" + h.Socket
	n := 0
	for name, class := range classes() {
		if lifecycleCovered[name] {
			continue // lifecycle_test.go: they need a master-worker HAProxy
		}
		c, found := cases[name]
		if !found {
			t.Errorf("%s: no dry-run case; add one to writeCases", name)
			continue
		}
		for _, cmd := range c.setup {
			exec(t, h, cmd)
		}
		before := state(t, h)
		args := map[string]any{"dryRun": true}
		for k, v := range c.args {
			args[k] = v
		}
		res := e.call(name, args)
		p := preview(t, res)
		if after := state(t, h); after != before {
			t.Errorf("%s: the dry run changed HAProxy:\n%s", name, stateDiff(before, after))
		}
		// A call's class is at most its tool's (this one's depends on the state).
		if !p.DryRun || (p.Class != class.String() && p.Class != toolcall.Change.String()) || p.Target != target || p.Confirmation != nil {
			t.Errorf("%s: preview %+v", name, p)
		}
		if len(p.Commands) == 0 || !strings.HasPrefix(p.Commands[0], c.first) {
			t.Errorf("%s: commands %q, want the first to start with %q", name, p.Commands, c.first)
		}
		if !strings.Contains(p.Summary, target) || p.State == nil || p.Effect == "" {
			t.Errorf("%s: summary %q state %v effect %q", name, p.Summary, p.State, p.Effect)
		}
		if !strings.HasPrefix(text(res), "Dry run — nothing was changed.") {
			t.Errorf("%s: text %q", name, text(res))
		}
		n++
	}
	recs := e.records()
	if len(recs) != n {
		t.Fatalf("%d audit records for %d dry runs", len(recs), n)
	}
	for _, r := range recs {
		if r["dry_run"] != true || r["outcome"] != "ok" || r["target"] != target || r["event"] != "outcome" {
			t.Errorf("dry-run record %v", r)
		}
	}
}

// TestPreviewWording pins the words a person reads for the issue's
// example, del_server, and for a map entry.
func TestPreviewWording(t *testing.T) {
	h := settled(t)
	e := newApEnv(t, h, toolcall.Config{})
	exec(t, h, "set server be_app/app2 state maint")
	p := preview(t, e.call("del_server", map[string]any{"backend": "be_app", "server": "app2", "dryRun": true}))
	want := fmt.Sprintf("Delete server be_app/app2 (%s) from HAProxy at unix://%s. It is MAINT and holds 0 current sessions.", serverAddr(t, h, "app2"), h.Socket)
	if p.Summary != want {
		t.Errorf("summary\n got %q\nwant %q", p.Summary, want)
	}
	p = preview(t, e.call("del_server", map[string]any{"backend": "be_app", "server": "app1", "dryRun": true}))
	if !strings.Contains(p.Summary, "It is UP and holds 0 current sessions. It is not in maintenance (admin state ready), so HAProxy will refuse to delete it") {
		t.Errorf("summary %q", p.Summary)
	}
	p = preview(t, e.call("del_map_entry", map[string]any{"map": h.MapFile, "key": "www.example.com", "dryRun": true}))
	if want := fmt.Sprintf(`Delete key "www.example.com" (value "be_app") from map %s on HAProxy at unix://%s. The map has 2 entries; the entry is gone until added again.`, h.MapFile, h.Socket); p.Summary != want {
		t.Errorf("summary\n got %q\nwant %q", p.Summary, want)
	}
	res := e.call("del_server", map[string]any{"backend": "be_app", "server": "nosuch", "dryRun": true})
	if !res.IsError || !strings.Contains(text(res), `server "be_app/nosuch" not found`) || !strings.Contains(text(res), "nothing was changed") {
		t.Errorf("dry run of a missing server: %s", text(res))
	}
}

func serverAddr(t *testing.T, h *haproxytest.HAProxy, name string) string {
	t.Helper()
	for _, row := range haproxy.ParseTable(exec(t, h, "show servers state be_app")) {
		if row["srv_name"] == name {
			return fmt.Sprintf("%v:%v", row["srv_addr"], row["srv_port"])
		}
	}
	t.Fatalf("no server %s", name)
	return ""
}

// destructiveCase is a destructive call that changes HAProxy when it runs:
// its set-up, and how to tell from HAProxy itself that it ran.
type destructiveCase struct {
	tool    string
	setup   func(t *testing.T, h *haproxytest.HAProxy) map[string]any // returns the arguments
	changed func(t *testing.T, h *haproxytest.HAProxy, args map[string]any) bool
}

func hasServer(t *testing.T, h *haproxytest.HAProxy, backend, name string) bool {
	for _, row := range haproxy.ParseTable(exec(t, h, "show servers state "+backend)) {
		if row["srv_name"] == name {
			return true
		}
	}
	return false
}

func hasSession(t *testing.T, h *haproxytest.HAProxy, id string) bool {
	// Sessions end asynchronously: give a shut-down one a moment.
	for i := 0; i < 40; i++ {
		found := false
		for _, s := range haproxy.ParseSessions(exec(t, h, "show sess")) {
			found = found || s.ID == id
		}
		if !found {
			return false
		}
		time.Sleep(50 * time.Millisecond)
	}
	return true
}

func sessionServer(t *testing.T, h *haproxytest.HAProxy, id string) string {
	for _, s := range haproxy.ParseSessions(exec(t, h, "show sess")) {
		if s.ID == id {
			return s.Server
		}
	}
	t.Fatalf("session %s gone", id)
	return ""
}

var destructiveCases = []destructiveCase{
	{"del_server", func(t *testing.T, h *haproxytest.HAProxy) map[string]any {
		exec(t, h, "add server be_app/victim 127.0.0.1:1")
		return map[string]any{"backend": "be_app", "server": "victim"}
	}, func(t *testing.T, h *haproxytest.HAProxy, _ map[string]any) bool {
		return !hasServer(t, h, "be_app", "victim")
	}},
	{"shutdown_session", func(t *testing.T, h *haproxytest.HAProxy) map[string]any {
		return map[string]any{"session_id": slowSession(t, h)}
	}, func(t *testing.T, h *haproxytest.HAProxy, a map[string]any) bool {
		return !hasSession(t, h, a["session_id"].(string))
	}},
	{"shutdown_server_sessions", func(t *testing.T, h *haproxytest.HAProxy) map[string]any {
		id := slowSession(t, h)
		return map[string]any{"backend": "be_app", "server": sessionServer(t, h, id), "_session": id}
	}, func(t *testing.T, h *haproxytest.HAProxy, a map[string]any) bool {
		return !hasSession(t, h, a["_session"].(string))
	}},
	{"clear_counters", func(t *testing.T, h *haproxytest.HAProxy) map[string]any {
		if resp, err := http.Get("http://" + h.FrontendWeb + "/"); err == nil {
			resp.Body.Close()
		}
		return map[string]any{"all": true}
	}, func(t *testing.T, h *haproxytest.HAProxy, _ map[string]any) bool {
		for _, r := range statRows(t, h) {
			if r.Str("pxname") == "fe_web" && r.Type() == "frontend" {
				return r.Int("stot") == 0
			}
		}
		return false
	}},
	{"del_map_entry", func(t *testing.T, h *haproxytest.HAProxy) map[string]any {
		exec(t, h, "add map "+h.MapFile+" victim.example be_api")
		return map[string]any{"map": h.MapFile, "key": "victim.example"}
	}, func(t *testing.T, h *haproxytest.HAProxy, _ map[string]any) bool {
		return !strings.Contains(exec(t, h, "show map "+h.MapFile), "victim.example")
	}},
	{"del_acl_entry", func(t *testing.T, h *haproxytest.HAProxy) map[string]any {
		exec(t, h, "add acl "+h.ACLFile+" 10.1.1.1")
		return map[string]any{"acl": h.ACLFile, "pattern": "10.1.1.1"}
	}, func(t *testing.T, h *haproxytest.HAProxy, _ map[string]any) bool {
		return !strings.Contains(exec(t, h, "show acl "+h.ACLFile), "10.1.1.1")
	}},
	{"replace_map", func(t *testing.T, h *haproxytest.HAProxy) map[string]any {
		return map[string]any{"map": h.MapFile, "entries": []any{map[string]any{"key": "only.example", "value": "be_api"}}}
	}, func(t *testing.T, h *haproxytest.HAProxy, _ map[string]any) bool {
		e := haproxy.ParsePatternEntries(exec(t, h, "show map "+h.MapFile), true)
		return len(e) == 1 && e[0].Key == "only.example"
	}},
	{"clear_map", func(t *testing.T, h *haproxytest.HAProxy) map[string]any {
		exec(t, h, "add map "+h.MapFile+" x.example be_app")
		return map[string]any{"map": h.MapFile}
	}, func(t *testing.T, h *haproxytest.HAProxy, _ map[string]any) bool {
		return len(haproxy.ParsePatternEntries(exec(t, h, "show map "+h.MapFile), true)) == 0
	}},
	{"clear_acl", func(t *testing.T, h *haproxytest.HAProxy) map[string]any {
		return map[string]any{"acl": h.ACLFile}
	}, func(t *testing.T, h *haproxytest.HAProxy, _ map[string]any) bool {
		return len(haproxy.ParsePatternEntries(exec(t, h, "show acl "+h.ACLFile), false)) == 0
	}},
}

func withArgs(args map[string]any, kv ...any) map[string]any {
	out := map[string]any{}
	for k, v := range args {
		if !strings.HasPrefix(k, "_") {
			out[k] = v
		}
	}
	for i := 0; i < len(kv); i += 2 {
		out[kv[i].(string)] = kv[i+1]
	}
	return out
}

// TestDestructiveToolsNeedApproval: under the default policy every
// destructive tool, called by a client that cannot ask a person, returns
// the preview and a one-time code and changes nothing; the code runs it
// once; a replay is refused. The audit says pending, then
// confirmation_code (intent before outcome), then refused.
func TestDestructiveToolsNeedApproval(t *testing.T) {
	h := settled(t)
	t.Cleanup(h.Release)
	e := newApEnv(t, h, toolcall.Config{})
	seen := map[string]bool{}
	for _, c := range destructiveCases {
		seen[c.tool] = true
		t.Run(c.tool, func(t *testing.T) {
			args := c.setup(t, h)
			before := state(t, h)
			first := e.call(c.tool, withArgs(args))
			code := codeOf(t, first)
			if !strings.HasPrefix(text(first), "Approval needed — nothing was changed yet.") {
				t.Errorf("text %q", text(first))
			}
			if after := state(t, h); after != before {
				t.Fatalf("asking for approval changed HAProxy:\n%s", stateDiff(before, after))
			}
			if res := e.call(c.tool, withArgs(args, "confirm", code)); res.IsError {
				t.Fatalf("confirmed call: %s", text(res))
			}
			if !c.changed(t, h, args) {
				t.Fatal("the confirmed call did not change HAProxy")
			}
			res := e.call(c.tool, withArgs(args, "confirm", code))
			if !res.IsError || !strings.Contains(text(res), "already been used") {
				t.Errorf("replay: %s", text(res))
			}
			recs := e.records()
			var got []string
			for _, r := range recs[len(recs)-4:] {
				if r["tool"] != c.tool || r["class"] != "destructive" {
					t.Errorf("record %v", r)
				}
				got = append(got, fmt.Sprint(r["event"], ":", r["approval"]))
			}
			if want := "outcome:pending intent:confirmation_code outcome:confirmation_code outcome:refused"; strings.Join(got, " ") != want {
				t.Errorf("audit %s, want %s", strings.Join(got, " "), want)
			}
		})
	}
	// The tools whose calls are destructive only in some states are asked
	// for approval in effect_test.go (TestConcurrentDrainsOfTheLastTwo).
	for _, name := range alwaysDestructive {
		if !seen[name] {
			t.Errorf("%s has no approval case", name)
		}
	}
}

// TestConfirmationRefusals: a code approves exactly one previewed call.
// Other arguments, another tool, another back end, a forged, truncated or
// bare-true confirm, and an expired code are refused, saying which, and
// HAProxy is unchanged.
func TestConfirmationRefusals(t *testing.T) {
	h := settled(t)
	secret := []byte("0123456789abcdef0123456789abcdef-proxymcp")
	cfg := toolcall.Config{Approval: approval.Config{Secret: secret, Timeout: time.Second}}
	e := newApEnv(t, h, cfg)
	exec(t, h, "add map "+h.MapFile+" victim.example be_api")
	args := map[string]any{"map": h.MapFile, "key": "victim.example"}
	code := codeOf(t, e.call("del_map_entry", args))
	before := state(t, h)
	for _, c := range []struct {
		tool string
		args map[string]any
		want string
	}{
		{"del_map_entry", map[string]any{"map": h.MapFile, "key": "www.example.com", "confirm": code}, "issued for other arguments"},
		{"clear_map", map[string]any{"map": h.MapFile, "confirm": code}, "issued for another tool (del_map_entry)"},
		{"del_map_entry", withArgs(args, "confirm", code[:len(code)-3]+"AAA"), "signature does not match"},
		{"del_map_entry", withArgs(args, "confirm", code[:20]), "not a code this server issued"},
		{"del_map_entry", withArgs(args, "confirm", "yes"), "not a code this server issued"},
		{"del_map_entry", withArgs(args, "confirm", true), `"confirm"`},
	} {
		res := e.call(c.tool, c.args)
		if !res.IsError || !strings.Contains(text(res), c.want) {
			t.Errorf("%s %v: %s, want %q", c.tool, c.args["confirm"], text(res), c.want)
		}
	}
	// The same secret on another target (the TCP runtime API of the same
	// HAProxy): the code names the back end it was issued for.
	other := newApEnvRuntime(t, h, cfg, "tcp4")
	if res := other.call("del_map_entry", withArgs(args, "confirm", code)); !res.IsError || !strings.Contains(text(res), "another back end") {
		t.Errorf("other target: %s", text(res))
	}
	time.Sleep(1500 * time.Millisecond)
	if res := e.call("del_map_entry", withArgs(args, "confirm", code)); !res.IsError || !strings.Contains(text(res), "expired") {
		t.Errorf("expired: %s", text(res))
	}
	if after := state(t, h); after != before {
		t.Errorf("refused codes changed HAProxy:\n%s", stateDiff(before, after))
	}
	for _, r := range e.records()[1:] {
		if r["approval"] != "refused" || r["outcome"] != "error" || r["event"] != "outcome" {
			t.Errorf("record %v", r)
		}
	}
}

// newApEnvRuntime is newApEnv over the given runtime API transport.
func newApEnvRuntime(t *testing.T, h *haproxytest.HAProxy, cfg toolcall.Config, mode string) *apEnv {
	t.Helper()
	cfg.Audit.Dest = filepath.Join(t.TempDir(), "audit.log")
	srv, c := pipelineClient(t, cfg, "", func(p *toolcall.Pipeline) {
		New(one(haproxy.New(h.Runtime(mode), nil)), Options{}).Register(p)
	})
	return &apEnv{t: t, h: h, srv: srv, c: c, audit: cfg.Audit.Dest}
}

// TestPolicyVariants: MCP_APPROVAL=none runs a destructive call at once and
// still audits it; MCP_APPROVAL=change asks for change tools too;
// MCP_APPROVAL_FALLBACK=refuse refuses a client that cannot ask.
func TestPolicyVariants(t *testing.T) {
	h := settled(t)

	none := newApEnv(t, h, toolcall.Config{Approval: approval.Config{Policy: approval.None}})
	exec(t, h, "add map "+h.MapFile+" victim.example be_api")
	if res := none.call("del_map_entry", map[string]any{"map": h.MapFile, "key": "victim.example"}); res.IsError || strings.Contains(text(res), "Approval needed") {
		t.Fatalf("none: %s", text(res))
	}
	if strings.Contains(exec(t, h, "show map "+h.MapFile), "victim.example") {
		t.Fatal("none: the entry is still there")
	}
	recs := none.records()
	if len(recs) != 2 || recs[0]["event"] != "intent" || recs[1]["approval"] != "policy" || recs[1]["outcome"] != "ok" {
		t.Errorf("none: records %v", recs)
	}

	change := newApEnv(t, h, toolcall.Config{Approval: approval.Config{Policy: approval.Change}})
	before := state(t, h)
	res := change.call("set_server_weight", map[string]any{"backend": "be_app", "server": "app1", "weight": 7})
	code := codeOf(t, res)
	if p := preview(t, res); p.Class != "change" || !strings.HasPrefix(p.Summary, "Change the weight of server be_app/app1") {
		t.Errorf("change: preview %+v", p)
	}
	if after := state(t, h); after != before {
		t.Fatal("change: asking changed HAProxy")
	}
	if res := change.call("set_server_weight", map[string]any{"backend": "be_app", "server": "app1", "weight": 7, "confirm": code}); res.IsError {
		t.Fatalf("change: confirmed: %s", text(res))
	}
	if w := exec(t, h, "get weight be_app/app1"); !strings.HasPrefix(w, "7 ") {
		t.Errorf("change: weight %q", w)
	}
	// Under the default policy a change tool runs at once.
	def := newApEnv(t, h, toolcall.Config{})
	if res := def.call("set_server_weight", map[string]any{"backend": "be_app", "server": "app1", "weight": 8}); res.IsError || strings.Contains(text(res), "Approval needed") {
		t.Errorf("default policy, change tool: %s", text(res))
	}

	refuse := newApEnv(t, h, toolcall.Config{Approval: approval.Config{Fallback: approval.Refuse}})
	before = state(t, h)
	res = refuse.call("clear_map", map[string]any{"map": h.MapFile})
	if !res.IsError || !strings.Contains(text(res), "MCP_APPROVAL_FALLBACK=refuse") || !strings.Contains(text(res), "nothing was changed") {
		t.Errorf("refuse: %s", text(res))
	}
	if after := state(t, h); after != before {
		t.Error("refuse: HAProxy changed")
	}
	if r := refuse.records(); len(r) != 1 || r[0]["approval"] != "refused" {
		t.Errorf("refuse: records %v", r)
	}
}

// TestStateChangedSincePreview: the server or map entry a person approved
// changes behind proxymcp's back (raw runtime API) before the confirmation
// arrives; the call is refused and nothing runs.
func TestStateChangedSincePreview(t *testing.T) {
	h := settled(t)
	e := newApEnv(t, h, toolcall.Config{})
	for _, c := range []struct {
		name, tool string
		setup      []string
		args       map[string]any
		behindBack string
		still      func() bool
	}{
		{"server moved", "del_server", []string{"add server be_app/victim 127.0.0.1:1"},
			map[string]any{"backend": "be_app", "server": "victim"}, "set server be_app/victim addr 127.0.0.2",
			func() bool { return hasServer(t, h, "be_app", "victim") }},
		{"server state", "del_server", []string{"add server be_app/victim2 127.0.0.1:1"},
			map[string]any{"backend": "be_app", "server": "victim2"}, "set server be_app/victim2 state drain",
			func() bool { return hasServer(t, h, "be_app", "victim2") }},
		{"map value", "del_map_entry", []string{"add map " + h.MapFile + " victim.example be_api"},
			map[string]any{"map": h.MapFile, "key": "victim.example"}, "set map " + h.MapFile + " victim.example be_app",
			func() bool { return strings.Contains(exec(t, h, "show map "+h.MapFile), "victim.example") }},
		{"map content", "clear_map", nil,
			map[string]any{"map": h.MapFile}, "add map " + h.MapFile + " late.example be_app",
			func() bool { return strings.Contains(exec(t, h, "show map "+h.MapFile), "www.example.com") }},
	} {
		t.Run(c.name, func(t *testing.T) {
			for _, cmd := range c.setup {
				exec(t, h, cmd)
			}
			code := codeOf(t, e.call(c.tool, c.args))
			exec(t, h, c.behindBack)
			before := state(t, h)
			res := e.call(c.tool, withArgs(c.args, "confirm", code))
			if !res.IsError || !strings.Contains(text(res), "state changed since the preview") || !strings.Contains(text(res), "Nothing was changed") {
				t.Errorf("%s", text(res))
			}
			if after := state(t, h); after != before || !c.still() {
				t.Errorf("the refused call changed HAProxy:\n%s", stateDiff(before, state(t, h)))
			}
		})
	}
}

// stateDiff lists the lines of two states that differ.
func stateDiff(before, after string) string {
	a, b := strings.Split(before, "\n"), strings.Split(after, "\n")
	var out []string
	for i := 0; i < max(len(a), len(b)); i++ {
		var x, y string
		if i < len(a) {
			x = a[i]
		}
		if i < len(b) {
			y = b[i]
		}
		if x != y {
			out = append(out, "- "+x, "+ "+y)
		}
	}
	return strings.Join(out, "\n")
}

// settled starts HAProxy and waits for the health checks' first verdicts
// (app3's check fails on purpose), so that only the calls under test move
// the state the tests compare (a backend's weight is its UP servers').
func settled(t *testing.T) *haproxytest.HAProxy {
	t.Helper()
	h := haproxytest.Run(t, haproxytest.Options{})
	waitStatus(t, h, "be_app", "app3", "DOWN")
	waitStatus(t, h, "be_app", "app1", "UP")
	waitStatus(t, h, "be_app", "app2", "UP")
	return h
}

// TestREADMEApprovalExcerpt: the README's "What the person sees" is what a
// client without elicitation gets today for del_server (socket path, port,
// code and expiry aside).
func TestREADMEApprovalExcerpt(t *testing.T) {
	h := settled(t)
	e := newApEnv(t, h, toolcall.Config{})
	exec(t, h, "set server be_app/app2 state maint")
	live := text(e.call("del_server", map[string]any{"backend": "be_app", "server": "app2"}))
	b, err := os.ReadFile(readmePath)
	if err != nil {
		t.Fatal(err)
	}
	readme := string(b)
	start := strings.Index(readme, "```\nApproval needed")
	if start < 0 {
		t.Fatal("README: no approval excerpt")
	}
	excerpt := readme[start+4:]
	excerpt = excerpt[:strings.Index(excerpt, "\n```")]
	norm := func(s string) string {
		for _, r := range []struct{ re, to string }{
			{`unix://\S*admin\.sock`, "unix://SOCK"},
			{`127\.0\.0\.1:[0-9]+`, "127.0.0.1:PORT"},
			{`"port":[0-9]+`, `"port":PORT`},
			{`"mcpc1\.[^"]+"`, "CODE"},
			{`until [0-9TZ:-]+\.`, "until TIME."},
		} {
			s = regexp.MustCompile(r.re).ReplaceAllString(s, r.to)
		}
		return strings.TrimSpace(s)
	}
	if norm(excerpt) != norm(live) {
		t.Errorf("README excerpt is stale:\n--- README\n%s\n--- live\n%s", norm(excerpt), norm(live))
	}
}
