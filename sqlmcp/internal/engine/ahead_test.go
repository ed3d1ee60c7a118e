package engine_test

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/mcpfleet/mcpfleet/shared/e2e"
	"github.com/mcpfleet/mcpfleet/shared/syncbuf"

	"github.com/mcpfleet/mcpfleet/sqlmcp/internal/engine"
	"github.com/mcpfleet/mcpfleet/sqlmcp/internal/trinotest"
)

// aheadClient is a client on an engine of its own (its transactions are
// only the test's) with transactions begun ahead kept for ahead.
func aheadClient(t *testing.T, ahead time.Duration, opts ...trinotest.Option) (*trinotest.Server, *engine.Client) {
	s := trinotest.Start(t, append([]trinotest.Option{trinotest.WithLargeTableRows(2000)}, opts...)...)
	c := newClient(t, s, func(c *engine.Config) { c.ReadOnlyTransactions = true; c.TxAhead = ahead })
	return s, c
}

// statements are the POSTs of s since n: SQL text and the transaction id
// each was sent in.
func statements(s *trinotest.Server, n int) []trinotest.Request {
	var out []trinotest.Request
	for _, r := range s.RequestsSince(n) {
		if r.Method == http.MethodPost {
			out = append(out, r)
		}
	}
	return out
}

func readAll(t *testing.T, c *engine.Client, ctx context.Context, sql string) {
	t.Helper()
	cur, err := c.Open(ctx, engine.Query{SQL: sql})
	if err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	if _, more, err := cur.Page(ctx, 10000, 0); err != nil || more {
		t.Fatalf("%s: more %v, %v", sql, more, err)
	}
}

// TestTxAheadTakesStartOffThePath: once a caller's query ended, their
// next read-only transaction is begun; their next query is sent in it,
// with no START on its path, and is still refused writes by the engine.
// With TxAhead 0 every query begins its own.
func TestTxAheadTakesStartOffThePath(t *testing.T) {
	const q = "SELECT id FROM " + trinotest.LargeTable + " WHERE id <= 10"
	for _, tc := range []struct {
		name  string
		ahead time.Duration
	}{{"ahead", time.Minute}, {"off", 0}} {
		t.Run(tc.name, func(t *testing.T) {
			s, c := aheadClient(t, tc.ahead)
			want := 0
			if tc.ahead > 0 {
				want = 1
			}
			readAll(t, c, t.Context(), q) // the first begins its own
			settle(t, s, c, want)
			reg := prometheus.NewRegistry()
			engine.RegisterTransactionsAhead(reg, "sqlmcp", map[string]*engine.Client{"": c})
			if got := gauge(t, reg); got != float64(want) {
				t.Errorf("mcpfleet_trino_transactions_ahead = %v, want %d", got, want)
			}
			for i := range 3 {
				n := s.RequestCount()
				readAll(t, c, t.Context(), q)
				st := statements(s, n)
				first := st[0]
				switch {
				case tc.ahead > 0 && (first.Body != q || first.Header.Get("X-Trino-Transaction-Id") == "" || first.Header.Get("X-Trino-Transaction-Id") == "NONE"):
					t.Fatalf("query %d: first statement %q in transaction %q; want the query, in the transaction begun ahead", i, first.Body, first.Header.Get("X-Trino-Transaction-Id"))
				case tc.ahead == 0 && first.Body != "START TRANSACTION READ ONLY":
					t.Fatalf("query %d: first statement %q, want its own START", i, first.Body)
				}
				settle(t, s, c, want)
			}
			// Still read-only: the engine refuses a write in it.
			_, err := c.Query(t.Context(), engine.Query{SQL: "INSERT INTO " + trinotest.LargeTable + " (id) VALUES (-1)"})
			if err == nil || !strings.Contains(strings.ToLower(err.Error()), "read") {
				t.Errorf("a write in a read-only transaction: %v", err)
			}
			c.Close()
			if open := s.OpenTransactions(); open != 0 {
				t.Errorf("after Close: %d open transactions", open)
			}
			if got := gauge(t, reg); got != 0 {
				t.Errorf("after Close: mcpfleet_trino_transactions_ahead = %v", got)
			}
		})
	}
}

// gauge reads mcpfleet_trino_transactions_ahead from reg.
func gauge(t *testing.T, reg *prometheus.Registry) float64 {
	t.Helper()
	n, err := testutil.GatherAndCount(reg, "mcpfleet_trino_transactions_ahead")
	if err != nil || n != 1 {
		t.Fatalf("mcpfleet_trino_transactions_ahead: %d series, %v", n, err)
	}
	mfs, _ := reg.Gather()
	return mfs[0].GetMetric()[0].GetGauge().GetValue()
}

