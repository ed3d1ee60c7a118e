package toolcall_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/mcpfleet/mcpfleet/shared/approval"
	"github.com/mcpfleet/mcpfleet/shared/audit"
	"github.com/mcpfleet/mcpfleet/shared/e2e/inproc"
	"github.com/mcpfleet/mcpfleet/shared/e2e/rawmcp"
	"github.com/mcpfleet/mcpfleet/shared/httpauth"
	"github.com/mcpfleet/mcpfleet/shared/tasks"
	"github.com/mcpfleet/mcpfleet/shared/toolcall"
)

type askIn struct {
	Note string `json:"note" jsonschema:"what the run asks about"`
}

// registerAsker adds ask_person, a change tool whose run asks the person a
// further question, as codermcp's Codex turns do for the CLI's approval
// requests: the planner says whether anyone can be asked (CannotAsk); the
// run asks (Ask) and audits the answer in a record the pipeline started
// (AuditRecord, WriteAudit). Its result says what happened.
func registerAsker(p *toolcall.Pipeline, opts ...toolcall.ToolOption) {
	toolcall.AddChange(p, toolcall.Tool{Name: "ask_person", Description: "Ask the person while running.",
		Effect: toolcall.Effect{Most: toolcall.Change}},
		func(ctx context.Context, in askIn) (toolcall.Plan, error) {
			req, _ := toolcall.CallRequest(ctx)
			why := p.CannotAsk(ctx)
			return toolcall.Plan{Class: toolcall.Change, Target: "the person", Commands: []string{"ask " + in.Note},
				Describe: func(context.Context) (toolcall.Preview, error) {
					return toolcall.Preview{Summary: "Ask about " + in.Note + "."}, nil
				},
				Run: func(ctx context.Context) (*mcp.CallToolResult, error) {
					rec := p.AuditRecord(ctx, req, toolcall.Change)
					rec.Event, rec.Target, rec.Commands = audit.Outcome, "the person, asked mid-run", []string{"asked about " + in.Note}
					if why != "" {
						rec.Approval, rec.Outcome, rec.Error = audit.Refused, "error", why
						if err := p.WriteAudit(rec); err != nil {
							return nil, err
						}
						return mcp.NewToolResultText("cannot ask: " + why), nil
					}
					res, err := p.Ask(ctx, mcp.ElicitationParams{Message: "May the run go on with " + in.Note + "?",
						RequestedSchema: map[string]any{"type": "object", "properties": map[string]any{}}})
					out := ""
					switch {
					case err != nil:
						out = "ask failed: " + err.Error()
						rec.Approval, rec.Outcome, rec.Error = audit.Refused, "error", out
					default:
						out = "answer: " + string(res.Action)
						rec.Approval, rec.Outcome = audit.ByPerson, "ok"
					}
					if err := p.WriteAudit(rec); err != nil {
						return nil, err
					}
					return mcp.NewToolResultText(out), nil
				}}, nil
		}, opts...)
}

