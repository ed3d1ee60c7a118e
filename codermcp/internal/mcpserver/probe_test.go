package mcpserver_test

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcpfleet/mcpfleet/codermcp/internal/cli"
	"github.com/mcpfleet/mcpfleet/codermcp/internal/config"
)

// When the call's CODER_TIMEOUT runs out during the CLI's version probe
// (the probe runs under the call's context), the caller reads that it timed
// out, in which command and what to do — not that the CLI "failed to
// execute". A fake CLI: the real one answers --version too fast to show it.
func TestVersionProbeTimeoutSaysTimedOut(t *testing.T) {
	t.Parallel()
	fake, _ := filepath.Abs("../../testdata/fakecli/codex")
	e := newEnv(t, envOptions{cliPath: fake,
		cfg:    func(c *config.Config) { c.Timeout = time.Second },
		client: func(c *cli.Client) { c.Env = append(c.Env, "FAKECLI_VERSION_DELAY=30") }})
	for _, tool := range []string{"coder", "review"} {
		args := map[string]any{"prompt": "slow probe"}
		if tool == "review" {
			args = map[string]any{"uncommitted": true}
		}
		start := time.Now()
		got := mustError(t, e.call(t, tool, args), "timed out", "--version", "1s limit (CODER_TIMEOUT)", "Raise CODER_TIMEOUT", "nothing was run")
		if strings.Contains(got, "failed to execute") {
			t.Errorf("%s: a probe stopped by the time limit is reported as a failure to execute: %s", tool, got)
		}
		if d := time.Since(start); d > 20*time.Second {
			t.Errorf("%s: the call took %s; the 1s limit must stop the 30s probe", tool, d)
		}
	}
	// A read call that failed in the probe is not audited; a change call
	// that could not be planned is, as a refusal.
	if recs := e.records(t); len(recs) != 0 {
		t.Errorf("read calls stopped in the probe were audited: %v", recs)
	}
	got := mustError(t, e.call(t, "coder", map[string]any{"prompt": "slow probe", "sandbox": "workspace-write"}), "timed out", "--version")
	if recs := e.records(t); len(recs) != 1 || recs[0]["approval"] != "refused" || recs[0]["error"] != got {
		t.Errorf("records %v, want the refusal", recs)
	}
	// The probe's process group (the fake's sleep included) is gone.
	waitNoLeftovers(t, e.h.Marker, 10*time.Second)
	if n := e.sessionCount(); n != 0 {
		t.Errorf("a call stopped in the version probe created %d sessions", n)
	}
}
