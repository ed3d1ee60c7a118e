package mcpserver_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpfleet/mcpfleet/codermcp/internal/cliversion"
	"github.com/mcpfleet/mcpfleet/codermcp/internal/codertest"
)

// TestFigures measures, per CLI version, the overhead of a codex call over
// running the CLI directly with the same prompt (median of
// CODER_FIGURES_N, default 20) and the time to the first progress
// notification; on the CLIs with the app-server (0.153.4 on) the same for
// approval-policy on-request, which runs there. It runs only with CODER_FIGURES=1 (a measurement, not a
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
		// A client that can be asked, so that approval-policy on-request
		// (the app-server path) is measured too where the CLI has it.
		e := newPersonEnv(t, cliEnv(path, 0), &person{action: "accept"})
		if _, err := e.client.Caps(context.Background()); err != nil {
			t.Fatal(err)
		}
		f, err := e.features.Get(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		dir := t.TempDir()
		const prompt = "figures"
		var direct, viaMCP, firstProg, viaApp, firstApp []time.Duration
		call := func(tok string, args map[string]any, total, first *[]time.Duration) {
			start := time.Now()
			res, err := e.cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "codex", Arguments: args, Meta: mcp.Meta{"progressToken": tok}})
			if err != nil || res.IsError {
				t.Fatalf("%s codex: %v %v", v, err, res)
			}
			*total = append(*total, time.Since(start))
			if notes := e.notes(tok); len(notes) > 0 {
				*first = append(*first, notes[0].At.Sub(start))
			}
		}
		for i := range n {
			cmd := exec.Command(path, "exec", "--skip-git-repo-check", "--sandbox=read-only", "--cd="+dir, "--", prompt)
			cmd.Env = append(append(os.Environ(), "CODEX_HOME="+e.h.Home), e.h.Env...)
			start := time.Now()
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("%s direct: %v %s", v, err, out)
			}
			direct = append(direct, time.Since(start))
			call("fig-"+v+"-"+strconv.Itoa(i), map[string]any{"prompt": prompt, "cwd": dir, "sandbox": "read-only"}, &viaMCP, &firstProg)
			if f.Supports(cliversion.FeatureApprovals) {
				call("fig-app-"+v+"-"+strconv.Itoa(i), map[string]any{"prompt": prompt, "cwd": dir, "sandbox": "read-only", "approval-policy": "on-request"}, &viaApp, &firstApp)
			}
		}
		ms := func(d []time.Duration) string {
			if len(d) == 0 {
				return "none"
			}
			return median(d).Round(time.Millisecond).String()
		}
		line := fmt.Sprintf("FIGURES %s n=%d direct=%s codex=%s overhead=%v first-progress=%s", v, n,
			ms(direct), ms(viaMCP), (median(viaMCP) - median(direct)).Round(time.Millisecond), ms(firstProg))
		if len(viaApp) > 0 {
			line += fmt.Sprintf(" | on-request (app-server) codex=%s overhead=%v first-progress=%s",
				ms(viaApp), (median(viaApp) - median(direct)).Round(time.Millisecond), ms(firstApp))
		}
		if b, err := os.ReadFile("/proc/loadavg"); err == nil {
			line += " | load " + strings.Join(strings.Fields(string(b))[:3], " ")
		}
		t.Log(line)
	}
}
