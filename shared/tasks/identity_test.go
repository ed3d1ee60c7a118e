package tasks_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcpfleet/mcpfleet/shared/e2e/rawmcp"
	"github.com/mcpfleet/mcpfleet/shared/httpauth"
	"github.com/mcpfleet/mcpfleet/shared/httpauth/idptest"
	"github.com/mcpfleet/mcpfleet/shared/serve"
	"github.com/mcpfleet/mcpfleet/shared/tasks"
)

const hmacSecret = "0123456789abcdef0123456789abcdef-tasks-secret"

// surface is the real HTTP surface of a server (serve.NewServer +
// NewHTTPHandler with OAuth) offering tasks through a keeper, with one
// task-capable tool "job": mode "wait" runs until cancelled or released,
// "now" returns at once, "fail" fails, "ask" asks the client inside the
// task (tasks.Ask) and returns the answer's action.
type surface struct {
	url     string
	keeper  *tasks.Keeper
	release chan struct{}

	mu      sync.Mutex
	endings []string // how each wait run ended
}

func newSurface(t *testing.T, ac httpauth.Config, tc tasks.Config) *surface {
	t.Helper()
	k := tasks.NewKeeper(tc)
	sf := &surface{keeper: k, release: make(chan struct{})}
	s := serve.NewServer("tasks-id", "0.0.1", k.ServerOptions()...)
	s.AddTool(mcp.NewTool("job", mcp.WithTaskSupport(mcp.TaskSupportOptional), mcp.WithString("mode")), k.Tool(
		func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			switch req.GetString("mode", "") {
			case "now":
				return mcp.NewToolResultText("done"), nil
			case "fail":
				return nil, errors.New("failed as asked")
			case "ask", "ask-briefly":
				// Asks inside the task, as the toolcall pipeline asks for
				// an approval; "ask-briefly" gives up after 300 ms (the
				// approval timeout).
				wait := 30 * time.Second
				if req.GetString("mode", "") == "ask-briefly" {
					wait = 300 * time.Millisecond
				}
				actx, cancel := context.WithTimeout(ctx, wait)
				defer cancel()
				res, err := tasks.Ask(actx, mcp.ElicitationParams{Message: "Drop table sales.t?", RequestedSchema: map[string]any{"type": "object", "properties": map[string]any{}}})
				switch {
				case errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil:
					return mcp.NewToolResultError("no answer within the approval timeout"), nil
				case err != nil:
					sf.note("ask ended: " + err.Error())
					return nil, err
				}
				return mcp.NewToolResultText("answer: " + string(res.Action)), nil
			}
			select {
			case <-sf.release:
				sf.note("released")
				return mcp.NewToolResultText("released"), nil
			case <-ctx.Done():
				sf.note("cancelled")
				return nil, ctx.Err()
			}
		}))
	ts := httptest.NewUnstartedServer(nil)
	base := "http://" + ts.Listener.Addr().String()
	ac.Enabled, ac.BaseURL = true, base
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	layer, err := httpauth.New(context.Background(), ac, logger)
	if err != nil {
		t.Fatal(err)
	}
	cfg := serve.Config{Transport: "http", Host: "127.0.0.1", Auth: ac}
	ts.Config.Handler = serve.NewHTTPHandler(serve.Program{Name: "tasks-id", Version: "0.0.1"}, s, cfg, layer,
		serve.Options{Logger: logger, WrapMCP: k.Wrap})
	ts.Start()
	t.Cleanup(func() {
		sf.stop()
		k.Stop()
		ts.Close()
	})
	sf.url = base + "/mcp"
	return sf
}

func (sf *surface) stop() {
	sf.mu.Lock()
	defer sf.mu.Unlock()
	select {
	case <-sf.release:
	default:
		close(sf.release)
	}
}

func (sf *surface) note(s string) {
	sf.mu.Lock()
	sf.endings = append(sf.endings, s)
	sf.mu.Unlock()
}

