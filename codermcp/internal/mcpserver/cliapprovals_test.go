package mcpserver_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	mcpgo "github.com/mark3labs/mcp-go/mcp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpfleet/mcpfleet/codermcp/internal/codertest"
	"github.com/mcpfleet/mcpfleet/codermcp/internal/config"
	"github.com/mcpfleet/mcpfleet/shared/e2e/rawmcp"
	"github.com/mcpfleet/mcpfleet/shared/tasks"
)

// The CLI's own approvals reach a person (issue 28): with approvalPolicy
// other than never the turn runs on the CLI's app-server, and each command
// the agent asks to run is put to the person through elicitation
// (2025-11-25) with the exact command, its working directory and the
// agent's reason. The real CLI of each version that has the app-server's
// approval requests, against the test model endpoint.
var approvalVersions = []string{codertest.NewestVersion, "0.153.4"}

// approvalCase is one person's answer and what must follow from it.
type approvalCase struct {
	action   string // accept, decline, cancel, silent (never answers)
	marker   bool   // the command ran
	approval string // the audit record's approval
}

var approvalCases = []approvalCase{
	{"accept", true, "person"},
	{"decline", false, "declined"},
	{"cancel", false, "declined"},
	{"silent", false, "timeout"},
}

// newPersonEnv is an env (o, plus a client on 2025-11-25 that declares
// elicitation) whose person answers each question as p says; a silent
// person holds the question until it is withdrawn.
func newPersonEnv(t *testing.T, o envOptions, p *person) *approvalEnv {
	t.Helper()
	quit := make(chan struct{})
	o.protocolVersion = "2025-11-25"
	o.clientOpts = &mcp.ClientOptions{ElicitationHandler: func(ctx context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
		if p.saw(req.Params.Message) == "silent" {
			select {
			case <-ctx.Done():
			case <-quit:
			}
			return nil, context.Canceled
		}
		return &mcp.ElicitResult{Action: p.action}, nil
	}}
	e := newApprovalEnv(t, o)
	// Registered after the env's, so it runs first: the silent person lets
	// go before the server and client are closed.
	t.Cleanup(func() { close(quit) })
	return e
}

// cliEnv is the options for the real CLI at path with
// CODER_APPROVAL_TIMEOUT d (0: the default).
func cliEnv(path string, d time.Duration) envOptions {
	return envOptions{cliPath: path, cfg: func(c *config.Config) { c.ApprovalTimeout = d }}
}

func TestCLIApprovalsReachAPerson(t *testing.T) {
	t.Parallel()
	for _, v := range approvalVersions {
		for _, tc := range approvalCases {
			t.Run(v+"/"+tc.action, func(t *testing.T) {
				t.Parallel()
				p := &person{action: tc.action}
				// The silent person's question ends at CODER_APPROVAL_TIMEOUT;
				// the others answer at once (the bound is generous for load).
				timeout := 2 * time.Minute
				if tc.action == "silent" {
					timeout = 2 * time.Second
				}
				e := newPersonEnv(t, cliEnv(codertest.CLIVersion(t, v), timeout), p)
				dir := t.TempDir()
				cmd := "echo approved > marker"
				res := e.call(t, "coder", map[string]any{"prompt": "[[shell:" + cmd + "]]", "sandbox": "workspace-write",
					"approvalPolicy": "untrusted", "workingDirectory": dir})
				got := mustOK(t, res)

				// What the person was asked: the exact command, where, and
				// what each answer does.
				seen := p.seen()
				if len(seen) != 1 {
					t.Fatalf("the person was asked %d times, want 1: %q", len(seen), seen)
				}
				for _, want := range []string{"Command: ", cmd, "Working directory: " + dir, "Reason: ", "CODER_APPROVAL_TIMEOUT", "untrusted"} {
					if !strings.Contains(seen[0], want) {
						t.Errorf("the question does not contain %q:\n%s", want, seen[0])
					}
				}
				_, err := os.Stat(filepath.Join(dir, "marker"))
				if tc.marker && err != nil {
					t.Errorf("%s: the command did not run: %v", tc.action, err)
				}
				if !tc.marker && !errors.Is(err, os.ErrNotExist) {
					t.Errorf("%s: the command ran (marker: %v)", tc.action, err)
				}
				if !tc.marker {
					assertToldNotRun(t, e, cmd)
				} else if !strings.Contains(got, "ran:") {
					t.Errorf("reply = %q, want the model's answer after the command ran", got)
				}

				// Audited like the pipeline's approvals.
				var answers []map[string]any
				for _, r := range e.records(t) {
					if r["tool"] == "coder" && strings.Contains(r["target"].(string), "approval request (untrusted)") {
						answers = append(answers, r)
					}
				}
				want := []string{"outcome"}
				if tc.marker {
					want = []string{"intent", "outcome"}
				}
				if len(answers) != len(want) {
					t.Fatalf("audit records of the answer: %v, want events %v", answers, want)
				}
				for i, r := range answers {
					cmds, _ := r["commands"].([]any)
					args, _ := r["arguments"].(map[string]any)
					if r["event"] != want[i] || r["approval"] != tc.approval || len(cmds) != 1 || !strings.Contains(cmds[0].(string), cmd) ||
						r["identity"] == "" || args["approvalPolicy"] != "untrusted" {
						t.Errorf("record %d: %v, want event %s approval %s command %q", i, r, want[i], tc.approval, cmd)
					}
				}
				if last := answers[len(answers)-1]; tc.marker && last["outcome"] != "ok" {
					t.Errorf("the accepted command's outcome record: %v", last)
				}
				waitNoLeftovers(t, e.h.Marker, 15*time.Second)
			})
		}
	}
}