// settle waits until every transaction the engine saw started has ended
// but the ahead ones c holds (want of them), and every request was
// answered.
func settle(t *testing.T, s *trinotest.Server, c *engine.Client, want int) {
	t.Helper()
	e2e.WaitFor(t, fmt.Sprintf("%d transactions begun ahead and the others ended", want), func() bool {
		reqs := s.Requests()
		for _, r := range reqs {
			if r.Status == 0 {
				return false
			}
		}
		starts, ends := trinotest.TransactionEnds(reqs)
		return c.TransactionsAhead() == want && starts == ends+want && s.OpenTransactions() == want
	})
}

// TestTxAheadIsTheCallersOwn: a transaction begun ahead is only ever taken
// by a query of the caller it was begun for. Callers that differ in any
// one part of who they are run interleaved and concurrently; every
// statement sent in a transaction must have been sent by whoever started
// that transaction, and no transaction carries two queries at once.
func TestTxAheadIsTheCallersOwn(t *testing.T) {
	s, c := aheadClient(t, time.Minute)
	callers := []engine.Identity{
		{},
		{RunAs: "alice"},
		{RunAs: "bob"},
		{RunAs: "alice", Principal: "alice"},
		{RunAs: "alice", Principal: "alice", Subject: "sub-1"},
		{RunAs: "alice", Principal: "alice", Subject: "sub-2"},
		{RunAs: "alice", Principal: "alice", Subject: "sub-1", Email: "a@example.com"},
		{RunAs: "alice", Principal: "alice", Subject: "sub-1", Email: "A@example.com"},
		{Principal: "alice"},
		{Principal: "alice,bob"},
		{Principal: "alice_bob"},
		{RunAs: "Alice"},
		{RunAs: "alice "},
		{RunAs: "al\u0456ce"}, // Cyrillic i
		{Principal: "carol", Subject: "s\x00"},
		{Principal: "carol", Subject: "s"},
	}
	var wg sync.WaitGroup
	for round := range 4 {
		for i, id := range callers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				ctx := engine.WithIdentity(t.Context(), id)
				sql := fmt.Sprintf("SELECT %d AS caller, %d AS round", i, round)
				if _, err := c.Query(ctx, engine.Query{SQL: sql}); err != nil {
					t.Errorf("caller %d round %d: %v", i, round, err)
				}
			}()
		}
		wg.Wait()
	}
	c.Close()
	inTx := map[string][]string{} // transaction -> statements sent in it
	for _, r := range s.Requests() {
		tx := r.Header.Get("X-Trino-Transaction-Id")
		if r.Method != http.MethodPost || tx == "" || tx == "NONE" {
			continue
		}
		st, ok := s.TransactionStarter(tx)
		if !ok {
			t.Errorf("%q sent in transaction %s, which the engine never started", r.Body, tx)
			continue
		}
		got := trinotest.TxStarter{User: r.Header.Get("X-Trino-User"), ClientTags: r.Header.Get("X-Trino-Client-Tags"), ClientInfo: r.Header.Get("X-Trino-Client-Info")}
		if got != st {
			t.Errorf("%q sent as %+v in a transaction started by %+v", r.Body, got, st)
		}
		if r.Body != "ROLLBACK" {
			inTx[tx] = append(inTx[tx], r.Body)
		}
	}
	for tx, sqls := range inTx {
		if len(sqls) > 1 {
			t.Errorf("transaction %s carried %d queries: %q", tx, len(sqls), sqls)
		}
	}
	if open := s.OpenTransactions(); open != 0 {
		t.Errorf("after Close: %d open transactions", open)
	}
}

// TestTxAheadExpires: a transaction begun ahead that no query takes is
// rolled back after TxAhead, and nothing more is begun then.
func TestTxAheadExpires(t *testing.T) {
	s, c := aheadClient(t, 300*time.Millisecond)
	readAll(t, c, t.Context(), "SELECT 1")
	// The query's transaction, then the one begun ahead, both ended.
	e2e.WaitFor(t, "the transaction begun ahead begun, then rolled back", func() bool {
		starts, ends := trinotest.TransactionEnds(s.Requests())
		return starts == 2 && ends == 2 && c.TransactionsAhead() == 0 && s.OpenTransactions() == 0
	})
	settle(t, s, c, 0)
}

// TestTxAheadForgottenByEngine: a coordinator that forgot the transaction
// begun ahead (restarted) refuses the query before running it; the query
// is sent again in a transaction begun for it, and answers.
func TestTxAheadForgottenByEngine(t *testing.T) {
	s, c := aheadClient(t, time.Minute)
	readAll(t, c, t.Context(), "SELECT 1")
	settle(t, s, c, 1)
	if n := s.ForgetTransactions(); n != 1 {
		t.Fatalf("forgot %d transactions, want 1", n)
	}
	n := s.RequestCount()
	res, err := c.Query(t.Context(), engine.Query{SQL: "SELECT 42 AS answer"})
	if err != nil {
		t.Fatalf("query after the engine forgot its transaction: %v", err)
	}
	if fmt.Sprint(res.Rows) != "[[42]]" {
		t.Errorf("rows %v", res.Rows)
	}
	var got []string // the forgotten transaction's ROLLBACK, in the background, aside
	for _, r := range statements(s, n) {
		if r.Body != "ROLLBACK" {
			got = append(got, r.Body)
		}
	}
	want := []string{"SELECT 42 AS answer", "START TRANSACTION READ ONLY", "SELECT 42 AS answer"}
	if strings.Join(got[:min(3, len(got))], "|") != strings.Join(want, "|") {
		t.Errorf("statements %q, want %q first", got, want)
	}
}

