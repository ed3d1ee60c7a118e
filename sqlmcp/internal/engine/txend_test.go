package engine_test

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpfleet/mcpfleet/shared/e2e"

	"github.com/mcpfleet/mcpfleet/sqlmcp/internal/engine"
	"github.com/mcpfleet/mcpfleet/sqlmcp/internal/trinotest"
)

// TestCursorEndsItsTransaction: the ROLLBACK of a cursor's read-only
// transaction, sent after the rows are delivered (off the call's path),
// reaches the engine however reading ends, and a cursor kept for more
// pages keeps its transaction until then. The engine of its own counts
// only these queries' transactions.
func TestCursorEndsItsTransaction(t *testing.T) {
	s := trinotest.Start(t, trinotest.WithLargeTableRows(20000), trinotest.WithPageSize(100))
	c := newClient(t, s, func(c *engine.Config) { c.ReadOnlyTransactions = true })
	large := "SELECT id FROM " + trinotest.LargeTable + " ORDER BY id"
	tests := []struct {
		name    string
		run     func(t *testing.T)
		started int // transactions the engine saw started
	}{
		{"every row read", func(t *testing.T) {
			cur, err := c.Open(t.Context(), engine.Query{SQL: "SELECT id FROM " + trinotest.LargeTable + " WHERE id <= 250"})
			if err != nil {
				t.Fatal(err)
			}
			rows, more, err := cur.Page(t.Context(), 1000, 0)
			if err != nil || more || len(rows) != 250 {
				t.Fatalf("page: %d rows, more %v, %v", len(rows), more, err)
			}
		}, 1},
		{"truncated read, cursor closed", func(t *testing.T) {
			cur, err := c.Open(t.Context(), engine.Query{SQL: large})
			if err != nil {
				t.Fatal(err)
			}
			if _, more, err := cur.Page(t.Context(), 5, 0); err != nil || !more {
				t.Fatalf("page: more %v, %v", more, err)
			}
			cur.Close()
		}, 1},
		{"pages kept for fetch_more", func(t *testing.T) {
			cur, err := c.Open(t.Context(), engine.Query{SQL: "SELECT id FROM " + trinotest.LargeTable + " WHERE id <= 300 ORDER BY id"})
			if err != nil {
				t.Fatal(err)
			}
			for i := range 2 {
				if _, more, err := cur.Page(t.Context(), 100, 0); err != nil || !more {
					t.Fatalf("page %d: more %v, %v", i, more, err)
				}
				// Between pages the transaction stays open.
				if n := s.OpenTransactions(); n != 1 {
					t.Fatalf("after page %d the engine holds %d transactions, want 1", i, n)
				}
			}
			if rows, more, err := cur.Page(t.Context(), 1000, 0); err != nil || more || len(rows) != 100 {
				t.Fatalf("last page: %d rows, more %v, %v", len(rows), more, err)
			}
		}, 1},
		{"query error", func(t *testing.T) {
			if _, err := c.Open(t.Context(), engine.Query{SQL: "SELECT * FROM sales.public.no_such_table"}); err == nil {
				t.Fatal("a query of a missing table succeeded")
			}
		}, 1},
		{"caller cancels while the query runs", func(t *testing.T) {
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			go func() {
				// Cancel once the engine runs the query.
				for ctx.Err() == nil {
					for _, q := range s.Queries() {
						if strings.Contains(q.SQL, "cancelled_in_tx") && q.State == "RUNNING" {
							cancel()
						}
					}
					time.Sleep(5 * time.Millisecond)
				}
			}()
			_, err := c.Open(ctx, engine.Query{SQL: "SELECT pause_ms(60000) AS cancelled_in_tx"})
			if engine.KindOf(err) != engine.Canceled {
				t.Fatalf("err = %v (kind %v), want canceled", err, engine.KindOf(err))
			}
		}, 1},
		{"caller cancelled before the start", func(t *testing.T) {
			ctx, cancel := context.WithCancel(t.Context())
			cancel()
			if _, err := c.Open(ctx, engine.Query{SQL: "SELECT 1"}); err == nil {
				t.Fatal("a cancelled call ran")
			}
		}, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			n := s.RequestCount()
			tc.run(t)
			defer func() {
				if t.Failed() {
					for _, r := range s.RequestsSince(n) {
						t.Logf("%s %s %q %s %d", r.Method, r.Path, r.Body, r.QueryID, r.Status)
					}
				}
			}()
			e2e.WaitFor(t, "ROLLBACK for every START", func() bool {
				starts, rollbacks := trinotest.TransactionEnds(s.RequestsSince(n))
				return starts == tc.started && rollbacks == starts
			})
			if open := s.OpenTransactions(); open != 0 {
				t.Errorf("the engine holds %d open transactions", open)
			}
			if tc.started == 0 {
				if reqs := s.RequestsSince(n); len(reqs) != 0 {
					t.Errorf("a call cancelled before it started sent %d requests", len(reqs))
				}
			}
		})
	}
}

