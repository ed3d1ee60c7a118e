package mcpserver_test

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpfleet/mcpfleet/codermcp/internal/cli"
	"github.com/mcpfleet/mcpfleet/codermcp/internal/codertest"
	"github.com/mcpfleet/mcpfleet/codermcp/internal/codertest/harness"
	"github.com/mcpfleet/mcpfleet/codermcp/internal/config"
)

// Every test here runs the real Codex CLI (0.169.0) against a codertest
// endpoint, unless its comment says otherwise.

func TestCoderPlainTurn(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{cfg: func(c *config.Config) { c.CallbackURI = "http://127.0.0.1:1/default-callback" }})
	// A prompt that starts with "-" is still a prompt, not a flag.
	res := e.call(t, "coder", map[string]any{"prompt": "--version please"})
	got := mustOK(t, res)
	if got != "reply to: --version please" {
		t.Errorf("text = %q, want the endpoint's reply", got)
	}
	meta := contentMeta(t, res)
	if meta["model"] != codertest.Model {
		t.Errorf("_meta.model = %v, want %s", meta["model"], codertest.Model)
	}
	sid, _ := meta["sessionId"].(string)
	if !strings.HasPrefix(sid, "session-") {
		t.Errorf("_meta.sessionId = %q, want a generated UUID-based id", sid)
	}
	tid, _ := meta["threadId"].(string)
	if len(tid) < 32 {
		t.Errorf("_meta.threadId = %q, want the CLI's thread id", tid)
	}
	if meta["callbackUri"] != "http://127.0.0.1:1/default-callback" {
		t.Errorf("_meta.callbackUri = %v, want the server default", meta["callbackUri"])
	}
	if res.StructuredContent != nil {
		t.Errorf("structuredContent = %v, want none when STRUCTURED_CONTENT_ENABLED is off", res.StructuredContent)
	}
	reqs := e.h.Endpoint.RequestsWith("--version please")
	if len(reqs) != 1 || reqs[0].Model != codertest.Model || reqs[0].ThreadID != tid {
		t.Errorf("endpoint saw %+v, want one request for the model on thread %s", reqs, tid)
	}
	list := e.sessions(t)
	if len(list) != 1 || list[0].ID != sid || list[0].TurnCount != 1 {
		t.Fatalf("listSessions = %+v, want the one session with 1 turn", list)
	}
	for _, ts := range []string{list[0].CreatedAt, list[0].LastAccessedAt} {
		if _, err := time.Parse(time.RFC3339Nano, ts); err != nil {
			t.Errorf("timestamp %q is not ISO 8601: %v", ts, err)
		}
	}
}

func TestCoderReasoningEffort(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{})
	mustOK(t, e.call(t, "coder", map[string]any{"prompt": "think hard", "reasoningEffort": "high"}))
	if reqs := e.h.Endpoint.RequestsWith("think hard"); len(reqs) != 1 || reqs[0].Effort != "high" {
		t.Errorf("endpoint saw %+v, want reasoning effort high", reqs)
	}
}

func TestCoderStructuredContent(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{cfg: func(c *config.Config) { c.Structured = true }})
	res := e.call(t, "coder", map[string]any{"prompt": "structured", "sessionId": "s-structured", "callbackUri": "http://127.0.0.1:9/cb"})
	mustOK(t, res)
	sc, ok := res.StructuredContent.(map[string]any)
	if !ok {
		t.Fatalf("structuredContent = %#v, want an object", res.StructuredContent)
	}
	meta := contentMeta(t, res)
	for _, k := range []string{"threadId", "model", "sessionId", "callbackUri"} {
		if sc[k] == nil || sc[k] != meta[k] {
			t.Errorf("structuredContent.%s = %v, _meta.%s = %v; want equal and set", k, sc[k], k, meta[k])
		}
	}
	if meta["sessionId"] != "s-structured" {
		t.Errorf("a well-formed sessionId must be adopted, got %v", meta["sessionId"])
	}
}

