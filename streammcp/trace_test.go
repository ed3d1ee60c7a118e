package main

import (
	"bytes"
	"net/http"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mcpfleet/mcpfleet/shared/e2e"
	"github.com/mcpfleet/mcpfleet/shared/otlptest"
)

// TestTraceOfKafkaCalls: the built binary over stdio, exporting to an OTLP
// receiver, with the caller's traceparent in _meta. A tool call is the chain
// mcp.tools/call → tool.describe_consumer_group → kafka <ApiKey>, and a
// resource read is mcp.resources/read → kafka Metadata, each in the trace
// its caller started; the Kafka spans are client spans naming the cluster
// and the broker. A cluster that cannot be reached gives an error span.
func TestTraceOfKafkaCalls(t *testing.T) {
	_, brokers := seededCluster(t)
	bin := e2e.Build(t, ".")
	rcv := otlptest.Start(t)
	const (
		callTrace, callParent = "6bf92f3577b34da6a3ce929d0e0e4736", "20f067aa0ba902b7"
		readTrace, readParent = "7bf92f3577b34da6a3ce929d0e0e4736", "30f067aa0ba902b7"
	)
	in := initLines +
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"describe_consumer_group","arguments":{"group_id":"orders-processor"},"_meta":{"traceparent":"00-` + callTrace + `-` + callParent + `-01"}}}` + "\n" +
		`{"jsonrpc":"2.0","id":3,"method":"resources/read","params":{"uri":"stream-mcp://overview","_meta":{"traceparent":"00-` + readTrace + `-` + readParent + `-01"}}}` + "\n"
	out := runStdio(t, bin, in, "STREAM_BROKERS="+brokers, "OTEL_EXPORTER_OTLP_ENDPOINT="+rcv.URL)
	if !strings.Contains(out, `\"lag\": 5000`) || !strings.Contains(out, `broker_count`) {
		t.Fatalf("the call or the read failed:\n%s", out)
	}
	spans := rcv.Spans() // the process has exited: everything was flushed
	addrs := strings.Split(brokers, ",")

	kafkaChild := func(t *testing.T, parent otlptest.Span, trace string) []otlptest.Span {
		t.Helper()
		var kids []otlptest.Span
		for _, s := range spans {
			if s.ParentSpanID == parent.SpanID && s.TraceID == trace && strings.HasPrefix(s.Name, "kafka ") {
				kids = append(kids, s)
			}
		}
		if len(kids) == 0 {
			t.Fatalf("no kafka span below %s:\n%s", parent.Name, otlptest.Tree(spans))
		}
		for _, s := range kids {
			api := strings.TrimPrefix(s.Name, "kafka ")
			if s.Kind != "client" || s.StatusCode == "error" || s.Attrs["mcpfleet.backend.system"] != "kafka" ||
				s.Attrs["mcpfleet.backend.name"] != "default" || s.Attrs["mcpfleet.backend.operation"] != api ||
				s.Attrs["mcpfleet.backend.outcome"] != "ok" || !slices.Contains(addrs, s.Attrs["kafka.broker"]) || s.Attrs["kafka.request"] == "" {
				t.Errorf("span %s: kind %s status %s attributes %v (brokers %v)", s.Name, s.Kind, s.StatusCode, s.Attrs, addrs)
			}
		}
		return kids
	}

	t.Run("tool call", func(t *testing.T) {
		chain, ok := otlptest.Path(spans, "mcp.tools/call", "tool.describe_consumer_group")
		if !ok {
			t.Fatalf("no mcp.tools/call → tool.describe_consumer_group chain:\n%s", otlptest.Tree(spans))
		}
		if chain[0].TraceID != callTrace || chain[0].ParentSpanID != callParent {
			t.Errorf("the call is in trace %s under %s, want the caller's %s under %s", chain[0].TraceID, chain[0].ParentSpanID, callTrace, callParent)
		}
		var names []string
		for _, s := range kafkaChild(t, chain[1], callTrace) {
			names = append(names, s.Name)
		}
		// Describing a group needs its coordinator, its members and its offsets.
		for _, want := range []string{"kafka FindCoordinator", "kafka OffsetFetch"} {
			if !slices.Contains(names, want) {
				t.Errorf("below tool.describe_consumer_group: %v, want %s among them", names, want)
			}
		}
		if chain[1].Resource["service.name"] != "streammcp" {
			t.Errorf("service.name %q, want streammcp", chain[1].Resource["service.name"])
		}
	})
	t.Run("resource read", func(t *testing.T) {
		var read *otlptest.Span
		for _, s := range otlptest.Named(spans, "mcp.resources/read") {
			if s.TraceID == readTrace && s.ParentSpanID == readParent {
				read = &s
			}
		}
		if read == nil {
			t.Fatalf("no mcp.resources/read span in the caller's trace %s under %s:\n%s", readTrace, readParent, otlptest.Tree(spans))
		}
		var names []string
		for _, s := range kafkaChild(t, *read, readTrace) {
			names = append(names, s.Name)
		}
		if !slices.Contains(names, "kafka Metadata") {
			t.Errorf("below mcp.resources/read: %v, want kafka Metadata among them", names)
		}
	})
	t.Run("broker down", func(t *testing.T) {
		dead := strconv.Itoa(e2e.FreePort(t)) // nothing listens there
		rcv := otlptest.Start(t)
		in := initLines + `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"describe_consumer_group","arguments":{"group_id":"orders-processor"},"_meta":{"traceparent":"00-` + callTrace + `-` + callParent + `-01"}}}` + "\n"
		out := runStdio(t, bin, in, "STREAM_BROKERS=127.0.0.1:"+dead, "STREAM_TIMEOUT=2s", "OTEL_EXPORTER_OTLP_ENDPOINT="+rcv.URL)
		if !strings.Contains(out, `"isError":true`) {
			t.Fatalf("the call with the cluster down did not fail:\n%s", out)
		}
		spans := rcv.Spans()
		chain, ok := otlptest.Path(spans, "mcp.tools/call", "tool.describe_consumer_group")
		if !ok || chain[0].TraceID != callTrace {
			t.Fatalf("no mcp.tools/call → tool.describe_consumer_group chain in trace %s:\n%s", callTrace, otlptest.Tree(spans))
		}
		var failed []otlptest.Span
		for _, s := range spans {
			if s.ParentSpanID == chain[1].SpanID && strings.HasPrefix(s.Name, "kafka ") {
				failed = append(failed, s)
			}
		}
		if len(failed) == 0 {
			t.Fatalf("no kafka span below the failed call:\n%s", otlptest.Tree(spans))
		}
		for _, s := range failed {
			if s.StatusCode != "error" || s.Attrs["mcpfleet.backend.outcome"] != "error" || s.Attrs["kafka.broker"] != "127.0.0.1:"+dead ||
				!strings.Contains(s.StatusMessage, "connect to Kafka broker 127.0.0.1:"+dead) {
				t.Errorf("span %s: status %s %q attributes %v", s.Name, s.StatusCode, s.StatusMessage, s.Attrs)
			}
		}
		if chain[1].StatusCode != "error" {
			t.Errorf("tool span status %s, want error", chain[1].StatusCode)
		}
	})
}

