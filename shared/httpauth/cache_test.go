package httpauth

import (
	"context"
	"crypto/sha256"
	"fmt"
	"testing"
	"time"

	"github.com/mcpfleet/mcpfleet/shared/httpauth/idptest"
)

func TestCacheBoundedAndNeverPastExpiry(t *testing.T) {
	c := newTokenCache(3)
	now := time.Now()
	key := func(i int) [32]byte { return sha256.Sum256([]byte(fmt.Sprint(i))) }
	for i := range 10 {
		c.put(key(i), &Identity{Subject: fmt.Sprint(i)}, now.Add(time.Hour), now)
		if n := c.len(); n > 3 {
			t.Fatalf("cache holds %d entries, bound 3", n)
		}
	}
	c.put(key(100), &Identity{}, now.Add(time.Second), now)
	if _, ok := c.get(key(100), now); !ok {
		t.Fatal("fresh entry missing")
	}
	if _, ok := c.get(key(100), now.Add(time.Second)); ok {
		t.Fatal("entry served at its expiry")
	}
	c.put(key(101), &Identity{}, now, now)
	if _, ok := c.get(key(101), now.Add(-time.Minute)); ok {
		t.Fatal("an already expired token was cached")
	}
}

// TestCachedTokenExpires: a token verified (and cached) while valid is
// refused once its exp passes, although it is still in the cache.
func TestCachedTokenExpires(t *testing.T) {
	const secret = "0123456789abcdef0123456789abcdef"
	l, err := New(context.Background(), Config{Enabled: true, Provider: ProviderHMAC, JWTSecret: secret, BaseURL: "http://127.0.0.1:1"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	l.now = func() time.Time { return now }
	tok := idptest.SignHS256(secret, map[string]any{"sub": "s", "exp": now.Add(time.Minute).Unix()})
	if _, err := l.Verify(context.Background(), tok); err != nil {
		t.Fatal(err)
	}
	if l.cache.len() != 1 {
		t.Fatal("verified token not cached")
	}
	now = now.Add(2 * time.Minute)
	if _, err := l.Verify(context.Background(), tok); err == nil {
		t.Fatal("expired token accepted from the cache")
	}
}