func TestCoderSandbox(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{})
	cases := []struct {
		name  string
		args  map[string]any
		write bool
	}{
		{"workspace-write writes", map[string]any{"sandbox": "workspace-write"}, true},
		{"fullAuto is workspace-write", map[string]any{"fullAuto": true}, true},
		{"read-only cannot write", map[string]any{"sandbox": "read-only"}, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			args := map[string]any{"prompt": "write a file [[shell:echo sandboxed > out.txt]]", "workingDirectory": dir}
			for k, v := range tc.args {
				args[k] = v
			}
			mustOK(t, e.call(t, "coder", args))
			b, err := os.ReadFile(filepath.Join(dir, "out.txt"))
			if tc.write && (err != nil || strings.TrimSpace(string(b)) != "sandboxed") {
				t.Errorf("out.txt = %q, %v; want the command to have written it", b, err)
			}
			if !tc.write && err == nil {
				t.Errorf("out.txt exists (%q); the read-only sandbox must prevent writes", b)
			}
		})
	}
}

func TestCoderSessionResumeAndReset(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{})
	dir := t.TempDir()
	first := e.call(t, "coder", map[string]any{"prompt": "first prompt [[reply:ANSWER-ONE]]", "sessionId": "resume-1", "workingDirectory": dir})
	if got := mustOK(t, first); got != "ANSWER-ONE" {
		t.Fatalf("first reply = %q", got)
	}
	tid := contentMeta(t, first)["threadId"]

	// No workingDirectory: the follow-up continues in the session's directory.
	second := e.call(t, "coder", map[string]any{"prompt": "second prompt [[shell:pwd]]", "sessionId": "resume-1"})
	if got := mustOK(t, second); !strings.Contains(got, dir) {
		t.Errorf("the follow-up ran outside the session's directory %s: %q", dir, got)
	}
	if got := contentMeta(t, second)["threadId"]; got != tid {
		t.Errorf("resumed threadId = %v, want %v (native resume keeps the thread)", got, tid)
	}
	reqs := e.h.Endpoint.RequestsWith("second prompt")
	if len(reqs) != 2 { // the command request and the answer after its output
		t.Fatalf("endpoint saw %d requests for the second prompt", len(reqs))
	}
	if !slices.ContainsFunc(reqs[0].Texts, func(s string) bool { return strings.Contains(s, "ANSWER-ONE") }) ||
		!slices.ContainsFunc(reqs[0].Texts, func(s string) bool { return strings.Contains(s, "first prompt") }) {
		t.Errorf("the resumed request's input lacks the earlier turn: %q", reqs[0].Texts)
	}
	if strings.Contains(reqs[0].Prompt, "Context from our previous conversation") {
		t.Errorf("native resume must not replay history in the prompt: %q", reqs[0].Prompt)
	}

	third := e.call(t, "coder", map[string]any{"prompt": "third prompt", "sessionId": "resume-1", "resetSession": true})
	mustOK(t, third)
	if got := contentMeta(t, third)["threadId"]; got == tid || got == nil {
		t.Errorf("after reset threadId = %v, want a new conversation (not %v)", got, tid)
	}
	reqs = e.h.Endpoint.RequestsWith("third prompt")
	if len(reqs) != 1 {
		t.Fatalf("endpoint saw %d requests for the third prompt", len(reqs))
	}
	for _, s := range reqs[0].Texts {
		if strings.Contains(s, "first prompt") || strings.Contains(s, "ANSWER-ONE") {
			t.Errorf("after reset the request still carries old history: %q", s)
		}
	}
	list := e.sessions(t)
	if len(list) != 1 || list[0].TurnCount != 1 {
		t.Errorf("after reset listSessions = %+v, want 1 session with 1 turn", list)
	}
}