// TestAuditRecordIsThePipelines: the record a run starts with AuditRecord
// and writes with WriteAudit says who, from where and with what exactly as
// the pipeline's own records of the same call do, for OAuth callers
// (hostile subjects and names included: the same quoting), the local user
// and an anonymous caller; and it lands in the pipeline's one audit log,
// between the call's intent and outcome.
func TestAuditRecordIsThePipelines(t *testing.T) {
	const iss = "https://idp.example.com/realms/main"
	type who struct {
		name string
		http bool
		id   *httpauth.Identity
		want string // the identity words
	}
	callers := []who{
		{"local user", false, nil, "local:"},
		{"anonymous over HTTP", true, nil, "anonymous"},
		{"oauth subject only", true, &httpauth.Identity{Issuer: iss, Subject: "alice"}, "oauth:alice"},
		{"oauth with user name", true, &httpauth.Identity{Issuer: iss, Subject: "alice", Username: "alice", Email: "a@example.com"}, "oauth:alice user=alice"},
		{"oauth with email", true, &httpauth.Identity{Issuer: iss, Subject: "alice", Email: "a@example.com"}, "oauth:alice email=a@example.com"},
		{"subject with a space and user=", true, &httpauth.Identity{Issuer: iss, Subject: "alice user=alice"}, `oauth:"alice user=alice"`},
		{"subject with a forged second line", true, &httpauth.Identity{Issuer: iss, Subject: "x\nuser=alice"}, `oauth:"x\nuser=alice"`},
		{"subject with NUL", true, &httpauth.Identity{Issuer: iss, Subject: "alice\x00", Username: "alice"}, `oauth:"alice\x00" user=alice`},
		{"subject quoted", true, &httpauth.Identity{Issuer: iss, Subject: `"alice"`}, `oauth:"\"alice\""`},
		{"subject with a backslash", true, &httpauth.Identity{Issuer: iss, Subject: `a\b`}, `oauth:"a\\b"`},
		{"subject with a single quote", true, &httpauth.Identity{Issuer: iss, Subject: "o'neil"}, `oauth:"o'neil"`},
		{"Cyrillic look-alike", true, &httpauth.Identity{Issuer: iss, Subject: "\u0430lice"}, "oauth:\"\u0430lice\""},
		{"zero-width space in the user name", true, &httpauth.Identity{Issuer: iss, Subject: "alice", Username: "alice\u200b"}, `oauth:alice user="alice\u200b"`},
		{"user name with =", true, &httpauth.Identity{Issuer: iss, Subject: "bob", Username: "x=alice"}, `oauth:bob user="x=alice"`},
		{"email with a space", true, &httpauth.Identity{Issuer: iss, Subject: "bob", Email: "a b@example.com"}, `oauth:bob email="a b@example.com"`},
		{"empty subject", true, &httpauth.Identity{Issuer: iss, Username: "alice"}, `oauth:"" user=alice`},
		{"no issuer", true, &httpauth.Identity{Subject: "alice"}, "oauth:alice"},
	}
	for _, c := range callers {
		t.Run(c.name, func(t *testing.T) {
			srv := inproc.Start(t, inproc.Options{Name: "example", Version: "v0.0.1", HTTP: c.http, Protocol: "2025-11-25",
				Calls:      toolcall.Config{Approval: approval.Config{Policy: approval.None}},
				ClientName: "asker-client", ClientVersion: "2.1"}, func(p *toolcall.Pipeline) { registerAsker(p) })
			ctx := t.Context()
			if c.id != nil {
				ctx = httpauth.ContextWithIdentity(ctx, c.id)
			}
			req := mcp.CallToolRequest{}
			req.Params.Name, req.Params.Arguments = "ask_person", map[string]any{"note": "the deploy"}
			res, err := srv.Client.CallTool(ctx, req)
			if err != nil || res.IsError || !strings.HasPrefix(inproc.Text(res), "cannot ask: ") {
				t.Fatalf("ask_person: %v %s", err, inproc.Text(res))
			}
			recs := (&env{t: t, audit: srv.Audit}).records()
			if len(recs) != 3 {
				t.Fatalf("%d records, want the call's intent, the run's own and the call's outcome: %v", len(recs), recs)
			}
			intent, own, outcome := recs[0], recs[1], recs[2]
			if intent["event"] != "intent" || outcome["event"] != "outcome" || own["target"] != "the person, asked mid-run" {
				t.Fatalf("records out of order: %v", recs)
			}
			for _, k := range []string{"identity", "issuer", "subject", "session", "client", "server", "server_version", "tool", "class", "request_id"} {
				if fmt.Sprint(own[k]) != fmt.Sprint(intent[k]) || fmt.Sprint(own[k]) != fmt.Sprint(outcome[k]) {
					t.Errorf("%s: the run's record has %q, the pipeline's %q and %q", k, own[k], intent[k], outcome[k])
				}
			}
			if a, _ := json.Marshal(own["arguments"]); string(a) != `{"note":"the deploy"}` {
				t.Errorf("arguments %s, want the call's without the pipeline's own", a)
			}
			id := str(own["identity"])
			if c.want == "local:" {
				if !strings.HasPrefix(id, "local:") || len(id) == len("local:") {
					t.Errorf("identity %q, want local:<os user>", id)
				}
			} else if id != c.want {
				t.Errorf("identity %q, want %q", id, c.want)
			}
			if c.id != nil && (own["issuer"] != nilIfEmpty(c.id.Issuer) || own["subject"] != nilIfEmpty(c.id.Subject)) {
				t.Errorf("issuer %v subject %v, want %q %q as fields of their own", own["issuer"], own["subject"], c.id.Issuer, c.id.Subject)
			}
			if c.id == nil && (own["issuer"] != nil || own["subject"] != nil) {
				t.Errorf("a caller without OAuth has issuer %v subject %v", own["issuer"], own["subject"])
			}
			if own["server"] != "example" || own["server_version"] != "v0.0.1" || own["tool"] != "ask_person" || own["client"] != "asker-client/2.1" || str(own["request_id"]) == "" {
				t.Errorf("record %v", own)
			}
		})
	}
}