// TestTxAheadCancelledCallSendsNothing: a call cancelled before it was
// sent neither sends anything nor uses up the transaction begun ahead.
func TestTxAheadCancelledCallSendsNothing(t *testing.T) {
	s, c := aheadClient(t, time.Minute)
	readAll(t, c, t.Context(), "SELECT 1")
	settle(t, s, c, 1)
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	n := s.RequestCount()
	if _, err := c.Query(ctx, engine.Query{SQL: "SELECT 2"}); err == nil {
		t.Fatal("a cancelled call ran")
	}
	if _, err := c.Open(ctx, engine.Query{SQL: "SELECT 2"}); err == nil {
		t.Fatal("a cancelled call opened a cursor")
	}
	if reqs := s.RequestsSince(n); len(reqs) != 0 {
		t.Errorf("a cancelled call sent %d requests", len(reqs))
	}
	n = s.RequestCount()
	readAll(t, c, t.Context(), "SELECT 3")
	if st := statements(s, n); st[0].Body != "SELECT 3" {
		t.Errorf("the next query began with %q, want it in the transaction begun ahead", st[0].Body)
	}
}

// TestRefusedStartKeepsTransactionsForOthers: a START the engine refuses
// for one caller (here: their impersonation is denied) says nothing about
// whether the engine does transactions. Every other caller's query still
// runs in a read-only transaction, begun ahead or not.
func TestRefusedStartKeepsTransactionsForOthers(t *testing.T) {
	rules, err := trinotest.ParseAccessRules([]byte(`{"impersonation": [{"original_user": "svc", "new_user": "alice"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	for _, ahead := range []time.Duration{0, time.Minute} {
		t.Run(fmt.Sprint("ahead=", ahead), func(t *testing.T) {
			s := trinotest.Start(t, trinotest.WithLargeTableRows(-1), trinotest.WithTLS(),
				trinotest.WithPassword("svc", "pw"), trinotest.WithAccessRules(rules))
			c := newClient(t, s, func(c *engine.Config) {
				c.User, c.Password, c.ReadOnlyTransactions, c.TxAhead = "svc", "pw", true, ahead
			})
			mallory := engine.WithIdentity(t.Context(), engine.Identity{RunAs: "mallory"})
			alice := engine.WithIdentity(t.Context(), engine.Identity{RunAs: "alice"})
			for i := range 3 {
				if _, err := c.Query(mallory, engine.Query{SQL: "SELECT 1"}); err == nil || !strings.Contains(err.Error(), "cannot impersonate") {
					t.Fatalf("mallory's query %d: %v, want the engine's refusal", i, err)
				}
				n := s.RequestCount()
				if _, err := c.Query(alice, engine.Query{SQL: "SELECT 2"}); err != nil {
					t.Fatalf("alice's query %d: %v", i, err)
				}
				st := statements(s, n)
				tx := st[0].Header.Get("X-Trino-Transaction-Id")
				if st[0].Body == "SELECT 2" && (tx == "" || tx == "NONE") {
					t.Fatalf("alice's query %d ran outside a read-only transaction after mallory's START was refused", i)
				}
			}
		})
	}
}

// TestEngineWithoutTransactions: an engine that answers START as
// unsupported is used without read-only transactions from then on, says
// so once in the log, and begins nothing ahead.
func TestEngineWithoutTransactions(t *testing.T) {
	s := trinotest.Start(t, trinotest.WithLargeTableRows(-1), trinotest.WithoutTransactions())
	c := newClient(t, s, func(c *engine.Config) { c.ReadOnlyTransactions, c.TxAhead = true, time.Minute })
	var log syncbuf.Buffer
	c.SetLogger(slog.New(slog.NewTextHandler(&log, nil)))
	for i := range 3 {
		res, err := c.Query(t.Context(), engine.Query{SQL: fmt.Sprintf("SELECT %d", i)})
		if err != nil || fmt.Sprint(res.Rows) != fmt.Sprintf("[[%d]]", i) {
			t.Fatalf("query %d: %v %v", i, res, err)
		}
	}
	starts, _ := trinotest.TransactionEnds(s.Requests())
	if starts != 1 || c.TransactionsAhead() != 0 {
		t.Errorf("%d STARTs, %d held ahead; want 1 (refused, remembered) and 0", starts, c.TransactionsAhead())
	}
	if n := strings.Count(log.String(), "refused START TRANSACTION READ ONLY as unsupported"); n != 1 {
		t.Errorf("the fallback was logged %d times, want once:\n%s", n, log.String())
	}
}
