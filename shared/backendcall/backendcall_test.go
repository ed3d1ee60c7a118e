package backendcall_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/mcpfleet/mcpfleet/shared/backendcall"
	"github.com/mcpfleet/mcpfleet/shared/metrics"
	"github.com/mcpfleet/mcpfleet/shared/traces"
)

func backendCount(t *testing.T, m *metrics.Metrics, backend, op, outcome string) float64 {
	t.Helper()
	fams, err := m.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range fams {
		if f.GetName() != "mcpfleet_backend_requests_total" {
			continue
		}
	next:
		for _, mm := range f.GetMetric() {
			want := map[string]string{"backend": backend, "operation": op, "outcome": outcome}
			for _, l := range mm.GetLabel() {
				if v, ok := want[l.GetName()]; ok && v != l.GetValue() {
					continue next
				}
			}
			return mm.GetCounter().GetValue()
		}
	}
	return 0
}

func TestNilRecorderIsANoOp(t *testing.T) {
	var r *backendcall.Recorder
	ctx := context.Background()
	got, c := r.Start(ctx, "show")
	if got != ctx || c != nil {
		t.Fatalf("a nil Recorder changed the context or returned a call: %v %v", got, c)
	}
	c.SetAttributes(attribute.String("k", "v"))
	c.SetOutcome("x")
	c.End(errors.New("ignored"))
	if c.Traced() || r.WithBackend("a") != nil || r.Backend() != "" {
		t.Fatal("nil Recorder/Call is not inert")
	}
}

func TestOutcomeMetricAndSpan(t *testing.T) {
	wrappedCancel := fmt.Errorf("run query: %w", context.Canceled)
	wrappedDeadline := fmt.Errorf("send show info: %w", context.DeadlineExceeded)
	cases := []struct {
		name       string
		err        error
		setOutcome string
		outcome    string
		status     codes.Code
	}{
		{"ok", nil, "", backendcall.OK, codes.Unset},
		{"error", errors.New("connection refused"), "", backendcall.Error, codes.Error},
		{"cancelled", wrappedCancel, "", backendcall.Cancelled, codes.Error},
		{"timeout", wrappedDeadline, "", backendcall.Timeout, codes.Error},
		{"own outcome", errors.New("exit status 2"), "exit_2", "exit_2", codes.Error},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m := metrics.New("test", "v0")
			exp := tracetest.NewInMemoryExporter()
			tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
			var tr traces.Tracing
			tr.Use(tp, tp.Shutdown)
			r := backendcall.New(backendcall.Config{Metrics: m, Tracer: tr.Tracer, System: "trino", Backend: "analytics"})

			parentCtx, parent := tp.Tracer("t").Start(context.Background(), "tool.execute_query")
			ctx, c := r.Start(parentCtx, "execute_query", attribute.String("trino.query_id", "q1"))
			if !c.Traced() || backendcall.TraceID(ctx) != parent.SpanContext().TraceID().String() {
				t.Fatalf("call not traced under the parent: traced=%v id=%q", c.Traced(), backendcall.TraceID(ctx))
			}
			c.SetAttributes(attribute.String("trino.state", "FINISHED"))
			if tc.setOutcome != "" {
				c.SetOutcome(tc.setOutcome)
			}
			c.End(tc.err)
			parent.End()

			if got := backendCount(t, m, "analytics", "execute_query", tc.outcome); got != 1 {
				t.Errorf("mcpfleet_backend_requests_total{backend=analytics,operation=execute_query,outcome=%s} = %v, want 1", tc.outcome, got)
			}
			if n := testutil.CollectAndCount(m.Registry(), "mcpfleet_backend_request_duration_seconds"); n != 1 {
				t.Errorf("duration series = %d, want 1", n)
			}
			spans := exp.GetSpans()
			if len(spans) != 2 {
				t.Fatalf("spans = %d, want 2", len(spans))
			}
			s := spans[0]
			if s.Name != "trino execute_query" || s.SpanKind != trace.SpanKindClient || s.Parent.SpanID() != parent.SpanContext().SpanID() {
				t.Errorf("span = %q kind %v parent %v; want \"trino execute_query\", client, child of the tool span", s.Name, s.SpanKind, s.Parent.SpanID())
			}
			attrs := map[attribute.Key]string{}
			for _, a := range s.Attributes {
				attrs[a.Key] = a.Value.Emit()
			}
			for k, v := range map[attribute.Key]string{
				backendcall.AttrSystem: "trino", backendcall.AttrBackend: "analytics", backendcall.AttrOperation: "execute_query",
				backendcall.AttrOutcome: tc.outcome, "trino.query_id": "q1", "trino.state": "FINISHED",
			} {
				if attrs[k] != v {
					t.Errorf("attribute %s = %q, want %q", k, attrs[k], v)
				}
			}
			if s.Status.Code != tc.status {
				t.Errorf("status = %v, want %v", s.Status.Code, tc.status)
			}
		})
	}
}

// With tracing off the metric is still recorded and the context is
// returned unchanged; a provider installed later applies to the same
// Recorder (servers build their clients before Run starts tracing).
func TestTracingOffThenOn(t *testing.T) {
	m := metrics.New("test", "v0")
	var tr traces.Tracing
	r := backendcall.New(backendcall.Config{Metrics: m, Tracer: tr.Tracer, System: "haproxy"}).WithBackend("edge-1")
	ctx := context.Background()
	got, c := r.Start(ctx, "show")
	if got != ctx || c.Traced() {
		t.Fatal("a span was started with tracing off")
	}
	c.End(nil)
	if v := backendCount(t, m, "edge-1", "show", "ok"); v != 1 {
		t.Fatalf("metric with tracing off = %v, want 1", v)
	}

	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	tr.Use(tp, tp.Shutdown)
	_, c = r.Start(ctx, "set")
	c.End(nil)
	if spans := exp.GetSpans(); len(spans) != 1 || spans[0].Name != "haproxy set" {
		t.Fatalf("after Use: spans %v, want one \"haproxy set\"", spans)
	}
	if err := tr.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	if tr.On() {
		t.Fatal("tracing still on after Shutdown")
	}
}

func TestDefaultBackendIsTheSystem(t *testing.T) {
	r := backendcall.New(backendcall.Config{System: "codex"})
	if r.Backend() != "codex" {
		t.Fatalf("backend = %q, want codex", r.Backend())
	}
	if backendcall.TraceID(context.Background()) != "" {
		t.Fatal("TraceID without a span is not empty")
	}
}

func BenchmarkCallTracingOff(b *testing.B) {
	m := metrics.New("test", "v0")
	var tr traces.Tracing
	r := backendcall.New(backendcall.Config{Metrics: m, Tracer: tr.Tracer, System: "haproxy"})
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		_, c := r.Start(ctx, "show")
		c.End(nil)
	}
}
