package mcpserver_test

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	mcpclient "github.com/mark3labs/mcp-go/client"
	mcpgo "github.com/mark3labs/mcp-go/mcp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpfleet/mcpfleet/codermcp/internal/cli"
	"github.com/mcpfleet/mcpfleet/codermcp/internal/codertest"
	"github.com/mcpfleet/mcpfleet/codermcp/internal/codertest/harness"
	"github.com/mcpfleet/mcpfleet/shared/approval"
	"github.com/mcpfleet/mcpfleet/shared/audit"
	"github.com/mcpfleet/mcpfleet/shared/toolcall"
)

// Every test here runs the real Codex CLI (0.169.0) against a codertest
// endpoint. "No CLI process" is proven three ways: the client's OnStart
// count (every run the server starts), the model endpoint's request count
// and the process table (processes carrying the harness marker).

// approvalEnv is an env whose CLI runs are counted.
type approvalEnv struct {
	*env
	started *atomic.Int32
}

func newApprovalEnv(t *testing.T, o envOptions) *approvalEnv {
	t.Helper()
	var started atomic.Int32
	prev := o.client
	o.client = func(c *cli.Client) {
		c.OnStart = func(int) { started.Add(1) }
		if prev != nil {
			prev(c)
		}
	}
	return &approvalEnv{env: newEnv(t, o), started: &started}
}

// nothingRan fails if a CLI process was started, the model was asked, or a
// CLI process is alive.
func (e *approvalEnv) nothingRan(t *testing.T, runsBefore int32, requestsBefore int) {
	t.Helper()
	if n := e.started.Load(); n != runsBefore {
		t.Errorf("%d CLI processes started, want none", n-runsBefore)
	}
	if n := len(e.h.Endpoint.Requests()); n != requestsBefore {
		t.Errorf("the model endpoint got %d requests, want none", n-requestsBefore)
	}
	if left := harness.Leftovers(e.h.Marker); len(left) != 0 {
		t.Errorf("CLI processes alive: %v", left)
	}
}

// records reads the audit file.
func (e *env) records(t *testing.T) []map[string]any {
	t.Helper()
	f, err := os.Open(e.audit)
	if err != nil {
		if os.IsNotExist(err) {
			return nil
		}
		t.Fatal(err)
	}
	defer f.Close()
	var out []map[string]any
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var r map[string]any
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatalf("audit line is not JSON: %q", sc.Text())
		}
		out = append(out, r)
	}
	return out
}

// events summarises records as "event:approval" for comparison.
func events(recs []map[string]any) string {
	var parts []string
	for _, r := range recs {
		a, _ := r["approval"].(string)
		parts = append(parts, r["event"].(string)+":"+a)
	}
	return strings.Join(parts, " ")
}