func (sf *surface) ended() []string {
	sf.mu.Lock()
	defer sf.mu.Unlock()
	return append([]string(nil), sf.endings...)
}

// caller speaks to the surface with one identity's token, in one protocol
// era: "2025-11-25" (an MCP session over rawmcp) or "2026-07-28" (no
// session; every request carries the version in _meta and headers).
type caller struct {
	t      *testing.T
	era    string
	token  string
	url    string
	legacy *rawmcp.Session
	n      int
	ext    bool // declares the 2026-07-28 tasks extension
}

const modern = "2026-07-28"

func (sf *surface) dial(t *testing.T, era, token string) *caller {
	t.Helper()
	c := &caller{t: t, era: era, token: token, url: sf.url}
	if era != modern {
		s := rawmcp.New(t, sf.url, &http.Client{Timeout: 30 * time.Second})
		s.Header = http.Header{"Authorization": {"Bearer " + token}}
		s.Initialize("tasks-id-test")
		c.legacy = s
	}
	return c
}

// reply is one answer: HTTP status and the JSON-RPC error or result.
type reply struct {
	status int
	answer rawmcp.Answer
	raw    string
}

func (c *caller) rpc(method, params string) reply {
	c.t.Helper()
	if c.legacy != nil {
		c.legacy.N++
		status, b := c.legacy.Do(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":%q,"params":%s}`, c.legacy.N, method, params))
		return decode(c.t, status, b)
	}
	c.n++
	var p map[string]json.RawMessage
	if err := json.Unmarshal([]byte(params), &p); err != nil {
		c.t.Fatal(err)
	}
	caps := `{}`
	if c.ext {
		caps = `{"extensions":{"io.modelcontextprotocol/tasks":{}}}`
	}
	p["_meta"] = json.RawMessage(`{"io.modelcontextprotocol/protocolVersion":"` + modern + `","io.modelcontextprotocol/clientCapabilities":` + caps + `}`)
	pb, _ := json.Marshal(p)
	req, _ := http.NewRequest(http.MethodPost, c.url, strings.NewReader(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":%q,"params":%s}`, c.n, method, pb)))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", "Bearer "+c.token)
	req.Header.Set("MCP-Protocol-Version", modern)
	req.Header.Set("Mcp-Method", method)
	var named struct{ Name string }
	if json.Unmarshal(p["name"], &named.Name) == nil && method == "tools/call" {
		req.Header.Set("Mcp-Name", named.Name)
	}
	if json.Unmarshal(p["taskId"], &named.Name) == nil && strings.HasPrefix(method, "tasks/") {
		req.Header.Set("Mcp-Name", named.Name)
	}
	resp, err := (&http.Client{Timeout: 30 * time.Second}).Do(req)
	if err != nil {
		c.t.Fatalf("%s: %v", method, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if i := bytes.LastIndex(b, []byte("data: ")); bytes.HasPrefix(b, []byte("event:")) && i >= 0 {
		b = bytes.TrimSpace(b[i+len("data: "):])
	}
	return decode(c.t, resp.StatusCode, b)
}

func decode(t *testing.T, status int, b []byte) reply {
	t.Helper()
	var a rawmcp.Answer
	if err := json.Unmarshal(b, &a); err != nil {
		t.Fatalf("answer HTTP %d %q: %v", status, b, err)
	}
	return reply{status: status, answer: a, raw: string(b)}
}

// refusal is what a caller can observe of a refused request; two refusals
// are indistinguishable when these are equal.
func (r reply) refusal() string {
	if r.answer.Error == nil {
		return fmt.Sprintf("HTTP %d result %s", r.status, r.answer.Result)
	}
	return fmt.Sprintf("HTTP %d error %d %q", r.status, r.answer.Error.Code, r.answer.Error.Message)
}

type taskInfo struct {
	TaskID string `json:"taskId"`
	Status string `json:"status"`
}

func (c *caller) create(mode string) (taskInfo, reply) {
	c.t.Helper()
	r := c.rpc("tools/call", fmt.Sprintf(`{"name":"job","arguments":{"mode":%q},"task":{}}`, mode))
	var res struct{ Task taskInfo }
	if r.answer.Error == nil {
		json.Unmarshal(r.answer.Result, &res)
	}
	return res.Task, r
}

func (c *caller) mustCreate(mode string) string {
	c.t.Helper()
	tk, r := c.create(mode)
	if r.answer.Error != nil || tk.TaskID == "" {
		c.t.Fatalf("%s: create a %s task: %s", c.era, mode, r.raw)
	}
	return tk.TaskID
}

func (c *caller) status(id string) (string, reply) {
	c.t.Helper()
	r := c.rpc("tasks/get", fmt.Sprintf(`{"taskId":%q}`, id))
	var tk taskInfo
	if r.answer.Error == nil {
		json.Unmarshal(r.answer.Result, &tk)
	}
	return tk.Status, r
}

// waitStatus polls tasks/get until the task reaches want.
func (c *caller) waitStatus(id, want string) {
	c.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		got, r := c.status(id)
		if got == want {
			return
		}
		if time.Now().After(deadline) {
			c.t.Fatalf("task %s: status %q (%s), want %q", id, got, r.raw, want)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// identitySuite is an OAuth configuration, alice's token and the tokens of
// callers who must not reach her tasks.
type identitySuite struct {
	name    string
	cfg     httpauth.Config
	alice   string
	bob     string // a plain other identity
	attacks map[string]string
}

func identitySuites(t *testing.T) []identitySuite {
	idp := idptest.New(t, idptest.Options{})
	const aud = "api://mcp"
	oidc := func(sub string) string { c := idp.Claims(aud); c["sub"] = sub; return idp.Sign(c) }
	exp := time.Now().Add(time.Hour).Unix()
	hmac := func(iss, sub string) string {
		c := map[string]any{"sub": sub, "aud": "x", "exp": exp, "preferred_username": "alice"}
		if iss != "" {
			c["iss"] = iss
		}
		return idptest.SignHS256(hmacSecret, c)
	}
	const issA = "https://idp-a.example"
	return []identitySuite{
		{
			name:  "oidc",
			cfg:   httpauth.Config{Provider: "oidc", Issuer: idp.Issuer(), Audience: aud, HTTPClient: idp.HTTPClient()},
			alice: oidc("alice"),
			bob:   oidc("bob"),
			attacks: map[string]string{
				"subject with a trailing space":  oidc("alice "),
				"subject in another case":        oidc("Alice"),
				"subject with a NUL suffix":      oidc("alice\x00"),
				"subject spelling user=":         oidc("alice user=alice"),
				"subject spelling oauth:":        oidc("oauth:alice"),
				"subject in quotes":              oidc(`"alice"`),
				"subject with sub= and a quote":  oidc(`sub="alice user=alice"`),
				"subject with the issuer inside": oidc(idp.Issuer() + "alice"),
			},
		},
		{
			name:  "hmac",
			cfg:   httpauth.Config{Provider: "hmac", JWTSecret: hmacSecret, Audience: "x"},
			alice: hmac(issA, "alice"),
			bob:   hmac(issA, "bob"),
			attacks: map[string]string{
				"same subject, other issuer":        hmac("https://idp-b.example", "alice"),
				"same subject, no issuer":           hmac("", "alice"),
				"issuer with the subject appended":  hmac(issA+"alice", "x"),
				"issuer ending in the subject":      hmac(issA+"a", "lice"),
				"subject carrying the issuer":       hmac("", issA+"alice"),
				"subject carrying a length prefix":  hmac("", "21:"+issA+"alice"),
				"subject spelling user=":            hmac(issA, "alice user=alice"),
				"subject with quotes and spaces":    hmac(issA, `alice" user="alice`),
				"issuer with a trailing slash":      hmac(issA+"/", "alice"),
				"issuer in another case":            hmac(strings.ToUpper(issA), "alice"),
				"subject with a trailing newline":   hmac(issA, "alice\n"),
				"subject and issuer swapped":        hmac("alice", issA),
				"subject with the issuer as prefix": hmac(issA, issA+"alice"),
			},
		},
	}
}

var eras = []string{"2025-11-25", modern}

// TestTasksBelongToTheirIdentity (issue 23 items 8 and 11): over the real
// HTTP surface with OAuth, on both protocol versions, a task of alice's is
// "not found" for every other identity — in exactly the words an id that
// never existed gets — whatever the method (tasks/get, tasks/result,
// tasks/cancel, tasks/list), and whether the attacker is in a session or
// not; alice's task keeps running and is hers to read and cancel. Guessed,
// truncated or case-changed ids are unknown to alice too.
func TestTasksBelongToTheirIdentity(t *testing.T) {
	for _, suite := range identitySuites(t) {
		t.Run(suite.name, func(t *testing.T) {
			sf := newSurface(t, suite.cfg, tasks.Config{Max: 1000})
			attackers := map[string]string{"bob": suite.bob}
			for k, v := range suite.attacks {
				attackers[k] = v
			}
			attempts := 0
			for _, aliceEra := range eras {
				alice := sf.dial(t, aliceEra, suite.alice)
				id := alice.mustCreate("wait")
				endedBefore := len(sf.ended())
				for who, token := range attackers {
					for _, era := range eras {
						m := sf.dial(t, era, token)
						// What an id that never existed gets from this
						// caller, method by method.
						never := "6f1c1f2e-8c9b-4f0e-9a34-1d2b3c4d5e6f"
						for _, method := range []string{"tasks/get", "tasks/result", "tasks/cancel"} {
							want := m.rpc(method, fmt.Sprintf(`{"taskId":%q}`, never)).refusal()
							got := m.rpc(method, fmt.Sprintf(`{"taskId":%q}`, id))
							attempts++
							if got.refusal() != want {
								t.Errorf("alice on %s, %s on %s, %s of her task: %s; an unknown id gets %s", aliceEra, who, era, method, got.refusal(), want)
							}
							if strings.Contains(got.raw, id) {
								t.Errorf("%s on %s, %s: the answer names the task: %s", who, era, method, got.raw)
							}
						}
						if era != modern {
							l := m.rpc("tasks/list", `{}`)
							attempts++
							if strings.Contains(l.raw, id) {
								t.Errorf("alice on %s, %s on %s: tasks/list shows her task: %s", aliceEra, who, era, l.raw)
							}
						}
					}
				}
				// Ids near hers are unknown, to her as to anyone.
				for _, guess := range []string{id[:len(id)-1], id[:8], strings.ToUpper(id), id + " ", " " + id, id + "0", strings.ReplaceAll(id, "-", ""), ""} {
					want := alice.rpc("tasks/get", `{"taskId":"6f1c1f2e-8c9b-4f0e-9a34-1d2b3c4d5e6f"}`).refusal()
					attempts++
					if _, got := alice.status(guess); got.refusal() != want {
						t.Errorf("alice, tasks/get %q: %s, want %s", guess, got.refusal(), want)
					}
				}
				if e := sf.ended(); len(e) != endedBefore {
					t.Fatalf("alice's run ended (%v) during the attempts; it must still run", e)
				}
				// Hers: in the session that made it, and from 2026-07-28
				// requests (no session). Another 2025-11-25 session of hers
				// gets "not found": mcp-go scopes those tasks to their
				// session too.
				if st, r := alice.status(id); st != "working" {
					t.Errorf("alice reads her %s task: %q %s", aliceEra, st, r.raw)
				}
				if st, r := sf.dial(t, modern, suite.alice).status(id); st != "working" {
					t.Errorf("alice on %s reads her %s task: %q %s", modern, aliceEra, st, r.raw)
				}
				if r := alice.rpc("tasks/cancel", fmt.Sprintf(`{"taskId":%q}`, id)); r.answer.Error != nil {
					t.Fatalf("alice cancels her task: %s", r.raw)
				}
				alice.waitStatus(id, "cancelled")
				// Cancelled, it is still not bob's to see.
				b := sf.dial(t, aliceEra, suite.bob)
				if st, r := b.status(id); st != "" || r.answer.Error == nil {
					t.Errorf("bob reads alice's cancelled task: %q %s", st, r.raw)
				}
			}
			t.Logf("%d hostile task requests from %d identities refused", attempts, len(attackers))
		})
	}
}

// TestTaskSlotsPerIdentity (issue 23 item 11): MCP_MAX_TASKS counts each
// identity's outstanding tasks; a slot is free again once the result was
// fetched, the task was cancelled or it failed; one identity at its limit
// blocks nobody else — not another subject, not the same subject at
// another issuer. On both protocol versions, and across sessions.
func TestTaskSlotsPerIdentity(t *testing.T) {
	suite := identitySuites(t)[1] // hmac: issuers can differ
	const max = 2
	for _, era := range eras {
		t.Run(era, func(t *testing.T) {
			sf := newSurface(t, suite.cfg, tasks.Config{Max: max})
			alice := sf.dial(t, era, suite.alice)
			full := func(c *caller, what string) {
				t.Helper()
				_, r := c.create("wait")
				if r.answer.Error == nil || !strings.Contains(r.answer.Error.Message, "MCP_MAX_TASKS") || !strings.Contains(r.answer.Error.Message, "per identity") {
					t.Fatalf("%s: %s, want the per-identity MCP_MAX_TASKS refusal", what, r.raw)
				}
			}
			a1 := alice.mustCreate("wait")
			a2 := sf.dial(t, era, suite.alice).mustCreate("wait") // another session, same identity
			full(alice, "alice's third task")
			// Others are not blocked by alice's limit.
			for _, who := range []string{"bob", "same subject, other issuer", "subject spelling user="} {
				tok := suite.bob
				if who != "bob" {
					tok = suite.attacks[who]
				}
				c := sf.dial(t, era, tok)
				c.mustCreate("wait")
				c.mustCreate("wait")
				full(c, who+"'s third task")
			}
			// Cancel frees a slot.
			if r := alice.rpc("tasks/cancel", fmt.Sprintf(`{"taskId":%q}`, a1)); r.answer.Error != nil {
				t.Fatalf("cancel: %s", r.raw)
			}
			a3 := alice.mustCreate("now")
			// A finished task keeps its slot until its result is fetched.
			alice.waitStatus(a3, "completed") // on 2026-07-28 this fetch is the result
			if era != modern {
				full(alice, "alice with a finished, unfetched task")
				if r := alice.rpc("tasks/result", fmt.Sprintf(`{"taskId":%q}`, a3)); r.answer.Error != nil || !strings.Contains(r.raw, "done") {
					t.Fatalf("tasks/result: %s", r.raw)
				}
			}
			// A failed one frees its slot without a fetch (its status is
			// not read: on 2026-07-28 that would count as the fetch).
			before := sf.keeper.Stored()
			alice.mustCreate("fail")
			deadline := time.Now().Add(20 * time.Second)
			for sf.keeper.Stored() != before && time.Now().Before(deadline) {
				time.Sleep(5 * time.Millisecond)
			}
			alice.mustCreate("wait")
			full(alice, "alice at the limit again")
			// The task alice made in her other session still runs.
			if st, r := sf.dial(t, modern, suite.alice).status(a2); st != "working" {
				t.Errorf("alice's task of the other session: %q %s", st, r.raw)
			}
		})
	}
}

// TestExtensionTasksBelongToTheirIdentity: with the 2026-07-28 tasks
// extension (no session), a task is created, polled, its result read
// inline and another cancelled by its owner; every other identity of the
// hostile table gets exactly what an id that never existed gets, and its
// cancel does not reach the handler.
func TestExtensionTasksBelongToTheirIdentity(t *testing.T) {
	for _, suite := range identitySuites(t) {
		t.Run(suite.name, func(t *testing.T) {
			sf := newSurface(t, suite.cfg, tasks.Config{Max: 1000})
			alice := sf.dial(t, modern, suite.alice)
			alice.ext = true
			created := alice.rpc("tools/call", `{"name":"job","arguments":{"mode":"wait"}}`)
			var tk struct {
				ResultType, TaskID, Status string
				TTLMs, PollIntervalMs      int64
			}
			if err := json.Unmarshal(created.answer.Result, &tk); err != nil || tk.ResultType != "task" || tk.TaskID == "" || tk.Status != "working" || tk.TTLMs <= 0 || tk.PollIntervalMs <= 0 {
				t.Fatalf("create: %s (%v)", created.raw, err)
			}
			attackers := map[string]string{"bob": suite.bob}
			for k, v := range suite.attacks {
				attackers[k] = v
			}
			never := "6f1c1f2e-8c9b-4f0e-9a34-1d2b3c4d5e6f"
			attempts := 0
			for who, token := range attackers {
				m := sf.dial(t, modern, token)
				m.ext = true
				for _, method := range []string{"tasks/get", "tasks/update", "tasks/cancel"} {
					want := m.rpc(method, fmt.Sprintf(`{"taskId":%q}`, never)).refusal()
					got := m.rpc(method, fmt.Sprintf(`{"taskId":%q}`, tk.TaskID)).refusal()
					attempts++
					if got != want || !strings.Contains(got, "not found") {
						t.Errorf("%s, %s of alice's task: %s; an unknown id gets %s", who, method, got, want)
					}
				}
			}
			t.Logf("%d attempts by %d other identities", attempts, len(attackers))
			if e := sf.ended(); len(e) != 0 {
				t.Fatalf("another identity's cancel reached the handler: %v", e)
			}
			// Without the extension declared, tasks/* answer -32021.
			plain := sf.dial(t, modern, suite.alice)
			if r := plain.rpc("tasks/get", fmt.Sprintf(`{"taskId":%q}`, tk.TaskID)); r.answer.Error == nil || r.answer.Error.Code != -32021 || r.status != 400 {
				t.Errorf("tasks/get without the extension: %d %s, want 400 and -32021", r.status, r.raw)
			}
			// Her own: polled working, then released and read inline.
			get := func() (string, string) {
				r := alice.rpc("tasks/get", fmt.Sprintf(`{"taskId":%q}`, tk.TaskID))
				var g struct {
					Status string
					Result json.RawMessage
				}
				json.Unmarshal(r.answer.Result, &g)
				return g.Status, string(g.Result)
			}
			if st, _ := get(); st != "working" {
				t.Fatalf("alice's task is %q, want working", st)
			}
			close(sf.release)
			deadline := time.Now().Add(30 * time.Second)
			for {
				st, res := get()
				if st == "completed" {
					if !strings.Contains(res, "released") {
						t.Fatalf("completed without the result inline: %s", res)
					}
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("task still %q after 30 s", st)
				}
				time.Sleep(20 * time.Millisecond) // polling is the protocol's own wait
			}
			// A second one, cancelled by her: the handler ends, the status
			// says cancelled.
			sf.release = make(chan struct{})
			c2 := alice.rpc("tools/call", `{"name":"job","arguments":{"mode":"wait"}}`)
			var tk2 struct{ TaskID string }
			json.Unmarshal(c2.answer.Result, &tk2)
			if r := alice.rpc("tasks/cancel", fmt.Sprintf(`{"taskId":%q}`, tk2.TaskID)); r.answer.Error != nil {
				t.Fatalf("cancel: %s", r.raw)
			}
			for len(sf.ended()) < 2 {
				if time.Now().After(deadline.Add(30 * time.Second)) {
					t.Fatalf("the cancelled handler never ended: %v", sf.ended())
				}
				time.Sleep(20 * time.Millisecond)
			}
			if e := sf.ended(); e[len(e)-1] != "cancelled" {
				t.Fatalf("handler ends: %v", e)
			}
		})
	}
}
