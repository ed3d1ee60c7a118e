package state_test

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

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
	issued := afterEpoch(t, a)
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
			ok, err := l.MarkUsed(ctx, "code:n1", state.Stamp{At: issued}, time.Now().Add(time.Minute))
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
	ok, err := a.MarkUsed(ctx, "code:short", state.Stamp{At: issued}, time.Now().Add(1500*time.Millisecond))
	if !ok || err != nil {
		t.Fatal(ok, err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		ok, err = b.MarkUsed(ctx, "code:short", state.Stamp{At: issued}, time.Now().Add(time.Minute))
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
// Without persistence the used keys are gone after the restart, so every
// code issued before it is refused on every replica (used or not: nothing
// can tell), naming the reset; a code issued after it works once. With
// appendonly yes the used keys survive and nothing else changes.
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
			b := openFresh(t, srv.URL()+"?client_name=replica-b")
			ctx := context.Background()
			issued := afterEpoch(t, l)
			before := state.Stamp{At: issued, Generation: state.Generation(l)} // as a code carries it
			for _, k := range []string{"code:before", "code:other"} {
				if ok, err := l.MarkUsed(ctx, k, before, time.Now().Add(time.Hour)); !ok || err != nil {
					t.Fatal(ok, err)
				}
			}
			pw := openFresh(t, url)
			srv.Stop()
			_, err := pw.MarkUsed(ctx, "code:during", state.Stamp{At: issued}, time.Now().Add(time.Hour))
			var se *state.StoreError
			if !errors.As(err, &se) || !strings.Contains(err.Error(), "MCP_STATE_URL") || strings.Contains(err.Error(), "hunter2pw") {
				t.Fatalf("while down: %v", err)
			}
			if err := state.Check(ctx); err == nil {
				t.Fatal("Check passes while the store is down")
			}
			srv.Restart()
			waitUp(t, l)
			// Used before the restart, on the replica that used it and
			// on another; and one issued before but never used.
			for _, c := range []struct {
				l   *state.Redis
				key string
			}{{l, "code:before"}, {b, "code:other"}, {b, "code:unused"}} {
				ok, err := c.l.MarkUsed(ctx, c.key, before, time.Now().Add(time.Hour))
				var re *state.ResetError
				switch {
				case persist && c.key == "code:unused":
					if !ok || err != nil {
						t.Fatalf("appendonly: an unused code issued before the restart: %v %v, want first use", ok, err)
					}
				case persist:
					if ok || err != nil {
						t.Fatalf("appendonly: %s used before the restart: %v %v, want used", c.key, ok, err)
					}
				case ok:
					t.Fatalf("without persistence, %s issued before the restart was accepted", c.key)
				case !errors.As(err, &re) || !strings.Contains(err.Error(), "MCP_STATE_URL") || !strings.Contains(err.Error(), "lost its records at"):
					t.Fatalf("without persistence, %s: %v, want the store's reset named", c.key, err)
				}
			}
			// Issued after the restart: first use once, on either replica.
			// Stamped with the new generation, whatever the clock margin;
			// without it, only once past the margin.
			defer state.SetResetSkew(time.Hour)()
			after := state.Stamp{At: time.Now(), Generation: state.Generation(b)}
			if ok, err := b.MarkUsed(ctx, "code:after", after, time.Now().Add(time.Hour)); !ok || err != nil {
				t.Fatalf("a code issued after the restart: %v %v", ok, err)
			}
			if ok, err := l.MarkUsed(ctx, "code:after", after, time.Now().Add(time.Hour)); ok || err != nil {
				t.Fatalf("a code issued after the restart, used again on another replica: %v %v", ok, err)
			}
			if ok, err := l.MarkUsed(ctx, "code:unstamped", state.Stamp{At: time.Now()}, time.Now().Add(time.Hour)); !persist && (ok || err == nil) {
				t.Fatalf("a code without a generation, issued within the clock margin of the reset: %v %v, want refused", ok, err)
			}
		})
	}
}