// assertToldNotRun checks the CLI told the model the command was not run.
func assertToldNotRun(t *testing.T, e *approvalEnv, cmd string) {
	t.Helper()
	if !e.h.Endpoint.ToldNotRun("[[shell:" + cmd + "]]") {
		t.Errorf("the model was not told the command was not run: %+v", e.h.Endpoint.Requests())
	}
}

// A client that cannot be asked is refused before anything starts, for each
// policy that asks and on each tool that takes one; never is not refused.
func TestCLIApprovalsNeedAPersonToAsk(t *testing.T) {
	t.Parallel()
	e := newApprovalEnv(t, envOptions{protocolVersion: "2025-11-25"}) // no elicitation handler: not declared
	dir := t.TempDir()
	for _, tc := range []struct {
		tool string
		args map[string]any
		want string
	}{
		{"coder", map[string]any{"prompt": "[[shell:echo x > marker]]", "approvalPolicy": "untrusted", "workingDirectory": dir}, `approvalPolicy "untrusted" needs a person`},
		{"coder", map[string]any{"prompt": "[[shell:echo x > marker]]", "approvalPolicy": "on-request", "sandbox": "workspace-write", "workingDirectory": dir}, `approvalPolicy "on-request" needs a person`},
		{"codex", map[string]any{"prompt": "[[shell:echo x > marker]]", "approval-policy": "on-request", "cwd": dir}, `approval-policy "on-request" needs a person`},
	} {
		res := e.call(t, tc.tool, tc.args)
		mustError(t, res, tc.want, "did not declare elicitation", "no CLI process was started", "never")
		e.nothingRan(t, 0, 0)
		if _, err := os.Stat(filepath.Join(dir, "marker")); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s: marker: %v", tc.tool, err)
		}
	}
	// never runs without asking anyone (exec).
	mustOK(t, e.call(t, "coder", map[string]any{"prompt": "hello", "approvalPolicy": "never", "workingDirectory": dir}))
}

// codex's approval-policy "on-request" (what `codex mcp-server` offered):
// the agent asks to leave the read-only sandbox and says why; the person
// sees the reason, and the command runs only on accept. The result keeps
// the removed server's shape.
func TestCodexOnRequestAsksWithTheAgentsReason(t *testing.T) {
	t.Parallel()
	for _, v := range approvalVersions {
		for _, tc := range approvalCases[:2] { // accept, decline
			t.Run(v+"/"+tc.action, func(t *testing.T) {
				t.Parallel()
				p := &person{action: tc.action}
				e := newPersonEnv(t, cliEnv(codertest.CLIVersion(t, v), 2*time.Minute), p)
				dir := t.TempDir()
				cmd := "echo escalated > marker"
				res := e.call(t, "codex", map[string]any{"prompt": "[[escalate:" + cmd + "]]", "approval-policy": "on-request", "cwd": dir})
				mustOK(t, res)
				sc, _ := res.StructuredContent.(map[string]any)
				if sc["threadId"] == "" || sc["threadId"] == nil || sc["content"] != text(res) {
					t.Errorf("structuredContent = %v, want {threadId, content} as codex mcp-server returned", res.StructuredContent)
				}
				seen := p.seen()
				if len(seen) != 1 || !strings.Contains(seen[0], cmd) || !strings.Contains(seen[0], "Reason: "+codertest.EscalationReason) ||
					!strings.Contains(seen[0], "Working directory: "+dir) {
					t.Fatalf("the person was asked %q, want the command, its directory and the agent's reason", seen)
				}
				_, err := os.Stat(filepath.Join(dir, "marker"))
				if tc.marker != (err == nil) {
					t.Errorf("%s: marker: %v", tc.action, err)
				}
				// codex-reply keeps the thread's approval-policy: it continues
				// on the app-server, natively.
				reply := e.call(t, "codex-reply", map[string]any{"threadId": sc["threadId"], "prompt": "[[reply:REPLIED]]"})
				if got := mustOK(t, reply); got != "REPLIED" {
					t.Errorf("codex-reply = %q", got)
				}
				if rs, _ := reply.StructuredContent.(map[string]any); rs["threadId"] != sc["threadId"] {
					t.Errorf("codex-reply thread %v, want %v", rs["threadId"], sc["threadId"])
				}
				if reqs := e.h.Endpoint.RequestsWith("[[reply:REPLIED]]"); len(reqs) != 1 || !strings.Contains(strings.Join(reqs[0].Texts, "\n"), cmd) {
					t.Errorf("the reply was not a native continuation: %+v", reqs)
				}
				waitNoLeftovers(t, e.h.Marker, 15*time.Second)
			})
		}
	}
}