func TestCoderFallbackWhenCLIForgetsThread(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{})
	mustOK(t, e.call(t, "coder", map[string]any{"prompt": "remember the number 42 [[reply:NOTED-42]]", "sessionId": "fallback-1"}))
	// Make the stored conversation id one the CLI has never seen, as after
	// its rollout files were deleted.
	lease, err := e.store.Acquire(context.Background(), localOwner, "fallback-1")
	if err != nil {
		t.Fatal(err)
	}
	lease.SetConversationID("01a20000-0000-7000-8000-000000000000")
	lease.Release()

	res := e.call(t, "coder", map[string]any{"prompt": "what was the number?", "sessionId": "fallback-1"})
	mustOK(t, res)
	reqs := e.h.Endpoint.RequestsWith("what was the number?")
	if len(reqs) != 1 {
		t.Fatalf("endpoint saw %d requests for the follow-up", len(reqs))
	}
	p := reqs[0].Prompt
	for _, want := range []string{"Context from our previous conversation", "remember the number 42", "NOTED-42"} {
		if !strings.Contains(p, want) {
			t.Errorf("fallback prompt lacks %q: %q", want, p)
		}
	}
	tid, _ := contentMeta(t, res)["threadId"].(string)
	if tid == "" || tid == "01a20000-0000-7000-8000-000000000000" {
		t.Errorf("threadId = %q, want the new conversation's id", tid)
	}
	if d, _ := e.store.Get(localOwner, "fallback-1"); d.CoderConversationID != tid || len(d.Turns) != 2 {
		t.Errorf("session = %+v, want the new thread id stored and 2 turns", d)
	}
}

func TestReview(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{})
	repo := harness.GitRepo(t)
	git := func(args ...string) string {
		out, err := exec.Command("git", append([]string{"-C", repo}, args...)...).Output()
		if err != nil {
			t.Fatalf("git %v: %v", args, err)
		}
		return strings.TrimSpace(string(out))
	}
	sha := git("rev-parse", "HEAD")
	branch := git("rev-parse", "--abbrev-ref", "HEAD")
	cases := []struct {
		name   string
		args   map[string]any
		prompt string // what the CLI asks the model
		meta   map[string]any
	}{
		{"uncommitted", map[string]any{"uncommitted": true}, "Review the current code changes", map[string]any{"model": codertest.Model}},
		{"commit with title", map[string]any{"commit": sha, "title": "Make main panic"}, "Make main panic", map[string]any{"model": codertest.Model, "commit": sha}},
		{"base branch", map[string]any{"base": branch}, branch, map[string]any{"model": codertest.Model, "base": branch}},
		{"custom instructions", map[string]any{"prompt": "-look only at error handling"}, "-look only at error handling", map[string]any{"model": codertest.Model}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			args := map[string]any{"workingDirectory": repo}
			for k, v := range tc.args {
				args[k] = v
			}
			res := e.call(t, "review", args)
			got := mustOK(t, res)
			if !strings.Contains(got, "reply to: ") || !strings.Contains(got, tc.prompt) {
				t.Errorf("review text = %q, want the model's answer to a prompt naming %q", got, tc.prompt)
			}
			meta := contentMeta(t, res)
			if len(meta) != len(tc.meta) {
				t.Errorf("_meta = %v, want %v", meta, tc.meta)
			}
			for k, v := range tc.meta {
				if meta[k] != v {
					t.Errorf("_meta.%s = %v, want %v", k, meta[k], v)
				}
			}
			reqs := e.h.Endpoint.RequestsWith(tc.prompt)
			if len(reqs) == 0 || reqs[0].Model != codertest.Model {
				t.Errorf("the endpoint saw %+v; want the review sent for the configured model", reqs)
			}
		})
	}
}