// nilIfEmpty is how an omitted string field reads back from JSON.
func nilIfEmpty(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// TestCannotAskAndAskRouting: CannotAsk says whether a running call can
// put a question to the person, and Ask routes it as the pipeline routes
// its own approvals: elicitation/create on a 2025-11-25 session whose
// client declared form elicitation (the person's answer comes back);
// nobody to ask on a session without it (or with URL mode only), nor on a
// 2026-07-28 call that is not a task (its input-required results answer
// before the call runs).
func TestCannotAskAndAskRouting(t *testing.T) {
	form := mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapability{}}
	urlOnly := mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapability{URL: &struct{}{}}}
	cases := []struct {
		name     string
		protocol string
		caps     *mcp.ClientCapabilities
		person   mcp.ElicitationResponseAction
		want     string
	}{
		{"2025-11-25, form elicitation, accept", "2025-11-25", &form, mcp.ElicitationResponseActionAccept, "answer: accept"},
		{"2025-11-25, form elicitation, decline", "2025-11-25", &form, mcp.ElicitationResponseActionDecline, "answer: decline"},
		{"2025-11-25, form elicitation, cancel", "2025-11-25", &form, mcp.ElicitationResponseActionCancel, "answer: cancel"},
		{"2025-06-18, form elicitation", "2025-06-18", &form, mcp.ElicitationResponseActionAccept, "answer: accept"},
		{"2025-11-25, no elicitation declared", "2025-11-25", nil, "", "cannot ask: this client did not declare elicitation (form mode)"},
		{"2025-11-25, URL mode only", "2025-11-25", &urlOnly, "", "cannot ask: this client did not declare elicitation (form mode)"},
		{"2026-07-28, form elicitation, not a task", mcp.LATEST_PROTOCOL_VERSION, &form, mcp.ElicitationResponseActionAccept,
			"cannot ask: the client speaks MCP " + mcp.LATEST_PROTOCOL_VERSION + ", on which a call that is not a task cannot ask in the middle of its run (call it as a task)"},
		{"2026-07-28, no elicitation declared", mcp.LATEST_PROTOCOL_VERSION, nil, "", "cannot ask: this client did not declare elicitation (form mode)"},
		{"2026-07-28, URL mode only", mcp.LATEST_PROTOCOL_VERSION, &urlOnly, "", "cannot ask: this client did not declare elicitation (form mode)"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var (
				mu   sync.Mutex
				seen []string
			)
			h := elicitFunc(func(_ context.Context, r mcp.ElicitationRequest) (*mcp.ElicitationResult, error) {
				mu.Lock()
				seen = append(seen, r.Params.Message)
				mu.Unlock()
				return &mcp.ElicitationResult{ElicitationResponse: mcp.ElicitationResponse{Action: tc.person}}, nil
			})
			// mcp-go's client declares elicitation when it has a handler.
			var opts []client.ClientOption
			if tc.caps != nil {
				opts = append(opts, client.WithElicitationHandler(h), client.WithClientCapabilities(*tc.caps))
			}
			srv := inproc.Start(t, inproc.Options{Name: "example", Version: "v0.0.1", Protocol: tc.protocol,
				Server: []server.ServerOption{server.WithElicitation()},
				Calls:  toolcall.Config{Approval: approval.Config{Policy: approval.None}}, Client: opts},
				func(p *toolcall.Pipeline) { registerAsker(p) })
			res := srv.Call("ask_person", map[string]any{"note": "step 2"})
			if got := inproc.Text(res); res.IsError || got != tc.want {
				t.Fatalf("got %q (isError %v), want %q", got, res.IsError, tc.want)
			}
			mu.Lock()
			defer mu.Unlock()
			asked := strings.HasPrefix(tc.want, "answer: ")
			if asked && (len(seen) != 1 || seen[0] != "May the run go on with step 2?") {
				t.Errorf("the person saw %q, want the run's one question", seen)
			}
			if !asked && len(seen) != 0 {
				t.Errorf("the person was asked %q where the call cannot ask", seen)
			}
			recs := (&env{t: t, audit: srv.Audit}).records()
			if len(recs) != 3 || recs[1]["target"] != "the person, asked mid-run" {
				t.Fatalf("records %v", recs)
			}
			wantApproval := audit.ByPerson
			if !asked {
				wantApproval = audit.Refused
			}
			if recs[1]["approval"] != wantApproval {
				t.Errorf("the run's record has approval %v, want %s", recs[1]["approval"], wantApproval)
			}
		})
	}
}

