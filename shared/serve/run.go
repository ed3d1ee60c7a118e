package serve

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/mark3labs/mcp-go/server"

	"github.com/mcpfleet/mcpfleet/shared/httpauth"
	"github.com/mcpfleet/mcpfleet/shared/mcperr"
)

// headerTimeout bounds receiving a request's headers, at most
// MCP_REQUEST_READ_TIMEOUT.
const headerTimeout = 10 * time.Second

// newHTTPServer is the HTTP server of the transport. Slow headers
// (slowloris) are dropped after headerTimeout; bodies have
// MCP_REQUEST_READ_TIMEOUT (limitBody). There is no ReadTimeout: it would
// cut the long-lived SSE answers. An idle keep-alive connection is closed
// after IdleTimeout instead of being held forever.
func newHTTPServer(h http.Handler, cfg Config, logger *slog.Logger) *http.Server {
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: min(headerTimeout, orDefault(cfg.RequestReadTimeout, DefaultRequestReadTimeout)),
		IdleTimeout:       2 * time.Minute,
		ErrorLog:          log.New(slogWriter{logger}, "", 0),
	}
}

// Options are the process-level pieces Run needs.
type Options struct {
	Logger *slog.Logger
	Stdin  io.Reader
	Stdout io.Writer
	// MethodAliases maps extra JSON-RPC method names onto standard ones
	// (proxymcp accepts "callTool" for "tools/call").
	MethodAliases map[string]string
	// Listening, when set, is called with the bound address once the HTTP
	// transport accepts connections (tests and the playground use it).
	Listening func(net.Addr)
	// Ready, when set, is the readiness probe behind GET /readyz (HTTP
	// transport): a cheap request to the back end.
	Ready ReadyFunc
	// MetricsListening, when set, is called with the bound address of the
	// MCP_METRICS_ADDR listener.
	MetricsListening func(net.Addr)
	// WrapMCP, when set, wraps mcp-go's streamable HTTP handler inside the
	// host, auth and body guards (shared/tasks.Keeper.Wrap uses it).
	WrapMCP func(http.Handler) http.Handler
}

// Run serves s on the transport cfg selects until ctx is cancelled (the
// caller's signal context) or, for stdio, stdin closes. In-flight calls get
// cfg.ShutdownTimeout to finish; the rest are cancelled.
func Run(ctx context.Context, p Program, s *Server, cfg Config, o Options) error {
	if o.Logger == nil {
		o.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if cfg.Tracing.Enabled() {
		if err := s.Tracing.Start(ctx, cfg.Tracing, p.Name, p.Version); err != nil {
			return err
		}
		defer func() {
			// Flush the spans of the last calls; a collector that is gone
			// does not hold the exit up for long.
			flush, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
			defer cancel()
			if err := s.Tracing.Shutdown(flush); err != nil {
				o.Logger.Warn("could not flush the last trace spans", "endpoint", cfg.Tracing.Endpoint, "error", err)
			}
		}()
		o.Logger.Info("exporting OpenTelemetry traces", "endpoint", cfg.Tracing.Endpoint, "protocol", cfg.Tracing.Protocol, "sampler", cfg.Tracing.Sampler)
	}
	if cfg.MetricsAddr != "" {
		stop, err := serveMetrics(cfg.MetricsAddr, s, o)
		if err != nil {
			return err
		}
		defer stop()
	}
	switch cfg.Transport {
	case "http":
		return runHTTP(ctx, p, s, cfg, o)
	default:
		return runStdio(ctx, s, cfg, o)
	}
}

// serveMetrics serves /metrics on addr until stop is called.
func serveMetrics(addr string, s *Server, o Options) (stop func(), err error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, mcperr.New(mcperr.Unavailable, "listen for /metrics on "+addr, err,
			"choose a free address with MCP_METRICS_ADDR or stop the process using it")
	}
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", s.Metrics.Handler())
	// The operator's own listener: readiness with what failed.
	mux.Handle("GET /readyz", newReadiness(o.Ready, o.Logger, func(*http.Request) bool { return true }))
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: headerTimeout, IdleTimeout: 2 * time.Minute, ErrorLog: log.New(slogWriter{o.Logger}, "", 0)}
	go srv.Serve(ln)
	o.Logger.Info("serving Prometheus metrics", "addr", ln.Addr().String(), "path", "/metrics")
	if o.MetricsListening != nil {
		o.MetricsListening(ln.Addr())
	}
	return func() { srv.Close() }, nil
}