func TestCoderAuthAndModelErrors(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{})
	cases := []struct {
		name   string
		args   map[string]any
		prefix string
		wants  []string
	}{
		{"401 from the provider", map[string]any{"prompt": "auth please [[401]]"}, "Authentication failed", []string{"codex login", "401"}},
		{"400 model not found", map[string]any{"prompt": "which model", "model": codertest.MissingModel}, "Invalid model: " + codertest.MissingModel, []string{"Omit model to use the default (" + codertest.Model + ")"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got := mustError(t, e.call(t, "coder", tc.args), tc.wants...)
			if !strings.HasPrefix(got, tc.prefix) {
				t.Errorf("error %q does not start with %q", got, tc.prefix)
			}
		})
	}
}

func TestCoderTimeoutStopsEverything(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{cfg: func(c *config.Config) { c.Timeout = 2 * time.Second }, heartbeat: 300 * time.Millisecond})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	res, err := e.cs.CallTool(ctx, &mcp.CallToolParams{Name: "coder", Arguments: map[string]any{"prompt": "never answered [[hang]]"},
		Meta: mcp.Meta{"progressToken": "tok-timeout"}})
	if err != nil {
		t.Fatal(err)
	}
	mustError(t, res, "timed out", "2s", "CODER_TIMEOUT")
	waitNoLeftovers(t, e.h.Marker, 5*time.Second)
	// The CLI is silent while the endpoint hangs: heartbeats keep the client informed.
	beats := 0
	for _, n := range e.notes("tok-timeout") {
		if strings.HasPrefix(n.Message, "still working") {
			beats++
		}
	}
	if beats < 2 {
		t.Errorf("got %d heartbeats in 2s with a 300ms heartbeat, want several: %+v", beats, e.notes("tok-timeout"))
	}
}

func TestCoderCancelStopsEverything(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() {
		_, err := e.cs.CallTool(ctx, &mcp.CallToolParams{Name: "coder", Arguments: map[string]any{"prompt": "cancel me [[hang]]"}})
		done <- err
	}()
	deadline := time.Now().Add(30 * time.Second)
	for len(e.h.Endpoint.RequestsWith("cancel me")) == 0 {
		if time.Now().After(deadline) {
			t.Fatal("the CLI never reached the endpoint")
		}
		time.Sleep(20 * time.Millisecond)
	}
	if len(harness.Leftovers(e.h.Marker)) == 0 {
		t.Fatal("no CLI process found while the call runs; the leftover check would prove nothing")
	}
	cancel() // the client sends notifications/cancelled
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("CallTool error = %v, want context.Canceled", err)
	}
	waitNoLeftovers(t, e.h.Marker, 10*time.Second)
}

func TestCoderProgressBeforeResult(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	res, err := e.cs.CallTool(ctx, &mcp.CallToolParams{Name: "coder",
		Arguments: map[string]any{"prompt": "show progress [[shell:echo progress-step]]", "workingDirectory": t.TempDir()},
		Meta:      mcp.Meta{"progressToken": "tok-progress"}})
	if err != nil {
		t.Fatal(err)
	}
	returned := time.Now()
	mustOK(t, res)
	notes := e.notes("tok-progress")
	if len(notes) < 2 {
		t.Fatalf("got %d progress notifications, want the CLI's steps: %+v", len(notes), notes)
	}
	sawCommand := false
	for i, n := range notes {
		if n.At.After(returned) {
			t.Errorf("notification %d (%q) arrived after the result", i, n.Message)
		}
		if i > 0 && n.Progress <= notes[i-1].Progress {
			t.Errorf("progress not strictly increasing: %v then %v", notes[i-1].Progress, n.Progress)
		}
		if strings.Contains(n.Message, "echo progress-step") {
			sawCommand = true
		}
	}
	if !sawCommand {
		t.Errorf("no notification names the command being run: %+v", notes)
	}
	// Without a token, no notifications.
	before := len(e.progress)
	mustOK(t, e.call(t, "coder", map[string]any{"prompt": "no token"}))
	e.mu.Lock()
	after := len(e.progress)
	e.mu.Unlock()
	if after != before {
		t.Errorf("a call without a progress token produced %d notifications", after-before)
	}
}

