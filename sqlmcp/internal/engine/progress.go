package engine

import (
	"database/sql"
	"fmt"
	"sync"
	"time"

	"github.com/trinodb/trino-go-client/trino"
)

// Progress is a running query's state as the coordinator reports it with
// each page.
type Progress struct {
	QueryID        string
	State          string  // QUEUED, PLANNING, STARTING, RUNNING, FINISHING, FINISHED, FAILED
	Percent        float64 // 0 when the coordinator does not know
	ProcessedRows  int64
	ProcessedBytes int64
	Elapsed        time.Duration
}

// String is the progress as a person reads it: "query RUNNING 45% — 1.2M
// rows scanned", "query QUEUED".
func (p Progress) String() string {
	s := "query " + p.State
	if p.Percent > 0 && p.Percent <= 100 {
		s += fmt.Sprintf(" %.0f%%", p.Percent)
	}
	if p.State != "QUEUED" || p.ProcessedRows > 0 {
		s += " — " + countText(p.ProcessedRows) + " rows scanned"
	}
	return s
}

// countText shortens a count the way Trino's web UI does: 950, 12.3K,
// 1.2M, 4.5B.
func countText(n int64) string {
	switch {
	case n < 1000:
		return fmt.Sprint(n)
	case n < 1_000_000:
		return fmt.Sprintf("%.1fK", float64(n)/1e3)
	case n < 1_000_000_000:
		return fmt.Sprintf("%.1fM", float64(n)/1e6)
	}
	return fmt.Sprintf("%.1fB", float64(n)/1e9)
}

// The driver's per-query progress callback parameters (trino-go-client
// reads them from the query's named arguments).
const (
	progressCallbackParam = "X-Trino-Progress-Callback"
	progressPeriodParam   = "X-Trino-Progress-Callback-Period"
	// ProgressPeriod is the least time between two reports of one query
	// in the same state (a change of state is reported at once).
	ProgressPeriod = 500 * time.Millisecond
)

// progressHub receives every progress report of the client's connections
// and hands each to the query it belongs to. The driver keeps the callback
// on the pooled connection after a query ends, so a callback per query
// would hear later queries on that connection; the hub is one per client
// and answers only queries that asked, by id.
type progressHub struct {
	mu   sync.Mutex
	byID map[string]func(Progress)
}

func (h *progressHub) add(id string, f func(Progress)) {
	h.mu.Lock()
	if h.byID == nil {
		h.byID = map[string]func(Progress){}
	}
	h.byID[id] = f
	h.mu.Unlock()
}

func (h *progressHub) remove(id string) {
	h.mu.Lock()
	delete(h.byID, id)
	h.mu.Unlock()
}

// Update implements trino.ProgressUpdater.
func (h *progressHub) Update(info trino.QueryProgressInfo) {
	h.mu.Lock()
	f := h.byID[info.QueryId]
	h.mu.Unlock()
	if f == nil {
		return
	}
	st := info.QueryStats
	f(Progress{
		QueryID: info.QueryId, State: st.State, Percent: float64(st.ProgressPercentage),
		ProcessedRows: st.ProcessedRows, ProcessedBytes: st.ProcessedBytes,
		Elapsed: time.Duration(st.ElapsedTimeMillis) * time.Millisecond,
	})
}

// progressArgs sets up q's progress reports: the query registers with the
// hub once the coordinator names it (the submit's answer, before the
// driver's first report), and leaves it when done runs.
func (c *Client) progressArgs(q Query, opts *requestOptions) (args []any, done func()) {
	if q.Progress == nil {
		return nil, func() {}
	}
	opts.onID = func(id string) { c.progress.add(id, q.Progress) }
	args = []any{sql.Named(progressCallbackParam, trino.ProgressUpdater(&c.progress)), sql.Named(progressPeriodParam, ProgressPeriod)}
	return args, func() {
		if id := opts.QueryID(); id != "" {
			c.progress.remove(id)
		}
	}
}
