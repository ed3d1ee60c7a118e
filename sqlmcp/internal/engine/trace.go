package engine

import (
	"context"
	"sync"

	"go.opentelemetry.io/otel/attribute"

	"github.com/mcpfleet/mcpfleet/shared/backendcall"
)

// HeaderTraceToken carries the caller's trace id to the coordinator, which
// logs it with the query (Trino's X-Trino-Trace-Token), so the engine's own
// logs and event listeners show the query under the same trace.
const HeaderTraceToken = "X-Trino-Trace-Token"

// SetRecorder makes every query a back-end call (mcpfleet_backend_* and a
// span "trino <tool>" with the query id, final state and the engine's
// queued and CPU time). Set it before the client is used.
func (c *Client) SetRecorder(r *backendcall.Recorder) { c.rec = r }

// operation is the operation label: the MCP tool the query runs for (a
// closed set), or "query" outside a tool call.
func operation(ctx context.Context) string {
	if t := backendcall.Tool(ctx); t != "" {
		return t
	}
	return "query"
}

// lastStats keeps the coordinator's latest report of a traced query.
type lastStats struct {
	mu sync.Mutex
	p  Progress
	ok bool
}

// traceStats asks for the coordinator's progress reports of a traced query
// (keeping any Progress callback of the caller), so that its final state
// and times can go on the span; nil when the call is not traced.
func (c *Client) traceStats(call *backendcall.Call, q *Query) *lastStats {
	if !call.Traced() {
		return nil
	}
	l := &lastStats{}
	user := q.Progress
	q.Progress = func(p Progress) {
		l.mu.Lock()
		l.p, l.ok = p, true
		l.mu.Unlock()
		if user != nil {
			user(p)
		}
	}
	return l
}

func endQuery(call *backendcall.Call, queryID string, last *lastStats, err error) {
	if call.Traced() {
		attrs := []attribute.KeyValue{attribute.String("trino.query_id", queryID)}
		state := "FINISHED"
		if err != nil {
			state = "FAILED"
		}
		if last != nil {
			last.mu.Lock()
			if last.ok {
				if err == nil && last.p.State != "" {
					state = last.p.State
				}
				attrs = append(attrs,
					attribute.Int64("trino.queued_ms", last.p.Queued.Milliseconds()),
					attribute.Int64("trino.elapsed_ms", last.p.Elapsed.Milliseconds()),
					attribute.Int64("trino.execution_ms", (last.p.Elapsed-last.p.Queued).Milliseconds()),
					attribute.Int64("trino.cpu_ms", last.p.CPU.Milliseconds()),
					attribute.Int64("trino.processed_rows", last.p.ProcessedRows))
			}
			last.mu.Unlock()
		}
		call.SetAttributes(append(attrs, attribute.String("trino.state", state))...)
	}
	call.End(err)
}