// treeHash hashes every file, link and directory under dir (.git included):
// byte-identical trees hash the same.
func treeHash(t *testing.T, dir string) string {
	t.Helper()
	h := sha256.New()
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		h.Write([]byte(rel + "\x00" + fi.Mode().String() + "\x00" + fi.ModTime().String() + "\x00"))
		if fi.Mode().IsRegular() {
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			h.Write(b)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(h.Sum(nil))
}

func gitIn(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

var codeRE = regexp.MustCompile(`confirm: "(mcpc1\.[^"]+)"`)

// confirmCode returns the code a preview carries, failing when there is none.
func confirmCode(t *testing.T, res *mcp.CallToolResult) string {
	t.Helper()
	got := text(res)
	if res.IsError || !strings.HasPrefix(got, "Approval needed — nothing was changed yet.") {
		t.Fatalf("want a preview with a confirmation code, got isError=%v %s", res.IsError, got)
	}
	m := codeRE.FindStringSubmatch(got)
	if m == nil {
		t.Fatalf("no confirmation code in %s", got)
	}
	return m[1]
}

// Dry runs of coder in each sandbox that can change something: the exact
// argv, the working directory's state and the effect come back; no CLI
// process starts, the model hears nothing, no session is created, and the
// working directory (its .git included) is byte-identical.
func TestCoderDryRunChangesNothing(t *testing.T) {
	t.Parallel()
	e := newApprovalEnv(t, envOptions{})
	repo := harness.GitRepo(t) // one commit and one modified file
	head := gitIn(t, repo, "rev-parse", "HEAD")
	branch := gitIn(t, repo, "rev-parse", "--abbrev-ref", "HEAD")
	before := treeHash(t, repo)
	cases := []struct {
		name    string
		args    map[string]any
		class   string
		sandbox string
		summary string
	}{
		{"workspace-write", map[string]any{"sandbox": "workspace-write"}, "change", "workspace-write",
			"Run Codex with write access to its working directory (workspace-write) in " + repo + " (git " + branch + "@" + head[:7] + ", 1 modified file)"},
		{"fullAuto", map[string]any{"fullAuto": true}, "change", "workspace-write", "(workspace-write) in " + repo},
		{"danger-full-access", map[string]any{"sandbox": "danger-full-access"}, "destructive", "danger-full-access",
			"Run Codex with full disk access (danger-full-access) in " + repo + " (git " + branch + "@" + head[:7] + ", 1 modified file): it may change any file on this machine and run any command."},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			args := map[string]any{"prompt": "dry " + tc.name + " [[shell:echo x > out.txt]]", "workingDirectory": repo, "sessionId": "dry-" + tc.name, "dryRun": true}
			for k, v := range tc.args {
				args[k] = v
			}
			res := e.call(t, "coder", args)
			got := mustOK(t, res)
			if !strings.HasPrefix(got, "Dry run — nothing was changed.\n\n"+tc.summary[:0]) || !strings.Contains(got, tc.summary) {
				t.Errorf("preview lacks %q:\n%s", tc.summary, got)
			}
			var pv toolcall.PreviewResult
			b, _ := json.Marshal(res.StructuredContent)
			if err := json.Unmarshal(b, &pv); err != nil || !pv.DryRun || pv.Class != tc.class || pv.Tool != "coder" {
				t.Fatalf("structured preview = %s (%v)", b, err)
			}
			if pv.Target != "Codex CLI "+e.cfg.CLIPath+" in "+repo {
				t.Errorf("target = %q", pv.Target)
			}
			if len(pv.Commands) != 1 {
				t.Fatalf("commands = %q, want the one argv", pv.Commands)
			}
			for _, want := range []string{e.cfg.CLIPath + " exec --json --skip-git-repo-check", "--model=" + codertest.Model,
				`'--config=approval_policy="never"'`, "--sandbox=" + tc.sandbox, "--cd=" + repo, "-- 'dry " + tc.name} {
				if !strings.Contains(pv.Commands[0], want) {
					t.Errorf("argv %q lacks %q", pv.Commands[0], want)
				}
			}
			st, _ := json.Marshal(pv.State)
			for _, want := range []string{`"head":"` + head + `"`, `"modified":1`, `"untracked":0`, `"git":true`, `"new":true`, `"sandbox":"` + tc.sandbox + `"`} {
				if !strings.Contains(string(st), want) {
					t.Errorf("state %s lacks %s", st, want)
				}
			}
			if pv.Effect == "" {
				t.Error("no expected effect")
			}
		})
	}
	e.nothingRan(t, 0, 0)
	if n := e.sessionCount(); n != 0 {
		t.Errorf("dry runs created %d sessions", n)
	}
	if after := treeHash(t, repo); after != before {
		t.Error("the working directory changed during dry runs")
	}
	// Dry runs are audited, as dry runs, and nothing else is.
	recs := e.records(t)
	if len(recs) != len(cases) {
		t.Fatalf("%d audit records, want one per dry run: %v", len(recs), recs)
	}
	for _, r := range recs {
		if r["dry_run"] != true || r["event"] != "outcome" || r["outcome"] != "ok" {
			t.Errorf("dry-run record %v", r)
		}
	}
}

