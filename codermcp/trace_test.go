package main

import (
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/mcpfleet/mcpfleet/shared/e2e"
	"github.com/mcpfleet/mcpfleet/shared/otlptest"

	"github.com/mcpfleet/mcpfleet/codermcp/internal/codertest"
	"github.com/mcpfleet/mcpfleet/codermcp/internal/codertest/harness"
)

// One coder turn over stdio on the real CLI, with the caller's traceparent
// in _meta, exported to an OTLP receiver: mcp.tools/call → tool.coder →
// codex exec in the caller's trace, the CLI span with its thread id and
// exit status class.
func TestTraceOfOneTurn(t *testing.T) {
	t.Parallel()
	h := harness.New(t)
	bin := e2e.Build(t, ".")
	rcv := otlptest.Start(t)
	const trace, parent = "6bf92f3577b34da6a3ce929d0e0e4736", "20f067aa0ba902b7"
	in := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}` + "\n" +
		`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n" +
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"coder","arguments":{"prompt":"traced [[reply:traced turn]]"},"_meta":{"traceparent":"00-` + trace + `-` + parent + `-01"}}}` + "\n"
	cmd := exec.Command(bin)
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir(), "OTEL_EXPORTER_OTLP_ENDPOINT=" + rcv.URL,
		"MCP_APPROVAL=none", "MCP_AUDIT_LOG=off", "MCP_SHUTDOWN_TIMEOUT=2m",
		"CODER_CLI_PATH=" + h.CLI, "CODER_HOME=" + h.Home, "CODER_WORKSPACE_ROOTS=" + testRoots(), "CODER_MODELS=" + codertest.Model, "CODER_DEFAULT_MODEL=" + codertest.Model}, h.Env...)
	cmd.Dir = t.TempDir()
	cmd.Stdin = strings.NewReader(in)
	out, err := cmd.Output()
	if err != nil || !strings.Contains(string(out), "traced turn") {
		t.Fatalf("run: %v; stdout %s", err, out)
	}
	spans := rcv.Spans() // flushed before the process exited
	chain, ok := otlptest.Path(spans, "mcp.tools/call", "tool.coder", "codex exec")
	if !ok {
		t.Fatalf("no mcp.tools/call → tool.coder → codex exec chain:\n%s", otlptest.Tree(spans))
	}
	if chain[0].TraceID != trace || chain[0].ParentSpanID != parent {
		t.Errorf("the request span is in trace %s under %s, want the caller's %s under %s", chain[0].TraceID, chain[0].ParentSpanID, trace, parent)
	}
	run := chain[2]
	if run.Kind != "client" || run.Attrs["codex.thread_id"] == "" || run.Attrs["codex.exit_class"] != "ok" || run.Attrs["process.exit.code"] != "0" {
		t.Errorf("codex span %s %v", run.Kind, run.Attrs)
	}
}