func TestConcurrentCallsOverFourSessions(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{})
	const sessions, perSession = 4, 2
	errs := make(chan error, sessions*perSession)
	for s := range sessions {
		for c := range perSession {
			go func() {
				ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
				defer cancel()
				sid := "conc-" + string(rune('a'+s))
				res, err := e.cs.CallTool(ctx, &mcp.CallToolParams{Name: "coder", Arguments: map[string]any{
					"prompt": "concurrent " + sid + " call " + string(rune('0'+c)), "sessionId": sid}})
				if err == nil && res.IsError {
					err = errors.New(text(res))
				}
				errs <- err
			}()
		}
	}
	for range sessions * perSession {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
	list := e.sessions(t)
	if len(list) != sessions {
		t.Fatalf("listSessions has %d sessions, want %d", len(list), sessions)
	}
	for _, s := range list {
		if s.TurnCount != perSession {
			t.Errorf("session %s has %d turns, want %d", s.ID, s.TurnCount, perSession)
		}
		// Calls on one session ran one after the other: the later one resumed
		// the earlier one's conversation, so its input holds the other prompt.
		reqs := e.h.Endpoint.RequestsWith("concurrent " + s.ID + " ")
		if len(reqs) != perSession {
			t.Fatalf("session %s: endpoint saw %d requests", s.ID, len(reqs))
		}
		later := reqs[1]
		if !slices.ContainsFunc(later.Texts, func(x string) bool { return x == reqs[0].Prompt }) {
			t.Errorf("session %s: the second call did not see the first (calls overlapped?)", s.ID)
		}
	}
}

func TestSessionsEvictionAndExpiry(t *testing.T) {
	t.Parallel()
	t.Run("LRU eviction", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t, envOptions{cfg: func(c *config.Config) { c.SessionLimit = 2 }})
		for _, id := range []string{"lru-a", "lru-b"} {
			mustOK(t, e.call(t, "coder", map[string]any{"prompt": "hi " + id, "sessionId": id}))
		}
		mustOK(t, e.call(t, "coder", map[string]any{"prompt": "again lru-a", "sessionId": "lru-a"})) // lru-b is now least recent
		mustOK(t, e.call(t, "coder", map[string]any{"prompt": "hi lru-c", "sessionId": "lru-c"}))
		var ids []string
		for _, s := range e.sessions(t) {
			ids = append(ids, s.ID)
		}
		slices.Sort(ids)
		if !slices.Equal(ids, []string{"lru-a", "lru-c"}) {
			t.Errorf("sessions = %v, want lru-b evicted", ids)
		}
	})
	t.Run("TTL expiry", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t, envOptions{cfg: func(c *config.Config) { c.SessionTTL = time.Second }})
		mustOK(t, e.call(t, "coder", map[string]any{"prompt": "short lived", "sessionId": "ttl-a"}))
		if n := len(e.sessions(t)); n != 1 {
			t.Fatalf("want the session listed right away, got %d", n)
		}
		deadline := time.Now().Add(5 * time.Second)
		for e.sessionCount() > 0 { // the background sweep, not a lookup, removes it
			if time.Now().After(deadline) {
				t.Fatal("the idle session was not swept within 5s of a 1s TTL")
			}
			time.Sleep(50 * time.Millisecond)
		}
		if n := len(e.sessions(t)); n != 0 {
			t.Errorf("listSessions has %d sessions after expiry", n)
		}
	})
}

func TestCoderNetworkFailure(t *testing.T) {
	t.Parallel()
	// The CLI would wait for the network forever; the server gives up after NetworkGrace.
	e := newEnv(t, envOptions{client: func(c *cli.Client) { c.NetworkGrace = time.Second }})
	e.h.Endpoint.Close() // the provider is unreachable: connection refused
	start := time.Now()
	got := mustError(t, e.call(t, "coder", map[string]any{"prompt": "anyone there?"}), "The CLI command failed to execute", "unreachable", "Connection failed")
	if strings.Contains(got, "Authentication failed") || strings.Contains(got, "Invalid model") {
		t.Errorf("a network failure was misclassified: %s", got)
	}
	if d := time.Since(start); d > 20*time.Second {
		t.Errorf("network failure reported after %s, want soon after the 1s grace", d)
	}
	waitNoLeftovers(t, e.h.Marker, 5*time.Second)
}