// A dry run on a session that exists shows the session it continues (and
// its turn count) and the resume argv, and leaves the session as it was.
func TestCoderDryRunShowsSession(t *testing.T) {
	t.Parallel()
	e := newApprovalEnv(t, envOptions{})
	dir := t.TempDir()
	first := e.call(t, "coder", map[string]any{"prompt": "first turn", "sessionId": "known", "workingDirectory": dir})
	mustOK(t, first)
	tid, _ := contentMeta(t, first)["threadId"].(string)
	runs, reqs := e.started.Load(), len(e.h.Endpoint.Requests())

	res := e.call(t, "coder", map[string]any{"prompt": "second turn", "sessionId": "known", "sandbox": "danger-full-access", "dryRun": true})
	got := mustOK(t, res)
	for _, want := range []string{"continuing session known (1 turns)", "not a git repository", "exec resume", "-- " + tid + " 'second turn'",
		`'--config=sandbox_mode="danger-full-access"'`, "only if the CLI no longer knows conversation " + tid} {
		if !strings.Contains(got, want) {
			t.Errorf("preview lacks %q:\n%s", want, got)
		}
	}
	e.nothingRan(t, runs, reqs)
	if d, _ := e.store.Get(localOwner, "known"); d.TurnCount != 1 || d.CoderConversationID != tid {
		t.Errorf("session after a dry run = %+v", d)
	}
}

