package serve_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/mcpfleet/mcpfleet/shared/e2e"
	"github.com/mcpfleet/mcpfleet/shared/otlptest"
)

// A caller's trace: the client's span that sent the request.
const (
	callerTrace = "4bf92f3577b34da6a3ce929d0e0e4736"
	callerSpan  = "00f067aa0ba902b7"
	headerTrace = "0af7651916cd43dd8448eb211c80319c"
	headerSpan  = "b7ad6b7169203331"
)

func traceparent(trace, span string) string { return "00-" + trace + "-" + span + "-01" }

// checkCallTree asserts mcp.tools/call → tool.echo, the request span a
// server span continuing trace/parent, in one trace.
func checkCallTree(t *testing.T, spans []otlptest.Span, trace, parent string) {
	t.Helper()
	chain, ok := otlptest.Path(spans, "mcp.tools/call", "tool.echo")
	if !ok {
		t.Fatalf("no mcp.tools/call → tool.echo chain; spans:\n%s", otlptest.Tree(spans))
	}
	req, tool := chain[0], chain[1]
	if req.TraceID != trace || req.ParentSpanID != parent {
		t.Errorf("request span trace %s parent %s, want the caller's trace %s parent %s", req.TraceID, req.ParentSpanID, trace, parent)
	}
	if req.Kind != "server" || tool.Kind != "internal" {
		t.Errorf("kinds: request %s, tool %s; want server, internal", req.Kind, tool.Kind)
	}
	if req.Attrs["mcp.method"] != "tools/call" || req.Attrs["mcp.tool.name"] != "echo" || tool.Attrs["mcp.tool.name"] != "echo" {
		t.Errorf("attributes: request %v, tool %v", req.Attrs, tool.Attrs)
	}
}

// Over stdio the trace continues from traceparent in the request's _meta;
// the resource comes from OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES;
// the spans are flushed when input ends; the handler's log line names the
// trace and span.
func TestTracesOverStdioContinueMetaTraceparent(t *testing.T) {
	bin := echoserver(t)
	rcv := otlptest.Start(t)
	in := stdioInitLines +
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"},"_meta":{"traceparent":"` + traceparent(callerTrace, callerSpan) + `"}}}` + "\n"
	out, errOut, code := runBin(t, bin, []string{
		"LOG_LEVEL=debug", "LOG_FORMAT=json",
		"OTEL_EXPORTER_OTLP_ENDPOINT=" + rcv.URL,
		"OTEL_SERVICE_NAME=echo-traced",
		"OTEL_RESOURCE_ATTRIBUTES=deployment.environment=test,service.namespace=fleet%20a",
	}, in)
	if code != 0 || !strings.Contains(out, `"text":"hi"`) {
		t.Fatalf("exit %d; stdout %s; stderr %s", code, out, errOut)
	}
	// The process has exited: everything was flushed before it did.
	spans := rcv.Spans()
	checkCallTree(t, spans, callerTrace, callerSpan)
	if !otlptest.Has(spans, "mcp.initialize") {
		t.Errorf("no mcp.initialize span:\n%s", otlptest.Tree(spans))
	}
	res := spans[0].Resource
	for k, v := range map[string]string{"service.name": "echo-traced", "service.version": "(devel)", "deployment.environment": "test", "service.namespace": "fleet a"} {
		if res[k] != v {
			t.Errorf("resource %s = %q, want %q (resource %v)", k, res[k], v, res)
		}
	}
	tool := otlptest.Named(spans, "tool.echo")[0]
	var logged bool
	for _, line := range strings.Split(errOut, "\n") {
		if strings.Contains(line, `"msg":"echo called"`) {
			logged = true
			if !strings.Contains(line, `"trace_id":"`+callerTrace+`"`) || !strings.Contains(line, `"span_id":"`+tool.SpanID+`"`) {
				t.Errorf("the handler's log line does not name trace %s and span %s: %s", callerTrace, tool.SpanID, line)
			}
		}
	}
	if !logged {
		t.Errorf("no \"echo called\" line on stderr: %s", errOut)
	}
	if strings.Contains(out, "trace_id") {
		t.Errorf("trace ids leaked onto stdout: %s", out)
	}
}

const stdioInitLines = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}` + "\n" +
	`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n"

