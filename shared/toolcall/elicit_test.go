package toolcall_test

import (
	"context"
	"encoding/json"
	"io"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpfleet/mcpfleet/shared/approval"
	"github.com/mcpfleet/mcpfleet/shared/audit"
	"github.com/mcpfleet/mcpfleet/shared/toolcall"
)

// answer is what the test's person does with an approval request.
type answer string

const (
	accept  answer = "accept"
	decline answer = "decline"
	cancel  answer = "cancel"
	silent  answer = "silent" // never answers
)

// sdkEnv serves the example over stdio (mcp-go's stdio server on pipes) to
// the official go-sdk client, which speaks 2025-11-25 and answers
// elicitation/create with the test's person.
type sdkEnv struct {
	store    *store
	session  *sdk.ClientSession
	audit    string
	mu       sync.Mutex
	messages []string
	quit     chan struct{} // releases a person who never answers
}

func (e *sdkEnv) seen() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]string(nil), e.messages...)
}

func newSDKEnv(t *testing.T, cfg toolcall.Config, person *answer) *sdkEnv {
	return newSDKEnvVersion(t, cfg, person, "2025-11-25")
}

// newSDKEnvVersion serves the example at protocol version; onDecision, when
// given, is the pipeline's Options.OnDecision.
func newSDKEnvVersion(t *testing.T, cfg toolcall.Config, person *answer, version string, onDecision ...func(tool, decision string)) *sdkEnv {
	return newSDKEnvOptions(t, cfg, person, version, func(o *toolcall.Options) {
		if len(onDecision) > 0 {
			o.OnDecision = onDecision[0]
		}
	})
}

