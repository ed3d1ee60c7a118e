package mcpserver_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcpfleet/mcpfleet/shared/audit"
	"github.com/mcpfleet/mcpfleet/shared/toolcall"

	"github.com/mcpfleet/mcpfleet/sqlmcp/internal/mcpserver"
	"github.com/mcpfleet/mcpfleet/sqlmcp/internal/trinotest"
)

// TestShutdownEndsEveryTransaction (hostile): 50 concurrent execute_query
// calls, reads that finish, cursors kept for fetch_more, failing and slow
// queries, then an immediate shutdown in the server's order (the calls'
// contexts end, the held cursors close, the engine client closes last):
// once the engine client's Close returns, the engine has answered a
// ROLLBACK for every read-only transaction it started, with no wait in
// the test. The engine is this test's own, so its count of open
// transactions is this server's.
func TestShutdownEndsEveryTransaction(t *testing.T) {
	s := trinotest.Start(t, trinotest.WithLargeTableRows(20000), trinotest.WithPageSize(100))
	h := newHarnessOn(t, s, mcpserver.Options{}, nil, toolcall.Config{Audit: audit.Config{Dest: "off"}})
	queries := []map[string]any{
		{"query": "SELECT id FROM " + trinotest.LargeTable + " WHERE id <= 50"},                // read to the end
		{"query": "SELECT id FROM " + trinotest.LargeTable + " ORDER BY id", "limit": 5},       // a cursor held
		{"query": "SELECT * FROM sales.public.no_such_table"},                                  // fails on the engine
		{"query": "SELECT pause_ms(60000) AS at_shutdown"},                                     // running at shutdown
		{"query": "SELECT id FROM " + trinotest.LargeTable + " WHERE id <= 900", "limit": 900}, // several pages
	}
	ctx, cancel := context.WithCancel(context.Background())
	var calls sync.WaitGroup
	for i := range 50 {
		calls.Add(1)
		go func() {
			defer calls.Done()
			req := mcp.CallToolRequest{}
			req.Params.Name = "execute_query"
			req.Params.Arguments = queries[i%len(queries)]
			h.c.CallTool(ctx, req) // any outcome: the shutdown cuts some short
		}()
	}
	// Shut down as soon as the first transaction has started.
	deadline := time.Now().Add(20 * time.Second)
	for s.OpenTransactions() == 0 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	cancel()
	h.tools.Close()
	calls.Wait()
	if err := h.eng.Close(); err != nil {
		t.Fatal(err)
	}
	starts, ends := trinotest.TransactionEnds(s.Requests())
	if open := s.OpenTransactions(); open != 0 || starts == 0 || ends != starts {
		t.Errorf("after shutdown: %d transactions started, %d ROLLBACKs answered, %d still open on the engine", starts, ends, open)
	}
	t.Logf("%d of the 50 calls started a transaction", starts)
}
