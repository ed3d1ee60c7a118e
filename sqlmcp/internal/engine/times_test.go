package engine_test

import (
	"context"
	"errors"
	"net"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/mcpfleet/mcpfleet/shared/backendcall"

	"github.com/mcpfleet/mcpfleet/sqlmcp/internal/engine"
	"github.com/mcpfleet/mcpfleet/sqlmcp/internal/trinotest"
)

// histo is one series of mcpfleet_trino_query_engine_seconds.
type histo struct {
	count uint64
	sum   float64
}

// engineTimes reads mcpfleet_trino_query_engine_seconds from reg by
// operation and phase; it fails on a series without server="sqlmcp".
func engineTimes(t *testing.T, reg *prometheus.Registry) map[[2]string]histo {
	t.Helper()
	fams, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[[2]string]histo{}
	for _, f := range fams {
		if f.GetName() != "mcpfleet_trino_query_engine_seconds" {
			continue
		}
		for _, m := range f.GetMetric() {
			l := map[string]string{}
			for _, p := range m.GetLabel() {
				l[p.GetName()] = p.GetValue()
			}
			if l["server"] != "sqlmcp" || len(l) != 3 {
				t.Errorf("series with labels %v, want server, operation and phase only", l)
			}
			out[[2]string{l["operation"], l["phase"]}] = histo{m.GetHistogram().GetSampleCount(), m.GetHistogram().GetSampleSum()}
		}
	}
	return out
}

// wantTimes is the histogram after one observation of each stats under op.
func wantTimes(op string, stats ...trinotest.Stats) map[[2]string]histo {
	out := map[[2]string]histo{}
	add := func(phase string, ms int64) {
		h := out[[2]string{op, phase}]
		h.count++
		h.sum += float64(ms) / 1000
		out[[2]string{op, phase}] = h
	}
	for _, s := range stats {
		add(engine.PhaseQueued, s.QueuedMillis)
		add(engine.PhaseExecution, s.ElapsedMillis-s.QueuedMillis)
		add(engine.PhaseCPU, s.CPUMillis)
	}
	return out
}

func sameTimes(got, want map[[2]string]histo) bool {
	if len(got) != len(want) {
		return false
	}
	for k, w := range want {
		g := got[k]
		if g.count != w.count || g.sum-w.sum > 1e-9 || w.sum-g.sum > 1e-9 {
			return false
		}
	}
	return true
}

// Each query the engine answered is one observation per phase, with the
// times of the last answer the engine sent for it — read back from the
// engine's own record of what it told the client — under the tool that
// sent it: a finished query, a result of several pages, a query the engine
// failed (its FAILED answer carries stats), a read-only query behind
// START TRANSACTION (whose own stats do not count). The engine queues
// every query 150 ms and pause_ms keeps its runner busy, so the phases are
// not zero.
func TestEngineTimesObserved(t *testing.T) {
	const queue = 150 * time.Millisecond
	srv := trinotest.Start(t, trinotest.WithQueueTime(queue), trinotest.WithPageSize(2), trinotest.WithLargeTableRows(-1))
	cases := []struct {
		name, sql string
		tool      string
		readOnly  bool
		fail      bool
		minCPU    time.Duration
	}{
		{name: "finished", sql: "SELECT pause_ms(120) AS p", tool: "execute_query", minCPU: 100 * time.Millisecond},
		{name: "pages", sql: "SELECT id FROM sales.public.orders ORDER BY id", tool: "execute_query"},
		{name: "failed", sql: "SELECT * FROM no_such_table", tool: "execute_query", fail: true},
		{name: "outside a tool", sql: "SELECT 1", tool: ""},
		{name: "read-only transaction", sql: "SELECT 2", tool: "list_catalogs", readOnly: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			reg := prometheus.NewRegistry()
			c := newClient(t, srv, func(cfg *engine.Config) { cfg.ReadOnlyTransactions = tc.readOnly })
			c.SetEngineTimes(engine.NewEngineTimes(reg, "sqlmcp"))
			ctx := context.Background()
			op := "query"
			if tc.tool != "" {
				ctx, op = backendcall.ContextWithTool(ctx, tc.tool), tc.tool
			}
			before := len(srv.Queries())
			sum, err := c.Stream(ctx, engine.Query{SQL: tc.sql}, nil, nil)
			if (err != nil) != tc.fail {
				t.Fatalf("query error %v, want failure %v", err, tc.fail)
			}
			qi, ok := srv.Query(sum.QueryID)
			if !ok {
				t.Fatalf("the engine has no query %q", sum.QueryID)
			}
			wantState := trinotest.StateFinished
			if tc.fail {
				wantState = trinotest.StateFailed
			}
			st := qi.Stats
			if st.State != wantState || st.QueuedMillis < queue.Milliseconds() || st.CPUMillis < tc.minCPU.Milliseconds() || st.ElapsedMillis < st.QueuedMillis+st.CPUMillis {
				t.Fatalf("the engine's last stats %+v: want %s, queued >= %v, CPU >= %v, elapsed >= queued + CPU", st, wantState, queue, tc.minCPU)
			}
			if tc.readOnly && len(srv.Queries())-before < 2 {
				t.Fatalf("%d statements: START TRANSACTION was not sent", len(srv.Queries())-before)
			}
			if got, want := engineTimes(t, reg), wantTimes(op, st); !sameTimes(got, want) {
				t.Errorf("histogram %v, want %v (the engine's last stats %+v)", got, want, st)
			}
		})
	}
}