// TestCloseWaitsForTransactionEnds: Close returns only once the engine has
// answered the ROLLBACK of every read that ended before it (the server's
// shutdown closes the client last), with no wait in the test.
func TestCloseWaitsForTransactionEnds(t *testing.T) {
	s := trinotest.Start(t, trinotest.WithLargeTableRows(1000))
	c := newClient(t, s, func(c *engine.Config) { c.ReadOnlyTransactions = true })
	const reads = 8
	for i := range reads {
		cur, err := c.Open(t.Context(), engine.Query{SQL: "SELECT id FROM " + trinotest.LargeTable + " WHERE id <= 10"})
		if err != nil {
			t.Fatal(err)
		}
		if _, more, err := cur.Page(t.Context(), 100, 0); err != nil || more {
			t.Fatalf("read %d: more %v, %v", i, more, err)
		}
	}
	c.Close()
	starts, rollbacks := trinotest.TransactionEnds(s.Requests())
	if starts != reads || rollbacks != reads || s.OpenTransactions() != 0 {
		t.Errorf("after Close: %d STARTs, %d answered ROLLBACKs, %d open transactions; want %d, %d, 0", starts, rollbacks, s.OpenTransactions(), reads, reads)
	}
}

// TestQueryEndsItsTransactionAfterItsAnswer: Query and Stream end their
// read-only transaction the way a cursor does: the answer does not wait
// for the ROLLBACK (on an engine that queues every statement for a second,
// a ROLLBACK cannot have finished when Query returns unless it was sent
// before the answer), and however reading ends (every row, the limit, a
// callback's error, the caller's cancellation) no transaction is left
// open once Close returned.
func TestQueryEndsItsTransactionAfterItsAnswer(t *testing.T) {
	s := trinotest.Start(t, trinotest.WithLargeTableRows(3000), trinotest.WithPageSize(100),
		trinotest.WithQueueTime(time.Second), trinotest.WithMaxWait(50*time.Millisecond))
	c := newClient(t, s, func(c *engine.Config) { c.ReadOnlyTransactions = true })
	q := engine.Query{SQL: "SELECT id FROM " + trinotest.LargeTable + " ORDER BY id"}
	// rollbackEnded: the engine finished a ROLLBACK submitted since the
	// first n requests.
	rollbackEnded := func(n int) bool {
		for _, r := range s.RequestsSince(n) {
			if r.Method == http.MethodPost && r.Body == "ROLLBACK" {
				if qi, ok := s.Query(r.QueryID); ok && qi.State == trinotest.StateFinished {
					return true
				}
			}
		}
		return false
	}
	tests := []struct {
		name string
		run  func(t *testing.T)
	}{
		{"Query, every row", func(t *testing.T) {
			res, err := c.Query(t.Context(), engine.Query{SQL: q.SQL, Limit: 5000})
			if err != nil || len(res.Rows) != 3000 || res.Truncated {
				t.Fatalf("query: %v", err)
			}
		}},
		{"Query, over its limit", func(t *testing.T) {
			res, err := c.Query(t.Context(), engine.Query{SQL: q.SQL, Limit: 150})
			if err != nil || len(res.Rows) != 150 || !res.Truncated {
				t.Fatalf("query: %v", err)
			}
		}},
		{"Stream, callback error", func(t *testing.T) {
			stopped := errors.New("enough")
			if _, err := c.Stream(t.Context(), q, nil, func([]any) error { return stopped }); !errors.Is(err, stopped) {
				t.Fatalf("stream: %v, want the callback's error", err)
			}
		}},
		{"Stream, caller cancels", func(t *testing.T) {
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			_, err := c.Stream(ctx, q, nil, func([]any) error { cancel(); return nil })
			if engine.KindOf(err) != engine.Canceled {
				t.Fatalf("stream: %v, want a cancellation", err)
			}
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			before := s.RequestCount()
			tc.run(t)
			if rollbackEnded(before) {
				t.Fatal("the ROLLBACK had ended when the answer came: the answer waited for it")
			}
			e2e.WaitFor(t, "ended transaction", func() bool { return s.OpenTransactions() == 0 && rollbackEnded(before) })
			var starts, rollbacks int
			for _, r := range s.RequestsSince(before) {
				switch {
				case r.Method == http.MethodPost && r.Body == "START TRANSACTION READ ONLY":
					starts++
				case r.Method == http.MethodPost && r.Body == "ROLLBACK":
					rollbacks++
				}
			}
			if starts != 1 || rollbacks != 1 {
				t.Errorf("%d STARTs, %d ROLLBACKs; want one each", starts, rollbacks)
			}
		})
	}
}

