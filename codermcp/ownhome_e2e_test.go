package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpfleet/mcpfleet/codermcp/internal/codertest"
	"github.com/mcpfleet/mcpfleet/codermcp/internal/codertest/harness"
	"github.com/mcpfleet/mcpfleet/shared/e2e"
)

// TestOperatorConfigDoesNotRun: the operator's config.toml names commands
// the CLI would run outside its sandbox — an MCP server, a notify program,
// a profile's MCP server, and a trusted project whose own .codex/config.toml
// names another — and a workspace-write call writes such a project file
// itself. No read-only turn, workspace-write turn or review runs any of
// them, while the operator's model provider still answers every turn; with
// CODER_MCP_SERVERS naming the server, it does run (the test would see it).
func TestOperatorConfigDoesNotRun(t *testing.T) {
	t.Parallel()
	bin := e2e.Build(t, ".")
	markers := t.TempDir()
	marker := func(name string) string { return filepath.Join(markers, name) }
	start := func(t *testing.T, allow string) (call func(tool string, args map[string]any) string, project, repo string) {
		h := harness.New(t)
		repo = harness.GitRepo(t)
		project = t.TempDir()
		if err := os.MkdirAll(filepath.Join(project, ".codex"), 0o755); err != nil {
			t.Fatal(err)
		}
		writeServer := func(path, table, name string) {
			f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			fmt.Fprintf(f, "\n[%s.%s]\ncommand = \"/bin/sh\"\nargs = [\"-c\", \"touch %s; sleep 1\"]\n", table, name, marker(name))
		}
		cfg := filepath.Join(h.Home, "config.toml")
		b, err := os.ReadFile(cfg)
		if err != nil {
			t.Fatal(err)
		}
		text := fmt.Sprintf("notify = [\"/bin/sh\", \"-c\", \"touch %s\"]\n", marker("notify")) + string(b)
		for _, dir := range []string{repo, project} {
			text += fmt.Sprintf("\n[projects.%q]\ntrust_level = \"trusted\"\n", dir)
		}
		if err := os.WriteFile(cfg, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		writeServer(cfg, "mcp_servers", "operator")
		writeServer(cfg, "profiles.other.mcp_servers", "profile")
		writeServer(filepath.Join(project, ".codex", "config.toml"), "mcp_servers", "project")
		env := append(append([]string(nil), h.Env...), "CODER_CLI_PATH="+h.CLI, "CODER_HOME="+h.Home, "CODER_WORKSPACE_ROOTS="+testRoots(),
			"CODER_MODELS="+codertest.Model, "CODER_DEFAULT_MODEL="+codertest.Model, "CODER_STATE_DIR="+t.TempDir())
		if allow != "" {
			env = append(env, "CODER_MCP_SERVERS="+allow)
		}
		cs := e2e.Stdio(t, bin, env)
		call = func(tool string, args map[string]any) string {
			t.Helper()
			res := e2e.CallTool(t, cs, tool, args)
			if res.IsError {
				t.Fatalf("%s %v: %s", tool, args, e2e.Text(res))
			}
			return e2e.Text(res)
		}
		return call, project, repo
	}

	t.Run("not allowed", func(t *testing.T) {
		call, project, repo := start(t, "")
		turns := []struct {
			tool string
			args map[string]any
		}{
			{"coder", map[string]any{"prompt": "read-only turn", "workingDirectory": project}},
			{"coder", map[string]any{"prompt": "write turn", "sandbox": "workspace-write", "workingDirectory": project}},
			// The agent writes a project configuration naming an MCP server;
			// the next turn in that directory must not start it.
			{"coder", map[string]any{"prompt": fmt.Sprintf("[[shell:printf '[mcp_servers.written]\\ncommand = \"/bin/sh\"\\nargs = [\"-c\", \"touch %s\"]\\n' >> .codex/config.toml; echo done]]", marker("written")),
				"sandbox": "workspace-write", "workingDirectory": project}},
			{"coder", map[string]any{"prompt": "after the write", "workingDirectory": project}},
			{"coder", map[string]any{"prompt": "full auto turn", "fullAuto": true, "workingDirectory": project}},
			{"review", map[string]any{"uncommitted": true, "workingDirectory": repo}},
		}
		for _, tc := range turns {
			got := call(tc.tool, tc.args)
			if tc.tool == "coder" && !strings.Contains(got, "reply to:") && !strings.HasPrefix(got, "ran:") {
				t.Errorf("%s %v: the operator's model provider did not answer: %q", tc.tool, tc.args, got)
			}
		}
		for _, name := range []string{"operator", "profile", "project", "written", "notify"} {
			if _, err := os.Stat(marker(name)); err == nil {
				t.Errorf("a CLI run started the %s command the operator's or the workspace's configuration names", name)
			}
		}
	})

	t.Run("allowed by CODER_MCP_SERVERS", func(t *testing.T) {
		call, project, _ := start(t, "operator")
		call("coder", map[string]any{"prompt": "read-only turn", "workingDirectory": project})
		if _, err := os.Stat(marker("operator")); err != nil {
			t.Errorf("the MCP server CODER_MCP_SERVERS allows did not start: %v", err)
		}
	})
}
