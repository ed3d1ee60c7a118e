package flight

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func TestDoSharesOneComputation(t *testing.T) {
	var g Group[int]
	var runs atomic.Int32
	release := make(chan struct{})
	var wg sync.WaitGroup
	results := make([]int, 5)
	for i := range results {
		wg.Add(1)
		go func() {
			defer wg.Done()
			v, _, err := g.Do(context.Background(), "k", func(context.Context) (int, error) {
				runs.Add(1)
				<-release
				return 42, nil
			})
			if err != nil {
				t.Error(err)
			}
			results[i] = v
		}()
	}
	// Release only once all five callers have joined the computation: a
	// fixed sleep let a late caller on a loaded machine start a second run.
	for joined := 0; joined < len(results); time.Sleep(time.Millisecond) {
		g.mu.Lock()
		if c := g.calls["k"]; c != nil {
			joined = c.waiters
		}
		g.mu.Unlock()
	}
	close(release)
	wg.Wait()
	if n := runs.Load(); n != 1 {
		t.Fatalf("fn ran %d times, want 1", n)
	}
	for _, v := range results {
		if v != 42 {
			t.Fatalf("got %v", results)
		}
	}
}

func TestDoCancelsOnlyWhenAllCallersLeave(t *testing.T) {
	var g Group[int]
	started := make(chan struct{})
	cancelled := make(chan struct{})
	fn := func(ctx context.Context) (int, error) {
		close(started)
		<-ctx.Done()
		close(cancelled)
		return 0, ctx.Err()
	}
	ctx1, cancel1 := context.WithCancel(context.Background())
	ctx2, cancel2 := context.WithCancel(context.Background())
	errs := make(chan error, 2)
	go func() { _, _, err := g.Do(ctx1, "k", fn); errs <- err }()
	<-started
	go func() {
		_, _, err := g.Do(ctx2, "k", func(context.Context) (int, error) { t.Error("second fn must not run"); return 0, nil })
		errs <- err
	}()
	time.Sleep(20 * time.Millisecond)
	cancel1()
	if err := <-errs; !errors.Is(err, context.Canceled) {
		t.Fatalf("first caller: %v", err)
	}
	select {
	case <-cancelled:
		t.Fatal("computation cancelled while a caller still waits")
	case <-time.After(50 * time.Millisecond):
	}
	cancel2()
	if err := <-errs; !errors.Is(err, context.Canceled) {
		t.Fatalf("second caller: %v", err)
	}
	select {
	case <-cancelled:
	case <-time.After(2 * time.Second):
		t.Fatal("computation not cancelled after every caller left")
	}
}
