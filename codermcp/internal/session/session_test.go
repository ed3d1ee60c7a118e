package session

import (
	"context"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unicode/utf8"
)

// clock is a manual clock for eviction and expiry tests.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) Add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

func newClock() *clock { return &clock{t: time.Date(2026, 11, 22, 3, 0, 0, 0, time.UTC)} }

func use(t *testing.T, s *Store, id string) *Lease {
	t.Helper()
	l, err := s.Acquire(context.Background(), "o", id)
	if err != nil {
		t.Fatal(err)
	}
	l.AddTurn("p", "r")
	l.Release()
	return l
}

func TestIDs(t *testing.T) {
	s := New(Options{})
	cases := []struct {
		given, want string // want "" = a generated id
	}{
		{"abc_DEF-123", "abc_DEF-123"},
		{strings.Repeat("x", 256), strings.Repeat("x", 256)},
		{strings.Repeat("x", 257), ""},
		{"has space", ""},
		{"semi;colon", ""},
		{"", ""},
	}
	for _, tc := range cases {
		l, err := s.Acquire(context.Background(), "o", tc.given)
		if err != nil {
			t.Fatal(err)
		}
		got := l.ID()
		l.Release()
		if tc.want != "" && got != tc.want {
			t.Errorf("Acquire(%q) id = %q, want it adopted", tc.given, got)
		}
		if tc.want == "" && (!strings.HasPrefix(got, "session-") || len(got) != len("session-")+36) {
			t.Errorf("Acquire(%q) id = %q, want a fresh UUID-based id", tc.given, got)
		}
	}
}

func TestLRUEviction(t *testing.T) {
	c := newClock()
	s := New(Options{Limit: 3, Now: c.Now})
	for _, id := range []string{"a", "b", "c"} {
		use(t, s, id)
		c.Add(time.Second)
	}
	use(t, s, "a") // b is now the least recently used
	c.Add(time.Second)
	use(t, s, "d")
	if _, ok := s.Get("o", "b"); ok {
		t.Error("b should have been evicted")
	}
	for _, id := range []string{"a", "c", "d"} {
		if _, ok := s.Get("o", id); !ok {
			t.Errorf("%s should remain", id)
		}
	}
	// A session in use is never the victim.
	busy, _ := s.Acquire(context.Background(), "o", "c")
	c.Add(time.Second)
	use(t, s, "e")
	if _, ok := s.Get("o", "c"); !ok {
		t.Error("a busy session was evicted")
	}
	busy.Release()
	if s.count() != 3 {
		t.Errorf("Len = %d, want 3", s.count())
	}
}

func TestTTLExpiry(t *testing.T) {
	c := newClock()
	s := New(Options{TTL: time.Minute, Now: c.Now})
	use(t, s, "old")
	c.Add(30 * time.Second)
	use(t, s, "young")
	c.Add(31 * time.Second)
	s.Sweep()
	if _, ok := s.Get("o", "old"); ok {
		t.Error("old should have expired")
	}
	if got := s.List("o"); len(got) != 1 || got[0].ID != "young" || got[0].TurnCount != 1 {
		t.Errorf("List = %+v, want only young", got)
	}
	if got := s.List("o")[0].CreatedAt; got != "2026-11-22T03:00:30Z" {
		t.Errorf("createdAt = %q, want ISO 8601 UTC", got)
	}
}

func TestResetAndTurns(t *testing.T) {
	s := New(Options{})
	l, _ := s.Acquire(context.Background(), "o", "r")
	l.AddTurn("p1", "r1")
	l.SetConversationID("T")
	l.Reset()
	d := l.Data()
	if len(d.Turns) != 0 || d.CoderConversationID != "" {
		t.Errorf("after Reset = %+v", d)
	}
	l.Release()
	l.Release() // idempotent
}