// A query stopped at its row limit is cancelled on the engine; it is
// observed once, with the stats of the last answer read: it had left the
// queue, and what it ran so far is execution time.
func TestEngineTimesTruncated(t *testing.T) {
	const queue = 100 * time.Millisecond
	srv := trinotest.Start(t, trinotest.WithQueueTime(queue), trinotest.WithPageSize(2), trinotest.WithLargeTableRows(-1))
	reg := prometheus.NewRegistry()
	c := newClient(t, srv, nil)
	c.SetEngineTimes(engine.NewEngineTimes(reg, "sqlmcp"))
	res, err := c.Query(backendcall.ContextWithTool(context.Background(), "execute_query"), engine.Query{SQL: "SELECT id FROM sales.public.orders", Limit: 1})
	if err != nil || !res.Truncated {
		t.Fatalf("query: %v, truncated %v", err, res != nil && res.Truncated)
	}
	waitCancelled(t, srv, res.QueryID)
	qi := queryInfo(t, srv, res.QueryID)
	got := engineTimes(t, reg)
	for _, phase := range []string{engine.PhaseQueued, engine.PhaseExecution, engine.PhaseCPU} {
		if h := got[[2]string{"execute_query", phase}]; h.count != 1 {
			t.Errorf("phase %s observed %d times, want 1", phase, h.count)
		}
	}
	if q := got[[2]string{"execute_query", engine.PhaseQueued}].sum; q != float64(qi.Stats.QueuedMillis)/1000 || q < queue.Seconds() {
		t.Errorf("queued %vs, want the engine's %dms (>= %v)", q, qi.Stats.QueuedMillis, queue)
	}
	if e := got[[2]string{"execute_query", engine.PhaseExecution}].sum; e*1000 > float64(qi.Stats.ElapsedMillis-qi.Stats.QueuedMillis)+1e-6 {
		t.Errorf("execution %vs is more than the engine's final %dms", e, qi.Stats.ElapsedMillis-qi.Stats.QueuedMillis)
	}
}