// TestTraceFromHTTPHeader: over streamable HTTP, a request with a W3C
// traceparent header and no _meta continues the header's trace.
func TestTraceFromHTTPHeader(t *testing.T) {
	_, brokers := seededCluster(t)
	bin := e2e.Build(t, ".")
	rcv := otlptest.Start(t)
	const trace, parent = "8bf92f3577b34da6a3ce929d0e0e4736", "40f067aa0ba902b7"
	srv := e2e.StartHTTP(t, bin, []string{"STREAM_BROKERS=" + brokers, "OTEL_EXPORTER_OTLP_ENDPOINT=" + rcv.URL})
	hc := &http.Client{Transport: headerTransport{"traceparent": "00-" + trace + "-" + parent + "-01"}}
	cs := e2e.Connect(t, srv.MCPURL(), hc)
	// A tool call, not a resource read: over HTTP the watcher behind the
	// metrics gauges may already be computing the report a read would join,
	// and a joined computation's Kafka requests belong to the watcher's trace.
	if res := e2e.CallTool(t, cs, "list_brokers", map[string]any{}); res.IsError {
		t.Fatalf("list_brokers: %v", res.Content)
	}
	// The batch exporter sends within its interval; stopping flushes it.
	if err := srv.Stop(); err != nil {
		t.Logf("stop: %v", err)
	}
	spans := rcv.WaitFor(t, 30*time.Second, func(s []otlptest.Span) bool { return otlptest.Has(s, "tool.list_brokers") })
	for _, s := range otlptest.Named(spans, "mcp.tools/call") {
		if s.TraceID == trace && s.ParentSpanID == parent {
			if _, ok := otlptest.Path(spans, "mcp.tools/call", "tool.list_brokers", "kafka Metadata"); !ok {
				t.Errorf("no tool.list_brokers → kafka Metadata below mcp.tools/call:\n%s", otlptest.Tree(spans))
			}
			return
		}
	}
	t.Errorf("no mcp.tools/call in the header's trace %s under %s:\n%s", trace, parent, otlptest.Tree(spans))
}

type headerTransport map[string]string

func (h headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	for k, v := range h {
		r.Header.Set(k, v)
	}
	return http.DefaultTransport.RoundTrip(r)
}

const initLines = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}` + "\n" +
	`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n"

// runStdio runs the binary on in until its input ends (it flushes its
// spans before exiting) and returns stdout.
func runStdio(t *testing.T, bin, in string, env ...string) string {
	t.Helper()
	cmd := exec.Command(bin)
	cmd.Env = append([]string{"PATH=/usr/bin:/bin", "HOME=" + t.TempDir()}, env...)
	cmd.Stdin = strings.NewReader(in)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("streammcp: %v\nstdout %s\nstderr %s", err, stdout.String(), stderr.String())
	}
	return stdout.String()
}
