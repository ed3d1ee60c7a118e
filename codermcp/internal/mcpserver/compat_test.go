package mcpserver_test

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpfleet/mcpfleet/codermcp/internal/cliversion"
	"github.com/mcpfleet/mcpfleet/codermcp/internal/codertest"
	"github.com/mcpfleet/mcpfleet/codermcp/internal/codertest/harness"
)

// TestCompatibility runs the compatibility suite on every CLI of the
// matrix except the newest (which the full suite runs): sessions, native
// and fallback resume, progress, cancellation with no orphan, codex and
// codex-reply. A missing version fails with CI=true (codertest.CLIVersion).
func TestCompatibility(t *testing.T) {
	t.Parallel()
	for _, v := range codertest.Versions {
		if v == codertest.NewestVersion {
			continue
		}
		t.Run(v, func(t *testing.T) {
			t.Parallel()
			path := codertest.CLIVersion(t, v)
			e := newEnv(t, envOptions{cliPath: path})
			caps, err := e.client.Caps(context.Background())
			if err != nil {
				t.Fatalf("probing %s: %v", v, err)
			}
			if caps.Version.String() != v {
				t.Fatalf("the CLI at %s says it is %s", path, caps.Version)
			}
			id := strings.ReplaceAll(v, ".", "_")
			// Turns the endpoint must see the earlier ones in: as history
			// (native resume) or as context in the prompt (fallback).
			sawEarlier := func(r codertest.Request, marker string) bool {
				return slices.ContainsFunc(r.Texts, func(s string) bool { return strings.Contains(s, marker) })
			}
			t.Run("session and resume", func(t *testing.T) {
				sid := "compat-" + id
				res := e.call(t, "coder", map[string]any{"prompt": "first compat turn", "sessionId": sid, "workingDirectory": t.TempDir()})
				if got := mustOK(t, res); got != "reply to: first compat turn" {
					t.Fatalf("first turn = %q", got)
				}
				tid, _ := contentMeta(t, res)["threadId"].(string)
				res = e.call(t, "coder", map[string]any{"prompt": "second compat turn", "sessionId": sid})
				mustOK(t, res)
				reqs := e.h.Endpoint.RequestsWith("second compat turn")
				if len(reqs) != 1 || !sawEarlier(reqs[0], "first compat turn") {
					t.Fatalf("endpoint saw %+v for the second turn, want one carrying the first", reqs)
				}
				native := !strings.Contains(reqs[0].Prompt, "Context from our previous conversation")
				if native != caps.Resume {
					t.Errorf("second turn native=%v, want %v (the CLI's resume support)", native, caps.Resume)
				}
				if caps.Resume {
					if got, _ := contentMeta(t, res)["threadId"].(string); tid == "" || got != tid {
						t.Errorf("resumed threadId = %q, want %q", got, tid)
					}
				}
			})
			if caps.Resume {
				t.Run("fallback resume", func(t *testing.T) {
					sid := "compat-fb-" + id
					mustOK(t, e.call(t, "coder", map[string]any{"prompt": "remember 7 [[reply:NOTED-7]]", "sessionId": sid, "workingDirectory": t.TempDir()}))
					lease, err := e.store.Acquire(context.Background(), localOwner, sid)
					if err != nil {
						t.Fatal(err)
					}
					lease.SetConversationID("01a20000-0000-7000-8000-00000000000" + v[2:3])
					lease.Release()
					mustOK(t, e.call(t, "coder", map[string]any{"prompt": "which number? fb", "sessionId": sid}))
					reqs := e.h.Endpoint.RequestsWith("which number? fb")
					if len(reqs) != 1 || !strings.Contains(reqs[0].Prompt, "NOTED-7") {
						t.Errorf("fallback request %+v, want the last turns as context", reqs)
					}
				})
			}
			t.Run("progress", func(t *testing.T) {
				ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
				defer cancel()
				tok := "tok-compat-" + v
				res, err := e.cs.CallTool(ctx, &mcp.CallToolParams{Name: "coder",
					Arguments: map[string]any{"prompt": "progress [[shell:echo compat-step]]", "workingDirectory": t.TempDir()},
					Meta:      mcp.Meta{"progressToken": tok}})
				if err != nil {
					t.Fatal(err)
				}
				mustOK(t, res)
				if n := e.notes(tok); len(n) == 0 {
					t.Errorf("no progress notification")
				}
			})
			t.Run("codex and codex-reply", func(t *testing.T) {
				res := e.call(t, "codex", map[string]any{"prompt": "codex compat A", "cwd": t.TempDir(), "sandbox": "read-only", "approval-policy": "never"})
				if got := mustOK(t, res); got != "reply to: codex compat A" {
					t.Fatalf("codex = %q", got)
				}
				sc, _ := res.StructuredContent.(map[string]any)
				thread, _ := sc["threadId"].(string)
				if thread == "" || sc["content"] != "reply to: codex compat A" || len(sc) != 2 {
					t.Fatalf("structuredContent = %v", sc)
				}
				res = e.call(t, "codex-reply", map[string]any{"threadId": thread, "prompt": "codex compat B"})
				mustOK(t, res)
				if sc, _ := res.StructuredContent.(map[string]any); sc["threadId"] != thread {
					t.Errorf("reply threadId = %v, want %s", sc["threadId"], thread)
				}
				if reqs := e.h.Endpoint.RequestsWith("codex compat B"); len(reqs) != 1 || !sawEarlier(reqs[0], "codex compat A") {
					t.Errorf("reply request %+v, want one continuing the thread", reqs)
				}
			})
			t.Run("version_info and help", func(t *testing.T) {
				var rep struct {
					Version  string `json:"version"`
					Features []struct {
						Name      string `json:"name"`
						Supported bool   `json:"supported"`
						Since     string `json:"since"`
					} `json:"features"`
				}
				if err := json.Unmarshal([]byte(mustOK(t, e.call(t, "version_info", nil))), &rep); err != nil {
					t.Fatal(err)
				}
				if rep.Version != v || len(rep.Features) != len(cliversion.All) {
					t.Fatalf("version_info = %+v, want version %s and every feature", rep, v)
				}
				for _, f := range rep.Features {
					if f.Name == cliversion.FeatureResume && f.Supported != caps.Resume {
						t.Errorf("version_info says resume=%v, the runs show %v", f.Supported, caps.Resume)
					}
				}
				if h := mustOK(t, e.call(t, "help", nil)); !strings.Contains(h, "Codex CLI "+v) || !strings.Contains(h, cliversion.FeatureResume) {
					t.Errorf("help lacks the version and features: %q", h[max(0, len(h)-600):])
				}
				// A call needing a feature this CLI lacks names the release
				// that has it, and runs nothing.
				f, _ := e.features.Get(context.Background())
				res := e.call(t, "codex", map[string]any{"prompt": "needs approvals", "approval-policy": "on-request"})
				if !f.Supports(cliversion.FeatureApprovals) {
					mustError(t, res, "needs Codex CLI "+cliversion.KnownSince[cliversion.FeatureApprovals], "installed Codex CLI "+v)
				} else {
					mustError(t, res, "on-request")
				}
				if n := len(e.h.Endpoint.RequestsWith("needs approvals")); n != 0 {
					t.Errorf("the refused call reached the endpoint %d times", n)
				}
			})
			t.Run("cancellation", func(t *testing.T) {
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				done := make(chan error, 1)
				marker := "cancel compat " + v
				go func() {
					_, err := e.cs.CallTool(ctx, &mcp.CallToolParams{Name: "coder", Arguments: map[string]any{"prompt": marker + " [[hang]]"}})
					done <- err
				}()
				deadline := time.Now().Add(60 * time.Second)
				for len(e.h.Endpoint.RequestsWith(marker)) == 0 {
					if time.Now().After(deadline) {
						t.Fatal("the CLI never reached the endpoint")
					}
					time.Sleep(20 * time.Millisecond)
				}
				if len(harness.Leftovers(e.h.Marker)) == 0 {
					t.Fatal("no CLI process found while the call runs")
				}
				cancel()
				if err := <-done; !errors.Is(err, context.Canceled) {
					t.Errorf("CallTool error = %v, want context.Canceled", err)
				}
				waitNoLeftovers(t, e.h.Marker, 15*time.Second)
			})
		})
	}
}
