package main

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/mcpfleet/mcpfleet/shared/e2e"
	"github.com/mcpfleet/mcpfleet/shared/otlptest"
)

// One execute_query over stdio, with the caller's traceparent in _meta,
// exported to an OTLP receiver: the span tree is mcp.tools/call →
// tool.execute_query → trino execute_query in the caller's trace, the
// Trino span names the query id and its final state, and the engine got
// the trace id as X-Trino-Trace-Token.
func TestTraceOfOneQuery(t *testing.T) {
	bin := e2e.Build(t, ".")
	rcv := otlptest.Start(t)
	const trace, parent = "5bf92f3577b34da6a3ce929d0e0e4736", "10f067aa0ba902b7"
	sqlText := fmt.Sprintf("SELECT %d AS traced", time.Now().UnixNano())
	in := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}` + "\n" +
		`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n" +
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"execute_query","arguments":{"query":"` + sqlText + `"},"_meta":{"traceparent":"00-` + trace + `-` + parent + `-01"}}}` + "\n"
	cmd := exec.Command(bin)
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir(), "OTEL_EXPORTER_OTLP_ENDPOINT=" + rcv.URL}, engineEnv(t)...)
	cmd.Stdin = strings.NewReader(in)
	out, err := cmd.Output()
	if err != nil || !strings.Contains(string(out), `"traced"`) {
		t.Fatalf("run: %v; stdout %s", err, out)
	}
	spans := rcv.Spans() // flushed before the process exited
	chain, ok := otlptest.Path(spans, "mcp.tools/call", "tool.execute_query", "trino execute_query")
	if !ok {
		t.Fatalf("no mcp.tools/call → tool.execute_query → trino execute_query chain:\n%s", otlptest.Tree(spans))
	}
	if chain[0].TraceID != trace || chain[0].ParentSpanID != parent {
		t.Errorf("the request span is in trace %s under %s, want the caller's %s under %s", chain[0].TraceID, chain[0].ParentSpanID, trace, parent)
	}
	q := chain[2]
	if q.Kind != "client" || q.Attrs["trino.query_id"] == "" || q.Attrs["trino.state"] != "FINISHED" || q.Attrs["mcpfleet.backend.outcome"] != "ok" {
		t.Errorf("trino span %s %v", q.Kind, q.Attrs)
	}
	if q.Resource["service.name"] != "sqlmcp" {
		t.Errorf("service.name %q, want sqlmcp", q.Resource["service.name"])
	}
	var token string
	for _, r := range trino.Statements() {
		if r.Body == sqlText {
			token = r.Header.Get("X-Trino-Trace-Token")
		}
	}
	if token != trace {
		t.Errorf("X-Trino-Trace-Token %q, want the trace id %s", token, trace)
	}
}
