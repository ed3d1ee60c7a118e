package toolcall_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/mcpfleet/mcpfleet/shared/approval"
	"github.com/mcpfleet/mcpfleet/shared/audit"
	"github.com/mcpfleet/mcpfleet/shared/e2e/inproc"
	"github.com/mcpfleet/mcpfleet/shared/toolcall"
)

// The replicas of these tests share one back end: a file that each run of
// double_balance appends a line to, so a replayed code shows as a second
// line (the issue's balance doubled three times).
var sharedSecret = []byte(strings.Repeat("r", 32))

func registerDouble(p *toolcall.Pipeline, effect string) {
	p.Change(mcp.NewTool("double_balance", mcp.WithString("account", mcp.Required())), toolcall.Destructive,
		func(ctx context.Context, req mcp.CallToolRequest) (toolcall.Plan, error) {
			acct := req.GetString("account", "")
			return toolcall.Plan{Class: toolcall.Destructive, Target: "bank", Commands: []string{"DOUBLE " + acct},
				Run: func(context.Context) (*mcp.CallToolResult, error) {
					f, err := os.OpenFile(effect, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
					if err != nil {
						return nil, err
					}
					defer f.Close()
					if _, err := f.WriteString("doubled " + acct + "\n"); err != nil {
						return nil, err
					}
					return mcp.NewToolResultText("doubled " + acct), nil
				}}, nil
		})
}

// replica is one server process's pipeline, in this process.
func replica(t *testing.T, ledger, effect string) *client.Client {
	t.Helper()
	return inproc.Start(t, inproc.Options{Name: "bank", Calls: toolcall.Config{Approval: approval.Config{Secret: sharedSecret, Ledger: ledger}}},
		func(p *toolcall.Pipeline) { registerDouble(p, effect) }).Client
}

func callDouble(t *testing.T, c *client.Client, args map[string]any) *mcp.CallToolResult {
	t.Helper()
	req := mcp.CallToolRequest{}
	req.Params.Name, req.Params.Arguments = "double_balance", args
	res, err := c.CallTool(t.Context(), req)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func runs(t *testing.T, effect string) int {
	t.Helper()
	b, err := os.ReadFile(effect)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	return strings.Count(string(b), "\n")
}

// TestCodeOnceAcrossReplicas: replicas sharing MCP_APPROVAL_SECRET and the
// ledger run a code once, whichever replica it is replayed on.
func TestCodeOnceAcrossReplicas(t *testing.T) {
	dir := t.TempDir()
	ledger, effect := filepath.Join(dir, "used-codes"), filepath.Join(dir, "balance")
	a, b, c := replica(t, ledger, effect), replica(t, ledger, effect), replica(t, ledger, effect)
	code := code(t, callDouble(t, a, map[string]any{"account": "alice"}))
	if res := callDouble(t, b, map[string]any{"account": "alice", "confirm": code}); res.IsError {
		t.Fatalf("redeemed on another replica: %s", text(res))
	}
	for name, r := range map[string]*client.Client{"the issuing replica": a, "the same replica": b, "a third replica": c} {
		if res := callDouble(t, r, map[string]any{"account": "alice", "confirm": code}); !res.IsError || !strings.Contains(text(res), "already been used") {
			t.Errorf("replay on %s: %s", name, text(res))
		}
	}
	if n := runs(t, effect); n != 1 {
		t.Fatalf("the balance was doubled %d times, want once", n)
	}
}

// TestCodeOnceConcurrent: 24 callers on 4 replicas redeem one code at once;
// the back end runs it exactly once and the others are told it was used.
func TestCodeOnceConcurrent(t *testing.T) {
	dir := t.TempDir()
	ledger, effect := filepath.Join(dir, "used-codes"), filepath.Join(dir, "balance")
	var reps []*client.Client
	for range 4 {
		reps = append(reps, replica(t, ledger, effect))
	}
	for round := range 3 {
		acct := fmt.Sprintf("acct%d", round)
		code := code(t, callDouble(t, reps[0], map[string]any{"account": acct}))
		var mu sync.Mutex
		var ok, used int
		var wg sync.WaitGroup
		start := make(chan struct{})
		for i := range 24 {
			wg.Go(func() {
				<-start
				req := mcp.CallToolRequest{}
				req.Params.Name, req.Params.Arguments = "double_balance", map[string]any{"account": acct, "confirm": code}
				res, err := reps[i%len(reps)].CallTool(context.Background(), req)
				mu.Lock()
				defer mu.Unlock()
				switch {
				case err != nil:
					t.Error(err)
				case !res.IsError:
					ok++
				case strings.Contains(text(res), "already been used"):
					used++
				default:
					t.Error(text(res))
				}
			})
		}
		close(start)
		wg.Wait()
		if ok != 1 || used != 23 {
			t.Fatalf("round %d: %d ran, %d told used; want 1 and 23", round, ok, used)
		}
		if n := runs(t, effect); n != round+1 {
			t.Fatalf("round %d: the back end ran %d times in all, want %d", round, n, round+1)
		}
	}
}

// TestCodeOnceAfterRestart: a code issued by one process and redeemed by a
// second is refused by a third (the restarted server), each a real process
// (this test binary) sharing only the secret, the ledger and the back end.
func TestCodeOnceAfterRestart(t *testing.T) {
	if ledger := os.Getenv("TOOLCALL_CHILD_LEDGER"); ledger != "" {
		srv := server.NewMCPServer("bank", "v0", server.WithHooks(&server.Hooks{}))
		p, err := toolcall.New(srv, toolcall.Config{
			Approval: approval.Config{Secret: sharedSecret, Ledger: ledger},
			Audit:    audit.Config{Dest: "off"},
		}, toolcall.Options{Server: "bank", Local: true})
		if err != nil {
			t.Fatal(err)
		}
		registerDouble(p, os.Getenv("TOOLCALL_CHILD_EFFECT"))
		msg := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"double_balance","arguments":` + os.Getenv("TOOLCALL_CHILD_ARGS") + `}}`
		out, _ := json.Marshal(srv.HandleMessage(context.Background(), []byte(msg)))
		fmt.Printf("\nRESULT %s\n", out)
		return
	}
	dir := t.TempDir()
	ledger, effect := filepath.Join(dir, "used-codes"), filepath.Join(dir, "balance")
	process := func(args map[string]any) *mcp.CallToolResult {
		t.Helper()
		a, _ := json.Marshal(args)
		cmd := exec.Command(os.Args[0], "-test.run=^TestCodeOnceAfterRestart$")
		cmd.Env = append(os.Environ(), "TOOLCALL_CHILD_LEDGER="+ledger, "TOOLCALL_CHILD_EFFECT="+effect, "TOOLCALL_CHILD_ARGS="+string(a))
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("child: %v\n%s", err, out)
		}
		_, line, ok := strings.Cut(string(out), "\nRESULT ")
		if !ok {
			t.Fatalf("child printed no result:\n%s", out)
		}
		line, _, _ = strings.Cut(line, "\n")
		var resp struct {
			Result json.RawMessage `json:"result"`
		}
		json.Unmarshal([]byte(line), &resp)
		res, err := mcp.ParseCallToolResult(&resp.Result)
		if err != nil {
			t.Fatalf("child result %s: %v", line, err)
		}
		return res
	}
	code := code(t, process(map[string]any{"account": "alice"}))
	if res := process(map[string]any{"account": "alice", "confirm": code}); res.IsError {
		t.Fatalf("second process: %s", text(res))
	}
	for i := range 2 {
		if res := process(map[string]any{"account": "alice", "confirm": code}); !res.IsError || !strings.Contains(text(res), "already been used") {
			t.Fatalf("restart %d: the replayed code was not refused: %s", i+1, text(res))
		}
	}
	if n := runs(t, effect); n != 1 {
		t.Fatalf("the balance was doubled %d times across restarts, want once", n)
	}
}

// TestLedgerUnusableRefusesCode: a ledger that cannot be read or written
// refuses a valid code, naming the file and MCP_APPROVAL_LEDGER, with
// nothing run and the refusal audited; the code works once it is fixed.
func TestLedgerUnusableRefusesCode(t *testing.T) {
	for _, tc := range []struct {
		name  string
		setup func(path string)
		fix   func(path string)
	}{
		{"corrupt", func(p string) { os.WriteFile(p, []byte("# mcpfleet used-code ledger v1\nnot an entry\n"), 0o600) }, func(p string) { os.Remove(p) }},
		{"another file", func(p string) { os.WriteFile(p, []byte(`{"event":"intent"}`+"\n"), 0o600) }, func(p string) { os.Remove(p) }},
		{"a directory", func(p string) { os.Mkdir(p, 0o700) }, func(p string) { os.Remove(p) }},
		{"below a file", func(p string) { os.WriteFile(filepath.Dir(p), nil, 0o600) }, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			ledger, effect, auditLog := filepath.Join(dir, "state", "used-codes"), filepath.Join(dir, "balance"), filepath.Join(dir, "audit.log")
			os.Mkdir(filepath.Dir(ledger), 0o700)
			srv := server.NewMCPServer("bank", "v0", server.WithHooks(&server.Hooks{}))
			p, err := toolcall.New(srv, toolcall.Config{Approval: approval.Config{Secret: sharedSecret, Ledger: ledger}, Audit: audit.Config{Dest: auditLog}},
				toolcall.Options{Server: "bank", Local: true})
			if err != nil {
				t.Fatal(err)
			}
			defer p.Close()
			registerDouble(p, effect)
			e := &env{t: t, srv: srv, audit: auditLog}
			c, _ := client.NewInProcessClient(srv)
			c.Start(t.Context())
			init := mcp.InitializeRequest{}
			init.Params.ProtocolVersion = mcp.LATEST_PROTOCOL_VERSION
			c.Initialize(t.Context(), init)
			defer c.Close()
			code := code(t, callDouble(t, c, map[string]any{"account": "alice"}))
			if tc.name == "below a file" {
				os.RemoveAll(filepath.Dir(ledger))
			}
			tc.setup(ledger)
			res := callDouble(t, c, map[string]any{"account": "alice", "confirm": code})
			msg := text(res)
			if !res.IsError || !strings.Contains(msg, ledger) || !strings.Contains(msg, "MCP_APPROVAL_LEDGER") || !strings.Contains(msg, "nothing was changed") {
				t.Fatalf("a valid code with an unusable ledger: %s", msg)
			}
			if n := runs(t, effect); n != 0 {
				t.Fatalf("the back end ran %d times", n)
			}
			recs := e.records()
			if last := recs[len(recs)-1]; last["approval"] != "refused" || !strings.Contains(str(last["error"]), "MCP_APPROVAL_LEDGER") {
				t.Errorf("audit record %v", last)
			}
			if tc.fix == nil {
				return
			}
			tc.fix(ledger)
			if res := callDouble(t, c, map[string]any{"account": "alice", "confirm": code}); res.IsError {
				t.Fatalf("after fixing the ledger: %s", text(res))
			}
			if n := runs(t, effect); n != 1 {
				t.Fatalf("the back end ran %d times", n)
			}
		})
	}
}