// The other calls that cannot ask mid-turn are refused as clearly: a task
// from a client that did not declare elicitation, and a call that is not a
// task from a 2026-07-28 client (which declares elicitation, but its
// input-required results answer only before a call runs).
func TestCLIApprovalsRefusedWhereNobodyCanBeAsked(t *testing.T) {
	t.Parallel()
	t.Run("task", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t, envOptions{tasks: &tasks.Config{}})
		dir := t.TempDir()
		_, res := e.rawConnect(t).runTask("coder", map[string]any{"prompt": "[[shell:echo x > marker]]", "approvalPolicy": "on-request", "workingDirectory": dir})
		if !res.IsError || len(res.Content) != 1 || !strings.Contains(res.Content[0].Text, "did not declare elicitation") || !strings.Contains(res.Content[0].Text, "no CLI process was started") {
			t.Fatalf("task result %+v, want the refusal", res)
		}
		if n := len(e.h.Endpoint.Requests()); n != 0 {
			t.Errorf("the model was asked %d times", n)
		}
	})
	t.Run("2026-07-28", func(t *testing.T) {
		t.Parallel()
		e := newApprovalEnv(t, envOptions{})
		h := elicitFunc(func(ctx context.Context, req mcpgo.ElicitationRequest) (*mcpgo.ElicitationResult, error) {
			t.Errorf("asked %q", req.Params.Message)
			return &mcpgo.ElicitationResult{ElicitationResponse: mcpgo.ElicitationResponse{Action: mcpgo.ElicitationResponseActionAccept}}, nil
		})
		c := modernClient(t, e.env, h)
		req := mcpgo.CallToolRequest{}
		req.Params.Name = "coder"
		req.Params.Arguments = map[string]any{"prompt": "[[shell:echo x > marker]]", "approvalPolicy": "untrusted", "workingDirectory": t.TempDir()}
		res, err := c.CallTool(t.Context(), req)
		if err != nil {
			t.Fatal(err)
		}
		var got string
		for _, ct := range res.Content {
			if tc, ok := ct.(mcpgo.TextContent); ok {
				got += tc.Text
			}
		}
		if !res.IsError || !strings.Contains(got, "2026-07-28") || !strings.Contains(got, "no CLI process was started") {
			t.Fatalf("result %q (isError %v), want the refusal", got, res.IsError)
		}
		e.nothingRan(t, 0, 0)
	})
}

