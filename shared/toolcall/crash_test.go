package toolcall_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/mcpfleet/mcpfleet/shared/approval"
	"github.com/mcpfleet/mcpfleet/shared/audit"
	"github.com/mcpfleet/mcpfleet/shared/toolcall"
)

// TestKilledMidChangeLeavesIntent runs a call in a child process whose
// change never finishes, SIGKILLs the child, and finds the intent record.
func TestKilledMidChangeLeavesIntent(t *testing.T) {
	if path := os.Getenv("TOOLCALL_CHILD_AUDIT"); path != "" {
		srv := server.NewMCPServer("example", "v0", server.WithHooks(&server.Hooks{}))
		p, err := toolcall.New(srv, toolcall.Config{Audit: audit.Config{Dest: path}, Approval: approval.Config{Policy: approval.None}}, toolcall.Options{Server: "example", Local: true})
		if err != nil {
			t.Fatal(err)
		}
		p.Change(mcp.NewTool("hang"), toolcall.Destructive, func(context.Context, mcp.CallToolRequest) (toolcall.Plan, error) {
			return toolcall.Plan{Class: toolcall.Destructive, Target: "t", Commands: []string{"hang"},
				Run: func(context.Context) (*mcp.CallToolResult, error) {
					os.WriteFile(path+".running", nil, 0o600)
					select {} // the change is under way when the process is killed
				}}, nil
		})
		srv.HandleMessage(context.Background(), []byte(`{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"hang","arguments":{}}}`))
		return
	}
	path := filepath.Join(t.TempDir(), "audit.log")
	cmd := exec.Command(os.Args[0], "-test.run=^TestKilledMidChangeLeavesIntent$")
	cmd.Env = append(os.Environ(), "TOOLCALL_CHILD_AUDIT="+path)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		if _, err := os.Stat(path + ".running"); err == nil {
			break
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatal("the child never started the change")
		}
		time.Sleep(10 * time.Millisecond)
	}
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	recs := (&env{t: t, audit: path}).records()
	if len(recs) != 1 || recs[0]["event"] != "intent" || recs[0]["tool"] != "hang" || recs[0]["request_id"] != "9" || recs[0]["approval"] != "policy" {
		t.Fatalf("after SIGKILL: %v", recs)
	}
}

// TestSIGHUPReopens: after the audit file is renamed away, SIGHUP makes the
// next record go to a new file at the configured path.
func TestSIGHUPReopens(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.log")
	e := newEnv(t, toolcall.Config{Audit: audit.Config{Dest: path}, Approval: approval.Config{Policy: approval.None}})
	e.call("set_value", map[string]any{"key": "a", "value": 3})
	if err := os.Rename(path, path+".1"); err != nil {
		t.Fatal(err)
	}
	syscall.Kill(os.Getpid(), syscall.SIGHUP)
	deadline := time.Now().Add(10 * time.Second)
	for {
		e.call("get_value", map[string]any{"key": "a"}) // reads are not audited
		if _, err := os.Stat(path); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("SIGHUP did not reopen the audit log")
		}
		time.Sleep(20 * time.Millisecond)
	}
	e.call("set_value", map[string]any{"key": "b", "value": 4})
	old := (&env{t: t, audit: path + ".1"}).records()
	cur := (&env{t: t, audit: path}).records()
	if len(old) != 2 || len(cur) != 2 || !strings.Contains(str(cur[1]["tool"]), "set_value") || cur[1]["arguments"].(map[string]any)["key"] != "b" {
		t.Fatalf("old %v\nnew %v", old, cur)
	}
}
