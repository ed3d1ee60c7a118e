package engine

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Phases of mcpfleet_trino_query_engine_seconds: the phase label's closed
// set.
const (
	PhaseQueued    = "queued"    // queuedTimeMillis: waiting in the coordinator's queue (resource groups)
	PhaseExecution = "execution" // elapsedTimeMillis - queuedTimeMillis: planning and running
	PhaseCPU       = "cpu"       // cpuTimeMillis: CPU time over every node (may exceed the wall time)
)

// engineBuckets cover Trino's millisecond-resolution times, from a query
// answered from metadata to one that runs for half an hour (the
// SQLENGINE_QUERY_TIMEOUT default is 5 minutes; CPU time summed over
// workers can exceed it).
var engineBuckets = []float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60, 120, 300, 900, 1800}

// EngineTimes is the histogram of the engine's own account of each query
// (mcpfleet_trino_query_engine_seconds): how long Trino queued it, ran it
// and spent CPU on it, read from the stats of the last answer it sent. A
// nil *EngineTimes records nothing (the CLI).
type EngineTimes struct {
	h *prometheus.HistogramVec
}

// NewEngineTimes registers the histogram in reg with server as a constant
// label, like every mcpfleet metric, so that it shows on the server's
// /metrics. Label values are the operation (the tool, a closed set) and
// the phase; never SQL text.
func NewEngineTimes(reg prometheus.Registerer, server string) *EngineTimes {
	t := &EngineTimes{h: prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:        "mcpfleet_trino_query_engine_seconds",
		Help:        "Trino's own times of each query sent, from the protocol's stats of its last answer, by operation (the tool) and phase: queued (in the coordinator's queue), execution (elapsed minus queued: planning and running), cpu (CPU time over all nodes; overlaps the others, do not add it to them).",
		ConstLabels: prometheus.Labels{"server": server},
		Buckets:     engineBuckets,
	}, []string{"operation", "phase"})}
	reg.MustRegister(t.h)
	return t
}

// RegisterTransactionsAhead registers mcpfleet_trino_transactions_ahead in
// reg: the read-only transactions the clients hold begun ahead, by
// backend (the cluster; "" with one). They show as open transactions in
// Trino's system.runtime.transactions.
func RegisterTransactionsAhead(reg prometheus.Registerer, server string, clients map[string]*Client) {
	for backend, c := range clients {
		reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name:        "mcpfleet_trino_transactions_ahead",
			Help:        "Read-only transactions begun ahead of their callers' next query (SQLENGINE_TX_AHEAD), held now.",
			ConstLabels: prometheus.Labels{"server": server, "backend": backend},
		}, func() float64 { return float64(c.TransactionsAhead()) }))
	}
}

// SetEngineTimes makes every query the engine sent stats for an
// observation of t. Set it before the client is used.
func (c *Client) SetEngineTimes(t *EngineTimes) { c.times = t }

// observe records one query's last stats under operation.
func (t *EngineTimes) observe(operation string, st engineStats) {
	if t == nil {
		return
	}
	ms := func(v int64) float64 { return (time.Duration(max(v, 0)) * time.Millisecond).Seconds() }
	t.h.WithLabelValues(operation, PhaseQueued).Observe(ms(st.QueuedTimeMillis))
	t.h.WithLabelValues(operation, PhaseExecution).Observe(ms(st.executionMillis()))
	t.h.WithLabelValues(operation, PhaseCPU).Observe(ms(st.CPUTimeMillis))
}
