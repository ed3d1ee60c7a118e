package serve

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/mcpfleet/mcpfleet/shared/httpauth"
)

// inflight bounds the requests one identity has in progress at once
// (MCP_MAX_INFLIGHT_PER_IDENTITY), listening streams included. It runs
// after the bearer check and before any body is read, so one identity's
// slow or large uploads hold at most max bodies.
type inflight struct {
	max int

	mu sync.Mutex
	n  map[httpauth.Principal]int
}

func newInflight(max int) *inflight {
	return &inflight{max: max, n: map[httpauth.Principal]int{}}
}

func (f *inflight) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p := httpauth.PrincipalFromContext(r.Context())
		f.mu.Lock()
		if f.n[p] >= f.max {
			f.mu.Unlock()
			tooMany(w, time.Second, fmt.Sprintf("too many requests in progress: this identity already has %d requests and listening streams open on this server (MCP_MAX_INFLIGHT_PER_IDENTITY); "+
				"wait for some to finish and retry, close listening streams you no longer need, or ask the operator to raise MCP_MAX_INFLIGHT_PER_IDENTITY", f.max))
			return
		}
		f.n[p]++
		f.mu.Unlock()
		defer func() {
			f.mu.Lock()
			if f.n[p]--; f.n[p] <= 0 {
				delete(f.n, p)
			}
			f.mu.Unlock()
		}()
		next.ServeHTTP(w, r)
	})
}

// tooMany answers 429 with Retry-After and a JSON-RPC error saying which
// limit was reached and what to do.
func tooMany(w http.ResponseWriter, retry time.Duration, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Retry-After", strconv.Itoa(int(max(retry, time.Second).Round(time.Second)/time.Second)))
	w.WriteHeader(http.StatusTooManyRequests)
	json.NewEncoder(w).Encode(map[string]any{
		"jsonrpc": "2.0",
		"id":      nil,
		"error":   map[string]any{"code": -32000, "message": msg},
	})
}
