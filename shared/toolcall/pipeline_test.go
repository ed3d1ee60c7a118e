package toolcall_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/mcpfleet/mcpfleet/shared/approval"
	"github.com/mcpfleet/mcpfleet/shared/audit"
	"github.com/mcpfleet/mcpfleet/shared/e2e/inproc"
	"github.com/mcpfleet/mcpfleet/shared/httpauth"
	"github.com/mcpfleet/mcpfleet/shared/toolcall"
)

type env struct {
	t     *testing.T
	in    *inproc.Server
	store *store
	c     *client.Client
	p     *toolcall.Pipeline
	srv   *server.MCPServer
	audit string
}

// newEnv serves the example tools through the shared in-process harness
// (serve's server and the pipeline configured by cfg, as a server's
// main.go wires them) to a client that can elicit when opts say so.
func newEnv(t *testing.T, cfg toolcall.Config, opts ...client.ClientOption) *env {
	t.Helper()
	s := newStore()
	srv := inproc.Start(t, inproc.Options{Name: "example", Version: "v0.0.1", Server: []server.ServerOption{server.WithElicitation()},
		Calls: cfg, ClientName: "example-client", ClientVersion: "9.9", Client: opts}, func(p *toolcall.Pipeline) { register(p, s) })
	return &env{t: t, in: srv, store: s, c: srv.Client, p: srv.Calls, srv: srv.MCP, audit: srv.Audit}
}

func (e *env) call(name string, args map[string]any) *mcp.CallToolResult {
	e.t.Helper()
	return e.in.Call(name, args)
}

// text is a result's text content.
var text = inproc.Text

func (e *env) records() []map[string]any {
	e.t.Helper()
	b, err := os.ReadFile(e.audit)
	if err != nil && !os.IsNotExist(err) {
		e.t.Fatal(err)
	}
	var out []map[string]any
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			e.t.Fatalf("audit line %q: %v", sc.Text(), err)
		}
		out = append(out, m)
	}
	return out
}

// unchanged fails unless the store holds its seed and received no write.
func (e *env) unchanged() {
	e.t.Helper()
	data, writes := e.store.snapshot()
	if !reflect.DeepEqual(data, map[string]int{"a": 1, "b": 2}) || len(writes) != 0 {
		e.t.Fatalf("the back end changed: %v, writes %v", data, writes)
	}
}

// code extracts the confirmation code from a preview result.
func code(t *testing.T, res *mcp.CallToolResult) string {
	t.Helper()
	b, _ := json.Marshal(res.StructuredContent)
	var pr toolcall.PreviewResult
	json.Unmarshal(b, &pr)
	if pr.Confirmation == nil || pr.Confirmation.Code == "" {
		t.Fatalf("no confirmation code in %s / %s", b, text(res))
	}
	return pr.Confirmation.Code
}

func TestToolsList(t *testing.T) {
	e := newEnv(t, toolcall.Config{})
	res, err := e.c.ListTools(t.Context(), mcp.ListToolsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]mcp.Tool{}
	for _, tl := range res.Tools {
		byName[tl.Name] = tl
	}
	for name, want := range map[string]string{"set_value": "Risk class: change", "delete_value": "Risk class: destructive"} {
		tl := byName[name]
		if !strings.Contains(tl.Description, want) || !strings.Contains(tl.Description, "dryRun: true") {
			t.Errorf("%s description %q", name, tl.Description)
		}
		for _, prop := range []string{"dryRun", "confirm"} {
			if _, ok := tl.InputSchema.Properties[prop]; !ok {
				t.Errorf("%s lacks %s in its schema", name, prop)
			}
		}
	}
	if !strings.Contains(byName["delete_value"].Description, "A person must approve") || strings.Contains(byName["set_value"].Description, "A person must approve") {
		t.Error("the description does not follow the default policy (destructive only)")
	}
	if _, ok := byName["get_value"].InputSchema.Properties["dryRun"]; ok || strings.Contains(byName["get_value"].Description, "Risk class") {
		t.Error("a read tool was augmented")
	}
}

