package engine_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/mcpfleet/mcpfleet/shared/backendcall"
	"github.com/mcpfleet/mcpfleet/shared/metrics"
	"github.com/mcpfleet/mcpfleet/shared/traces"

	"github.com/mcpfleet/mcpfleet/sqlmcp/internal/engine"
)

// statementHeader returns the headers of the POST /v1/statement that
// carried sqlText.
func statementHeader(t *testing.T, sqlText string) http.Header {
	t.Helper()
	for _, r := range shared.Statements() {
		if r.Body == sqlText {
			return r.Header
		}
	}
	t.Fatalf("the engine never received %q", sqlText)
	return nil
}

// Each query is one back-end call: a "trino <tool>" client span below the
// caller's span with the query id, the final state and the engine's own
// times, the caller's trace id sent as X-Trino-Trace-Token (so the engine
// logs the query under it), and one mcpfleet_backend_requests_total count.
func TestQueryIsTracedAndCounted(t *testing.T) {
	m := metrics.New("sqlmcp", "test")
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	var tr traces.Tracing
	tr.Use(tp, tp.Shutdown)
	c := newClient(t, shared, nil)
	c.SetRecorder(backendcall.New(backendcall.Config{Metrics: m, Tracer: tr.Tracer, System: "trino"}))

	stamp := time.Now().UnixNano()
	cases := []struct {
		name, sql, state, outcome string
		fail                      bool
	}{
		{"finished", fmt.Sprintf("SELECT %d AS n", stamp), "FINISHED", "ok", false},
		{"failed", fmt.Sprintf("SELECT %d FROM no_such_table_%d", stamp, stamp), "FAILED", "error", true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			exp.Reset()
			ctx, parent := tp.Tracer("test").Start(backendcall.ContextWithTool(context.Background(), "execute_query"), "tool.execute_query")
			res, err := c.Query(ctx, engine.Query{SQL: tc.sql})
			parent.End()
			if (err != nil) != tc.fail {
				t.Fatalf("query error %v, want failure %v", err, tc.fail)
			}
			var spans []sdktrace.ReadOnlySpan
			for _, s := range exp.GetSpans().Snapshots() {
				if s.Name() == "trino execute_query" {
					spans = append(spans, s)
				}
			}
			if len(spans) != 1 {
				t.Fatalf("%d \"trino execute_query\" spans, want 1", len(spans))
			}
			s := spans[0]
			if s.Parent().SpanID() != parent.SpanContext().SpanID() || s.SpanKind() != trace.SpanKindClient {
				t.Errorf("span parent %s kind %v, want the tool span %s, client", s.Parent().SpanID(), s.SpanKind(), parent.SpanContext().SpanID())
			}
			attrs := map[string]string{}
			for _, a := range s.Attributes() {
				attrs[string(a.Key)] = a.Value.Emit()
			}
			if attrs["trino.state"] != tc.state || attrs["mcpfleet.backend.outcome"] != tc.outcome || attrs["trino.query_id"] == "" {
				t.Errorf("attributes %v: want state %s, outcome %s and a query id", attrs, tc.state, tc.outcome)
			}
			if !tc.fail && attrs["trino.query_id"] != res.QueryID {
				t.Errorf("span query id %q, result's %q", attrs["trino.query_id"], res.QueryID)
			}
			// A failed query has times too: its FAILED answer carries stats.
			for _, k := range []string{"trino.queued_ms", "trino.elapsed_ms", "trino.execution_ms", "trino.cpu_ms"} {
				if _, ok := attrs[k]; !ok {
					t.Errorf("no %s attribute from the engine's stats: %v", k, attrs)
				}
			}
			if got := statementHeader(t, tc.sql).Get(engine.HeaderTraceToken); got != parent.SpanContext().TraceID().String() {
				t.Errorf("X-Trino-Trace-Token = %q, want the trace id %s", got, parent.SpanContext().TraceID())
			}
			want := fmt.Sprintf(`
# HELP mcpfleet_backend_requests_total Requests to the back end, by back end (instance or cluster), operation and outcome.
# TYPE mcpfleet_backend_requests_total counter
mcpfleet_backend_requests_total{backend="trino",operation="execute_query",outcome="%s",server="sqlmcp"} 1
`, tc.outcome)
			if tc.fail {
				want = `
# HELP mcpfleet_backend_requests_total Requests to the back end, by back end (instance or cluster), operation and outcome.
# TYPE mcpfleet_backend_requests_total counter
mcpfleet_backend_requests_total{backend="trino",operation="execute_query",outcome="error",server="sqlmcp"} 1
mcpfleet_backend_requests_total{backend="trino",operation="execute_query",outcome="ok",server="sqlmcp"} 1
`
			}
			if err := testutil.GatherAndCompare(m.Registry(), strings.NewReader(want), "mcpfleet_backend_requests_total"); err != nil {
				t.Error(err)
			}
		})
	}
}

// Outside a trace no token is sent, and a client without a recorder
// (the CLI, unit tests) runs queries as before.
func TestNoTraceTokenWithoutSpan(t *testing.T) {
	c := newClient(t, shared, nil)
	q := fmt.Sprintf("SELECT %d AS untraced", time.Now().UnixNano())
	if _, err := c.Query(context.Background(), engine.Query{SQL: q}); err != nil {
		t.Fatal(err)
	}
	if h := statementHeader(t, q); h.Get(engine.HeaderTraceToken) != "" {
		t.Errorf("X-Trino-Trace-Token sent without a trace: %q", h.Get(engine.HeaderTraceToken))
	}
}
