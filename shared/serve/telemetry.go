package serve

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"github.com/mark3labs/mcp-go/tracing"

	"github.com/mcpfleet/mcpfleet/shared/metrics"
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
// mcpfleet_request_duration_seconds. inner, when set, is the real tracer
// (OpenTelemetry) it passes every span on to.
type metricsTracer struct {
	m     *metrics.Metrics
	inner tracing.Tracer
}

func (t metricsTracer) Start(ctx context.Context, name string, kind tracing.SpanKind, attrs ...tracing.Attribute) (context.Context, tracing.Span) {
	var inner tracing.Span = noopSpan{}
	if t.inner != nil {
		ctx, inner = t.inner.Start(ctx, name, kind, attrs...)
	}
	if kind != tracing.SpanKindServer {
		return ctx, inner
	}
	s := &requestSpan{Span: inner, m: t.m, method: methodLabel(strings.TrimPrefix(name, "mcp.")), start: time.Now()}
	return tracing.ContextWithSpan(ctx, s), s
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