// danger-full-access through the default policy (destructive) with a client
// that cannot elicit: preview and code, accepted once; replay, other
// arguments, other tool, expired and forged codes refused; and read-only
// runs at once, unaudited.
func TestCoderConfirmationCode(t *testing.T) {
	t.Parallel()
	e := newApprovalEnv(t, envOptions{})
	dir := t.TempDir()
	args := func(prompt string, extra ...any) map[string]any {
		a := map[string]any{"prompt": prompt, "workingDirectory": dir, "sandbox": "danger-full-access", "sessionId": "confirm-1"}
		for i := 0; i+1 < len(extra); i += 2 {
			a[extra[i].(string)] = extra[i+1]
		}
		return a
	}

	// Read-only never asks and is not audited.
	mustOK(t, e.call(t, "coder", map[string]any{"prompt": "just read", "workingDirectory": dir, "sessionId": "confirm-1"}))
	if recs := e.records(t); len(recs) != 0 {
		t.Fatalf("a read-only call was audited: %v", recs)
	}
	runs, reqs := e.started.Load(), len(e.h.Endpoint.Requests())

	res := e.call(t, "coder", args("full access [[shell:echo done > approved.txt]]"))
	code := confirmCode(t, res)
	got := text(res)
	for _, want := range []string{"Run Codex with full disk access (danger-full-access) in " + dir + " (not a git repository)",
		"Tool: coder (destructive)", "--sandbox=danger-full-access", "Show this preview to the user"} {
		if !strings.Contains(got, want) {
			t.Errorf("preview lacks %q:\n%s", want, got)
		}
	}
	e.nothingRan(t, runs, reqs)

	refusals := []struct {
		name string
		args map[string]any
		want string
	}{
		{"other prompt", args("something else [[shell:echo done > approved.txt]]", "confirm", code), "other arguments"},
		{"other effort", args("full access [[shell:echo done > approved.txt]]", "confirm", code, "reasoningEffort", "high"), "other arguments"},
		{"other session", args("full access [[shell:echo done > approved.txt]]", "confirm", code, "sessionId", "confirm-2"), "other arguments"},
		{"forged", args("full access [[shell:echo done > approved.txt]]", "confirm", "mcpc1.forged.signature"), "refused coder"},
		{"truncated", args("full access [[shell:echo done > approved.txt]]", "confirm", code[:len(code)-4]), "refused coder"},
		{"bare true", args("full access [[shell:echo done > approved.txt]]", "confirm", true), `argument "confirm"`},
	}
	for _, r := range refusals {
		mustError(t, e.call(t, "coder", r.args), r.want)
	}
	// Another tool: codermcp has one tool that can change anything, so a
	// second one is registered on the same pipeline for this check (it must
	// never run). coder's code is refused there, naming the tool.
	e.calls.Change(mcpgo.NewTool("coder_twin", mcpgo.WithString("prompt"), mcpgo.WithString("workingDirectory"),
		mcpgo.WithString("sandbox"), mcpgo.WithString("sessionId")), toolcall.Destructive,
		func(ctx context.Context, req mcpgo.CallToolRequest) (toolcall.Plan, error) {
			return toolcall.Plan{Class: toolcall.Destructive, Target: "Codex CLI " + e.cfg.CLIPath + " in " + dir,
				Run: func(context.Context) (*mcpgo.CallToolResult, error) {
					t.Error("coder_twin ran on coder's confirmation code")
					return mcpgo.NewToolResultText("ran"), nil
				}}, nil
		})
	mustError(t, e.call(t, "coder_twin", args("full access [[shell:echo done > approved.txt]]", "confirm", code)), "issued for another tool (coder)")
	e.nothingRan(t, runs, reqs)
	if _, err := os.Stat(filepath.Join(dir, "approved.txt")); err == nil {
		t.Fatal("a refused call ran the model's command")
	}

	// The right code runs the call once, as previewed.
	res = e.call(t, "coder", args("full access [[shell:echo done > approved.txt]]", "confirm", code))
	mustOK(t, res)
	if b, err := os.ReadFile(filepath.Join(dir, "approved.txt")); err != nil || strings.TrimSpace(string(b)) != "done" {
		t.Errorf("approved.txt = %q, %v; want the approved command to have run", b, err)
	}
	if n := len(e.h.Endpoint.RequestsWith("full access")); n == 0 {
		t.Error("the approved call never reached the model")
	}
	// Replay.
	runs, reqs = e.started.Load(), len(e.h.Endpoint.Requests())
	mustError(t, e.call(t, "coder", args("full access [[shell:echo done > approved.txt]]", "confirm", code)), "already been used")
	e.nothingRan(t, runs, reqs)

	recs := e.records(t)
	var ran []map[string]any
	for _, r := range recs {
		if r["approval"] == audit.ByConfirmationCode {
			ran = append(ran, r)
		}
	}
	if len(ran) != 2 || ran[0]["event"] != "intent" || ran[1]["event"] != "outcome" || ran[1]["outcome"] != "ok" {
		t.Fatalf("records of the approved run: %v", ran)
	}
	if !strings.HasPrefix(ran[0]["commands"].([]any)[0].(string), e.cfg.CLIPath+" exec resume") {
		t.Errorf("intent commands = %v, want the resume argv that ran", ran[0]["commands"])
	}
}

// A code used after MCP_APPROVAL_TIMEOUT is refused as expired.
func TestCoderConfirmationCodeExpires(t *testing.T) {
	t.Parallel()
	e := newApprovalEnv(t, envOptions{calls: toolcall.Config{Approval: approval.Config{Timeout: time.Second}}})
	args := map[string]any{"prompt": "later", "workingDirectory": t.TempDir(), "sandbox": "danger-full-access"}
	code := confirmCode(t, e.call(t, "coder", args))
	time.Sleep(1500 * time.Millisecond)
	args["confirm"] = code
	mustError(t, e.call(t, "coder", args), "expired", "MCP_APPROVAL_TIMEOUT")
	e.nothingRan(t, 0, 0)
	if recs := e.records(t); events(recs) != "outcome:pending outcome:refused" {
		t.Errorf("records %s", events(recs))
	}
}

