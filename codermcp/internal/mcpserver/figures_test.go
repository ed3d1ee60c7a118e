package mcpserver_test

import (
	"context"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpfleet/mcpfleet/codermcp/internal/codertest"
)

// TestFigures measures, per CLI version, the overhead of a codex call over
// running the CLI directly with the same prompt (median of
// CODER_FIGURES_N, default 20) and the time to the first progress
// notification. It runs only with CODER_FIGURES=1 (a measurement, not a
// check).
func TestFigures(t *testing.T) {
	if os.Getenv("CODER_FIGURES") != "1" {
		t.Skip("set CODER_FIGURES=1 to measure")
	}
	n := 20
	if s := os.Getenv("CODER_FIGURES_N"); s != "" {
		n, _ = strconv.Atoi(s)
	}
	median := func(d []time.Duration) time.Duration { slices.Sort(d); return d[len(d)/2] }
	for _, v := range codertest.Versions {
		path := codertest.CLIVersion(t, v)
		e := newEnv(t, envOptions{cliPath: path})
		if _, err := e.client.Caps(context.Background()); err != nil {
			t.Fatal(err)
		}
		dir := t.TempDir()
		var direct, viaMCP, firstProg []time.Duration
		for i := range n {
			cmd := exec.Command(path, "exec", "--skip-git-repo-check", "--sandbox=read-only", "--cd="+dir, "--", "figures direct")
			cmd.Env = append(append(os.Environ(), "CODEX_HOME="+e.h.Home), e.h.Env...)
			start := time.Now()
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("%s direct: %v %s", v, err, out)
			}
			direct = append(direct, time.Since(start))
			tok := "fig-" + v + "-" + strconv.Itoa(i)
			start = time.Now()
			res, err := e.cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "codex",
				Arguments: map[string]any{"prompt": "figures via mcp", "cwd": dir, "sandbox": "read-only"}, Meta: mcp.Meta{"progressToken": tok}})
			if err != nil || res.IsError {
				t.Fatalf("%s codex: %v %v", v, err, res)
			}
			viaMCP = append(viaMCP, time.Since(start))
			if notes := e.notes(tok); len(notes) > 0 {
				firstProg = append(firstProg, notes[0].At.Sub(start))
			}
		}
		fp := "none"
		if len(firstProg) > 0 {
			fp = median(firstProg).Round(time.Millisecond).String()
		}
		t.Logf("FIGURES %s n=%d direct=%v codex=%v overhead=%v first-progress=%s", v, n,
			median(direct).Round(time.Millisecond), median(viaMCP).Round(time.Millisecond),
			(median(viaMCP) - median(direct)).Round(time.Millisecond), fp)
	}
}
