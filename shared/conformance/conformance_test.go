package conformance_test

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcpfleet/mcpfleet/shared/e2e/conformancesuite"
)

var listening = regexp.MustCompile(`serving MCP over HTTP"? addr=(\S+)`)

// TestConformance runs the official suite's 2026-07-28 requirement set and
// the tasks extension scenarios against cmd/conformanceserver, with
// expected-failures.yml as the baseline: any other failure fails the test.
func TestConformance(t *testing.T) {
	node, cli := conformancesuite.Find(t)
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	dir := t.TempDir()
	srv := filepath.Join(dir, "conformanceserver")
	if out, err := exec.CommandContext(ctx, "go", "build", "-o", srv, "./cmd/conformanceserver").CombinedOutput(); err != nil {
		t.Fatalf("build the conformance server: %v\n%s", err, out)
	}
	cmd := exec.CommandContext(ctx, srv)
	// Port 0: the server binds a free port and logs it; nothing released
	// before use.
	cmd.Env = append(os.Environ(), "MCP_TRANSPORT=http", "MCP_PORT=0", "MCP_HOST=127.0.0.1")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	addr := make(chan string, 1)
	exited := make(chan struct{})
	go func() {
		defer close(exited)
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if m := listening.FindStringSubmatch(sc.Text()); m != nil {
				select {
				case addr <- m[1]:
				default:
				}
			}
		}
	}()
	var a string
	select {
	case a = <-addr:
	case <-exited:
		t.Fatal("the conformance server stopped before it listened")
	case <-ctx.Done():
		t.Fatal("the conformance server never logged its address")
	}
	run := exec.CommandContext(ctx, node, cli, "server", "--url", "http://"+a+"/mcp",
		"--requirements", "2026-07-28", "--expected-failures", "expected-failures.yml", "-o", filepath.Join(dir, "results"))
	run.Dir = "."
	run.Env = append(os.Environ(), "PATH="+filepath.Dir(node)+string(os.PathListSeparator)+os.Getenv("PATH"))
	out, err := run.CombinedOutput()
	if err != nil && onlyIntermittentPassed(out) {
		t.Logf("an intermittent expected failure passed this time (%v)", intermittent)
		err = nil
	}
	if err != nil {
		t.Fatalf("conformance suite: %v (a failure outside expected-failures.yml, or an expected one that now passes: remove its entry)\n%s", err, out)
	}
	t.Logf("%s", tail(out, 3000))
}

// intermittent are the baseline entries that fail only sometimes (see
// expected-failures.yml): the suite calls their passing a stale baseline.
var intermittent = []string{"tools-call-with-progress"}

// onlyIntermittentPassed reports whether the suite's one complaint is that
// intermittent entries passed.
func onlyIntermittentPassed(out []byte) bool {
	s := string(out)
	i := strings.Index(s, "Stale baseline entries")
	if i < 0 || strings.Contains(s, "Unexpected failures") {
		return false
	}
	for _, line := range strings.Split(s[i:], "\n")[1:] {
		line = strings.TrimSpace(line)
		if line == "" {
			break
		}
		name := strings.TrimSpace(strings.TrimPrefix(line, "✓"))
		if !slices.Contains(intermittent, name) {
			return false
		}
	}
	return true
}

func tail(b []byte, n int) []byte {
	if len(b) > n {
		return b[len(b)-n:]
	}
	return b
}