// MCP_APPROVAL_FALLBACK=refuse refuses; MCP_APPROVAL=none runs and audits;
// MCP_APPROVAL=change asks for workspace-write too, and read-only still
// never asks and is never audited.
func TestCoderApprovalPolicies(t *testing.T) {
	t.Parallel()
	t.Run("fallback refuse", func(t *testing.T) {
		t.Parallel()
		e := newApprovalEnv(t, envOptions{calls: toolcall.Config{Approval: approval.Config{Fallback: approval.Refuse}}})
		mustError(t, e.call(t, "coder", map[string]any{"prompt": "p", "sandbox": "danger-full-access", "workingDirectory": t.TempDir()}),
			"MCP_APPROVAL_FALLBACK=refuse", "nothing was changed")
		e.nothingRan(t, 0, 0)
		if recs := e.records(t); events(recs) != "outcome:refused" {
			t.Errorf("records %s", events(recs))
		}
	})
	t.Run("none", func(t *testing.T) {
		t.Parallel()
		e := newApprovalEnv(t, envOptions{calls: toolcall.Config{Approval: approval.Config{Policy: approval.None}}})
		dir := t.TempDir()
		mustOK(t, e.call(t, "coder", map[string]any{"prompt": "no approval [[shell:echo ok > none.txt]]", "sandbox": "danger-full-access", "workingDirectory": dir}))
		if _, err := os.Stat(filepath.Join(dir, "none.txt")); err != nil {
			t.Errorf("the call did not run: %v", err)
		}
		recs := e.records(t)
		if events(recs) != "intent:policy outcome:policy" || recs[0]["class"] != "destructive" {
			t.Errorf("records %v", recs)
		}
	})
	t.Run("change", func(t *testing.T) {
		t.Parallel()
		e := newApprovalEnv(t, envOptions{calls: toolcall.Config{Approval: approval.Config{Policy: approval.Change}}})
		dir := t.TempDir()
		confirmCode(t, e.call(t, "coder", map[string]any{"prompt": "write", "sandbox": "workspace-write", "workingDirectory": dir}))
		confirmCode(t, e.call(t, "coder", map[string]any{"prompt": "auto", "fullAuto": true, "workingDirectory": dir}))
		e.nothingRan(t, 0, 0)
		mustOK(t, e.call(t, "coder", map[string]any{"prompt": "read", "sandbox": "read-only", "workingDirectory": dir}))
		mustOK(t, e.call(t, "coder", map[string]any{"prompt": "read by default", "workingDirectory": dir}))
		if recs := e.records(t); events(recs) != "outcome:pending outcome:pending" {
			t.Errorf("records %s: read-only calls must not be audited", events(recs))
		}
	})
}

// The working directory moves between the preview and the confirmation (a
// commit): the call is refused with "state changed since the preview" and
// no CLI process starts.
func TestCoderStateChangedSincePreview(t *testing.T) {
	t.Parallel()
	e := newApprovalEnv(t, envOptions{calls: toolcall.Config{Approval: approval.Config{Policy: approval.Change}}})
	repo := harness.GitRepo(t)
	args := map[string]any{"prompt": "edit main.go", "sandbox": "workspace-write", "workingDirectory": repo}
	code := confirmCode(t, e.call(t, "coder", args))
	gitIn(t, repo, "commit", "-qam", "someone else committed")
	args["confirm"] = code
	mustError(t, e.call(t, "coder", args), "state changed since the preview", "(git master@", "Nothing was changed")
	e.nothingRan(t, 0, 0)
	if n := e.sessionCount(); n != 0 {
		t.Errorf("a refused call created %d sessions", n)
	}
}

// person answers elicitation requests in tests.
type person struct {
	mu       sync.Mutex
	action   string // accept, decline, cancel, or silent (never answers)
	messages []string
}

func (p *person) saw(msg string) string {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.messages = append(p.messages, msg)
	return p.action
}

func (p *person) seen() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.messages...)
}