// On the app-server path a session continues its thread natively (the
// model is sent the earlier exchange, the thread id stays), progress comes
// from the CLI's events, and a cancelled call leaves no process behind.
func TestAppServerPathSessionsProgressCancel(t *testing.T) {
	t.Parallel()
	for _, v := range approvalVersions {
		t.Run(v, func(t *testing.T) {
			t.Parallel()
			e := newPersonEnv(t, cliEnv(codertest.CLIVersion(t, v), 2*time.Minute), &person{action: "accept"})
			dir := t.TempDir()
			args := func(prompt string) map[string]any {
				return map[string]any{"prompt": prompt, "sessionId": "app-s", "approvalPolicy": "on-request", "workingDirectory": dir}
			}
			ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
			defer cancel()
			res, err := e.cs.CallTool(ctx, &mcp.CallToolParams{Name: "coder", Arguments: args("[[reply:FIRST-APP]]"), Meta: mcp.Meta{"progressToken": "tok-app"}})
			if err != nil {
				t.Fatal(err)
			}
			if got := mustOK(t, res); got != "FIRST-APP" {
				t.Fatalf("first turn = %q", got)
			}
			tid, _ := contentMeta(t, res)["threadId"].(string)
			if tid == "" {
				t.Fatalf("no threadId in %v", contentMeta(t, res))
			}
			var turnNotes bool
			for _, n := range e.notes("tok-app") {
				turnNotes = turnNotes || strings.Contains(n.Message, "agent: FIRST-APP") || strings.Contains(n.Message, "turn completed")
			}
			if !turnNotes {
				t.Errorf("progress %+v, want the CLI's events", e.notes("tok-app"))
			}
			res = e.call(t, "coder", args("second app turn"))
			mustOK(t, res)
			if got, _ := contentMeta(t, res)["threadId"].(string); got != tid {
				t.Errorf("second turn threadId = %q, want %q", got, tid)
			}
			reqs := e.h.Endpoint.RequestsWith("second app turn")
			if len(reqs) != 1 || strings.Contains(reqs[0].Prompt, "Context from our previous conversation") ||
				!strings.Contains(strings.Join(reqs[0].Texts, "\n"), "FIRST-APP") {
				t.Errorf("the second turn was not a native continuation: %+v", reqs)
			}

			// Cancellation mid-turn.
			cctx, ccancel := context.WithCancel(context.Background())
			defer ccancel()
			done := make(chan error, 1)
			go func() {
				_, err := e.cs.CallTool(cctx, &mcp.CallToolParams{Name: "coder", Arguments: args("cancel app [[hang]]")})
				done <- err
			}()
			deadline := time.Now().Add(60 * time.Second)
			for len(e.h.Endpoint.RequestsWith("cancel app")) == 0 {
				if time.Now().After(deadline) {
					t.Fatal("the CLI never reached the endpoint")
				}
				time.Sleep(20 * time.Millisecond)
			}
			if e.started.Load() == 0 {
				t.Fatal("no app-server process was counted")
			}
			ccancel()
			if err := <-done; !errors.Is(err, context.Canceled) {
				t.Errorf("CallTool error = %v, want context.Canceled", err)
			}
			waitNoLeftovers(t, e.h.Marker, 15*time.Second)
		})
	}
}

// Run as a task by a client that declared elicitation (2025-11-25), the
// CLI's approval request goes through the task (tasks.Ask, as the
// pipeline's own approvals): the task goes input_required, and the question
// reaches the client on its tasks/result stream; accept runs the command,
// decline does not.
func TestCLIApprovalsInsideATask(t *testing.T) {
	t.Parallel()
	for _, action := range []string{"accept", "decline"} {
		t.Run(action, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, envOptions{cliPath: codertest.CLIVersion(t, codertest.NewestVersion), tasks: &tasks.Config{}})
			s := rawmcp.New(t, e.url+"/mcp", &http.Client{Timeout: 10 * time.Second})
			if a := s.RPC("initialize", `{"protocolVersion":"2025-11-25","capabilities":{"elicitation":{}},"clientInfo":{"name":"raw-eliciting","version":"1"}}`); a.Error != nil {
				t.Fatalf("initialize: %+v", a.Error)
			}
			s.Post(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
			dir := t.TempDir()
			cmd := "echo in-task > marker"
			args, _ := json.Marshal(map[string]any{"prompt": "[[shell:" + cmd + "]]", "sandbox": "workspace-write", "approvalPolicy": "untrusted", "workingDirectory": dir})
			a := s.RPC("tools/call", fmt.Sprintf(`{"name":"coder","arguments":%s,"task":{}}`, args))
			var created struct{ Task taskInfo }
			if a.Error != nil || json.Unmarshal(a.Result, &created) != nil || created.Task.TaskID == "" {
				t.Fatalf("create the task: %s %+v", a.Result, a.Error)
			}
			id := created.Task.TaskID
			deadline := time.Now().Add(90 * time.Second)
			for {
				var tk taskInfo
				g := s.RPC("tasks/get", fmt.Sprintf(`{"taskId":%q}`, id))
				if g.Error != nil || json.Unmarshal(g.Result, &tk) != nil {
					t.Fatalf("tasks/get: %s %+v", g.Result, g.Error)
				}
				if tk.Status == "input_required" {
					break
				}
				if tk.Status != "working" || time.Now().After(deadline) {
					t.Fatalf("task %+v, want input_required", tk)
				}
				time.Sleep(50 * time.Millisecond)
			}
			asked, final := s.TaskResultAnswering(id, action)
			// The question, JSON-encoded (">" is \u003e there), tagged with the task.
			if !strings.Contains(asked, "Command: ") || !strings.Contains(asked, "echo in-task") || !strings.Contains(asked, `"io.modelcontextprotocol/related-task":{"taskId":"`+id+`"}`) {
				t.Errorf("the question on tasks/result's stream: %s", asked)
			}
			_, err := os.Stat(filepath.Join(dir, "marker"))
			if (action == "accept") != (err == nil) {
				t.Errorf("%s: marker %v", action, err)
			}
			if !strings.Contains(final, `"result"`) || strings.Contains(final, `"isError":true`) {
				t.Errorf("tasks/result: %s", final)
			}
			waitNoLeftovers(t, e.h.Marker, 15*time.Second)
		})
	}
}