// TestRedisReset: the store losing its records otherwise than by a restart
// — FLUSHALL, someone deleting the generation key or writing garbage or an
// older generation into it — never lets a used code be used again: it is
// refused as used or as issued before the reset, on every replica; and
// of replicas racing on the reset exactly one generation wins.
func TestRedisReset(t *testing.T) {
	srv := redistest.Start(t, false)
	raw := redis.NewClient(&redis.Options{Addr: fmt.Sprintf("127.0.0.1:%d", srv.Port)})
	t.Cleanup(func() { raw.Close() })
	ctx := context.Background()
	key := state.Prefix + "epoch"
	for _, tc := range []struct {
		name string
		do   func(old string) error
	}{
		{"FLUSHALL", func(string) error { return raw.FlushAll(ctx).Err() }},
		{"generation key deleted", func(string) error { return raw.Del(ctx, key).Err() }},
		{"garbage", func(string) error { return raw.Set(ctx, key, "not-a-time", 0).Err() }},
		{"zero", func(string) error { return raw.Set(ctx, key, "0", 0).Err() }},
		{"fraction", func(old string) error { return raw.Set(ctx, key, old+".5", 0).Err() }},
		{"wrong type", func(string) error {
			raw.Del(ctx, key)
			return raw.RPush(ctx, key, "x").Err()
		}},
		{"older generation", func(old string) error {
			n, _ := strconv.ParseInt(old, 10, 64)
			return raw.Set(ctx, key, strconv.FormatInt(n-int64(time.Hour/time.Millisecond), 10), 0).Err()
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := openFresh(t, srv.URL()+"?client_name="+strings.ReplaceAll(tc.name, " ", "-"))
			b := openFresh(t, srv.URL()+"?client_name=b-"+strings.ReplaceAll(tc.name, " ", "-"))
			issued := afterEpoch(t, a)
			if err := b.Ping(ctx); err != nil {
				t.Fatal(err)
			}
			code := "code:" + strings.ReplaceAll(tc.name, " ", "-")
			stamp := state.Stamp{At: issued, Generation: state.Generation(a)}
			if ok, err := a.MarkUsed(ctx, code, stamp, time.Now().Add(time.Hour)); !ok || err != nil {
				t.Fatal(ok, err)
			}
			before := a.Epoch()
			old, _ := raw.Get(ctx, key).Result()
			if err := tc.do(old); err != nil {
				t.Fatal(err)
			}
			// Both replicas, concurrently: the used code is never first
			// again, and they end up in one generation.
			var wg sync.WaitGroup
			for i := 0; i < 16; i++ {
				l := a
				if i%2 == 1 {
					l = b
				}
				wg.Add(1)
				go func() {
					defer wg.Done()
					ok, err := l.MarkUsed(ctx, code, stamp, time.Now().Add(time.Hour))
					var re *state.ResetError
					if ok || (err != nil && !errors.As(err, &re)) {
						t.Errorf("after %s: the used code: %v %v, want refused", tc.name, ok, err)
					}
				}()
			}
			wg.Wait()
			stored, err := raw.Get(ctx, key).Int64()
			if err != nil {
				t.Fatalf("the generation key after %s: %v", tc.name, err)
			}
			if !a.Epoch().Equal(b.Epoch()) || a.Epoch().UnixMilli() != stored || !a.Epoch().After(before) {
				t.Fatalf("after %s: generations %v (a) %v (b) %d (stored), before %v: want one, newer", tc.name, a.Epoch(), b.Epoch(), stored, before)
			}
		})
	}
}

// afterEpoch ensures the store's generation under l and returns a time at
// which a code is issued within it (past the clock skew margin).
func afterEpoch(t testing.TB, l *state.Redis) time.Time {
	t.Helper()
	t.Cleanup(state.SetResetSkew(50 * time.Millisecond))
	if err := l.Ping(context.Background()); err != nil {
		t.Fatal(err)
	}
	at := l.Epoch().Add(state.ResetSkew())
	for time.Now().Before(at) {
		time.Sleep(time.Until(at)) // the margin is by clock, not a wait for an event
	}
	return time.Now()
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
	issued := afterEpoch(b, r)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := r.MarkUsed(ctx, "code:b"+itoa(i), state.Stamp{At: issued}, until); err != nil {
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