func TestDryRunChangesNothing(t *testing.T) {
	e := newEnv(t, toolcall.Config{})
	for _, tc := range []struct {
		tool string
		args map[string]any
		want string
	}{
		{"set_value", map[string]any{"key": "a", "value": 7, "dryRun": true}, "Change key a from 1 to 7"},
		{"set_value", map[string]any{"key": "zz", "value": 7, "dryRun": true}, "Create key zz with value 7"},
		{"delete_value", map[string]any{"key": "b", "dryRun": true}, "Delete key b (value 2)"},
	} {
		res := e.call(tc.tool, tc.args)
		if res.IsError || !strings.Contains(text(res), tc.want) || !strings.Contains(text(res), "Dry run — nothing was changed") {
			t.Errorf("%s: %s", tc.tool, text(res))
		}
		b, _ := json.Marshal(res.StructuredContent)
		var pr toolcall.PreviewResult
		json.Unmarshal(b, &pr)
		if !pr.DryRun || pr.Target != target || len(pr.Commands) != 1 || pr.Confirmation != nil || pr.State == nil {
			t.Errorf("%s: structured %s", tc.tool, b)
		}
	}
	// A dry run of something that does not exist says so, as an error.
	if res := e.call("delete_value", map[string]any{"key": "nope", "dryRun": true}); !res.IsError || !strings.Contains(text(res), "does not exist") {
		t.Errorf("dry run of a missing key: %s", text(res))
	}
	e.unchanged()
	recs := e.records()
	if len(recs) != 4 {
		t.Fatalf("%d records, want one per dry run", len(recs))
	}
	for _, r := range recs {
		if r["dry_run"] != true || r["event"] != "outcome" {
			t.Errorf("record %v", r)
		}
	}
}

func TestConfirmationCodeFlow(t *testing.T) {
	e := newEnv(t, toolcall.Config{})
	first := e.call("delete_value", map[string]any{"key": "b"})
	if first.IsError || !strings.Contains(text(first), "Approval needed — nothing was changed yet") || !strings.Contains(text(first), "confirm") {
		t.Fatalf("first call: %s", text(first))
	}
	c := code(t, first)
	e.unchanged()

	refused := []struct {
		name string
		tool string
		args map[string]any
		want string
	}{
		{"other arguments", "delete_value", map[string]any{"key": "a", "confirm": c}, "other arguments"},
		{"other tool", "set_value", map[string]any{"key": "b", "value": 0, "confirm": c}, ""}, // set_value needs no approval by default: runs by policy (checked below)
		{"confirm true", "delete_value", map[string]any{"key": "b", "confirm": true}, `argument "confirm" must be a string, got the boolean true`},
		{"confirm empty", "delete_value", map[string]any{"key": "b", "confirm": ""}, "empty"},
		{"confirm spaces", "delete_value", map[string]any{"key": "b", "confirm": "   "}, "empty"},
		{"confirm number", "delete_value", map[string]any{"key": "b", "confirm": 1}, "must be a string"},
		{"confirm object", "delete_value", map[string]any{"key": "b", "confirm": map[string]any{"code": c}}, "must be a string"},
		{"forged", "delete_value", map[string]any{"key": "b", "confirm": c[:len(c)-4] + "AAAA"}, "signature does not match"},
		{"truncated", "delete_value", map[string]any{"key": "b", "confirm": c[:20]}, "malformed or truncated"},
		{"dryRun with confirm", "delete_value", map[string]any{"key": "b", "confirm": c, "dryRun": true}, "both given"},
	}
	for _, tc := range refused {
		if tc.want == "" {
			continue
		}
		res := e.call(tc.tool, tc.args)
		if !res.IsError || !strings.Contains(text(res), tc.want) {
			t.Errorf("%s: %v %s", tc.name, res.IsError, text(res))
		}
		e.unchanged()
	}
	// The code still works for the call it was issued for, once.
	ok := e.call("delete_value", map[string]any{"confirm": c, "key": "b"})
	if ok.IsError || text(ok) != "deleted b" {
		t.Fatalf("confirmed call: %s", text(ok))
	}
	if _, exists := e.store.get("b"); exists {
		t.Fatal("key b still exists")
	}
	replay := e.call("delete_value", map[string]any{"key": "b", "confirm": c})
	if !replay.IsError || !strings.Contains(text(replay), "already been used") {
		t.Fatalf("replay: %s", text(replay))
	}
	recs := e.records()
	var approvals []string
	for _, r := range recs {
		approvals = append(approvals, r["event"].(string)+":"+str(r["approval"]))
	}
	want := "outcome:pending outcome:refused outcome:refused outcome:refused outcome:refused outcome:refused outcome:refused outcome:refused outcome:refused outcome:refused intent:confirmation_code outcome:confirmation_code outcome:refused"
	if strings.Join(approvals, " ") != want {
		t.Errorf("audit approvals\n got %s\nwant %s", strings.Join(approvals, " "), want)
	}
	last := recs[len(recs)-2]
	if last["identity"] == "" || !strings.HasPrefix(last["identity"].(string), "local:") || last["client"] != "example-client/9.9" ||
		last["target"] != target || last["outcome"] != "ok" || last["tool"] != "delete_value" || last["class"] != "destructive" ||
		last["request_id"] == nil || last["server"] != "example" || last["server_version"] != "v0.0.1" {
		t.Errorf("outcome record %v", last)
	}
	if args := last["arguments"].(map[string]any); len(args) != 1 || args["key"] != "b" {
		t.Errorf("recorded arguments %v (confirm must not be recorded)", args)
	}
}

