package cli

import (
	"context"
	"strings"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/mcpfleet/mcpfleet/shared/backendcall"
	"github.com/mcpfleet/mcpfleet/shared/metrics"
	"github.com/mcpfleet/mcpfleet/shared/traces"
)

// Each CLI run is one back-end call: a "codex exec" client span below the
// caller's span with the thread id and the exit status class, and one
// mcpfleet_backend_requests_total count with the class as outcome. A real
// turn on the real CLI, a run cancelled before it starts and a CLI that
// cannot be started.
func TestRunIsTracedAndCounted(t *testing.T) {
	m := metrics.New("codermcp", "test")
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	var tr traces.Tracing
	tr.Use(tp, tp.Shutdown)
	rec := backendcall.New(backendcall.Config{Metrics: m, Tracer: tr.Tracer, System: "codex"})

	c, _, started := e2eClient(t)
	c.Recorder = rec
	missing := &Client{Path: "/nonexistent/codex", Recorder: rec}
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()

	cases := []struct {
		name   string
		client *Client
		ctx    context.Context
		class  string
		thread bool
	}{
		{"turn", c, context.Background(), RunOK, true},
		{"cancelled before start", c, cancelled, RunCancelled, false},
		{"cli missing", missing, context.Background(), RunError, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			exp.Reset()
			before := started.Load()
			ctx, parent := tp.Tracer("test").Start(tc.ctx, "tool.coder")
			cmd := Command{Path: tc.client.Path, Args: []string{"exec", "--json", "--skip-git-repo-check", "say hi"}, Dir: t.TempDir(), JSON: true}
			if tc.client == c {
				caps, err := c.Caps(context.Background())
				if err != nil {
					t.Fatal(err)
				}
				if cmd, err = c.ExecCommand(caps, ExecRequest{Prompt: "say hi", Dir: t.TempDir()}); err != nil {
					t.Fatal(err)
				}
			}
			res, err := tc.client.Run(ctx, cmd, nil)
			parent.End()
			if (err == nil) != (tc.class == RunOK) {
				t.Fatalf("run error %v, want class %s", err, tc.class)
			}
			var span sdktrace.ReadOnlySpan
			for _, s := range exp.GetSpans().Snapshots() {
				if s.Name() == "codex exec" {
					span = s
				}
			}
			if span == nil || span.Parent().SpanID() != parent.SpanContext().SpanID() {
				t.Fatalf("no \"codex exec\" span below the tool span: %v", exp.GetSpans())
			}
			attrs := map[string]string{}
			for _, a := range span.Attributes() {
				attrs[string(a.Key)] = a.Value.Emit()
			}
			if attrs["codex.exit_class"] != tc.class || attrs["mcpfleet.backend.outcome"] != tc.class || attrs["mcpfleet.backend.operation"] != "exec" {
				t.Errorf("attributes %v, want exit class and outcome %s, operation exec", attrs, tc.class)
			}
			if tc.thread {
				if attrs["codex.thread_id"] == "" || attrs["codex.thread_id"] != res.ThreadID || attrs["process.exit.code"] != "0" {
					t.Errorf("attributes %v: want thread id %q and exit code 0", attrs, res.ThreadID)
				}
			}
			if tc.class == RunCancelled && started.Load() != before {
				t.Errorf("a cancelled run started the CLI")
			}
			if n := counter(t, m, tc.class); n < 1 {
				t.Errorf("mcpfleet_backend_requests_total{operation=exec,outcome=%s} = %v, want >= 1", tc.class, n)
			}
		})
	}
}

// counter returns the backend counter series of outcome through the
// registry's text output (the CounterVec is not exported).
func counter(t *testing.T, m *metrics.Metrics, outcome string) float64 {
	t.Helper()
	fams, err := m.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range fams {
		if f.GetName() != "mcpfleet_backend_requests_total" {
			continue
		}
		for _, mm := range f.GetMetric() {
			var s []string
			for _, l := range mm.GetLabel() {
				s = append(s, l.GetName()+"="+l.GetValue())
			}
			if strings.Contains(strings.Join(s, ","), "outcome="+outcome) && strings.Contains(strings.Join(s, ","), "operation=exec") && strings.Contains(strings.Join(s, ","), "backend=codex") {
				return mm.GetCounter().GetValue()
			}
		}
	}
	return 0
}