// A query the engine never answered has no stats and is not observed (the
// back-end request is still counted as an error); a query refused before
// it is sent (an empty statement) is neither.
func TestEngineTimesNotObservedWithoutStats(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	reg := prometheus.NewRegistry()
	c, err := engine.New(engine.Config{Host: "127.0.0.1", Port: port, RetryTimeout: 300 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetEngineTimes(engine.NewEngineTimes(reg, "sqlmcp"))
	ctx := backendcall.ContextWithTool(context.Background(), "execute_query")
	if _, err := c.Query(ctx, engine.Query{SQL: "SELECT 1"}); err == nil {
		t.Fatal("a query against a closed port succeeded")
	}
	if _, err := c.Query(ctx, engine.Query{SQL: "  "}); err == nil {
		t.Fatal("an empty query was accepted")
	}
	if got := engineTimes(t, reg); len(got) != 0 {
		t.Errorf("observed without stats from the engine: %v", got)
	}
}

// Registering the histogram twice in one registry is a programming error
// that panics at start-up, not a silent second family.
func TestEngineTimesRegisteredOnce(t *testing.T) {
	reg := prometheus.NewRegistry()
	engine.NewEngineTimes(reg, "sqlmcp")
	defer func() {
		var are prometheus.AlreadyRegisteredError
		if r := recover(); r == nil {
			t.Fatal("a second registration did not panic")
		} else if err, ok := r.(error); !ok || !errors.As(err, &are) {
			t.Fatalf("panic %v, want AlreadyRegisteredError", r)
		}
	}()
	engine.NewEngineTimes(reg, "sqlmcp")
}

// A query the caller cancels, or that times out, while it runs is observed
// once, with the stats of the last answer read: the whole queue time and
// the execution so far (no more than the engine's final account).
func TestEngineTimesCancelledAndTimedOut(t *testing.T) {
	const queue = 100 * time.Millisecond
	srv := trinotest.Start(t, trinotest.WithQueueTime(queue), trinotest.WithMaxWait(50*time.Millisecond), trinotest.WithLargeTableRows(-1))
	cases := []struct {
		name    string
		timeout time.Duration // 0: the caller cancels once the engine says RUNNING
		kind    engine.Kind
	}{
		{"cancelled", 0, engine.Canceled},
		{"timed out", 1500 * time.Millisecond, engine.Timeout},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			reg := prometheus.NewRegistry()
			c := newClient(t, srv, func(cfg *engine.Config) {
				if tc.timeout > 0 {
					cfg.QueryTimeout = tc.timeout
				}
			})
			c.SetEngineTimes(engine.NewEngineTimes(reg, "sqlmcp"))
			ctx, cancel := context.WithCancel(backendcall.ContextWithTool(context.Background(), "execute_query"))
			defer cancel()
			q := engine.Query{SQL: "SELECT pause_ms(60000) AS slow", Progress: func(p engine.Progress) {
				if tc.timeout == 0 && p.State == trinotest.StateRunning {
					cancel()
				}
			}}
			sum, err := c.Stream(ctx, q, nil, nil)
			if engine.KindOf(err) != tc.kind {
				t.Fatalf("err = %v (kind %v), want %v", err, engine.KindOf(err), tc.kind)
			}
			waitCancelled(t, srv, sum.QueryID)
			final := queryInfo(t, srv, sum.QueryID).Stats
			got := engineTimes(t, reg)
			for _, phase := range []string{engine.PhaseQueued, engine.PhaseExecution, engine.PhaseCPU} {
				if h := got[[2]string{"execute_query", phase}]; h.count != 1 {
					t.Errorf("phase %s observed %d times, want 1", phase, h.count)
				}
			}
			queued := got[[2]string{"execute_query", engine.PhaseQueued}].sum
			exec := got[[2]string{"execute_query", engine.PhaseExecution}].sum
			if queued != float64(final.QueuedMillis)/1000 || queued < queue.Seconds() {
				t.Errorf("queued %vs, want the engine's %dms (>= %v)", queued, final.QueuedMillis, queue)
			}
			if exec*1000 > float64(final.ElapsedMillis-final.QueuedMillis)+1e-6 || (tc.timeout > 0 && exec <= 0) {
				t.Errorf("execution %vs: want more than 0 after a timeout and at most the engine's final %dms", exec, final.ElapsedMillis-final.QueuedMillis)
			}
		})
	}
}
