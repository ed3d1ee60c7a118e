package cli_test

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcpfleet/mcpfleet/shared/e2e"
	"github.com/mcpfleet/mcpfleet/shared/syncbuf"
	"github.com/mcpfleet/mcpfleet/sqlmcp/internal/trinotest"
)

// waitRunning returns the id of the engine query with this SQL once it runs.
func waitRunning(t *testing.T, srv *trinotest.Server, sqlText string) string {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		for _, q := range srv.Queries() {
			if q.SQL == sqlText && q.State == "RUNNING" {
				return q.ID
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("the engine never ran %q", sqlText)
	return ""
}

// Ctrl-C (SIGINT) during a one-shot query cancels it on the engine and
// exits with status 1.
func TestE2EInterruptCancelsOneShotQuery(t *testing.T) {
	bin := e2e.Build(t, "../..")
	slow := fmt.Sprintf("SELECT pause_ms(60000) AS slow_%d", time.Now().UnixNano())
	cmd := exec.Command(bin, "query", slow)
	cmd.Env = envList(baseEnv(t))
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	id := waitRunning(t, engineSrv, slow)
	cmd.Process.Signal(syscall.SIGINT)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(15 * time.Second):
		cmd.Process.Kill()
		t.Fatal("sqlmcp did not stop on SIGINT")
	}
	if code := cmd.ProcessState.ExitCode(); code != 1 || !strings.Contains(errb.String(), "cancel") {
		t.Fatalf("exit %d, stderr %q", code, errb.String())
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if q, err := engineSrv.WaitQuery(ctx, id); err != nil || !q.Cancelled {
		t.Fatalf("engine query %+v (%v) not cancelled", q, err)
	}
}

// Rows are written as they arrive: the first pages are on stdout while the
// engine is still producing the rest.
func TestE2EPrintsRowsAsTheyStream(t *testing.T) {
	bin := e2e.Build(t, "../..")
	// DuckDB works in chunks of 2048 rows: the sleep in the third chunk
	// holds the query back after the first chunks were served.
	slow := fmt.Sprintf("SELECT id, pause_ms(CASE WHEN id = 5000 THEN 60000 ELSE 0 END) AS s_%d FROM %s WHERE id <= 6000", time.Now().UnixNano(), trinotest.LargeTable)
	for _, format := range []string{"csv", "table", "json"} {
		t.Run(format, func(t *testing.T) {
			cmd := exec.Command(bin, "query", slow, "--format", format)
			cmd.Env = envList(baseEnv(t))
			var out syncbuf.Buffer
			cmd.Stdout = &out
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			defer func() { cmd.Process.Kill(); cmd.Wait() }()
			deadline := time.Now().Add(30 * time.Second)
			for strings.Count(out.String(), "\n") < 1000 {
				if time.Now().After(deadline) {
					t.Fatalf("after 30 s only %d lines were printed", strings.Count(out.String(), "\n"))
				}
				time.Sleep(50 * time.Millisecond)
			}
			if cmd.ProcessState != nil {
				t.Fatal("the query ended before the test looked")
			}
		})
	}
}

// TLS and password settings from the environment and from a profile really
// take effect: the engine requires basic authentication over TLS with a
// self-signed certificate.
func TestE2ETLSPasswordAndInsecure(t *testing.T) {
	srv := trinotest.Start(t, trinotest.WithPassword("alice", "s3cret pw"), trinotest.WithoutSampleData())
	env := baseEnv(t)
	env["SQLENGINE_HOST"], env["SQLENGINE_PORT"] = srv.Host(), strconv.Itoa(srv.Port())
	env["SQLENGINE_USER"], env["SQLENGINE_PASSWORD"] = "alice", "s3cret pw"

	// Without TLS a password is refused before anything is sent.
	r := sqlmcp(t, env, "", "catalogs")
	if r.code != 1 || !strings.Contains(r.stderr, "TLS") {
		t.Fatalf("plain: exit %d, stderr %q", r.code, r.stderr)
	}
	// TLS with verification: the self-signed certificate is rejected.
	env["SQLENGINE_SSL"] = "true"
	r = sqlmcp(t, env, "", "catalogs")
	if r.code != 1 || !strings.Contains(r.stderr, "certificate") {
		t.Fatalf("verified: exit %d, stderr %q", r.code, r.stderr)
	}
	// SQLENGINE_SSL_INSECURE skips the verification.
	env["SQLENGINE_SSL_INSECURE"] = "true"
	r = sqlmcp(t, env, "", "catalogs", "--format", "csv")
	if r.code != 0 || !strings.Contains(r.stdout, "sales\n") {
		t.Fatalf("insecure: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
	// A wrong password is a clear runtime error.
	env["SQLENGINE_PASSWORD"] = "wrong"
	r = sqlmcp(t, env, "", "catalogs")
	if r.code != 1 || r.stdout != "" {
		t.Fatalf("wrong password: exit %d, stderr %q", r.code, r.stderr)
	}
	// The same from a profile, with --ssl/--insecure flags overriding it.
	env = baseEnv(t)
	writeConfig(t, env, fmt.Sprintf(`{"profiles": {"default": {"host": %q, "port": %d, "user": "alice", "password": "s3cret pw", "ssl": {"enabled": true, "insecure": false}}}}`, srv.Host(), srv.Port()))
	if r = sqlmcp(t, env, "", "catalogs"); r.code != 1 || !strings.Contains(r.stderr, "certificate") {
		t.Fatalf("profile verified: exit %d, stderr %q", r.code, r.stderr)
	}
	if r = sqlmcp(t, env, "", "catalogs", "--insecure"); r.code != 0 {
		t.Fatalf("profile + --insecure: exit %d, stderr %q", r.code, r.stderr)
	}
	if got := srv.Statements(); len(got) == 0 || got[len(got)-1].Header.Get("X-Trino-User") != "alice" {
		t.Fatalf("engine saw %+v", got)
	}
}

// With SQLENGINE_ALLOW_WRITE_QUERIES=true statements that change data run
// and report what they changed; without it they are refused before they
// reach the engine.
func TestE2EWritesNeedTheSetting(t *testing.T) {
	srv := trinotest.Start(t, trinotest.WithoutSampleData())
	env := baseEnv(t)
	env["SQLENGINE_HOST"], env["SQLENGINE_PORT"] = srv.Host(), strconv.Itoa(srv.Port())
	script := "CREATE SCHEMA sales.scratch;\nCREATE TABLE sales.scratch.t (a integer);\nINSERT INTO sales.scratch.t VALUES (1), (2);\nSELECT count(*) AS n FROM sales.scratch.t;\n"
	r := sqlmcp(t, env, script, "query", "-")
	if r.code != 1 || !strings.Contains(r.stderr, "SQLENGINE_ALLOW_WRITE_QUERIES") || len(srv.Statements()) != 0 {
		t.Fatalf("refused: exit %d, stderr %q, engine saw %d statements", r.code, r.stderr, len(srv.Statements()))
	}
	env["SQLENGINE_ALLOW_WRITE_QUERIES"] = "true"
	r = sqlmcp(t, env, script, "query", "-")
	// As in Trino, DDL answers result=true and INSERT the row count.
	if r.code != 0 || !strings.Contains(r.stdout, " rows\n------\n    2\n") || !strings.Contains(r.stdout, " n\n---\n 2\n(1 row)") {
		t.Fatalf("allowed: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
	// Session statements stay refused even then; the shell's USE is the way.
	r = sqlmcp(t, env, "", "query", "SET SESSION query_max_run_time = '1m'")
	if r.code != 1 || !strings.Contains(r.stderr, "refused") {
		t.Fatalf("SET SESSION: exit %d, stderr %q", r.code, r.stderr)
	}
}
