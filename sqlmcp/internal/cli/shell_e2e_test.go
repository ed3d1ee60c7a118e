package cli_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/creack/pty"

	"github.com/mcpfleet/mcpfleet/shared/e2e"
)

// terminal is the far side of a pseudo-terminal running the shell: what
// was typed and everything the shell drew.
type terminal struct {
	t    *testing.T
	pty  *os.File
	mu   sync.Mutex
	out  strings.Builder
	seen int // waitFor searches after this offset
}

func startShell(t *testing.T, env map[string]string, args ...string) (*terminal, *exec.Cmd) {
	t.Helper()
	bin := e2e.Build(t, "../..")
	cmd := exec.Command(bin, args...)
	env["TERM"] = "xterm"
	cmd.Env = envList(env)
	f, err := pty.StartWithSize(cmd, &pty.Winsize{Rows: 60, Cols: 200})
	if err != nil {
		t.Fatalf("start sqlmcp in a pseudo-terminal: %v", err)
	}
	term := &terminal{t: t, pty: f}
	go func() {
		buf := make([]byte, 4096)
		for {
			n, err := f.Read(buf)
			term.mu.Lock()
			term.out.Write(buf[:n])
			term.mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			cmd.Process.Kill()
			cmd.Wait()
		}
		f.Close()
	})
	return term, cmd
}

func (tm *terminal) screen() string {
	tm.mu.Lock()
	defer tm.mu.Unlock()
	return tm.out.String()
}

