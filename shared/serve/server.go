package serve

import (
	"context"
	"sync"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/mcpfleet/mcpfleet/shared/backendcall"
	"github.com/mcpfleet/mcpfleet/shared/metrics"
	"github.com/mcpfleet/mcpfleet/shared/traces"
)

// Server is an mcp-go server that knows which calls are in flight, so that
// a shutdown can let them finish up to a deadline and then cancel the rest,
// back-end work included, on every transport.
type Server struct {
	*server.MCPServer
	// Metrics are the server's Prometheus instruments; back-end clients
	// record their requests on it (Metrics.Backend).
	Metrics *metrics.Metrics
	// Tracing is off until Run starts it from the OTEL_* variables (or a
	// test installs a provider with Tracing.Use).
	Tracing *traces.Tracing
	calls   *calls
}

// BackendRecorder returns the hook a back-end client records each request
// with (metric and span): system is "trino", "haproxy", "kafka" or "codex",
// backend the configured instance or cluster name (the backend label; ""
// means system). See backendcall.
func (s *Server) BackendRecorder(system, backend string) *backendcall.Recorder {
	return backendcall.New(backendcall.Config{Metrics: s.Metrics, Tracer: s.Tracing.Tracer, System: system, Backend: backend})
}

// NewServer returns an MCP server with panic recovery, in-flight tracking
// and metrics added to opts. Arguments are checked where a tool is added:
// the tool-call pipeline binds each tool's compiled schema when it
// registers it, and a tool added directly is wrapped with argschema.Bind.
func NewServer(name, version string, opts ...server.ServerOption) *Server {
	m := metrics.New(name, version)
	s := &Server{}
	tr := &traces.Tracing{}
	c := newCalls()
	c.metrics = m
	all := []server.ServerOption{
		// An empty hook set the tool-call pipeline can add to; a server's own
		// WithHooks in opts replaces it and the pipeline adds to that one.
		server.WithHooks(&server.Hooks{}),
		server.WithTracer(metricsTracer{m: m, tr: tr}),
		server.WithPropagator(headerPropagator{tr}),
		server.WithMetaPropagator(metaPropagator{tr}),
		server.WithToolHandlerMiddleware(toolMetrics(m)),
		server.WithRecovery(),
		server.WithResourceRecovery(),
		server.WithToolHandlerMiddleware(func(next server.ToolHandlerFunc) server.ToolHandlerFunc {
			return func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				ctx, done := c.begin(ctx)
				defer done()
				return next(ctx, req)
			}
		}),
		server.WithResourceHandlerMiddleware(func(next server.ResourceHandlerFunc) server.ResourceHandlerFunc {
			return func(ctx context.Context, req mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
				ctx, done := c.begin(ctx)
				defer done()
				return next(ctx, req)
			}
		}),
	}
	all = append(all, opts...)
	srv := server.NewMCPServer(name, version, all...)
	s.MCPServer, s.Metrics, s.Tracing, s.calls = srv, m, tr, c
	return s
}

// calls tracks in-flight handler calls and cancels them on a hard stop.
type calls struct {
	mu   sync.Mutex
	n    int
	idle chan struct{} // closed while n == 0
	// live holds the cancel of each call in flight, for hardEnd. (Hooking
	// every call on a shared stop context with context.AfterFunc cost two
	// more allocations and a second lock, contended by every call.)
	live    map[uint64]context.CancelFunc
	next    uint64
	ended   bool             // hardEnd ran: later calls start cancelled
	metrics *metrics.Metrics // nil for HTTP posts
}

func newCalls() *calls {
	idle := make(chan struct{})
	close(idle)
	return &calls{idle: idle, live: map[uint64]context.CancelFunc{}}
}

// begin registers a call; its context is also cancelled by a hard stop.
func (c *calls) begin(ctx context.Context) (context.Context, func()) {
	ctx, cancel := context.WithCancel(ctx)
	c.mu.Lock()
	if c.n == 0 {
		c.idle = make(chan struct{})
	}
	c.n++
	id := c.next
	c.next++
	c.live[id] = cancel
	ended := c.ended
	c.mu.Unlock()
	if ended {
		cancel()
	}
	if c.metrics != nil {
		c.metrics.Inflight(1)
	}
	return ctx, func() {
		cancel()
		if c.metrics != nil {
			c.metrics.Inflight(-1)
		}
		c.mu.Lock()
		delete(c.live, id)
		c.n--
		if c.n == 0 {
			close(c.idle)
		}
		c.mu.Unlock()
	}
}

// hardEnd cancels every call in flight, and every call begun after it.
func (c *calls) hardEnd() {
	c.mu.Lock()
	c.ended = true
	cancels := make([]context.CancelFunc, 0, len(c.live))
	for _, cancel := range c.live {
		cancels = append(cancels, cancel)
	}
	c.mu.Unlock()
	for _, cancel := range cancels {
		cancel()
	}
}

// wait blocks until no call is in flight or ctx ends; then it cancels what
// is left and reports whether everything finished on its own.
func (c *calls) wait(ctx context.Context) bool {
	c.mu.Lock()
	idle := c.idle
	c.mu.Unlock()
	select {
	case <-idle:
		return true
	case <-ctx.Done():
		c.hardEnd()
		return false
	}
}

func (c *calls) active() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n > 0
}