// newSDKEnvOptions is newSDKEnvVersion with the pipeline's options set by
// opt.
func newSDKEnvOptions(t *testing.T, cfg toolcall.Config, person *answer, version string, opt func(*toolcall.Options)) *sdkEnv {
	t.Helper()
	e := &sdkEnv{store: newStore(), audit: filepath.Join(t.TempDir(), "audit.log"), quit: make(chan struct{})}
	cfg.Audit = audit.Config{Dest: e.audit}
	srv := server.NewMCPServer("example", "v0.0.1", server.WithHooks(&server.Hooks{}), server.WithElicitation())
	o := toolcall.Options{Server: "example", Version: "v0.0.1", Local: true}
	opt(&o)
	p, err := toolcall.New(srv, cfg, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	register(p, e.store)

	cr, sw := io.Pipe() // server → client
	sr, cw := io.Pipe() // client → server
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		server.NewStdioServer(srv).Listen(ctx, sr, sw)
	}()
	opts := &sdk.ClientOptions{}
	if person != nil {
		opts.ElicitationHandler = func(ctx context.Context, req *sdk.ElicitRequest) (*sdk.ElicitResult, error) {
			e.mu.Lock()
			e.messages = append(e.messages, req.Params.Message)
			e.mu.Unlock()
			if *person == silent {
				select {
				case <-ctx.Done():
				case <-e.quit:
				}
				return nil, context.Canceled
			}
			return &sdk.ElicitResult{Action: string(*person)}, nil
		}
	}
	c := sdk.NewClient(&sdk.Implementation{Name: "go-sdk-client", Version: "1.8.0"}, opts)
	cs, err := c.Connect(t.Context(), &sdk.IOTransport{Reader: cr, Writer: cw}, &sdk.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatal(err)
	}
	e.session = cs
	t.Cleanup(func() {
		close(e.quit)
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

func (e *sdkEnv) records(t *testing.T) []map[string]any {
	return (&env{t: t, audit: e.audit}).records()
}

// TestElicitationGoSDK drives approvals through the official go-sdk client
// on 2025-11-25: elicitation/create with the dry-run preview; the store
// changes only on accept, and the audit says who decided.
func TestElicitationGoSDK(t *testing.T) {
	for _, tc := range []struct {
		person       answer
		wantApproval string
		wantText     string
		changed      bool
	}{
		{accept, "person", "deleted b", true},
		{decline, "declined", "the person declined the delete_value call; nothing was changed", false},
		{cancel, "declined", "the person cancelled the delete_value call; nothing was changed", false},
		{silent, "timeout", "did not answer the approval request for delete_value within 1s (MCP_APPROVAL_TIMEOUT); nothing was changed", false},
	} {
		t.Run(string(tc.person), func(t *testing.T) {
			person := tc.person
			e := newSDKEnv(t, toolcall.Config{Approval: approval.Config{Timeout: time.Second}}, &person)
			isErr, text := e.call(t, "delete_value", map[string]any{"key": "b"})
			if isErr == tc.changed || !strings.Contains(text, tc.wantText) {
				t.Fatalf("isError=%v %q", isErr, text)
			}
			if _, exists := e.store.get("b"); exists == tc.changed {
				t.Fatalf("store changed=%v, want %v", !exists, tc.changed)
			}
			if m := e.seen(); len(m) != 1 || !strings.HasPrefix(m[0], "Delete key b (value 2) from kv memory://example. The value cannot be recovered.") ||
				!strings.Contains(m[0], "Would send:\n  DEL b") {
				t.Errorf("the person saw %q", m)
			}
			recs := e.records(t)
			last := recs[len(recs)-1]
			if last["approval"] != tc.wantApproval || last["client"] != "go-sdk-client/1.8.0" || last["session"] == nil && false {
				t.Errorf("outcome record %v", last)
			}
			wantRecs := 1
			if tc.changed {
				wantRecs = 2
				if recs[0]["event"] != "intent" || recs[0]["approval"] != "person" {
					t.Errorf("intent record %v", recs[0])
				}
			}
			if len(recs) != wantRecs {
				t.Errorf("%d records, want %d: %v", len(recs), wantRecs, recs)
			}
		})
	}
}

// TestInputRequiredGoSDK: the go-sdk client on 2026-07-28 gets the
// input-required result and answers it.
func TestInputRequiredGoSDK(t *testing.T) {
	person := accept
	e := newSDKEnvVersion(t, toolcall.Config{}, &person, "2026-07-28")
	if isErr, text := e.call(t, "delete_value", map[string]any{"key": "b"}); isErr || text != "deleted b" {
		t.Fatalf("%v %s", isErr, text)
	}
	if m := e.seen(); len(m) != 1 || !strings.HasPrefix(m[0], "Delete key b (value 2)") {
		t.Errorf("the person saw %q", m)
	}
	recs := e.records(t)
	if len(recs) != 3 || recs[2]["approval"] != "person" {
		t.Errorf("records %v", recs)
	}
}

// TestNoElicitationGoSDK: a 2025-11-25 client without elicitation gets the
// preview and a code; with MCP_APPROVAL_FALLBACK=refuse it is refused.
func TestNoElicitationGoSDK(t *testing.T) {
	e := newSDKEnv(t, toolcall.Config{}, nil)
	isErr, text := e.call(t, "delete_value", map[string]any{"key": "b"})
	if isErr || !strings.Contains(text, "Approval needed") || !strings.Contains(text, `confirm: "mcpc1.`) {
		t.Fatalf("%v %s", isErr, text)
	}
	i := strings.Index(text, `confirm: "`) + len(`confirm: "`)
	code := text[i : i+strings.Index(text[i:], `"`)]
	if isErr, text := e.call(t, "delete_value", map[string]any{"key": "b", "confirm": code}); isErr || text != "deleted b" {
		t.Fatalf("confirmed: %v %s", isErr, text)
	}
	if isErr, text := e.call(t, "delete_value", map[string]any{"key": "b", "confirm": code}); !isErr || !strings.Contains(text, "already been used") {
		t.Fatalf("replay: %v %s", isErr, text)
	}

	r := newSDKEnv(t, toolcall.Config{Approval: approval.Config{Fallback: approval.Refuse}}, nil)
	if isErr, text := r.call(t, "delete_value", map[string]any{"key": "b"}); !isErr || !strings.Contains(text, "MCP_APPROVAL_FALLBACK=refuse") {
		t.Fatalf("refuse: %v %s", isErr, text)
	}
	if _, ok := r.store.get("b"); !ok {
		t.Fatal("refused call changed the store")
	}
}

// TestInputRequiredMCPGo drives approvals through mcp-go's client on
// 2026-07-28: the pipeline answers with an input-required result carrying
// the elicitation; the client asks its person and retries with the answer.
func TestInputRequiredMCPGo(t *testing.T) {
	for _, tc := range []struct {
		person       answer
		wantApproval string
		changed      bool
	}{
		{accept, "person", true},
		{decline, "declined", false},
		{cancel, "declined", false},
	} {
		t.Run(string(tc.person), func(t *testing.T) {
			var seen []string
			h := elicitFunc(func(ctx context.Context, req mcp.ElicitationRequest) (*mcp.ElicitationResult, error) {
				seen = append(seen, req.Params.Message)
				return &mcp.ElicitationResult{ElicitationResponse: mcp.ElicitationResponse{Action: mcp.ElicitationResponseAction(tc.person)}}, nil
			})
			e := newEnv(t, toolcall.Config{}, client.WithElicitationHandler(h),
				client.WithClientCapabilities(mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapability{}}))
			res := e.call("delete_value", map[string]any{"key": "b"})
			if res.IsError == tc.changed {
				t.Fatalf("isError=%v %s", res.IsError, text(res))
			}
			if _, exists := e.store.get("b"); exists == tc.changed {
				t.Fatalf("store changed=%v", !exists)
			}
			if len(seen) != 1 || !strings.HasPrefix(seen[0], "Delete key b (value 2)") {
				t.Errorf("the person saw %q", seen)
			}
			recs := e.records()
			var got []string
			for _, r := range recs {
				got = append(got, r["event"].(string)+":"+str(r["approval"]))
			}
			want := "outcome:pending outcome:declined"
			if tc.changed {
				want = "outcome:pending intent:person outcome:person"
			}
			if strings.Join(got, " ") != want {
				t.Errorf("records %s, want %s", strings.Join(got, " "), want)
			}
		})
	}
}

// TestInputRequiredForgedState: a 2026-07-28 retry claiming the person
// accepted, with a request state that is not the one issued for this call,
// is refused. (Sent as raw JSON-RPC: mcp-go's client always starts a call
// without state.)
func TestInputRequiredForgedState(t *testing.T) {
	e := newEnv(t, toolcall.Config{})
	// A real state for another call (key a) must not approve key b either.
	first := e.srv.HandleMessage(t.Context(), json.RawMessage(modernCall("a", "", "")))
	b, _ := json.Marshal(first)
	var got struct {
		Result struct {
			RequestState string `json:"requestState"`
		} `json:"result"`
	}
	json.Unmarshal(b, &got)
	if !strings.HasPrefix(got.Result.RequestState, "mcpc1.") {
		t.Fatalf("first leg: %s", b)
	}
	for _, state := range []string{"mcpc1.forged.state", got.Result.RequestState, "", "true"} {
		res := e.srv.HandleMessage(t.Context(), json.RawMessage(modernCall("b", state, "accept")))
		out, _ := json.Marshal(res)
		if !strings.Contains(string(out), `"isError":true`) {
			t.Errorf("state %q: %s", state, out)
		}
	}
	e.unchanged()
}

func modernCall(key, state, action string) string {
	params := map[string]any{"name": "delete_value", "arguments": map[string]any{"key": key},
		"_meta": map[string]any{mcp.MetaKeyProtocolVersion: "2026-07-28", mcp.MetaKeyClientCapabilities: map[string]any{"elicitation": map[string]any{}}}}
	if state != "" {
		params["requestState"] = state
	}
	if action != "" {
		params["inputResponses"] = map[string]any{"approve": map[string]any{"action": action}}
	}
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params})
	return string(b)
}

type elicitFunc func(context.Context, mcp.ElicitationRequest) (*mcp.ElicitationResult, error)

func (f elicitFunc) Elicit(ctx context.Context, r mcp.ElicitationRequest) (*mcp.ElicitationResult, error) {
	return f(ctx, r)
}
