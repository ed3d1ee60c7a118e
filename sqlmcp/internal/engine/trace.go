package engine

import (
	"context"

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

// endQuery ends a query's back-end call and observes the engine's times
// from the last stats it sent for the query (opts is nil when the query
// never got that far). A query the engine never answered (unreachable,
// refused before the submit) has no stats and is not observed; a failed or
// cancelled one is, with what the engine reported last.
func (c *Client) endQuery(call *backendcall.Call, op string, opts *requestOptions, err error) {
	st, ok := opts.lastStats()
	if ok {
		c.times.observe(op, st)
	}
	if call.Traced() {
		queryID := ""
		if opts != nil {
			queryID = opts.QueryID()
		}
		attrs := []attribute.KeyValue{attribute.String("trino.query_id", queryID)}
		state := "FINISHED"
		if err != nil {
			state = "FAILED"
		}
		if ok {
			if err == nil && st.State != "" {
				state = st.State
			}
			attrs = append(attrs,
				attribute.Int64("trino.queued_ms", st.QueuedTimeMillis),
				attribute.Int64("trino.elapsed_ms", st.ElapsedTimeMillis),
				attribute.Int64("trino.execution_ms", st.executionMillis()),
				attribute.Int64("trino.cpu_ms", st.CPUTimeMillis),
				attribute.Int64("trino.processed_rows", st.ProcessedRows))
		}
		call.SetAttributes(append(attrs, attribute.String("trino.state", state))...)
	}
	call.End(err)
}