// Elicitation with the go-sdk client (2025-11-25, elicitation/create over
// streamable HTTP) and with mcp-go's client on 2026-07-28 (input-required
// round trip): the person sees the dry-run preview; the CLI runs only on
// accept; decline, cancel and no answer change nothing.
func TestCoderElicitation(t *testing.T) {
	t.Parallel()
	cases := []struct {
		action   string
		approval string
		want     string
	}{
		{"accept", "person", ""},
		{"decline", "declined", "the person declined the coder call; nothing was changed"},
		{"cancel", "declined", "the person cancelled the coder call; nothing was changed"},
		{"silent", "timeout", "did not answer the approval request for coder within 2s (MCP_APPROVAL_TIMEOUT); nothing was changed"},
	}
	for _, tc := range cases {
		t.Run("go-sdk 2025-11-25 "+tc.action, func(t *testing.T) {
			t.Parallel()
			p := &person{action: tc.action}
			e := newPersonEnv(t, envOptions{calls: toolcall.Config{Approval: approval.Config{Timeout: 2 * time.Second}}}, p)
			dir := t.TempDir()
			res := e.call(t, "coder", map[string]any{"prompt": "elicit " + tc.action + " [[shell:echo yes > elicited.txt]]", "sandbox": "danger-full-access", "workingDirectory": dir})
			checkElicited(t, e, p.seen(), res.IsError, text(res), dir, tc.action, tc.approval, tc.want)
			// A 2025-11-25 client has a session: the record names it.
			if recs := e.records(t); recs[len(recs)-1]["session"] == nil || recs[len(recs)-1]["session"] == "" {
				t.Errorf("the outcome record names no session: %v", recs[len(recs)-1])
			}
		})
	}
	// On 2026-07-28 the server asks and returns at once (input required);
	// a person who answers after MCP_APPROVAL_TIMEOUT gets "did not answer".
	modern := append(cases[:3:3], struct{ action, approval, want string }{"late", "timeout", cases[3].want})
	for _, tc := range modern {
		t.Run("mcp-go 2026-07-28 "+tc.action, func(t *testing.T) {
			t.Parallel()
			p := &person{action: tc.action}
			e := newApprovalEnv(t, envOptions{calls: toolcall.Config{Approval: approval.Config{Timeout: 2 * time.Second}}})
			h := elicitFunc(func(ctx context.Context, req mcpgo.ElicitationRequest) (*mcpgo.ElicitationResult, error) {
				action := p.saw(req.Params.Message)
				if action == "late" {
					time.Sleep(3 * time.Second)
					action = "accept"
				}
				return &mcpgo.ElicitationResult{ElicitationResponse: mcpgo.ElicitationResponse{Action: mcpgo.ElicitationResponseAction(action)}}, nil
			})
			c := modernClient(t, e.env, h)
			dir := t.TempDir()
			req := mcpgo.CallToolRequest{}
			req.Params.Name = "coder"
			req.Params.Arguments = map[string]any{"prompt": "modern " + tc.action + " [[shell:echo yes > elicited.txt]]", "sandbox": "danger-full-access", "workingDirectory": dir}
			ctx, cancel := context.WithTimeout(t.Context(), 90*time.Second)
			defer cancel()
			res, err := c.CallTool(ctx, req)
			if err != nil {
				t.Fatal(err)
			}
			var parts []string
			for _, ct := range res.Content {
				if tc, ok := ct.(mcpgo.TextContent); ok {
					parts = append(parts, tc.Text)
				}
			}
			checkElicited(t, e, p.seen(), res.IsError, strings.Join(parts, "\n"), dir, tc.action, tc.approval, tc.want)
		})
	}
}