func runStdio(ctx context.Context, s *Server, cfg Config, o Options) error {
	s.Metrics.Sessions("stdio", 1)
	defer s.Metrics.Sessions("stdio", -1)
	g := newStdioGate(o.Stdin, o.Stdout, o.MethodAliases, cfg.maxRequestBytes(), cfg.ShutdownTimeout, s.calls, s.MCPServer)
	defer g.close()
	go func() {
		<-ctx.Done()
		g.shutdown()
	}()
	stdio := server.NewStdioServer(s.MCPServer)
	stdio.SetErrorLogger(log.New(slogWriter{o.Logger}, "", 0))
	// Called once, with the session registered: from then on the gate
	// answers quick requests itself.
	stdio.SetContextFunc(g.setSession)
	o.Logger.Info("serving MCP over stdio")
	// Listen gets its own context: the gate decides when input ends, after
	// in-flight calls had their chance to answer.
	err := stdio.Listen(context.WithoutCancel(ctx), g, g.out)
	if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, context.Canceled) {
		return fmt.Errorf("serve stdio: %w", err)
	}
	return nil
}

func runHTTP(ctx context.Context, p Program, s *Server, cfg Config, o Options) error {
	auth, err := httpauth.New(ctx, cfg.Auth, o.Logger)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", cfg.Addr())
	if err != nil {
		return mcperr.New(mcperr.Unavailable, "listen for MCP over HTTP on "+cfg.Addr(), err,
			"choose a free port with MCP_PORT or stop the process using it")
	}
	h := NewHTTPHandler(p, s, cfg, auth, o)
	defer h.Close()
	srv := newHTTPServer(h, cfg, o.Logger)
	o.Logger.Info("serving MCP over HTTP", "addr", ln.Addr().String(), "mcp", "/mcp", "sse", "/sse", "oauth", cfg.Auth.Enabled)
	if o.Listening != nil {
		o.Listening(ln.Addr())
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	select {
	case err := <-served:
		return fmt.Errorf("serve HTTP on %s: %w", ln.Addr(), err)
	case <-ctx.Done():
	}
	o.Logger.Info("shutting down", "timeout", cfg.ShutdownTimeout.String())
	deadline, cancel := context.WithTimeout(context.Background(), cfg.ShutdownTimeout)
	defer cancel()
	// Shutdown stops accepting at once and then waits for connections to go
	// idle; the long-lived SSE streams are closed only after in-flight calls
	// are done (SSE handlers are detached from their HTTP request), so that
	// clients still receive those answers.
	shutdownErr := make(chan error, 1)
	go func() { shutdownErr <- srv.Shutdown(deadline) }()
	busy := h.posts.active() || s.calls.active()
	finished := h.posts.wait(deadline) && s.calls.wait(deadline)
	if busy && finished {
		// A handler has returned but net/http may still be flushing its
		// answer; clients that drop a session with its stream would lose it.
		time.Sleep(150 * time.Millisecond)
	}
	h.closeStreams()
	if err := <-shutdownErr; err != nil {
		finished = false
	}
	if !finished {
		o.Logger.Warn("shutdown deadline reached; cancelled the calls still running")
	}
	h.posts.hardEnd()
	s.calls.hardEnd()
	// Give cancelled handlers a moment to unwind their back-end work.
	grace, cancelGrace := context.WithTimeout(context.Background(), time.Second)
	defer cancelGrace()
	s.calls.wait(grace)
	srv.Close()
	return nil
}

// slogWriter adapts a *log.Logger destination onto slog at warn level.
type slogWriter struct{ l *slog.Logger }

func (w slogWriter) Write(p []byte) (int, error) {
	w.l.Warn(string(trimNewline(p)))
	return len(p), nil
}

func trimNewline(p []byte) []byte {
	for len(p) > 0 && (p[len(p)-1] == '\n' || p[len(p)-1] == '\r') {
		p = p[:len(p)-1]
	}
	return p
}
