package mcpserver

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpfleet/mcpfleet/proxymcp/internal/haproxy"
	"github.com/mcpfleet/mcpfleet/proxymcp/internal/haproxytest"
	"github.com/mcpfleet/mcpfleet/shared/approval"
	"github.com/mcpfleet/mcpfleet/shared/audit"
	"github.com/mcpfleet/mcpfleet/shared/toolcall"
)

// person is what the test's person does with an approval request.
type person string

const (
	accepts  person = "accept"
	declines person = "decline"
	cancels  person = "cancel"
	silent   person = "silent" // never answers
)

// sdkEnv serves proxymcp's tools over stdio (mcp-go's stdio server on
// pipes) to the official go-sdk client on 2025-11-25, whose elicitation
// handler is the test's person: before answering it runs meanwhile (a
// change behind proxymcp's back), when set.
type sdkEnv struct {
	session  *sdk.ClientSession
	audit    string
	mu       sync.Mutex
	messages []string
}

func newSDKEnv(t *testing.T, h *haproxytest.HAProxy, cfg toolcall.Config, who person, meanwhile func()) *sdkEnv {
	t.Helper()
	e := &sdkEnv{audit: filepath.Join(t.TempDir(), "audit.log")}
	cfg.Audit = audit.Config{Dest: e.audit}
	srv := server.NewMCPServer("proxymcp", "test", server.WithHooks(&server.Hooks{}))
	p, err := toolcall.New(srv, cfg, toolcall.Options{Server: "proxymcp", Version: "test", Local: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	New(one(haproxy.New(h.Runtime("unix"), nil)), Options{}).Register(p)

	cr, sw := io.Pipe() // server → client
	sr, cw := io.Pipe() // client → server
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		server.NewStdioServer(srv).Listen(ctx, sr, sw)
	}()
	quit := make(chan struct{})
	opts := &sdk.ClientOptions{ElicitationHandler: func(ctx context.Context, req *sdk.ElicitRequest) (*sdk.ElicitResult, error) {
		e.mu.Lock()
		e.messages = append(e.messages, req.Params.Message)
		e.mu.Unlock()
		if who == silent {
			select {
			case <-ctx.Done():
			case <-quit:
			}
			return nil, context.Canceled
		}
		if meanwhile != nil {
			meanwhile()
		}
		return &sdk.ElicitResult{Action: string(who)}, nil
	}}
	c := sdk.NewClient(&sdk.Implementation{Name: "go-sdk-client", Version: "1.8.0"}, opts)
	cs, err := c.Connect(t.Context(), &sdk.IOTransport{Reader: cr, Writer: cw}, &sdk.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	e.session = cs
	t.Cleanup(func() {
		close(quit)
		stop()
		sw.Close()
		sr.Close()
		cs.Close()
		<-done
	})
	return e
}

func (e *sdkEnv) call(t *testing.T, name string, args map[string]any) (bool, string) {
	t.Helper()
	res, err := e.session.CallTool(t.Context(), &sdk.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("call %s: %v", name, err)
	}
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*sdk.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return res.IsError, b.String()
}

func (e *sdkEnv) seen() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]string(nil), e.messages...)
}

type elicitor func(context.Context, mcp.ElicitationRequest) (*mcp.ElicitationResult, error)

func (f elicitor) Elicit(ctx context.Context, r mcp.ElicitationRequest) (*mcp.ElicitationResult, error) {
	return f(ctx, r)
}

// victim adds a map entry to delete and returns the call's arguments.
func victim(t *testing.T, h *haproxytest.HAProxy) map[string]any {
	exec(t, h, "add map "+h.MapFile+" victim.example be_api")
	return map[string]any{"map": h.MapFile, "key": "victim.example"}
}

func present(t *testing.T, h *haproxytest.HAProxy) bool {
	return strings.Contains(exec(t, h, "show map "+h.MapFile), "victim.example")
}

