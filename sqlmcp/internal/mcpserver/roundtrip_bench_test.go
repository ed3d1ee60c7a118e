package mcpserver_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcpfleet/mcpfleet/sqlmcp/internal/engine"
	"github.com/mcpfleet/mcpfleet/sqlmcp/internal/mcpserver"
	"github.com/mcpfleet/mcpfleet/sqlmcp/internal/trinotest"
)

// rawQuery runs sqlText over the bare Trino protocol (POST /v1/statement,
// then GET nextUri until there is none) and returns the rows read and the
// requests made: the floor execute_query is measured against.
func rawQuery(b *testing.B, sqlText string) (rows, requests int) {
	req, _ := http.NewRequest(http.MethodPost, fmt.Sprintf("http://%s:%d/v1/statement", trino.Host(), trino.Port()), strings.NewReader(sqlText))
	req.Header.Set("X-Trino-User", "svc")
	for {
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		requests++
		var page struct {
			NextURI string  `json:"nextUri"`
			Data    [][]any `json:"data"`
			Error   any     `json:"error"`
		}
		err = json.NewDecoder(resp.Body).Decode(&page)
		resp.Body.Close()
		if err != nil || page.Error != nil {
			b.Fatal(err, page.Error)
		}
		rows += len(page.Data)
		if page.NextURI == "" {
			return rows, requests
		}
		req, _ = http.NewRequest(http.MethodGet, page.NextURI, nil)
		req.Header.Set("X-Trino-User", "svc")
	}
}

// callRequests waits until the engine has answered the ROLLBACK that ends
// a call's read-only transaction (sent after the answer, off the call's
// path) and returns the requests the call made since the first n.
func callRequests(tb testing.TB, n int) int {
	deadline := time.Now().Add(30 * time.Second)
	for {
		reqs := trino.RequestsSince(n)
		rollback := ""
		for _, r := range reqs {
			switch {
			case r.Method == http.MethodPost && r.Body == "ROLLBACK":
				rollback = r.QueryID
			case rollback != "" && r.Method == http.MethodGet && r.QueryID == rollback && r.Status != 0:
				return len(reqs)
			}
		}
		if time.Now().After(deadline) {
			tb.Fatalf("the engine saw no ended ROLLBACK within 30s; requests: %d", len(reqs))
		}
		time.Sleep(100 * time.Microsecond) // a poll interval; the condition decides
	}
}

// BenchmarkExecuteQueryVsRawProtocol (issue 31): execute_query of 100 and
// 1,000 rows through the in-process MCP server, with every guard (the
// read-only transaction's START and ROLLBACK included), against the raw
// protocol floor in the same process; reports the engine requests of each
// and the ratios of requests and time. The call's time ends with its
// answer; its ROLLBACK, sent after the answer, is waited for (untimed)
// before the raw run, so the two never overlap and it is counted.
func BenchmarkExecuteQueryVsRawProtocol(b *testing.B) {
	h := newHarness(b, mcpserver.Options{MaxRowsCeiling: 10000}, func(c *engine.Config) {
		c.MaxResultBytes = 64 << 20
		c.ReadOnlyTransactions = true
	})
	for _, n := range []int{100, 1000} {
		b.Run(fmt.Sprintf("rows=%d", n), func(b *testing.B) {
			sqlText := fmt.Sprintf("SELECT * FROM %s WHERE id <= %d", trinotest.LargeTable, n)
			req := mcp.CallToolRequest{}
			req.Params.Name = "execute_query"
			req.Params.Arguments = map[string]any{"query": sqlText, "limit": n}
			var mcpTime, rawTime time.Duration
			var mcpReqs, rawReqs, loops int
			for b.Loop() {
				before := trino.RequestCount()
				t0 := time.Now()
				res, err := h.c.CallTool(context.Background(), req)
				mcpTime += time.Since(t0)
				if err != nil || res.IsError {
					b.Fatal(err, res.Content)
				}
				mcpReqs += callRequests(b, before)
				t0 = time.Now()
				rows, r := rawQuery(b, sqlText)
				rawTime += time.Since(t0)
				if rows != n {
					b.Fatalf("raw read %d rows, want %d", rows, n)
				}
				rawReqs += r
				loops++
			}
			b.ReportMetric(float64(mcpReqs)/float64(loops), "mcp-requests/op")
			b.ReportMetric(float64(rawReqs)/float64(loops), "raw-requests/op")
			b.ReportMetric(float64(mcpReqs)/float64(rawReqs), "requests-ratio")
			b.ReportMetric(float64(mcpTime)/float64(rawTime), "time-ratio")
		})
	}
}
