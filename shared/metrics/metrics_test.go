package metrics

import (
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
)

// TestCachedChildrenCount proves the cached children record on the series
// of their labels, and that a series appears only once recorded.
func TestCachedChildrenCount(t *testing.T) {
	m := New("s", "v")
	if n := testutil.CollectAndCount(m.requests); n != 0 {
		t.Fatalf("%d request series before any request", n)
	}
	for range 3 {
		m.Request("ping", OK, time.Millisecond)
	}
	m.Request("ping", Error, time.Millisecond)
	m.Request("tools/call", OK, time.Millisecond)
	m.ToolCall("echo", OK, time.Millisecond)
	m.ToolCall("echo", ToolError, time.Millisecond)
	m.ToolCall("echo", ToolError, time.Millisecond)
	for _, c := range []struct {
		got  float64
		want float64
		what string
	}{
		{testutil.ToFloat64(m.requests.WithLabelValues("ping", OK)), 3, "ping ok"},
		{testutil.ToFloat64(m.requests.WithLabelValues("ping", Error)), 1, "ping error"},
		{testutil.ToFloat64(m.requests.WithLabelValues("tools/call", OK)), 1, "tools/call ok"},
		{testutil.ToFloat64(m.toolCalls.WithLabelValues("echo", OK)), 1, "echo ok"},
		{testutil.ToFloat64(m.toolCalls.WithLabelValues("echo", ToolError)), 2, "echo tool_error"},
	} {
		if c.got != c.want {
			t.Errorf("%s: %v, want %v", c.what, c.got, c.want)
		}
	}
	if n := testutil.CollectAndCount(m.requestDur); n != 2 {
		t.Errorf("%d duration series, want 2 (ping, tools/call)", n)
	}
}

// BenchmarkRequest is the metrics cost of one answered request.
func BenchmarkRequest(b *testing.B) {
	m := New("s", "v")
	b.ReportAllocs()
	for b.Loop() {
		m.Request("ping", OK, time.Microsecond)
	}
}

// BenchmarkRequestVec is BenchmarkRequest with the Vec lookups the cache
// saves, for comparison.
func BenchmarkRequestVec(b *testing.B) {
	m := New("s", "v")
	b.ReportAllocs()
	for b.Loop() {
		m.requests.WithLabelValues("ping", OK).Inc()
		m.requestDur.WithLabelValues("ping").Observe(time.Microsecond.Seconds())
	}
}
