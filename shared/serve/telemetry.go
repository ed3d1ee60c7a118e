package serve

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"github.com/mark3labs/mcp-go/tracing"

	"github.com/mcpfleet/mcpfleet/shared/backendcall"
	"github.com/mcpfleet/mcpfleet/shared/metrics"
	"github.com/mcpfleet/mcpfleet/shared/traces"
)

// knownMethods bounds the method label: mcp-go dispatches only these, and
// anything else is counted as "other".
var knownMethods = map[string]bool{}

func init() {
	for _, m := range []mcp.MCPMethod{
		mcp.MethodInitialize, mcp.MethodPing, mcp.MethodToolsList, mcp.MethodToolsCall,
		mcp.MethodResourcesList, mcp.MethodResourcesTemplatesList, mcp.MethodResourcesRead,
		mcp.MethodResourcesSubscribe, mcp.MethodResourcesUnsubscribe,
		mcp.MethodPromptsList, mcp.MethodPromptsGet, mcp.MethodSetLogLevel, mcp.MethodCompletionComplete,
		mcp.MethodServerDiscover, mcp.MethodSubscriptionsListen,
		mcp.MethodTasksGet, mcp.MethodTasksList, mcp.MethodTasksResult, mcp.MethodTasksCancel,
	} {
		knownMethods[string(m)] = true
	}
}

func methodLabel(m string) string {
	if knownMethods[m] {
		return m
	}
	return "other"
}

// metricsTracer is the mcp-go tracer that times every dispatched request
// (the "mcp.<method>" server span) for mcpfleet_requests_total and
// mcpfleet_request_duration_seconds, and, while tracing is on, starts the
// OpenTelemetry span of every mcp-go span (request and tool).
type metricsTracer struct {
	m  *metrics.Metrics
	tr *traces.Tracing
}

func (t metricsTracer) Start(ctx context.Context, name string, kind tracing.SpanKind, attrs ...tracing.Attribute) (context.Context, tracing.Span) {
	var inner tracing.Span = noopSpan{}
	if ot := t.tr.Tracer(); ot != nil {
		var s trace.Span
		ctx, s = ot.Start(ctx, name, trace.WithSpanKind(otelKind(kind)), trace.WithAttributes(otelAttrs(attrs)...))
		inner = otelSpan{s}
	}
	if kind != tracing.SpanKindServer {
		if _, off := inner.(noopSpan); !off {
			ctx = tracing.ContextWithSpan(ctx, inner)
		}
		return ctx, inner
	}
	s := &requestSpan{Span: inner, m: t.m, method: methodLabel(strings.TrimPrefix(name, "mcp.")), start: time.Now()}
	return tracing.ContextWithSpan(ctx, s), s
}

func otelKind(k tracing.SpanKind) trace.SpanKind {
	switch k {
	case tracing.SpanKindServer:
		return trace.SpanKindServer
	case tracing.SpanKindClient:
		return trace.SpanKindClient
	}
	return trace.SpanKindInternal
}

func otelAttrs(attrs []tracing.Attribute) []attribute.KeyValue {
	out := make([]attribute.KeyValue, len(attrs))
	for i, a := range attrs {
		out[i] = attribute.String(a.Key, a.Value)
	}
	return out
}

// otelSpan adapts an OpenTelemetry span to mcp-go's tracing.Span (there is
// no mcp-go OpenTelemetry adapter module for v1.2.1 on the module proxy).
type otelSpan struct{ s trace.Span }

func (o otelSpan) SetAttributes(attrs ...tracing.Attribute) { o.s.SetAttributes(otelAttrs(attrs)...) }
func (o otelSpan) RecordError(err error)                    { o.s.RecordError(err) }
func (o otelSpan) End()                                     { o.s.End() }
func (o otelSpan) SetStatus(code tracing.StatusCode, desc string) {
	switch code {
	case tracing.StatusOK:
		o.s.SetStatus(codes.Ok, "")
	case tracing.StatusError:
		o.s.SetStatus(codes.Error, desc)
	}
}

// traceContext is W3C Trace Context (traceparent, tracestate), the format
// both the HTTP header and SEP-414's _meta fields carry.
var traceContext = propagation.TraceContext{}

