package mcpserver

import (
	"bytes"
	"encoding/json"
	"sync"
	"testing"

	"github.com/mcpfleet/mcpfleet/proxymcp/internal/haproxy"
)

// TestInfoAnswerPerExchange: callers that share a "show info" exchange
// share show_info's answer to it; a later exchange gets its own answer
// (never the one before), whatever the order callers of both arrive in.
func TestInfoAnswerPerExchange(t *testing.T) {
	exchange := func(pid int64) *haproxy.Info {
		fields := map[string]any{"Version": "3.2.0", "Pid": pid, "Uptime": "0d 0h00m01s", "CurrConns": int64(1), "Maxconn": int64(100), "CumConns": int64(7)}
		enc, _ := json.Marshal(fields)
		return &haproxy.Info{Fields: fields, JSON: enc}
	}
	want := func(info *haproxy.Info) string {
		b, _ := json.Marshal(map[string]any{"info": info.JSON, "source": string(haproxy.SourceRuntime)})
		return string(b)
	}
	t1, t2 := exchange(1), exchange(2)
	var tl tools
	var wg sync.WaitGroup
	for i := range 40 {
		info := t1
		if i%2 == 1 {
			info = t2
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			a := tl.infoAnswer(info)
			if string(a.body) != want(info) || a.summary != infoSummary(info.Fields) {
				t.Errorf("exchange of pid %v answered %s / %q", info.Fields["Pid"], a.body, a.summary)
			}
		}()
	}
	wg.Wait()
	a, b := tl.infoAnswer(t2), tl.infoAnswer(t2)
	if a != b {
		t.Error("two callers of one exchange built two answers")
	}
	if c := tl.infoAnswer(t1); c == a || !bytes.Contains(c.body, []byte(`"Pid":1`)) {
		t.Errorf("another exchange got %s", c.body)
	}
	// The shared body cannot be grown in place by one of its callers.
	if len(a.body) != cap(a.body) {
		t.Errorf("body len %d, cap %d", len(a.body), cap(a.body))
	}
}