func checkElicited(t *testing.T, e *approvalEnv, seen []string, isError bool, got, dir, action, wantApproval, want string) {
	t.Helper()
	if len(seen) != 1 || !strings.HasPrefix(seen[0], "Run Codex with full disk access (danger-full-access) in "+dir+" (not a git repository): it may change any file on this machine and run any command.") ||
		!strings.Contains(seen[0], "Would send:\n  "+e.cfg.CLIPath+" exec --json") {
		t.Errorf("the person saw %q", seen)
	}
	_, statErr := os.Stat(filepath.Join(dir, "elicited.txt"))
	if action == "accept" {
		if isError || statErr != nil {
			t.Errorf("accepted call: isError=%v %s; file: %v", isError, got, statErr)
		}
	} else {
		if !isError || !strings.Contains(got, want) {
			t.Errorf("%s: isError=%v %q, want %q", action, isError, got, want)
		}
		e.nothingRan(t, 0, 0)
	}
	recs := e.records(t)
	if len(recs) == 0 {
		t.Fatal("no audit record")
	}
	last := recs[len(recs)-1]
	if last["approval"] != wantApproval || last["class"] != "destructive" {
		t.Errorf("outcome record %v, want approval %s", last, wantApproval)
	}
	if action == "accept" && (recs[len(recs)-2]["event"] != "intent" || recs[len(recs)-2]["approval"] != "person") {
		t.Errorf("records %s: want the intent before the run", events(recs))
	}
}