// A command the model started is stopped with the CLI, even when the CLI
// runs it in a session of its own (a PTY).
func TestCoderTimeoutStopsModelCommands(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{cfg: func(c *config.Config) { c.Timeout = 4 * time.Second }})
	dir := t.TempDir()
	sawSleep := make(chan bool, 1)
	stop := make(chan struct{})
	go func() {
		for {
			for _, pid := range harness.Leftovers(e.h.Marker) {
				if strings.Contains(harness.Cmdline(pid), "sleep 120") {
					sawSleep <- true
					return
				}
			}
			select {
			case <-stop:
				sawSleep <- false
				return
			case <-time.After(20 * time.Millisecond):
			}
		}
	}()
	res := e.call(t, "coder", map[string]any{"prompt": "long job [[shell:sleep 120]]", "workingDirectory": dir, "sandbox": "workspace-write"})
	close(stop)
	mustError(t, res, "timed out")
	if !<-sawSleep {
		t.Fatal("the model's command never ran; the leftover check would prove nothing")
	}
	waitNoLeftovers(t, e.h.Marker, 10*time.Second)
}

// CODER_TIMEOUT bounds the whole call, waiting for a busy session included.
func TestCoderTimeoutCoversWaitingForSession(t *testing.T) {
	t.Parallel()
	// The limit leaves the real CLI room to start on a loaded machine: the
	// first call must reach the endpoint before its own limit ends it.
	const limit = 15 * time.Second
	e := newEnv(t, envOptions{cfg: func(c *config.Config) { c.Timeout = limit }})
	first := make(chan *mcp.CallToolResult, 1)
	go func() {
		first <- e.call(t, "coder", map[string]any{"prompt": "hold the session [[hang]]", "sessionId": "busy"})
	}()
	for len(e.h.Endpoint.RequestsWith("hold the session")) == 0 {
		select {
		case res := <-first:
			t.Fatalf("the first call ended before it reached the endpoint: %s", text(res))
		case <-time.After(20 * time.Millisecond):
		}
	}
	start := time.Now()
	mustError(t, e.call(t, "coder", map[string]any{"prompt": "queued behind it", "sessionId": "busy"}), "timed out", limit.String())
	if d := time.Since(start); d > limit+time.Second {
		t.Errorf("the queued call took %s; its %s limit includes the wait", d, limit)
	}
	mustError(t, <-first, "timed out")
}

// callbackUri reaches the CLI's environment under both names (here seen by
// a command the model runs), and the server default applies when it is absent.
func TestCoderCallbackURIReachesCLI(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{cfg: func(c *config.Config) { c.CallbackURI = "http://127.0.0.1:7/server-default" }})
	cases := []struct{ given, want string }{
		{"http://127.0.0.1:8/from-call", "http://127.0.0.1:8/from-call"},
		{"", "http://127.0.0.1:7/server-default"},
	}
	for _, tc := range cases {
		args := map[string]any{"prompt": "env [[shell:echo cb=$CODER_MCP_CALLBACK_URI,$CODEX_MCP_CALLBACK_URI]]", "workingDirectory": t.TempDir()}
		if tc.given != "" {
			args["callbackUri"] = tc.given
		}
		res := e.call(t, "coder", args)
		if got := mustOK(t, res); !strings.Contains(got, "cb="+tc.want+","+tc.want) {
			t.Errorf("command saw %q, want cb=%s,%s", got, tc.want, tc.want)
		}
		if got := contentMeta(t, res)["callbackUri"]; got != tc.want {
			t.Errorf("_meta.callbackUri = %v, want %s", got, tc.want)
		}
	}
}