// TestCloseEndsEveryQueryTransaction: Query and Stream calls cut short by
// their callers' cancellation, by an engine error, by their limit or a
// callback, or read to the end, leave no transaction open on the engine
// once Close returned (the server closes its engine client last).
func TestCloseEndsEveryQueryTransaction(t *testing.T) {
	s := trinotest.Start(t, trinotest.WithLargeTableRows(5000), trinotest.WithPageSize(100))
	c := newClient(t, s, func(c *engine.Config) { c.ReadOnlyTransactions = true })
	large := "SELECT id FROM " + trinotest.LargeTable + " ORDER BY id"
	stopped := errors.New("enough")
	runs := []func(ctx context.Context){
		func(ctx context.Context) { c.Query(ctx, engine.Query{SQL: large + " LIMIT 50"}) },                  // read to the end
		func(ctx context.Context) { c.Query(ctx, engine.Query{SQL: large, Limit: 5}) },                      // over its limit
		func(ctx context.Context) { c.Query(ctx, engine.Query{SQL: "SELECT * FROM sales.public.no_such"}) }, // fails on the engine
		func(ctx context.Context) { c.Query(ctx, engine.Query{SQL: "SELECT pause_ms(60000) AS p"}) },        // running at the cancellation
		func(ctx context.Context) {
			c.Stream(ctx, engine.Query{SQL: large}, nil, func([]any) error { return stopped })
		},
	}
	ctx, cancel := context.WithCancel(t.Context())
	var calls sync.WaitGroup
	for i := range 30 {
		calls.Add(1)
		go func() {
			defer calls.Done()
			runs[i%len(runs)](ctx) // any outcome: the cancellation cuts some short
		}()
	}
	e2e.WaitFor(t, "started transaction", func() bool { return s.OpenTransactions() > 0 })
	cancel()
	calls.Wait()
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	starts, ends := trinotest.TransactionEnds(s.Requests())
	if open := s.OpenTransactions(); open != 0 || starts == 0 || ends != starts {
		t.Errorf("after Close: %d transactions started, %d ROLLBACKs answered, %d still open on the engine", starts, ends, open)
	}
	t.Logf("%d of the 30 calls started a transaction", starts)
}

// TestStoppedReadCancelsOnce: a read stopped with pages left (a cursor
// closed, Query over its limit, Stream stopped by its callback) cancels its
// query on the engine with one DELETE: sqlmcp's own, sent first, and not
// the driver's second one when it closes the rows with a prefetched page in
// hand (every round: the driver's DELETE was sent in most of them).
func TestStoppedReadCancelsOnce(t *testing.T) {
	s := trinotest.Start(t, trinotest.WithLargeTableRows(3000), trinotest.WithPageSize(100))
	c := newClient(t, s, func(c *engine.Config) { c.ReadOnlyTransactions = true })
	large := engine.Query{SQL: "SELECT id FROM " + trinotest.LargeTable + " ORDER BY id"}
	stopped := errors.New("enough")
	tests := []struct {
		name string
		run  func(t *testing.T) (queryID string)
	}{
		{"cursor closed", func(t *testing.T) string {
			cur, err := c.Open(t.Context(), large)
			if err != nil {
				t.Fatal(err)
			}
			if _, more, err := cur.Page(t.Context(), 150, 0); err != nil || !more {
				t.Fatalf("page: more %v, %v", more, err)
			}
			cur.Close()
			return cur.QueryID()
		}},
		{"Query over its limit", func(t *testing.T) string {
			res, err := c.Query(t.Context(), engine.Query{SQL: large.SQL, Limit: 150})
			if err != nil || !res.Truncated {
				t.Fatalf("query: %v", err)
			}
			return res.QueryID
		}},
		{"Stream stopped by its callback", func(t *testing.T) string {
			n := 0
			sum, err := c.Stream(t.Context(), large, nil, func([]any) error {
				if n++; n > 150 {
					return stopped
				}
				return nil
			})
			if !errors.Is(err, stopped) {
				t.Fatalf("stream: %v", err)
			}
			return sum.QueryID
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			for round := range 5 {
				before := s.RequestCount()
				id := tc.run(t)
				// The ROLLBACK follows the rows' close, and with it every DELETE.
				e2e.WaitFor(t, "ROLLBACK", func() bool { _, ended := trinotest.TransactionEnds(s.RequestsSince(before)); return ended > 0 })
				deletes := 0
				for _, r := range s.RequestsSince(before) {
					if r.Method == http.MethodDelete && r.QueryID == id {
						deletes++
					}
				}
				if deletes != 1 || !slices.Contains(s.Cancelled(), id) {
					t.Fatalf("round %d: %d DELETEs of query %s (cancelled: %v), want 1", round, deletes, id, slices.Contains(s.Cancelled(), id))
				}
			}
		})
	}
}