// modernClient is mcp-go's in-process client on 2026-07-28 (its latest),
// declaring elicitation and answering with h.
func modernClient(t *testing.T, e *env, h elicitFunc) *mcpclient.Client {
	t.Helper()
	c, err := mcpclient.NewInProcessClientWithOptions(e.srv, mcpclient.WithElicitationHandler(h),
		mcpclient.WithClientCapabilities(mcpgo.ClientCapabilities{Elicitation: &mcpgo.ElicitationCapability{}}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	if err := c.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	init := mcpgo.InitializeRequest{}
	init.Params.ClientInfo = mcpgo.Implementation{Name: "mcp-go-client", Version: "1.2.1"}
	init.Params.ProtocolVersion = mcpgo.LATEST_PROTOCOL_VERSION
	if _, err := c.Initialize(t.Context(), init); err != nil {
		t.Fatal(err)
	}
	return c
}

type elicitFunc func(context.Context, mcpgo.ElicitationRequest) (*mcpgo.ElicitationResult, error)

func (f elicitFunc) Elicit(ctx context.Context, r mcpgo.ElicitationRequest) (*mcpgo.ElicitationResult, error) {
	return f(ctx, r)
}

// Audit records of a coder call that ran: intent and outcome with the
// issue's fields; the prompt (user data) stays; a secret-named argument is
// redacted; API keys in the CLI's environment never appear.
func TestCoderAuditRecords(t *testing.T) {
	t.Parallel()
	const apiKey = "sk-codertest-SECRET-0123456789"
	e := newApprovalEnv(t, envOptions{calls: toolcall.Config{Approval: approval.Config{Policy: approval.None}},
		client: func(c *cli.Client) { c.Env = append(c.Env, "OPENAI_API_KEY="+apiKey, "CODEX_API_KEY="+apiKey) }})
	dir := t.TempDir()
	mustOK(t, e.call(t, "coder", map[string]any{"prompt": "audited prompt 'quoted' [[shell:echo $OPENAI_API_KEY > key.txt]]", "sandbox": "workspace-write", "workingDirectory": dir, "sessionId": "audit-1"}))
	if b, _ := os.ReadFile(filepath.Join(dir, "key.txt")); strings.TrimSpace(string(b)) != apiKey {
		t.Fatalf("the key did not reach the CLI's environment (%q): the leak check would prove nothing", b)
	}
	// An argument named like a secret (not in the schema, so the call is
	// refused, and the refusal audited) is redacted in the record.
	mustError(t, e.call(t, "coder", map[string]any{"prompt": "p", "sandbox": "workspace-write", "workingDirectory": dir, "apiToken": "tok-" + apiKey, "dryRun": true}),
		`unknown argument "apiToken"`, "nothing was run")

	raw, err := os.ReadFile(e.audit)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(raw), apiKey) {
		t.Fatalf("the audit log holds the API key:\n%s", raw)
	}
	recs := e.records(t)
	if events(recs) != "intent:policy outcome:policy outcome:refused" {
		t.Fatalf("records %s\n%s", events(recs), raw)
	}
	for _, r := range recs[:2] {
		// (session is empty, so left out, on this stateless HTTP harness)
		for _, f := range []string{"time", "server", "server_version", "tool", "class", "arguments", "target", "commands", "identity", "client", "request_id", "approval", "dry_run"} {
			if _, ok := r[f]; !ok {
				t.Errorf("%s record lacks %s: %v", r["event"], f, r)
			}
		}
		if _, err := time.Parse("2006-01-02T15:04:05.000Z", r["time"].(string)); err != nil {
			t.Errorf("time %v is not RFC 3339 UTC with ms", r["time"])
		}
		args := r["arguments"].(map[string]any)
		if args["prompt"] != "audited prompt 'quoted' [[shell:echo $OPENAI_API_KEY > key.txt]]" || args["sessionId"] != "audit-1" {
			t.Errorf("arguments %v: the prompt is the user's data and stays", args)
		}
		if r["server"] != "codermcp" || r["tool"] != "coder" || r["class"] != "change" || r["client"] != "codermcp-test/test" ||
			r["target"] != "Codex CLI "+e.cfg.CLIPath+" in "+dir {
			t.Errorf("record %v", r)
		}
	}
	if out := recs[1]; out["outcome"] != "ok" || out["duration_ms"] == nil {
		t.Errorf("outcome record %v", out)
	}
	if a := recs[2]["arguments"].(map[string]any); a["apiToken"] != "[redacted]" || a["prompt"] != "p" || recs[2]["outcome"] != "error" {
		t.Errorf("refusal record %v: the secret-named field must be redacted, the rest kept", recs[2])
	}
}

// An audit log that cannot be written (a full disk) refuses the run: no CLI
// process starts, and the caller reads why and what to do.
func TestCoderUnwritableAuditRefusesRun(t *testing.T) {
	t.Parallel()
	if _, err := os.Stat("/dev/full"); err != nil {
		t.Skip("no /dev/full to stand for a full disk")
	}
	e := newApprovalEnv(t, envOptions{calls: toolcall.Config{Approval: approval.Config{Policy: approval.None}, Audit: audit.Config{Dest: "/dev/full"}}})
	dir := t.TempDir()
	mustError(t, e.call(t, "coder", map[string]any{"prompt": "no record [[shell:echo x > out.txt]]", "sandbox": "workspace-write", "workingDirectory": dir}),
		"audit record could not be written", "nothing was changed", "MCP_AUDIT_LOG")
	e.nothingRan(t, 0, 0)
	if _, err := os.Stat(filepath.Join(dir, "out.txt")); err == nil {
		t.Error("the command ran without its audit record")
	}
	// Read-only calls need no record and still run.
	mustOK(t, e.call(t, "coder", map[string]any{"prompt": "read without a record", "workingDirectory": dir}))
}

// review runs in the read-only sandbox whatever the model asks: a command
// that writes fails, and review is a read tool (no dryRun, not audited).
func TestReviewIsReadOnly(t *testing.T) {
	t.Parallel()
	e := newApprovalEnv(t, envOptions{calls: toolcall.Config{Approval: approval.Config{Policy: approval.Change}}})
	repo := harness.GitRepo(t)
	mustOK(t, e.call(t, "review", map[string]any{"prompt": "review and write [[shell:echo x > review-wrote.txt]]", "workingDirectory": repo}))
	if _, err := os.Stat(filepath.Join(repo, "review-wrote.txt")); err == nil {
		t.Error("a review wrote a file: its sandbox is not read-only")
	}
	if n := len(e.h.Endpoint.RequestsWith("review and write")); n < 2 {
		t.Errorf("the model's command never ran (%d requests): the check would prove nothing", n)
	}
	if recs := e.records(t); len(recs) != 0 {
		t.Errorf("a review was audited: %v", recs)
	}
}