// waitFor waits until s appears after the previous match and moves past it.
func (tm *terminal) waitFor(s string) {
	tm.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		all := tm.screen()
		if i := strings.Index(all[tm.seen:], s); i >= 0 {
			tm.seen += i + len(s)
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	all := tm.screen()
	tm.t.Fatalf("timed out waiting for %q; screen after the last match:\n%q", s, all[tm.seen:])
}

func (tm *terminal) typeText(s string) {
	tm.t.Helper()
	if _, err := io.WriteString(tm.pty, s); err != nil {
		tm.t.Fatalf("type %q: %v", s, err)
	}
}

func TestE2EShellInPseudoTerminal(t *testing.T) {
	env := baseEnv(t)
	env["SQLENGINE_CATALOG"] = "sales"
	env["SQLENGINE_SCHEMA"] = "public"
	tm, cmd := startShell(t, env, "--interactive")
	tm.waitFor("sqlmcp:sales.public> ")

	// A statement over several lines runs when ';' ends it.
	tm.typeText("SELECT name\r")
	tm.waitFor("-> ")
	tm.typeText("FROM customers\r")
	tm.waitFor("-> ")
	tm.typeText("WHERE id = 2;\r")
	tm.waitFor("Bob Stone")
	tm.waitFor("(1 row, ")
	tm.waitFor("sqlmcp:sales.public> ")

	// Up arrow recalls the statement (as one line); Enter runs it again.
	tm.typeText("\x1b[A")
	tm.waitFor("SELECT name FROM customers WHERE id = 2;")
	tm.typeText("\r")
	tm.waitFor("Bob Stone")
	tm.waitFor("sqlmcp:sales.public> ")

	// \format switches the output format.
	tm.typeText("\\format csv\r")
	tm.waitFor("Output format is now csv.")
	tm.typeText("SELECT id, name FROM customers WHERE id IN (3, 4) ORDER BY id;\r")
	tm.waitFor("id,name\r\n3,Chloé Dubois\r\n4,Dan O'Hara\r\n")
	tm.typeText("\\format table\r")
	tm.waitFor("Output format is now table.")

	// Tab completes keywords and table names of the current schema.
	tm.typeText("sel\t")
	tm.waitFor("select")
	tm.typeText(" count(*) AS tabbed FROM custo\t")
	tm.waitFor("customers")
	tm.typeText(";\r")
	tm.waitFor("(1 row, ")
	findQuery(t, "select count(*) AS tabbed FROM customers")

	// Ctrl-C cancels the running query on the engine, not the shell.
	marker := fmt.Sprintf("slow_%d", time.Now().UnixNano())
	slow := "SELECT pause_ms(60000) AS " + marker
	tm.typeText(slow + ";\r")
	var id string
	deadline := time.Now().Add(20 * time.Second)
	for id == "" && time.Now().Before(deadline) {
		for _, q := range engineSrv.Queries() {
			if q.SQL == slow && q.State == "RUNNING" {
				id = q.ID
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	if id == "" {
		t.Fatalf("the slow query never ran; queries: %+v", engineSrv.Queries())
	}
	started := time.Now()
	tm.typeText("\x03")
	tm.waitFor("Query cancelled")
	tm.waitFor("sqlmcp:sales.public> ")
	if time.Since(started) > 15*time.Second {
		t.Fatalf("cancel took %v", time.Since(started))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	q, err := engineSrv.WaitQuery(ctx, id)
	if err != nil || !q.Cancelled {
		t.Fatalf("engine query %+v (%v): the engine did not see the cancel", q, err)
	}

	// Ctrl-C while typing drops the statement being typed, across lines.
	tm.typeText("SELECT 'dropped'\r")
	tm.waitFor("-> ")
	tm.typeText("FROM nowhere\x03")
	tm.waitFor("sqlmcp:sales.public> ")
	tm.typeText("SELECT 'kept' AS after_abort;\r")
	tm.waitFor("(1 row, ")
	findQuery(t, "SELECT 'kept' AS after_abort")
	for _, q := range engineSrv.Queries() {
		if strings.Contains(q.SQL, "dropped") {
			t.Fatalf("the aborted statement ran: %q", q.SQL)
		}
	}

	// The shell is still alive: USE changes the prompt; \history lists.
	tm.typeText("USE warehouse.inventory;\r")
	tm.waitFor("sqlmcp:warehouse.inventory> ")
	tm.typeText("SELECT count(*) AS n FROM products;\r")
	tm.waitFor("(1 row, ")
	tm.typeText("\\history\r")
	tm.waitFor("SELECT name FROM customers WHERE id = 2;")
	tm.waitFor("sqlmcp:warehouse.inventory> ")

	// \q leaves with status 0.
	tm.typeText("\\q\r")
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		var ee *exec.ExitError
		if errors.As(err, &ee) || err != nil {
			t.Fatalf("shell exited with %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the shell did not exit on \\q")
	}

	// History is kept across runs, one statement per line, mode 0600.
	hist := filepath.Join(env["XDG_CONFIG_HOME"], "sqlengine", "history")
	data, err := os.ReadFile(hist)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), "SELECT name FROM customers WHERE id = 2;\n") || !strings.Contains(string(data), "\\format csv\n") {
		t.Fatalf("history file:\n%s", data)
	}
	if st, _ := os.Stat(hist); st.Mode().Perm() != 0o600 {
		t.Fatalf("history mode %v", st.Mode().Perm())
	}

	// A new shell recalls the previous run's history; Ctrl-D leaves.
	tm2, cmd2 := startShell(t, env, "-i")
	tm2.waitFor("sqlmcp:sales.public> ")
	tm2.typeText("\x1b[A")
	tm2.waitFor(`\q`)
	tm2.typeText("\x1b[A\x1b[A")
	tm2.waitFor("SELECT count(*) AS n FROM products;")
	tm2.typeText("\x15") // Ctrl-U clears the line
	tm2.typeText("\x04") // Ctrl-D on an empty line
	go func() { done <- cmd2.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("shell exited with %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the shell did not exit on Ctrl-D")
	}
}

// Without a terminal the shell reads statements from standard input with
// no prompts; a failed statement makes the exit status 1.
func TestE2EShellFromPipe(t *testing.T) {
	env := baseEnv(t)
	r := sqlmcp(t, env, "SELECT 1 AS a;\n\\format csv\nSELECT 2 AS b\n", "--interactive")
	if r.code != 0 || !strings.Contains(r.stdout, " a\n---\n 1\n") || !strings.HasSuffix(r.stdout, "Output format is now csv.\nb\n2\n") {
		t.Fatalf("exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
	r = sqlmcp(t, env, "SELECT * FROM nowhere.x.y;\nUSE sales.crm;\nSELECT count(*) AS n FROM contacts;\n\\bogus\n", "-i", "--format", "csv")
	if r.code != 1 || !strings.Contains(r.stdout, "USE\nn\n") || !strings.Contains(r.stderr, "Error: ") || !strings.Contains(r.stderr, `unknown command \bogus`) {
		t.Fatalf("exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
}

func TestE2EShellMetaCommands(t *testing.T) {
	env := baseEnv(t)
	env["SQLENGINE_CATALOG"] = "sales"
	script := "\\catalogs\n\\schemas\n\\schemas warehouse\n\\tables sales crm\n\\describe sales.crm.contacts\n" +
		"USE crm;\n\\tables\n\\describe contacts\nUSE sales.nope;\nUSE a.b.c;\n\\help\n\\format xml\n\\q\nSELECT 'never run';\n"
	r := sqlmcp(t, env, script, "-i", "--format", "csv")
	for _, want := range []string{
		"catalog\nsales\n", "schema\n", "crm\n", "inventory\nlogs\n", "name,type\ncontacts,TABLE\n",
		"name,type,nullable,comment,extra\nid,integer,true,,\nfull_name,varchar,true,,\n", "USE\nname,type\ncontacts,TABLE\n",
		`\format <table|json|csv>`,
	} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("stdout lacks %q", want)
		}
	}
	for _, want := range []string{`schema "nope" does not exist in catalog "sales"`, `USE needs catalog.schema or schema`, `\format takes table, json or csv`} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("stderr lacks %q", want)
		}
	}
	if strings.Contains(r.stdout, "never run") || r.code != 1 {
		t.Errorf("exit %d", r.code)
	}
	if t.Failed() {
		t.Logf("stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	}
}

// With no arguments on a terminal, sqlmcp prints the help (on a pipe it
// would be the MCP server).
func TestE2ENoArgumentsOnATerminalPrintsHelp(t *testing.T) {
	tm, cmd := startShell(t, baseEnv(t))
	tm.waitFor("NAME")
	tm.waitFor("CONFIGURATION")
	if err := cmd.Wait(); err != nil {
		t.Fatalf("exit: %v", err)
	}
}