// A patch the agent asks to apply (apply_patch, which the CLI takes out of
// the shell command and asks about as a file change) reaches the person with
// its files and diff; accept writes the file, decline does not.
func TestCLIPatchApprovals(t *testing.T) {
	t.Parallel()
	for _, v := range approvalVersions {
		for _, tc := range approvalCases[:2] { // accept, decline
			t.Run(v+"/"+tc.action, func(t *testing.T) {
				t.Parallel()
				p := &person{action: tc.action}
				e := newPersonEnv(t, cliEnv(codertest.CLIVersion(t, v), 2*time.Minute), p)
				dir := t.TempDir()
				patch := "apply_patch <<'EOF'\n*** Begin Patch\n*** Add File: hello.txt\n+patched by the agent\n*** End Patch\nEOF"
				mustOK(t, e.call(t, "coder", map[string]any{"prompt": "[[shell:" + patch + "]]", "sandbox": "workspace-write",
					"approvalPolicy": "untrusted", "workingDirectory": dir}))
				file := filepath.Join(dir, "hello.txt")
				seen := p.seen()
				if len(seen) != 1 || !strings.Contains(seen[0], "asks to change files") || !strings.Contains(seen[0], "Files: "+file) ||
					!strings.Contains(seen[0], "patched by the agent") {
					t.Fatalf("the person was asked %q, want the patch's file and diff", seen)
				}
				b, err := os.ReadFile(file)
				if tc.marker != (err == nil && string(b) == "patched by the agent\n") {
					t.Errorf("%s: file %q %v", tc.action, b, err)
				}
				var recs int
				for _, r := range e.records(t) {
					if cmds, _ := r["commands"].([]any); len(cmds) == 1 && cmds[0] == "apply a patch to "+file && r["approval"] == tc.approval {
						recs++
					}
				}
				if want := map[bool]int{true: 2, false: 1}[tc.marker]; recs != want {
					t.Errorf("%d audit records of the patch's answer, want %d: %v", recs, want, e.records(t))
				}
			})
		}
	}
}

// No accepted command runs without its audit record: with the audit file
// replaced by a directory (it cannot be written), the person's accept is
// turned into a decline and the command does not run; with the file there
// (the control) it runs. A read-only call: the pipeline itself writes no
// record for it, so only the approval's record is at stake.
func TestAcceptedCommandNeedsItsAuditRecord(t *testing.T) {
	t.Parallel()
	for _, broken := range []bool{false, true} {
		t.Run(map[bool]string{false: "audit writable", true: "audit unwritable"}[broken], func(t *testing.T) {
			t.Parallel()
			p := &person{action: "accept"}
			e := newPersonEnv(t, cliEnv(codertest.CLIVersion(t, codertest.NewestVersion), 2*time.Minute), p)
			if broken {
				if err := os.Remove(e.audit); err != nil && !errors.Is(err, os.ErrNotExist) {
					t.Fatal(err)
				}
				if err := os.Mkdir(e.audit, 0o700); err != nil {
					t.Fatal(err)
				}
			}
			dir := t.TempDir()
			mustOK(t, e.call(t, "coder", map[string]any{"prompt": "[[shell:echo approved > marker]]", "approvalPolicy": "untrusted", "workingDirectory": dir}))
			if len(p.seen()) != 1 {
				t.Fatalf("asked %d times", len(p.seen()))
			}
			_, err := os.Stat(filepath.Join(dir, "marker"))
			if broken != errors.Is(err, os.ErrNotExist) {
				t.Errorf("audit unwritable=%v: marker %v", broken, err)
			}
			if broken {
				assertToldNotRun(t, e, "echo approved > marker")
			}
		})
	}
}