// TestAskInsideATaskGoesThroughTheTask: run as a task (2025-11-25 over
// HTTP), CannotAsk is "" for a client that declared elicitation and Ask
// puts the question on the task (input_required with the question), not
// on the session; a client that did not declare elicitation cannot be
// asked inside its task either.
func TestAskInsideATaskGoesThroughTheTask(t *testing.T) {
	dir := t.TempDir()
	k := tasks.NewKeeper(tasks.Config{})
	srv := server.NewMCPServer("example", "v0.0.1", append([]server.ServerOption{server.WithHooks(&server.Hooks{}), server.WithElicitation()}, k.ServerOptions()...)...)
	p, err := toolcall.New(srv, toolcall.Config{Approval: approval.Config{Policy: approval.None}, Audit: audit.Config{Dest: filepath.Join(dir, "audit.log")}},
		toolcall.Options{Server: "example", Version: "v0.0.1"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	registerAsker(p, toolcall.AsTask())
	p.OfferTasks(k)
	t.Cleanup(k.Stop)
	ts := httptest.NewServer(k.Wrap(server.NewStreamableHTTPServer(srv)))
	t.Cleanup(ts.Close)
	e := &taskEnv{url: ts.URL + "/mcp", audit: filepath.Join(dir, "audit.log"), p: p, srv: srv}

	t.Run("elicitation declared", func(t *testing.T) {
		s := &rawSession{Session: rawmcp.New(t, e.url, rawClient()), t: t}
		s.RPC("initialize", `{"protocolVersion":"2025-11-25","capabilities":{"elicitation":{}},"clientInfo":{"name":"t","version":"1"}}`)
		s.Post(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
		a := s.RPC("tools/call", `{"name":"ask_person","arguments":{"note":"the task"},"task":{}}`)
		var created struct {
			Task struct{ TaskID, Status string }
		}
		if a.Error != nil || json.Unmarshal(a.Result, &created) != nil || created.Task.TaskID == "" {
			t.Fatalf("create the task: %s %+v", a.Result, a.Error)
		}
		var got struct{ Status, StatusMessage string }
		deadline := time.Now().Add(30 * time.Second)
		for {
			g := s.RPC("tasks/get", fmt.Sprintf(`{"taskId":%q}`, created.Task.TaskID))
			if g.Error != nil || json.Unmarshal(g.Result, &got) != nil {
				t.Fatalf("tasks/get: %s %+v", g.Result, g.Error)
			}
			if got.Status != "working" || time.Now().After(deadline) {
				break
			}
			time.Sleep(10 * time.Millisecond) // polling is the protocol's own wait
		}
		if got.Status != "input_required" {
			t.Fatalf("the task is %+v, want input_required with the run's question", got)
		}
		// Cancelled while asking: the run's Ask ends with the task.
		if c := s.RPC("tasks/cancel", fmt.Sprintf(`{"taskId":%q}`, created.Task.TaskID)); c.Error != nil {
			t.Fatalf("tasks/cancel: %+v", c.Error)
		}
	})

	t.Run("no elicitation declared", func(t *testing.T) {
		s := e.connect(t) // declares no capabilities
		if got := s.task("ask_person", `{"note":"the task"}`); !strings.Contains(got, "cannot ask: this client did not declare elicitation (form mode)") {
			t.Fatalf("task result %s", got)
		}
	})
}
