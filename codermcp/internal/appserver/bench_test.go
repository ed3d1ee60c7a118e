package appserver_test

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/mcpfleet/mcpfleet/codermcp/internal/appserver"
	"github.com/mcpfleet/mcpfleet/codermcp/internal/codertest"
	"github.com/mcpfleet/mcpfleet/codermcp/internal/codertest/harness"
)

// Figures per CLI version (issue 28): the wall time of one plain turn
// against the test endpoint and the time to its first event, each the
// median over b.N runs (run with -benchtime=5x for the median of 5):
//
//	go test ./codermcp/internal/appserver -run '^$' -bench . -benchtime=5x
//
// BenchmarkExecTurn is `codex exec --json` (every version); BenchmarkAppServerTurn
// is a Turn through the app-server (v2 versions), start-up included.

func medianMS(ds []time.Duration) float64 {
	slices.Sort(ds)
	return float64(ds[len(ds)/2]) / float64(time.Millisecond)
}

func BenchmarkExecTurn(b *testing.B) {
	for _, v := range codertest.Versions {
		b.Run(v, func(b *testing.B) {
			h := harness.NewFor(b, codertest.CLIVersion(b, v))
			dir := b.TempDir()
			var total, first []time.Duration
			for b.Loop() {
				start := time.Now()
				cmd := exec.Command(h.CLI, "exec", "--json", "--skip-git-repo-check", "--sandbox=read-only", "--cd="+dir, "--", "[[reply:bench]]")
				cmd.Env = append(append(os.Environ(), h.Env...), "CODEX_HOME="+h.Home)
				cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
				out, err := cmd.StdoutPipe()
				if err != nil {
					b.Fatal(err)
				}
				if err := cmd.Start(); err != nil {
					b.Fatal(err)
				}
				sc := bufio.NewScanner(out)
				sc.Buffer(make([]byte, 64<<10), 1<<20)
				got := false
				for sc.Scan() {
					if !got && len(sc.Bytes()) > 0 && sc.Bytes()[0] == '{' {
						first = append(first, time.Since(start))
						got = true
					}
				}
				if err := cmd.Wait(); err != nil {
					b.Fatalf("codex %s exec: %v", v, err)
				}
				total = append(total, time.Since(start))
			}
			b.ReportMetric(medianMS(total), "median-turn-ms")
			b.ReportMetric(medianMS(first), "median-first-event-ms")
		})
	}
}

func BenchmarkAppServerTurn(b *testing.B) {
	for _, v := range []string{"0.153.4", "0.169.0", codertest.NewestVersion} {
		b.Run(v, func(b *testing.B) {
			h := harness.NewFor(b, codertest.CLIVersion(b, v))
			c := &appserver.Client{Path: h.CLI, Home: h.Home, Env: h.Env}
			dir := b.TempDir()
			var total, first []time.Duration
			for b.Loop() {
				start := time.Now()
				var firstAt time.Duration
				_, err := c.Turn(context.Background(), appserver.TurnRequest{Prompt: "[[reply:bench]]", Cwd: dir, Sandbox: "read-only"},
					func(appserver.Event) {
						if firstAt == 0 {
							firstAt = time.Since(start)
						}
					}, nil)
				if err != nil {
					b.Fatalf("app-server %s turn: %v", v, err)
				}
				total = append(total, time.Since(start))
				first = append(first, firstAt)
			}
			b.ReportMetric(medianMS(total), "median-turn-ms")
			b.ReportMetric(medianMS(first), "median-first-event-ms")
		})
	}
}
