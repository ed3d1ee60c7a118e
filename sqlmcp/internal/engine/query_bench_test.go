package engine_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/mcpfleet/mcpfleet/sqlmcp/internal/engine"
	"github.com/mcpfleet/mcpfleet/sqlmcp/internal/trinotest"
)

// BenchmarkQueryVsRawProtocol splits issue 31's execute_query figure: the
// engine client alone (no MCP) reading 100 and 1,000 rows, with and
// without the read-only transaction (its START and ROLLBACK, the ROLLBACK
// sent after the answer: waited for untimed, and counted), against the raw
// Trino protocol on the same test engine, alternating in one loop.
// x_raw is the ratio of the total times; requests/op and raw-requests/op
// count the engine's HTTP requests of each.
func BenchmarkQueryVsRawProtocol(b *testing.B) {
	raw := func(sqlText string) (rows, requests int) {
		req, _ := http.NewRequest(http.MethodPost, fmt.Sprintf("http://%s:%d/v1/statement", shared.Host(), shared.Port()), strings.NewReader(sqlText))
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
	for _, n := range []int{100, 1000} {
		for _, tx := range []bool{false, true} {
			b.Run(fmt.Sprintf("rows=%d/readonly_tx=%v", n, tx), func(b *testing.B) {
				c := newClient(b, shared, func(c *engine.Config) { c.MaxResultBytes = 64 << 20; c.ReadOnlyTransactions = tx })
				sqlText := fmt.Sprintf("SELECT * FROM %s WHERE id <= %d", trinotest.LargeTable, n)
				var qt, rt time.Duration
				reqs, rawReqs := 0, 0
				for b.Loop() {
					shared.ResetRequests()
					t0 := time.Now()
					res, err := c.Query(context.Background(), engine.Query{SQL: sqlText, Limit: n})
					qt += time.Since(t0)
					if err != nil || res.RowCount != n || res.Truncated {
						b.Fatalf("%d rows (truncated %v): %v", res.RowCount, res.Truncated, err)
					}
					if tx {
						// The ROLLBACK is sent after the answer: wait (untimed)
						// for the engine to answer it, so that it is counted
						// and does not overlap the raw run.
						deadline := time.Now().Add(30 * time.Second)
						for _, ended := trinotest.TransactionEnds(shared.Requests()); ended == 0; _, ended = trinotest.TransactionEnds(shared.Requests()) {
							if time.Now().After(deadline) {
								b.Fatal("the engine saw no ended ROLLBACK within 30s")
							}
							time.Sleep(100 * time.Microsecond) // a poll interval; the condition decides
						}
					}
					reqs += len(shared.Requests())
					t0 = time.Now()
					got, r := raw(sqlText)
					rt += time.Since(t0)
					if got != n {
						b.Fatalf("raw read %d rows, want %d", got, n)
					}
					rawReqs += r
				}
				b.ReportMetric(float64(reqs)/float64(b.N), "requests/op")
				b.ReportMetric(float64(rawReqs)/float64(b.N), "raw-requests/op")
				b.ReportMetric(float64(qt)/float64(rt), "x_raw")
			})
		}
	}
}