func str(v any) string { s, _ := v.(string); return s }

func TestStateChangedSincePreview(t *testing.T) {
	e := newEnv(t, toolcall.Config{})
	c := code(t, e.call("delete_value", map[string]any{"key": "a"}))
	e.store.set("a", 99) // someone else changed it after the preview
	res := e.call("delete_value", map[string]any{"key": "a", "confirm": c})
	if !res.IsError || !strings.Contains(text(res), "state changed since the preview") || !strings.Contains(text(res), "value 99") {
		t.Fatalf("stale approval: %s", text(res))
	}
	if v, _ := e.store.get("a"); v != 99 {
		t.Fatal("acted on a stale approval")
	}
}

func TestPolicies(t *testing.T) {
	t.Run("change runs by policy under the default", func(t *testing.T) {
		e := newEnv(t, toolcall.Config{})
		res := e.call("set_value", map[string]any{"key": "a", "value": 5})
		if res.IsError || text(res) != "ok: SET a 5" {
			t.Fatal(text(res))
		}
		if recs := e.records(); len(recs) != 2 || recs[0]["event"] != "intent" || recs[0]["approval"] != "policy" || recs[1]["outcome"] != "ok" {
			t.Errorf("records %v", recs)
		}
	})
	t.Run("MCP_APPROVAL=change asks for changes", func(t *testing.T) {
		e := newEnv(t, toolcall.Config{Approval: approval.Config{Policy: approval.Change}})
		res := e.call("set_value", map[string]any{"key": "a", "value": 5})
		if res.IsError || !strings.Contains(text(res), "Approval needed") {
			t.Fatal(text(res))
		}
		e.unchanged()
	})
	t.Run("MCP_APPROVAL=none runs destructive calls and still audits", func(t *testing.T) {
		e := newEnv(t, toolcall.Config{Approval: approval.Config{Policy: approval.None}})
		res := e.call("delete_value", map[string]any{"key": "a"})
		if res.IsError || text(res) != "deleted a" {
			t.Fatal(text(res))
		}
		recs := e.records()
		if len(recs) != 2 || recs[0]["event"] != "intent" || recs[1]["approval"] != "policy" || recs[1]["class"] != "destructive" {
			t.Errorf("records %v", recs)
		}
	})
	t.Run("MCP_APPROVAL_FALLBACK=refuse refuses", func(t *testing.T) {
		e := newEnv(t, toolcall.Config{Approval: approval.Config{Fallback: approval.Refuse}})
		res := e.call("delete_value", map[string]any{"key": "a"})
		if !res.IsError || !strings.Contains(text(res), "MCP_APPROVAL_FALLBACK=refuse") || !strings.Contains(text(res), "nothing was changed") {
			t.Fatal(text(res))
		}
		e.unchanged()
		if recs := e.records(); len(recs) != 1 || recs[0]["approval"] != "refused" || recs[0]["outcome"] != "error" {
			t.Errorf("records %v", recs)
		}
	})
	t.Run("expired code", func(t *testing.T) {
		e := newEnv(t, toolcall.Config{Approval: approval.Config{Timeout: time.Second}})
		c := code(t, e.call("delete_value", map[string]any{"key": "a"}))
		time.Sleep(1100 * time.Millisecond)
		res := e.call("delete_value", map[string]any{"key": "a", "confirm": c})
		if !res.IsError || !strings.Contains(text(res), "expired") {
			t.Fatal(text(res))
		}
		e.unchanged()
	})
	t.Run("code signed by another replica's secret", func(t *testing.T) {
		a := newEnv(t, toolcall.Config{})
		b := newEnv(t, toolcall.Config{})
		c := code(t, a.call("delete_value", map[string]any{"key": "a"}))
		if res := b.call("delete_value", map[string]any{"key": "a", "confirm": c}); !res.IsError || !strings.Contains(text(res), "MCP_APPROVAL_SECRET") {
			t.Fatal(text(res))
		}
		b.unchanged()
		secret := []byte(strings.Repeat("q", 32))
		ledger := filepath.Join(t.TempDir(), "codes")
		a = newEnv(t, toolcall.Config{Approval: approval.Config{Secret: secret, Ledger: ledger}})
		b = newEnv(t, toolcall.Config{Approval: approval.Config{Secret: secret, Ledger: ledger}})
		c = code(t, a.call("delete_value", map[string]any{"key": "a"}))
		if res := b.call("delete_value", map[string]any{"key": "a", "confirm": c}); res.IsError {
			t.Fatalf("a replica with the same MCP_APPROVAL_SECRET refused: %s", text(res))
		}
	})
}

