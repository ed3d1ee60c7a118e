package traces

import (
	"context"
	"sync"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// spanBuffer collects ended spans and hands them to the next processor (the
// SDK's batch processor) in groups. The batch processor sends every span
// over a channel to its export goroutine, waking it once per span; on the
// cheapest call (a ping) that wake-up, competing for the CPU with the call
// itself, cost more than the span. The buffer hands spans on when it holds
// max of them, or delay after the first one, from a timer: at most one
// wake-up per delay.
type spanBuffer struct {
	next  sdktrace.SpanProcessor
	max   int
	delay time.Duration

	mu      sync.Mutex
	spans   []sdktrace.ReadOnlySpan
	timer   *time.Timer
	stopped bool
	// handing counts groups taken but not yet handed on (the timer's flush
	// runs beside ForceFlush), so that ForceFlush waits for them.
	handing int
	handed  sync.Cond
}

func newSpanBuffer(next sdktrace.SpanProcessor, max int, delay time.Duration) *spanBuffer {
	b := &spanBuffer{next: next, max: max, delay: delay}
	b.handed.L = &b.mu
	b.timer = time.AfterFunc(time.Hour, b.flush)
	b.timer.Stop()
	return b
}

// OnStart is the next processor's (the batch processor does nothing there).
func (b *spanBuffer) OnStart(parent context.Context, s sdktrace.ReadWriteSpan) {
	b.next.OnStart(parent, s)
}

// OnEnd keeps s until the buffer is handed on.
func (b *spanBuffer) OnEnd(s sdktrace.ReadOnlySpan) {
	if !s.SpanContext().IsSampled() {
		return // the batch processor drops them too
	}
	b.mu.Lock()
	if b.stopped {
		b.mu.Unlock()
		return
	}
	b.spans = append(b.spans, s)
	switch len(b.spans) {
	case b.max:
		spans := b.take()
		b.mu.Unlock()
		b.handOn(spans)
		return
	case 1:
		b.timer.Reset(b.delay)
	}
	b.mu.Unlock()
}

// take empties the buffer; b.mu is held.
func (b *spanBuffer) take() []sdktrace.ReadOnlySpan {
	spans := b.spans
	b.spans = nil
	b.timer.Stop()
	if len(spans) > 0 {
		b.handing++
	}
	return spans
}

// handOn passes a group from take to the next processor.
func (b *spanBuffer) handOn(spans []sdktrace.ReadOnlySpan) {
	if len(spans) == 0 {
		return
	}
	for _, s := range spans {
		b.next.OnEnd(s)
	}
	b.mu.Lock()
	b.handing--
	b.handed.Broadcast()
	b.mu.Unlock()
}

// settle waits until every group taken so far has been handed on.
func (b *spanBuffer) settle() {
	b.mu.Lock()
	for b.handing > 0 {
		b.handed.Wait()
	}
	b.mu.Unlock()
}

func (b *spanBuffer) flush() {
	b.mu.Lock()
	spans := b.take()
	b.mu.Unlock()
	b.handOn(spans)
}

// ForceFlush hands on what the buffer holds, then flushes the next processor.
func (b *spanBuffer) ForceFlush(ctx context.Context) error {
	b.flush()
	b.settle()
	return b.next.ForceFlush(ctx)
}

// Shutdown hands on what the buffer holds and shuts the next processor down;
// later spans are dropped.
func (b *spanBuffer) Shutdown(ctx context.Context) error {
	b.mu.Lock()
	b.stopped = true
	spans := b.take()
	b.mu.Unlock()
	b.handOn(spans)
	b.settle()
	return b.next.Shutdown(ctx)
}
