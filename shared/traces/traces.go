// Package traces is a server's OpenTelemetry tracing: off until Start (from
// the standard OTEL_* variables) or Use installs a tracer provider, and then
// the source of the tracer that mcp-go's request and tool spans, the
// tool-call pipeline and the back-end call hook (backendcall) all use.
package traces

import (
	"context"
	"sync/atomic"

	"go.opentelemetry.io/otel/trace"
)

// ScopeName is the instrumentation scope of every mcpfleet span.
const ScopeName = "github.com/mcpfleet/mcpfleet/shared"

// Tracing holds a server's tracer. The zero value (and a nil *Tracing) is
// off: Tracer returns nil and callers start no spans, at the cost of one
// atomic load.
type Tracing struct {
	cur atomic.Pointer[active]
}

type active struct {
	tracer   trace.Tracer
	shutdown func(context.Context) error
}

// Tracer returns the tracer to start spans with, or nil while tracing is off.
func (t *Tracing) Tracer() trace.Tracer {
	if t == nil {
		return nil
	}
	if a := t.cur.Load(); a != nil {
		return a.tracer
	}
	return nil
}

// On reports whether a tracer provider is installed.
func (t *Tracing) On() bool { return t.Tracer() != nil }

// Use installs tp (tests; Start for the OTEL_* variables). shutdown, when
// not nil, is what Shutdown calls to flush and stop it.
func (t *Tracing) Use(tp trace.TracerProvider, shutdown func(context.Context) error) {
	t.cur.Store(&active{tracer: tp.Tracer(ScopeName), shutdown: shutdown})
}

// Shutdown flushes the spans still buffered and stops the exporter; tracing
// is off afterwards.
func (t *Tracing) Shutdown(ctx context.Context) error {
	if t == nil {
		return nil
	}
	a := t.cur.Swap(nil)
	if a == nil || a.shutdown == nil {
		return nil
	}
	return a.shutdown(ctx)
}
