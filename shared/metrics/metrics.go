// Package metrics is the Prometheus instrumentation every mcpfleet server
// exports: one family of names (mcpfleet_*), the server as a label, and
// label values from closed sets only (MCP methods, tool names, command
// verbs, outcome words), so that no caller input creates a series.
//
// It knows nothing of MCP or of any back end: serve feeds it requests, tool
// calls, sessions and auth failures; back-end clients feed it their
// requests through Backend.
package metrics

import (
	"net/http"
	"runtime"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Tool call outcomes.
const (
	OK            = "ok"
	ToolError     = "tool_error"     // the tool answered isError: true
	ProtocolError = "protocol_error" // the handler failed (JSON-RPC error)
	Cancelled     = "cancelled"      // the caller or a shutdown cancelled it
	Error         = "error"          // a request answered with a JSON-RPC error
)

// Metrics is one server's registry and instruments.
type Metrics struct {
	reg          *prometheus.Registry
	requests     *prometheus.CounterVec
	requestDur   *prometheus.HistogramVec
	toolCalls    *prometheus.CounterVec
	toolDur      *prometheus.HistogramVec
	inflight     prometheus.Gauge
	sessions     *prometheus.GaugeVec
	authFailures *prometheus.CounterVec
	approvals    *prometheus.CounterVec
	backendReqs  *prometheus.CounterVec
	backendDur   *prometheus.HistogramVec

	// The children of requests and tool calls, looked up once per label
	// set: every call records on them, and a Vec's lookup hashes the label
	// values under its own lock each time. The label sets are closed
	// (methods, registered tools), so the caches stay small; a series still
	// appears only once recorded.
	mu        sync.RWMutex
	counters  map[childKey]prometheus.Counter
	observers map[childKey]prometheus.Observer
}

// childKey names a child: its family (the Vec) and label values.
type childKey struct {
	vec  any
	a, b string
}

func (m *Metrics) counter(v *prometheus.CounterVec, a, b string) prometheus.Counter {
	k := childKey{v, a, b}
	m.mu.RLock()
	c, ok := m.counters[k]
	m.mu.RUnlock()
	if !ok {
		c = v.WithLabelValues(a, b)
		m.mu.Lock()
		m.counters[k] = c
		m.mu.Unlock()
	}
	return c
}

func (m *Metrics) observer(v *prometheus.HistogramVec, a string) prometheus.Observer {
	k := childKey{v, a, ""}
	m.mu.RLock()
	o, ok := m.observers[k]
	m.mu.RUnlock()
	if !ok {
		o = v.WithLabelValues(a)
		m.mu.Lock()
		m.observers[k] = o
		m.mu.Unlock()
	}
	return o
}

// Sub-millisecond to a minute: a ping takes microseconds, a query minutes.
var buckets = []float64{.0001, .00025, .0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60}

// New returns the instruments of server (e.g. "proxymcp") at version, in a
// registry of its own that also carries the Go runtime and process
// collectors.
func New(server, version string) *Metrics {
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	f := func(c prometheus.Collector) { reg.MustRegister(c) }
	l := prometheus.Labels{"server": server}
	m := &Metrics{reg: reg, counters: map[childKey]prometheus.Counter{}, observers: map[childKey]prometheus.Observer{}}
	build := prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "mcpfleet_build_info", Help: "Always 1: the server's name, version and Go version.", ConstLabels: l},
		[]string{"version", "goversion"})
	build.WithLabelValues(version, runtime.Version()).Set(1)
	f(build)
	m.requests = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "mcpfleet_requests_total", Help: "MCP requests answered, by method and outcome (ok, error: a JSON-RPC error).", ConstLabels: l},
		[]string{"method", "outcome"})
	m.requestDur = prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "mcpfleet_request_duration_seconds", Help: "Time to answer an MCP request, by method.", ConstLabels: l, Buckets: buckets},
		[]string{"method"})
	m.toolCalls = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "mcpfleet_tool_calls_total", Help: "Tool calls, by tool and outcome (ok, tool_error, protocol_error, cancelled).", ConstLabels: l},
		[]string{"tool", "outcome"})
	m.toolDur = prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "mcpfleet_tool_call_duration_seconds", Help: "Time a tool handler ran, by tool.", ConstLabels: l, Buckets: buckets},
		[]string{"tool"})
	m.inflight = prometheus.NewGauge(prometheus.GaugeOpts{Name: "mcpfleet_inflight_calls", Help: "Tool calls and resource reads running now.", ConstLabels: l})
	m.sessions = prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "mcpfleet_sessions", Help: "Open sessions by transport (stdio; sse streams; streamable_http listening streams).", ConstLabels: l},
		[]string{"transport"})
	m.authFailures = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "mcpfleet_auth_failures_total", Help: "Requests refused by the OAuth layer, by reason.", ConstLabels: l},
		[]string{"reason"})
	m.approvals = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "mcpfleet_approvals_total", Help: "Approval decisions on tool calls, by tool and decision.", ConstLabels: l},
		[]string{"tool", "decision"})
	m.backendReqs = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "mcpfleet_backend_requests_total", Help: "Requests to the back end, by back end (instance or cluster), operation and outcome.", ConstLabels: l},
		[]string{"backend", "operation", "outcome"})
	m.backendDur = prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "mcpfleet_backend_request_duration_seconds", Help: "Time a back-end request took, by back end and operation.", ConstLabels: l, Buckets: buckets},
		[]string{"backend", "operation"})
	for _, c := range []prometheus.Collector{m.requests, m.requestDur, m.toolCalls, m.toolDur, m.inflight, m.sessions, m.authFailures, m.approvals, m.backendReqs, m.backendDur} {
		f(c)
	}
	return m
}

// Registry is where a server registers metrics of its own (streammcp's
// consumer lag), under the same scrape.
func (m *Metrics) Registry() *prometheus.Registry { return m.reg }

// Handler serves the registry in the Prometheus exposition formats.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{Registry: m.reg})
}

// Request records one answered MCP request.
func (m *Metrics) Request(method, outcome string, d time.Duration) {
	m.counter(m.requests, method, outcome).Inc()
	m.observer(m.requestDur, method).Observe(d.Seconds())
}

// ToolCall records one finished tool call.
func (m *Metrics) ToolCall(tool, outcome string, d time.Duration) {
	m.counter(m.toolCalls, tool, outcome).Inc()
	m.observer(m.toolDur, tool).Observe(d.Seconds())
}

// Inflight adds delta to the calls running now.
func (m *Metrics) Inflight(delta int) { m.inflight.Add(float64(delta)) }

// Sessions adds delta to the open sessions of transport.
func (m *Metrics) Sessions(transport string, delta int) {
	m.sessions.WithLabelValues(transport).Add(float64(delta))
}

// AuthFailure records a request the OAuth layer refused.
func (m *Metrics) AuthFailure(reason string) { m.authFailures.WithLabelValues(reason).Inc() }

// Approval records an approval decision (approved, declined, expired...).
func (m *Metrics) Approval(tool, decision string) { m.approvals.WithLabelValues(tool, decision).Inc() }

// Backend records one back-end request. backend names the instance or
// cluster from configuration, operation a closed set (command verb, API
// key, tool), outcome "ok" or a short error class; never caller input.
func (m *Metrics) Backend(backend, operation, outcome string, d time.Duration) {
	m.backendReqs.WithLabelValues(backend, operation, outcome).Inc()
	m.backendDur.WithLabelValues(backend, operation).Observe(d.Seconds())
}
