// Package backendcall records each request a server makes to its back end —
// one HAProxy command, one Kafka request batch, one Trino query, one Codex
// CLI run — once, as both a Prometheus observation
// (mcpfleet_backend_requests_total and mcpfleet_backend_request_duration_seconds)
// and an OpenTelemetry client span below the tool's span.
//
// Back-end packages import it (it knows nothing of MCP). A nil *Recorder and
// a nil *Call do nothing, so a back-end client built without one (unit
// tests) needs no setup.
package backendcall

import (
	"context"
	"errors"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/mcpfleet/mcpfleet/shared/metrics"
)

// Outcomes of a back-end call: the outcome label's closed set unless a
// caller sets its own with Call.SetOutcome.
const (
	OK        = "ok"
	Error     = "error"
	Cancelled = "cancelled" // the caller (or a shutdown) cancelled the request
	Timeout   = "timeout"   // a deadline passed before the back end answered
)

// Span attribute keys every back-end span carries.
const (
	AttrSystem    = "mcpfleet.backend.system"    // "trino", "haproxy", "kafka", "codex"
	AttrBackend   = "mcpfleet.backend.name"      // the backend label: configured instance or cluster
	AttrOperation = "mcpfleet.backend.operation" // the operation label
	AttrOutcome   = "mcpfleet.backend.outcome"   // the outcome label
)

// Config builds a Recorder. Servers get one from serve.Server.BackendRecorder.
type Config struct {
	// Metrics receives one Backend observation per call; nil records none.
	Metrics *metrics.Metrics
	// Tracer returns the tracer to start spans with, or nil while tracing is
	// off; it is asked on every call, so tracing set up after the client
	// was built still applies. A nil func starts no spans.
	Tracer func() trace.Tracer
	// System names the kind of back end ("trino", "haproxy", "kafka",
	// "codex"); spans are named "<system> <operation>".
	System string
	// Backend is the backend label: the configured name of the instance,
	// cluster or broker, never caller input. One-instance servers use the
	// system name.
	Backend string
}

// Recorder starts one Call per back-end request. It is safe for concurrent
// use; copies made by WithBackend share its metrics and tracer.
type Recorder struct {
	c        Config
	baseAttr [2]attribute.KeyValue
}

// New returns a Recorder. Use serve.Server.BackendRecorder in servers.
func New(c Config) *Recorder {
	if c.Backend == "" {
		c.Backend = c.System
	}
	return &Recorder{c: c, baseAttr: [2]attribute.KeyValue{
		attribute.String(AttrSystem, c.System), attribute.String(AttrBackend, c.Backend),
	}}
}

// WithBackend returns a Recorder for another configured instance (fleet
// mode: one per HAProxy instance, Kafka cluster or broker). backend must be
// a configured name, since it becomes a label value.
func (r *Recorder) WithBackend(backend string) *Recorder {
	if r == nil {
		return nil
	}
	c := r.c
	c.Backend = backend
	return New(c)
}

// Backend is the backend label value calls are recorded under.
func (r *Recorder) Backend() string {
	if r == nil {
		return ""
	}
	return r.c.Backend
}

// Call is one back-end request in progress. End it exactly once.
type Call struct {
	r       *Recorder
	op      string
	start   time.Time
	span    trace.Span // nil when tracing is off
	outcome string     // set by SetOutcome
}

// Start begins a call. operation is the operation label and must come from
// a closed set (HAProxy command verb, Kafka API key name, the tool name for
// Trino, "exec" for Codex). attrs go on the span only (they may carry
// per-call values such as a query id; they never become labels). The
// returned context carries the span: pass it to the request so that
// anything below (an HTTP client, a child process) is its child.
func (r *Recorder) Start(ctx context.Context, operation string, attrs ...attribute.KeyValue) (context.Context, *Call) {
	if r == nil {
		return ctx, nil
	}
	c := &Call{r: r, op: operation, start: time.Now()}
	if r.c.Tracer != nil {
		if t := r.c.Tracer(); t != nil {
			all := make([]attribute.KeyValue, 0, len(attrs)+3)
			all = append(all, r.baseAttr[0], r.baseAttr[1], attribute.String(AttrOperation, operation))
			all = append(all, attrs...)
			ctx, c.span = t.Start(ctx, r.c.System+" "+operation,
				trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(all...))
		}
	}
	return ctx, c
}

// SetAttributes adds attributes to the call's span (query id, state, exit
// status...). They never become metric labels.
func (c *Call) SetAttributes(attrs ...attribute.KeyValue) {
	if c == nil || c.span == nil {
		return
	}
	c.span.SetAttributes(attrs...)
}

// Traced reports whether the call has a span (tracing is on and sampled
// or not): callers skip computing attributes when it is false.
func (c *Call) Traced() bool { return c != nil && c.span != nil && c.span.IsRecording() }

// SetOutcome overrides the outcome label End derives from its error, for a
// back end with a closed set of its own (codermcp's exit status classes).
// It must be a fixed word, never caller input.
func (c *Call) SetOutcome(outcome string) {
	if c != nil {
		c.outcome = outcome
	}
}

// End finishes the call: it records the duration and outcome (ok, error,
// cancelled, timeout — from err — unless SetOutcome chose one) and ends the
// span with an error status when err is not nil. A second End does nothing
// useful and must be avoided.
func (c *Call) End(err error) {
	if c == nil {
		return
	}
	d := time.Since(c.start)
	outcome := c.outcome
	if outcome == "" {
		outcome = Classify(err)
	}
	if c.r.c.Metrics != nil {
		c.r.c.Metrics.Backend(c.r.c.Backend, c.op, outcome, d)
	}
	if c.span != nil {
		c.span.SetAttributes(attribute.String(AttrOutcome, outcome))
		if err != nil {
			c.span.RecordError(err)
			c.span.SetStatus(codes.Error, err.Error())
		}
		c.span.End()
	}
}

// Classify maps a back-end error onto the outcome label: nil is ok, a
// cancelled context cancelled, a passed deadline timeout, anything else
// error.
func Classify(err error) string {
	switch {
	case err == nil:
		return OK
	case errors.Is(err, context.Canceled):
		return Cancelled
	case errors.Is(err, context.DeadlineExceeded):
		return Timeout
	}
	return Error
}

// TraceID returns the W3C trace id (32 hex digits) of the span in ctx, or ""
// when there is none: what a back end that logs a trace token (Trino's
// X-Trino-Trace-Token) is sent.
func TraceID(ctx context.Context) string {
	sc := trace.SpanContextFromContext(ctx)
	if !sc.HasTraceID() {
		return ""
	}
	return sc.TraceID().String()
}

type toolKey struct{}

// ContextWithTool records the registered tool a call runs for; serve does it
// for every tool call, so that a back end whose operation label is the tool
// (Trino) reads it with Tool.
func ContextWithTool(ctx context.Context, tool string) context.Context {
	return context.WithValue(ctx, toolKey{}, tool)
}

// Tool returns the registered tool ctx runs for, or "" outside a tool call
// (the sqlmcp CLI).
func Tool(ctx context.Context) string {
	s, _ := ctx.Value(toolKey{}).(string)
	return s
}