// Over HTTP the trace continues from the traceparent header; a traceparent
// in _meta wins over the header (the MCP client put it on this request).
func TestTracesOverHTTPContinueHeaderTraceparent(t *testing.T) {
	bin := echoserver(t)
	rcv := otlptest.Start(t)
	srv := e2e.StartHTTP(t, bin, []string{"OTEL_EXPORTER_OTLP_ENDPOINT=" + rcv.URL, "OTEL_BSP_SCHEDULE_DELAY=100"})
	resp, body := e2e.Post(t, srv.MCPURL(), strings.TrimSpace(strings.SplitN(stdioInitLines, "\n", 2)[0]))
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("initialize: %d %s", resp.StatusCode, body)
	}
	sess := resp.Header.Get("Mcp-Session-Id")
	call := func(id, meta string, header string) {
		msg := `{"jsonrpc":"2.0","id":` + id + `,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"}` + meta + `}}`
		resp, body := e2e.Post(t, srv.MCPURL(), msg, "Mcp-Session-Id", sess, "traceparent", header)
		if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), `"text":"hi"`) {
			t.Fatalf("tools/call: %d %s", resp.StatusCode, body)
		}
	}
	call("2", "", traceparent(headerTrace, headerSpan))
	spans := rcv.WaitFor(t, 20*time.Second, func(s []otlptest.Span) bool { return otlptest.Has(s, "tool.echo") })
	checkCallTree(t, spans, headerTrace, headerSpan)

	call("3", `,"_meta":{"traceparent":"`+traceparent(callerTrace, callerSpan)+`"}`, traceparent(headerTrace, headerSpan))
	spans = rcv.WaitFor(t, 20*time.Second, func(s []otlptest.Span) bool { return len(otlptest.Named(s, "tool.echo")) == 2 })
	var fromMeta []otlptest.Span
	for _, s := range spans {
		if s.TraceID == callerTrace {
			fromMeta = append(fromMeta, s)
		}
	}
	checkCallTree(t, fromMeta, callerTrace, callerSpan)
}

// Without an endpoint nothing is exported and no exporter starts, whatever
// else is set; OTEL_SDK_DISABLED and OTEL_TRACES_EXPORTER=none turn an
// endpoint off.
func TestNoExporterWithoutEndpoint(t *testing.T) {
	bin := echoserver(t)
	rcv := otlptest.Start(t)
	call := stdioInitLines + `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"},"_meta":{"traceparent":"` + traceparent(callerTrace, callerSpan) + `"}}}` + "\n"
	for _, tc := range []struct {
		name string
		env  []string
	}{
		{"unset", []string{"OTEL_SERVICE_NAME=x", "OTEL_TRACES_SAMPLER=always_on", "OTEL_RESOURCE_ATTRIBUTES=a=b"}},
		{"sdk disabled", []string{"OTEL_EXPORTER_OTLP_ENDPOINT=" + rcv.URL, "OTEL_SDK_DISABLED=true"}},
		{"exporter none", []string{"OTEL_EXPORTER_OTLP_ENDPOINT=" + rcv.URL, "OTEL_TRACES_EXPORTER=none"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, errOut, code := runBin(t, bin, append([]string{"LOG_LEVEL=debug"}, tc.env...), call)
			if code != 0 || !strings.Contains(out, `"text":"hi"`) {
				t.Fatalf("exit %d; stdout %s; stderr %s", code, out, errOut)
			}
			if strings.Contains(errOut, "exporting OpenTelemetry traces") || strings.Contains(errOut, "trace_id") {
				t.Errorf("tracing was started: %s", errOut)
			}
			if n := rcv.Requests(); n != 0 {
				t.Errorf("the receiver got %d export requests", n)
			}
		})
	}
}

// A bad OTEL_* value is a configuration error (exit 2) naming the variable
// and what is accepted, every problem at once.
func TestBadTracingConfiguration(t *testing.T) {
	bin := echoserver(t)
	_, errOut, code := runBin(t, bin, []string{
		"OTEL_EXPORTER_OTLP_ENDPOINT=localhost:4318", "OTEL_EXPORTER_OTLP_PROTOCOL=thrift",
		"OTEL_TRACES_SAMPLER=sometimes", "OTEL_TRACES_SAMPLER_ARG=2", "OTEL_RESOURCE_ATTRIBUTES=novalue",
		"OTEL_EXPORTER_OTLP_HEADERS=api-key",
	}, "")
	if code != 2 {
		t.Fatalf("exit %d, want 2; stderr %s", code, errOut)
	}
	for _, want := range []string{"OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_PROTOCOL", "http/protobuf, http/json, grpc",
		"OTEL_TRACES_SAMPLER", "OTEL_RESOURCE_ATTRIBUTES", "OTEL_EXPORTER_OTLP_HEADERS"} {
		if !strings.Contains(errOut, want) {
			t.Errorf("stderr does not mention %q:\n%s", want, errOut)
		}
	}
}