// TestInvalidArguments: wrongly typed values are refused naming the
// argument, before the planner runs, with nothing sent and a record.
func TestInvalidArguments(t *testing.T) {
	e := newEnv(t, toolcall.Config{Approval: approval.Config{Policy: approval.None}})
	for _, tc := range []struct {
		args map[string]any
		want string
	}{
		{map[string]any{"key": "a", "value": "7"}, `argument "value" must be a number, got the string "7"`},
		{map[string]any{"key": "a", "value": true}, `argument "value" must be a number, got the boolean true`},
		{map[string]any{"key": "a", "value": nil}, `argument "value" must be a number, got null`},
		{map[string]any{"key": "a", "value": []any{7}}, `argument "value" must be a number, got an array [7]`},
		{map[string]any{"key": "a", "value": map[string]any{"n": 7}}, `argument "value" must be a number, got an object`},
		{map[string]any{"key": "a", "value": 1e300}, `argument "value"`},
		{map[string]any{"key": "a", "value": -1}, `argument "value"`},
		{map[string]any{"key": 7, "value": 7}, `argument "key" must be a string, got the number 7`},
		{map[string]any{"key": "A;DEL b", "value": 7}, `argument "key"`},
		{map[string]any{"value": 7}, `missing required argument "key"`},
		{map[string]any{"key": "a", "value": 7, "dryRun": "yes"}, `argument "dryRun" must be a boolean, got the string "yes"`},
	} {
		res := e.call("set_value", tc.args)
		if !res.IsError || !strings.Contains(text(res), tc.want) || !strings.Contains(text(res), "nothing was run") {
			t.Errorf("%v: %s", tc.args, text(res))
		}
	}
	if res := e.call("get_value", map[string]any{"key": 1}); !res.IsError || !strings.Contains(text(res), `argument "key" must be a string`) {
		t.Errorf("read tool: %s", text(res))
	}
	e.unchanged()
	recs := e.records()
	if len(recs) != 11 {
		t.Fatalf("%d records, want 11 refusals (the read tool is not audited)", len(recs))
	}
	for _, r := range recs {
		if r["approval"] != "refused" || r["outcome"] != "error" || !strings.Contains(str(r["error"]), "invalid arguments") {
			t.Errorf("record %v", r)
		}
	}
}

