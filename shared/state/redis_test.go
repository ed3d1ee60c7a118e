package state_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpfleet/mcpfleet/shared/state"
	"github.com/mcpfleet/mcpfleet/shared/state/redistest"
)

func TestRedact(t *testing.T) {
	for in, want := range map[string]string{
		"redis://:hunter2@h:6379/0":    "redis://:xxxxx@h:6379/0",
		"rediss://u:hunter2@h/1":       "rediss://u:xxxxx@h/1",
		"redis://h:6379":               "redis://h:6379",
		"redis://h/0?password=hunter2": "redis://h/0",
	} {
		if got := state.Redact(in); got != want || strings.Contains(got, "hunter2") {
			t.Errorf("Redact(%q) = %q, want %q", in, got, want)
		}
	}
	for _, bad := range []string{"http://h", "redis://:hunter2@h:notaport/0", "memory:"} {
		err := state.CheckURL(bad)
		if err == nil || strings.Contains(err.Error(), "hunter2") || !strings.Contains(err.Error(), "MCP_STATE_URL") {
			t.Errorf("CheckURL(%q) = %v", bad, err)
		}
	}
}

// TestRedisLedgerOnce: of many concurrent marks from two clients (two
// replicas), exactly one is first; a key is used again only after it
// expires.
func TestRedisLedgerOnce(t *testing.T) {
	srv := redistest.Start(t, false)
	a := openFresh(t, srv.URL())
	b := openFresh(t, srv.URL()+"?client_name=replica-b") // another client, as another replica has
	ctx := context.Background()
	var wg sync.WaitGroup
	var mu sync.Mutex
	first := 0
	for i := 0; i < 20; i++ {
		l := a
		if i%2 == 1 {
			l = b
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			ok, err := l.MarkUsed(ctx, "code:n1", time.Now().Add(time.Minute))
			if err != nil {
				t.Error(err)
			}
			if ok {
				mu.Lock()
				first++
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if first != 1 {
		t.Fatalf("%d first uses, want 1", first)
	}
	ok, err := a.MarkUsed(ctx, "code:short", time.Now().Add(1500*time.Millisecond))
	if !ok || err != nil {
		t.Fatal(ok, err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		ok, err = b.MarkUsed(ctx, "code:short", time.Now().Add(time.Minute))
		if err != nil {
			t.Fatal(err)
		}
		if ok {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("an expired key stays used")
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestRedisRestart: while Redis is down every call fails with an error
// naming MCP_STATE_URL and no password; after it is back calls succeed.
// Without persistence the used keys are gone after the restart; with
// appendonly yes they survive.
func TestRedisRestart(t *testing.T) {
	for _, persist := range []bool{false, true} {
		name := "no-persistence"
		if persist {
			name = "appendonly"
		}
		t.Run(name, func(t *testing.T) {
			srv := redistest.Start(t, persist)
			url := strings.Replace(srv.URL(), "redis://", "redis://default:hunter2pw@", 1)
			// The server has no password: set one for the default user.
			l := openFresh(t, srv.URL())
			ctx := context.Background()
			if ok, err := l.MarkUsed(ctx, "code:before", time.Now().Add(time.Hour)); !ok || err != nil {
				t.Fatal(ok, err)
			}
			pw := openFresh(t, url)
			srv.Stop()
			_, err := pw.MarkUsed(ctx, "code:during", time.Now().Add(time.Hour))
			var se *state.StoreError
			if !errors.As(err, &se) || !strings.Contains(err.Error(), "MCP_STATE_URL") || strings.Contains(err.Error(), "hunter2pw") {
				t.Fatalf("while down: %v", err)
			}
			if err := state.Check(ctx); err == nil {
				t.Fatal("Check passes while the store is down")
			}
			srv.Restart()
			waitUp(t, l)
			ok, err := l.MarkUsed(ctx, "code:before", time.Now().Add(time.Hour))
			if err != nil {
				t.Fatal(err)
			}
			if persist && ok {
				t.Fatal("with appendonly yes, a code used before the restart was usable again")
			}
			if !persist && !ok {
				t.Fatal("without persistence, a used key survived the restart (expected it lost)")
			}
		})
	}
}

func waitUp(t *testing.T, l *state.Redis) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for l.Ping(context.Background()) != nil {
		if time.Now().After(deadline) {
			t.Fatal("store not reachable after restart")
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func openFresh(t *testing.T, url string) *state.Redis {
	t.Helper()
	r, err := state.OpenRedis(url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}

// BenchmarkRedisMarkUsed is the store's cost per confirmation.
func BenchmarkRedisMarkUsed(b *testing.B) {
	srv := redistest.Start(b, false)
	r, err := state.OpenRedis(srv.URL())
	if err != nil {
		b.Fatal(err)
	}
	defer r.Close()
	ctx := context.Background()
	until := time.Now().Add(time.Hour)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := r.MarkUsed(ctx, "code:b"+itoa(i), until); err != nil {
			b.Fatal(err)
		}
	}
}

func itoa(i int) string { return strings.TrimSpace(strings.Repeat(" ", 0) + fmtInt(i)) }

func fmtInt(i int) string {
	if i == 0 {
		return "0"
	}
	var b []byte
	for ; i > 0; i /= 10 {
		b = append([]byte{byte('0' + i%10)}, b...)
	}
	return string(b)
}

// BenchmarkRedisTaskLifecycle is the store's cost per task: create, two
// heartbeats, one read from another replica, the outcome.
func BenchmarkRedisTaskLifecycle(b *testing.B) {
	srv := redistest.Start(b, false)
	r, err := state.OpenRedis(srv.URL())
	if err != nil {
		b.Fatal(err)
	}
	defer r.Close()
	ctx := context.Background()
	res := []byte(`{"content":[{"type":"text","text":"done"}]}`)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		id := "t" + itoa(i)
		now := time.Now()
		rec := &state.TaskRecord{ID: id, Issuer: "iss", Subject: "sub", Status: state.TaskWorking, Created: now, Updated: now, TTL: time.Hour}
		if err := r.PutTask(ctx, rec, 6*time.Second); err != nil {
			b.Fatal(err)
		}
		for j := 0; j < 2; j++ {
			if _, err := r.Beat(ctx, id, 6*time.Second, "step"); err != nil {
				b.Fatal(err)
			}
		}
		if _, err := r.GetTask(ctx, id); err != nil {
			b.Fatal(err)
		}
		if _, err := r.FinishTask(ctx, id, state.TaskCompleted, "", res, ""); err != nil {
			b.Fatal(err)
		}
	}
}
