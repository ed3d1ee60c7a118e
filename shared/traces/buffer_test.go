package traces

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
)

// bufferedProvider is a tracer provider whose spans go through a spanBuffer
// to a synchronous processor and an in-memory exporter, so what the buffer
// handed on is what the exporter holds.
func bufferedProvider(t *testing.T, max int, delay time.Duration, sampler sdktrace.Sampler) (*sdktrace.TracerProvider, *spanBuffer, *tracetest.InMemoryExporter) {
	t.Helper()
	exp := tracetest.NewInMemoryExporter()
	b := newSpanBuffer(sdktrace.NewSimpleSpanProcessor(keepOnShutdown{exp}), max, delay)
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(b), sdktrace.WithSampler(sampler))
	t.Cleanup(func() { tp.Shutdown(context.Background()) })
	return tp, b, exp
}

// keepOnShutdown keeps the spans the in-memory exporter forgets on Shutdown.
type keepOnShutdown struct{ *tracetest.InMemoryExporter }

func (keepOnShutdown) Shutdown(context.Context) error { return nil }

func endSpans(tp *sdktrace.TracerProvider, n int, prefix string) {
	for i := range n {
		_, s := tp.Tracer("t").Start(context.Background(), fmt.Sprintf("%s-%d", prefix, i))
		s.End()
	}
}

func waitSpans(t *testing.T, exp *tracetest.InMemoryExporter, n int, within time.Duration) {
	t.Helper()
	deadline := time.Now().Add(within)
	for len(exp.GetSpans()) < n {
		if time.Now().After(deadline) {
			t.Fatalf("exported %d spans after %s, want %d", len(exp.GetSpans()), within, n)
		}
		time.Sleep(time.Millisecond)
	}
}

func TestSpanBufferHandsOnAfterTheDelay(t *testing.T) {
	tp, _, exp := bufferedProvider(t, 512, 200*time.Millisecond, sdktrace.AlwaysSample())
	start := time.Now()
	endSpans(tp, 3, "a")
	if got := len(exp.GetSpans()); got != 0 {
		t.Fatalf("%d spans handed on at once, want them held for the delay", got)
	}
	waitSpans(t, exp, 3, 10*time.Second)
	if d := time.Since(start); d < 150*time.Millisecond {
		t.Errorf("handed on after %s, want about the 200ms delay", d)
	}
	// The timer is armed again by the next first span.
	endSpans(tp, 1, "b")
	waitSpans(t, exp, 4, 10*time.Second)
}

func TestSpanBufferHandsOnWhenFull(t *testing.T) {
	tp, _, exp := bufferedProvider(t, 10, time.Hour, sdktrace.AlwaysSample())
	endSpans(tp, 9, "a")
	if got := len(exp.GetSpans()); got != 0 {
		t.Fatalf("%d spans handed on below the batch size", got)
	}
	endSpans(tp, 1, "b")
	if got := len(exp.GetSpans()); got != 10 {
		t.Fatalf("%d spans handed on at the batch size, want 10 at once", got)
	}
}

func TestSpanBufferFlushAndShutdown(t *testing.T) {
	tp, b, exp := bufferedProvider(t, 512, time.Hour, sdktrace.AlwaysSample())
	endSpans(tp, 5, "a")
	if err := tp.ForceFlush(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := len(exp.GetSpans()); got != 5 {
		t.Fatalf("ForceFlush handed on %d spans, want 5", got)
	}
	endSpans(tp, 2, "b")
	if err := b.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := len(exp.GetSpans()); got != 7 {
		t.Fatalf("exported %d spans by shutdown, want all 7", got)
	}
	b.mu.Lock()
	held := len(b.spans)
	b.mu.Unlock()
	if held != 0 {
		t.Fatalf("buffer holds %d spans after shutdown", held)
	}
	endSpans(tp, 2, "c")
	b.mu.Lock()
	held = len(b.spans)
	b.mu.Unlock()
	if held != 0 || len(exp.GetSpans()) != 7 {
		t.Errorf("after shutdown: %d spans held, %d exported; want the later spans dropped", held, len(exp.GetSpans()))
	}
}

func TestSpanBufferDropsUnsampled(t *testing.T) {
	tp, b, exp := bufferedProvider(t, 512, time.Hour, sdktrace.NeverSample())
	endSpans(tp, 5, "a")
	b.flush()
	if got := len(exp.GetSpans()); got != 0 {
		t.Errorf("%d unsampled spans exported", got)
	}
}

// Concurrent spans, across batch boundaries and timer firings, are each
// handed on exactly once.
func TestSpanBufferConcurrent(t *testing.T) {
	tp, _, exp := bufferedProvider(t, 64, time.Millisecond, sdktrace.AlwaysSample())
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() { endSpans(tp, 1000, fmt.Sprint("g", g)) })
	}
	wg.Wait()
	if err := tp.ForceFlush(context.Background()); err != nil {
		t.Fatal(err)
	}
	seen := map[string]int{}
	for _, s := range exp.GetSpans() {
		seen[s.Name]++
	}
	if len(seen) != 8000 {
		t.Fatalf("exported %d distinct spans, want 8000", len(seen))
	}
	for name, n := range seen {
		if n != 1 {
			t.Fatalf("span %s exported %d times", name, n)
		}
	}
}