// headerPropagator continues the caller's trace from the HTTP traceparent
// header. mcp-go extracts _meta first; a traceparent there wins, since the
// MCP client put it on this very request, while a header may come from an
// HTTP library below it.
type headerPropagator struct{ tr *traces.Tracing }

func (p headerPropagator) Inject(ctx context.Context, h http.Header) {
	if p.tr.On() {
		traceContext.Inject(ctx, propagation.HeaderCarrier(h))
	}
}

func (p headerPropagator) Extract(ctx context.Context, h http.Header) context.Context {
	if !p.tr.On() || len(h) == 0 || trace.SpanContextFromContext(ctx).IsRemote() {
		return ctx
	}
	return traceContext.Extract(ctx, propagation.HeaderCarrier(h))
}

// metaPropagator continues the caller's trace from traceparent and
// tracestate in the request's _meta (SEP-414), on every transport.
type metaPropagator struct{ tr *traces.Tracing }

func (p metaPropagator) ExtractMeta(ctx context.Context, meta *mcp.Meta) context.Context {
	if meta == nil || !p.tr.On() {
		return ctx
	}
	tp, _ := meta.AdditionalFields["traceparent"].(string)
	if tp == "" {
		return ctx
	}
	c := propagation.MapCarrier{"traceparent": tp}
	if ts, ok := meta.AdditionalFields["tracestate"].(string); ok {
		c["tracestate"] = ts
	}
	return traceContext.Extract(ctx, c)
}

func (p metaPropagator) InjectMeta(ctx context.Context, meta *mcp.Meta) *mcp.Meta {
	if !p.tr.On() {
		return meta
	}
	c := propagation.MapCarrier{}
	traceContext.Inject(ctx, c)
	if len(c) == 0 {
		return meta
	}
	if meta == nil {
		meta = &mcp.Meta{}
	}
	if meta.AdditionalFields == nil {
		meta.AdditionalFields = map[string]any{}
	}
	for k, v := range c {
		meta.AdditionalFields[k] = v
	}
	return meta
}

type noopSpan struct{}

func (noopSpan) SetAttributes(...tracing.Attribute)   {}
func (noopSpan) RecordError(error)                    {}
func (noopSpan) SetStatus(tracing.StatusCode, string) {}
func (noopSpan) End()                                 {}

// toolErrorStatus is the status mcp-go's tool tracing sets on the request
// span when a tool answers isError: the request itself succeeded.
const toolErrorStatus = "tool returned error result"

type requestSpan struct {
	tracing.Span
	m      *metrics.Metrics
	method string
	start  time.Time
	failed bool
}

func (s *requestSpan) SetStatus(code tracing.StatusCode, desc string) {
	if code == tracing.StatusError && desc != toolErrorStatus {
		s.failed = true
	}
	s.Span.SetStatus(code, desc)
}

func (s *requestSpan) End() {
	outcome := metrics.OK
	if s.failed {
		outcome = metrics.Error
	}
	s.m.Request(s.method, outcome, time.Since(s.start))
	s.Span.End()
}

// toolMetrics times every tool call and classifies its outcome. The tool
// name is a registered one (mcp-go answers unknown tools before any
// middleware), so the label set is closed.
func toolMetrics(m *metrics.Metrics) server.ToolHandlerMiddleware {
	return func(next server.ToolHandlerFunc) server.ToolHandlerFunc {
		return func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			start := time.Now()
			// The tool is a registered one: a closed set, fit for the
			// operation label of the back-end calls it makes.
			ctx = backendcall.ContextWithTool(ctx, req.Params.Name)
			res, err := next(ctx, req)
			outcome := metrics.OK
			switch {
			case errors.Is(ctx.Err(), context.Canceled) || errors.Is(err, context.Canceled):
				outcome = metrics.Cancelled
			case err != nil:
				outcome = metrics.ProtocolError
			case res != nil && res.IsError:
				outcome = metrics.ToolError
			}
			m.ToolCall(req.Params.Name, outcome, time.Since(start))
			return res, err
		}
	}
}