// TestAuditUnwritableRefusesChange: a full disk refuses the change.
func TestAuditUnwritableRefusesChange(t *testing.T) {
	if _, err := os.Stat("/dev/full"); err != nil {
		t.Skip("no /dev/full")
	}
	e := newEnv(t, toolcall.Config{Audit: audit.Config{Dest: "/dev/full"}, Approval: approval.Config{Policy: approval.None}})
	for _, tool := range []string{"set_value", "delete_value"} {
		res := e.call(tool, map[string]any{"key": "a", "value": 3})
		if !res.IsError || !strings.Contains(text(res), "audit record could not be written") || !strings.Contains(text(res), "no space") {
			t.Errorf("%s: %s", tool, text(res))
		}
	}
	e.unchanged()
}

func TestReadToolNotAudited(t *testing.T) {
	e := newEnv(t, toolcall.Config{})
	if res := e.call("get_value", map[string]any{"key": "a"}); res.IsError || text(res) != "1" {
		t.Fatal(text(res))
	}
	if recs := e.records(); len(recs) != 0 {
		t.Errorf("read call audited: %v", recs)
	}
}

// TestCodeBoundToCaller: a confirmation code approves only the call of the
// identity that was shown the preview; another OAuth subject holding the
// code (leaked, shared, guessed) is refused and nothing changes, and the
// code still works for its owner.
func TestCodeBoundToCaller(t *testing.T) {
	e := newEnv(t, toolcall.Config{})
	as := func(sub, user string) context.Context {
		return httpauth.ContextWithIdentity(e.t.Context(), &httpauth.Identity{Subject: sub, Username: user})
	}
	callAs := func(ctx context.Context, args map[string]any) *mcp.CallToolResult {
		req := mcp.CallToolRequest{}
		req.Params.Name, req.Params.Arguments = "delete_value", args
		res, err := e.c.CallTool(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	c := code(t, callAs(as("alice", "alice"), map[string]any{"key": "b"}))
	for _, who := range []struct{ sub, user string }{{"bob", "bob"}, {"alice2", "alice"}, {"bob", "alice"}} {
		res := callAs(as(who.sub, who.user), map[string]any{"key": "b", "confirm": c})
		if !res.IsError || !strings.Contains(text(res), "issued to another caller") {
			t.Errorf("%v redeemed alice's code: %s", who, text(res))
		}
		e.unchanged()
	}
	if res := callAs(e.t.Context(), map[string]any{"key": "b", "confirm": c}); !res.IsError || !strings.Contains(text(res), "another caller") {
		t.Errorf("the local user redeemed alice's code: %s", text(res))
	}
	e.unchanged()
	if res := callAs(as("alice", "alice"), map[string]any{"key": "b", "confirm": c}); res.IsError || text(res) != "deleted b" {
		t.Fatalf("alice's own code: %s", text(res))
	}
}
