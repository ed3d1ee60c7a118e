package main

import (
	"bytes"
	"os/exec"
	"strings"
	"testing"

	"github.com/mcpfleet/mcpfleet/proxymcp/internal/haproxytest"
	"github.com/mcpfleet/mcpfleet/shared/e2e"
	"github.com/mcpfleet/mcpfleet/shared/otlptest"
)

// TestHAProxyRequestSpans: with OTLP export on, each runtime API command is
// a client span "haproxy <verb>" below the tool's span, in the trace the
// caller's traceparent (_meta) started, carrying the command, the backend
// and the outcome; a command HAProxy refuses is an error span with outcome
// refused. The built binary runs over stdio and flushes when input ends.
func TestHAProxyRequestSpans(t *testing.T) {
	h := haproxytest.Run(t, haproxytest.Options{})
	bin := e2e.Build(t, ".")
	rcv := otlptest.Start(t)
	const trace, parent = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"
	in := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}` + "\n" +
		`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n" +
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"show_info","arguments":{},"_meta":{"traceparent":"00-` + trace + `-` + parent + `-01"}}}` + "\n" +
		`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"get_server_weight","arguments":{"backend":"be_app","server":"nosuch"}}}` + "\n"
	cmd := exec.Command(bin)
	cmd.Env = append(haproxyEnv(h, "unix"), "PATH=/usr/bin:/bin", "HOME="+t.TempDir(), "OTEL_EXPORTER_OTLP_ENDPOINT="+rcv.URL)
	cmd.Stdin = strings.NewReader(in)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil || strings.Count(stdout.String(), `"id":`) < 3 {
		t.Fatalf("proxymcp: %v\nstdout %s\nstderr %s", err, stdout.String(), stderr.String())
	}
	spans := rcv.Spans() // the process has exited: everything was flushed
	chain, ok := otlptest.Path(spans, "mcp.tools/call", "tool.show_info", "haproxy show")
	if !ok {
		t.Fatalf("no mcp.tools/call → tool.show_info → haproxy show chain:\n%s", otlptest.Tree(spans))
	}
	be := chain[2]
	if chain[0].TraceID != trace || chain[0].ParentSpanID != parent {
		t.Errorf("the call did not continue the caller's trace: trace %s parent %s", chain[0].TraceID, chain[0].ParentSpanID)
	}
	for k, v := range map[string]string{"haproxy.command": "show info", "mcpfleet.backend.system": "haproxy", "mcpfleet.backend.name": "haproxy",
		"mcpfleet.backend.operation": "show", "mcpfleet.backend.outcome": "ok"} {
		if be.Attrs[k] != v {
			t.Errorf("span %s: %s = %q, want %q (attributes %v)", be.Name, k, be.Attrs[k], v, be.Attrs)
		}
	}
	if be.Kind != "client" || be.StatusCode == "error" {
		t.Errorf("span %s: kind %s status %s", be.Name, be.Kind, be.StatusCode)
	}
	refused, ok := otlptest.Path(spans, "tool.get_server_weight", "haproxy get")
	if !ok {
		t.Fatalf("no tool.get_server_weight → haproxy get chain:\n%s", otlptest.Tree(spans))
	}
	if s := refused[1]; s.Attrs["mcpfleet.backend.outcome"] != "refused" || s.StatusCode != "error" || !strings.Contains(s.StatusMessage, "nosuch") {
		t.Errorf("refused command span: outcome %q status %s %q", s.Attrs["mcpfleet.backend.outcome"], s.StatusCode, s.StatusMessage)
	}
}
