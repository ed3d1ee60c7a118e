package serve

import (
	"crypto/hmac"
	"crypto/sha256"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestSessionBinding: an id is bound to the owner it was minted for and to
// no other, its binding is HMAC-SHA256(key, random 0 owner) in unpadded
// base64 (so that ids minted before stay valid), and the reused keyed
// hashes give the same answer from many goroutines at once.
func TestSessionBinding(t *testing.T) {
	key := []byte("0123456789abcdef0123456789abcdef")
	s := newSessions(key, time.Minute, 10)
	id := s.mint("alice")
	random, sum, _ := strings.Cut(strings.TrimPrefix(id, sessionPrefix), ".")
	m := hmac.New(sha256.New, key)
	m.Write([]byte(random + "\x00alice"))
	if want := sessionB64.EncodeToString(m.Sum(nil)); sum != want || len(sum) != macLen {
		t.Fatalf("binding %q, want %q (%d characters)", sum, want, macLen)
	}
	flip := func(c byte) string {
		if c == 'A' {
			return "B"
		}
		return "A"
	}
	for _, tc := range []struct {
		id, owner string
		want      bool
	}{
		{id, "alice", true},
		{id, "bob", false},
		{id, "", false},
		{id + "A", "alice", false},
		{id[:len(id)-1], "alice", false},
		{id[:len(id)-1] + flip(id[len(id)-1]), "alice", false},
		{strings.Replace(id, random, random[:len(random)-1]+flip(random[len(random)-1]), 1), "alice", false},
		{strings.TrimPrefix(id, sessionPrefix), "alice", false},
		{sessionPrefix + "." + sum, "alice", false},
		{newSessions(nil, time.Minute, 10).mint("alice"), "alice", false}, // another key
	} {
		if got := s.bound(tc.id, tc.owner); got != tc.want {
			t.Errorf("bound(%q, %q) = %v, want %v", tc.id, tc.owner, got, tc.want)
		}
	}
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 200 {
				if !s.bound(id, "alice") || s.bound(id, "bob") || s.mac(random, "alice") != sum {
					t.Errorf("goroutine %d: the binding changed", i)
					return
				}
			}
		}()
	}
	wg.Wait()
}

func BenchmarkSessionBound(b *testing.B) {
	s := newSessions(nil, time.Minute, 10)
	id := s.mint("alice")
	b.ReportAllocs()
	for b.Loop() {
		if !s.bound(id, "alice") {
			b.Fatal("not bound")
		}
	}
}