// TestElicitationGoSDK: the go-sdk client (2025-11-25) declares
// elicitation; del_map_entry asks its person with elicitation/create, the
// message being the dry-run preview. HAProxy changes only on accept; the
// audit says person, declined or timeout.
func TestElicitationGoSDK(t *testing.T) {
	h := settled(t)
	for _, tc := range []struct {
		who          person
		wantApproval string
		wantText     string
	}{
		{accepts, "person", `"deleted":true`},
		{declines, "declined", "the person declined the del_map_entry call; nothing was changed"},
		{cancels, "declined", "the person cancelled the del_map_entry call; nothing was changed"},
		{silent, "timeout", "did not answer the approval request for del_map_entry within 1s (MCP_APPROVAL_TIMEOUT); nothing was changed"},
	} {
		t.Run(string(tc.who), func(t *testing.T) {
			args := victim(t, h)
			e := newSDKEnv(t, h, toolcall.Config{Approval: approval.Config{Timeout: time.Second}}, tc.who, nil)
			isErr, text := e.call(t, "del_map_entry", args)
			changed := tc.who == accepts
			if isErr == changed || !strings.Contains(text, tc.wantText) {
				t.Fatalf("isError=%v %s", isErr, text)
			}
			if present(t, h) == changed {
				t.Fatalf("entry present=%v after %s", !changed, tc.who)
			}
			m := e.seen()
			want := `Delete key "victim.example" (value "be_api") from map ` + h.MapFile + ` on HAProxy at unix://` + h.Socket + `.`
			if len(m) != 1 || !strings.HasPrefix(m[0], want) || !strings.Contains(m[0], "Would send:\n  del map "+h.MapFile+" victim.example") {
				t.Errorf("the person saw %q", m)
			}
			recs := auditRecords(t, e.audit)
			last := recs[len(recs)-1]
			if last["approval"] != tc.wantApproval || last["client"] != "go-sdk-client/1.8.0" || last["tool"] != "del_map_entry" {
				t.Errorf("outcome record %v", last)
			}
			if changed && (len(recs) != 2 || recs[0]["event"] != "intent" || recs[0]["approval"] != "person") {
				t.Errorf("records %v", recs)
			}
			if !changed {
				exec(t, h, "del map "+h.MapFile+" victim.example")
			}
		})
	}
}

// TestInputRequiredMCPGo: mcp-go's client on 2026-07-28 gets an
// input-required result carrying the preview, asks its person and retries
// with the answer. A person who answers after MCP_APPROVAL_TIMEOUT is
// treated as not answering.
func TestInputRequiredMCPGo(t *testing.T) {
	h := settled(t)
	for _, tc := range []struct {
		who          person
		wantApproval string
	}{
		{accepts, "person"},
		{declines, "declined"},
		{cancels, "declined"},
		{silent, "timeout"},
	} {
		t.Run(string(tc.who), func(t *testing.T) {
			args := victim(t, h)
			var seen []string
			ask := elicitor(func(ctx context.Context, req mcp.ElicitationRequest) (*mcp.ElicitationResult, error) {
				seen = append(seen, req.Params.Message)
				action := tc.who
				if tc.who == silent {
					// The request state the server signed expires with
					// MCP_APPROVAL_TIMEOUT; this person answers too late.
					time.Sleep(1500 * time.Millisecond)
					action = accepts
				}
				return &mcp.ElicitationResult{ElicitationResponse: mcp.ElicitationResponse{Action: mcp.ElicitationResponseAction(action)}}, nil
			})
			e := newApEnv(t, h, toolcall.Config{Approval: approval.Config{Timeout: time.Second}}, client.WithElicitationHandler(ask),
				client.WithClientCapabilities(mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapability{}}))
			res := e.call("del_map_entry", args)
			changed := tc.who == accepts
			if res.IsError == changed {
				t.Fatalf("isError=%v %s", res.IsError, text(res))
			}
			if present(t, h) == changed {
				t.Fatalf("entry present=%v after %s", !changed, tc.who)
			}
			if len(seen) != 1 || !strings.HasPrefix(seen[0], `Delete key "victim.example" (value "be_api")`) {
				t.Errorf("the person saw %q", seen)
			}
			var got []string
			for _, r := range e.records() {
				got = append(got, r["event"].(string)+":"+r["approval"].(string))
			}
			want := "outcome:pending outcome:" + tc.wantApproval
			if changed {
				want = "outcome:pending intent:person outcome:person"
			}
			if strings.Join(got, " ") != want {
				t.Errorf("records %s, want %s", strings.Join(got, " "), want)
			}
			if !changed {
				exec(t, h, "del map "+h.MapFile+" victim.example")
			}
		})
	}
}

