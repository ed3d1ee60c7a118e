package serve

import (
	"context"
	"testing"
	"time"
)

// TestCallsHardEnd: a hard end cancels every call in flight and every call
// begun after it, and no other; ending a call cancels its context only;
// wait sees the last call end.
func TestCallsHardEnd(t *testing.T) {
	c := newCalls()
	parent, stopParent := context.WithCancel(context.Background())
	defer stopParent()
	a, doneA := c.begin(parent)
	b, doneB := c.begin(parent)
	doneA()
	if a.Err() == nil || b.Err() != nil {
		t.Fatalf("ending call a: a %v, b %v; want a cancelled, b running", a.Err(), b.Err())
	}
	if !c.active() {
		t.Fatal("call b is not counted")
	}
	c.hardEnd()
	cancelled := func(ctx context.Context) bool {
		select {
		case <-ctx.Done():
			return true
		case <-time.After(30 * time.Second):
			return false
		}
	}
	if !cancelled(b) {
		t.Fatal("the hard end left call b running")
	}
	late, doneLate := c.begin(parent)
	if !cancelled(late) {
		t.Fatal("a call begun after the hard end runs")
	}
	if parent.Err() != nil {
		t.Fatal("the hard end cancelled the caller's context")
	}
	doneB()
	doneLate()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if !c.wait(ctx) || c.active() || len(c.live) != 0 {
		t.Fatalf("after every call ended: active %v, %d still held", c.active(), len(c.live))
	}
	// A call whose caller goes away is cancelled with it.
	c2 := newCalls()
	gone, leave := context.WithCancel(context.Background())
	call, done := c2.begin(gone)
	leave()
	if call.Err() == nil {
		t.Fatal("the call outlived its caller's context")
	}
	done()
}

// BenchmarkCallsBegin is the tracking every HTTP request and every tool
// call pays (twice for a tool call over HTTP), 50 at once.
func BenchmarkCallsBegin(b *testing.B) {
	c := newCalls()
	parent, cancel := context.WithCancel(context.Background())
	defer cancel()
	b.ReportAllocs()
	b.SetParallelism(25)
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			_, done := c.begin(parent)
			done()
		}
	})
}