func TestSerialisationAndConcurrencyLimit(t *testing.T) {
	s := New(Options{MaxConcurrency: 2})
	var running, peak, perSession atomic.Int32
	var wg sync.WaitGroup
	for i := range 12 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			id := "same"
			if i%2 == 1 {
				id = "other-" + string(rune('a'+i))
			}
			l, err := s.Acquire(context.Background(), "o", id)
			if err != nil {
				t.Error(err)
				return
			}
			defer l.Release()
			if id == "same" {
				if perSession.Add(1) > 1 {
					t.Error("two calls ran on one session at once")
				}
				defer perSession.Add(-1)
			}
			n := running.Add(1)
			for {
				p := peak.Load()
				if n <= p || peak.CompareAndSwap(p, n) {
					break
				}
			}
			time.Sleep(5 * time.Millisecond)
			running.Add(-1)
		}()
	}
	wg.Wait()
	if p := peak.Load(); p > 2 {
		t.Errorf("peak concurrency %d, limit 2", p)
	}
	if got, _ := s.Get("o", "same"); len(got.Turns) != 0 || got.ID != "same" {
		t.Errorf("same = %+v", got)
	}
}

func TestAcquireHonoursContext(t *testing.T) {
	s := New(Options{MaxConcurrency: 1})
	held, _ := s.Acquire(context.Background(), "o", "a")
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if _, err := s.Acquire(ctx, "o", "a"); err == nil {
		t.Error("waiting on a busy session must end with the context")
	}
	if _, err := s.Acquire(ctx, "o", "b"); err == nil {
		t.Error("waiting for a slot must end with the context")
	}
	held.Release()
	l, err := s.Acquire(context.Background(), "o", "a")
	if err != nil {
		t.Fatalf("the session must be usable after cancelled waiters: %v", err)
	}
	l.Release()
}

func TestContextPrompt(t *testing.T) {
	turns := []Turn{{Prompt: "one", Response: "r1"}, {Prompt: "two", Response: "r2"}, {Prompt: "three", Response: "r3"}}
	got := ContextPrompt(turns, "four")
	if strings.Contains(got, "one") || !strings.Contains(got, "two") || !strings.Contains(got, "r3") || !strings.HasSuffix(got, "four") {
		t.Errorf("ContextPrompt = %q, want the last 2 turns then the prompt", got)
	}
	if ContextPrompt(nil, "x") != "x" {
		t.Error("without turns the prompt is unchanged")
	}
}

func TestTurnsAreBounded(t *testing.T) {
	s := New(Options{})
	l, _ := s.Acquire(context.Background(), "o", "long")
	big := strings.Repeat("é", MaxTurnText) // 2 bytes a rune
	for i := range MaxTurns + 10 {
		l.AddTurn(string(rune('a'+i%26)), big)
	}
	d := l.Data()
	l.Release()
	if len(d.Turns) != MaxTurns || d.TurnCount != MaxTurns+10 {
		t.Errorf("kept %d turns, counted %d; want %d kept and %d counted", len(d.Turns), d.TurnCount, MaxTurns, MaxTurns+10)
	}
	if r := d.Turns[0].Response; len(r) > MaxTurnText+len("…") || !utf8.ValidString(r) {
		t.Errorf("stored response is %d bytes (valid UTF-8: %v)", len(r), utf8.ValidString(r))
	}
	if got := s.List("o")[0].TurnCount; got != MaxTurns+10 {
		t.Errorf("listSessions turnCount = %d", got)
	}
}

// TestOwnersAreSeparate: the same id under two owners is two sessions;
// neither owner can get, list or continue the other's.
func TestOwnersAreSeparate(t *testing.T) {
	s := New(Options{})
	a, err := s.Acquire(context.Background(), "5:alicealice", "x")
	if err != nil {
		t.Fatal(err)
	}
	a.AddTurn("secret", "answer")
	a.Release()
	// Same concatenation, other split: a different owner.
	for _, other := range []string{"5:alic" + "ealice0", "local:0", ""} {
		if _, ok := s.Get(other, "x"); ok {
			t.Errorf("owner %q got another owner's session", other)
		}
		if got := s.List(other); len(got) != 0 {
			t.Errorf("owner %q lists %v", other, got)
		}
	}
	b, err := s.Acquire(context.Background(), "local:0", "x")
	if err != nil {
		t.Fatal(err)
	}
	if !b.Created || len(b.Data().Turns) != 0 {
		t.Errorf("another owner's session x was reused: %+v", b.Data())
	}
	b.Release()
	if d, _ := s.Get("5:alicealice", "x"); d.TurnCount != 1 {
		t.Errorf("the first owner's session changed: %+v", d)
	}
}

// count is the number of sessions held, whoever owns them.
func (s *Store) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.sessions)
}