// TestElicitationStateChanged: while the person reads the preview, the
// map entry changes behind proxymcp's back; their accept is refused and
// nothing runs (session elicitation and the input-required round trip).
func TestElicitationStateChanged(t *testing.T) {
	h := settled(t)
	behindBack := func() { exec(t, h, "set map "+h.MapFile+" victim.example be_app") }

	args := victim(t, h)
	e := newSDKEnv(t, h, toolcall.Config{}, accepts, behindBack)
	isErr, text := e.call(t, "del_map_entry", args)
	if !isErr || !strings.Contains(text, "state changed since the preview") || !present(t, h) {
		t.Errorf("go-sdk: isError=%v %s", isErr, text)
	}
	exec(t, h, "del map "+h.MapFile+" victim.example")

	args = victim(t, h)
	ask := elicitor(func(ctx context.Context, req mcp.ElicitationRequest) (*mcp.ElicitationResult, error) {
		behindBack()
		return &mcp.ElicitationResult{ElicitationResponse: mcp.ElicitationResponse{Action: mcp.ElicitationResponseActionAccept}}, nil
	})
	m := newApEnv(t, h, toolcall.Config{}, client.WithElicitationHandler(ask),
		client.WithClientCapabilities(mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapability{}}))
	res := m.call("del_map_entry", args)
	if !res.IsError || !strings.Contains(textOf(res), "state changed since the preview") || !present(t, h) {
		t.Errorf("mcp-go: %s", textOf(res))
	}
}

func textOf(res *mcp.CallToolResult) string { return text(res) }

// TestAuditRecords: a change under MCP_APPROVAL=none writes one intent and
// one outcome record with the fields, target the runtime API URL;
// a refused call's secret-named argument is redacted and the stats page
// password never appears; an unwritable audit log refuses the change and
// HAProxy is unchanged.
func TestAuditRecords(t *testing.T) {
	h := settled(t)
	e := newApEnv(t, h, toolcall.Config{Approval: approval.Config{Policy: approval.None}})
	args := map[string]any{"backend": "be_app", "server": "app1", "weight": 9}
	if res := e.call("set_server_weight", args); res.IsError {
		t.Fatal(text(res))
	}
	// The stats page is the fallback here; its password must stay out of
	// every record, even one of a refused call that carries it.
	res := e.call("set_server_state", map[string]any{"backend": "be_app", "server": "app1", "state": "ready", "password": haproxytest.StatsPassword})
	if !res.IsError {
		t.Fatal("an unknown argument was accepted")
	}
	recs := e.records()
	if len(recs) != 3 {
		t.Fatalf("records %v", recs)
	}
	for i, r := range recs[:2] {
		for _, f := range []string{"time", "server", "server_version", "tool", "class", "arguments", "target", "commands", "identity", "client", "session", "request_id", "approval", "dry_run"} {
			if _, ok := r[f]; !ok {
				t.Errorf("record %d lacks %s: %v", i, f, r)
			}
		}
		if r["tool"] != "set_server_weight" || r["class"] != "change" || r["target"] != "unix://"+h.Socket ||
			r["approval"] != "policy" || r["client"] != "approval-test/1.0" || !strings.HasPrefix(r["identity"].(string), "local:") {
			t.Errorf("record %d: %v", i, r)
		}
		if _, err := time.Parse(time.RFC3339Nano, r["time"].(string)); err != nil || !strings.HasSuffix(r["time"].(string), "Z") {
			t.Errorf("time %v", r["time"])
		}
	}
	if recs[0]["event"] != "intent" || recs[1]["event"] != "outcome" || recs[1]["outcome"] != "ok" || recs[1]["duration_ms"] == nil {
		t.Errorf("intent/outcome %v", recs[:2])
	}
	if cmds, _ := recs[1]["commands"].([]any); len(cmds) != 1 || cmds[0] != "set server be_app/app1 weight 9" {
		t.Errorf("commands %v", recs[1]["commands"])
	}
	if a, _ := recs[2]["arguments"].(map[string]any); a["password"] != "[redacted]" || recs[2]["approval"] != "refused" {
		t.Errorf("refused record %v", recs[2])
	}
	b, _ := os.ReadFile(e.audit)
	if strings.Contains(string(b), haproxytest.StatsPassword) {
		t.Error("the stats password is in the audit log")
	}

	if _, err := os.Stat("/dev/full"); err != nil {
		t.Skip("no /dev/full to make the audit log unwritable")
	}
	full := newApEnv(t, h, toolcall.Config{Approval: approval.Config{Policy: approval.None}, Audit: audit.Config{Dest: "/dev/full"}})
	before := state(t, h)
	res = full.call("set_server_weight", map[string]any{"backend": "be_app", "server": "app1", "weight": 3})
	if !res.IsError || !strings.Contains(text(res), "the audit record could not be written") || !strings.Contains(text(res), "nothing was changed") {
		t.Errorf("full disk: %s", text(res))
	}
	if after := state(t, h); after != before {
		t.Errorf("a change without its audit record:\n%s", stateDiff(before, after))
	}
}
