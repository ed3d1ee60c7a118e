package httpauth

import (
	"crypto/sha256"
	"sync"
	"time"
)

// defaultCacheSize bounds the verified-token cache.
const defaultCacheSize = 10000

// tokenCache remembers verified tokens by their SHA-256 (never the token
// itself) until the token's own expiry, so that a client's every request
// does not pay for signature verification. It is bounded in size.
type tokenCache struct {
	mu  sync.Mutex
	max int
	m   map[[sha256.Size]byte]cacheEntry
}

type cacheEntry struct {
	id  *Identity
	exp time.Time
}

func newTokenCache(max int) *tokenCache {
	return &tokenCache{max: max, m: make(map[[sha256.Size]byte]cacheEntry)}
}

// get returns the identity of a token verified earlier that has not expired at now.
func (c *tokenCache) get(key [sha256.Size]byte, now time.Time) (*Identity, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.m[key]
	if !ok {
		return nil, false
	}
	if !now.Before(e.exp) {
		delete(c.m, key)
		return nil, false
	}
	return e.id, true
}

// put remembers a verified token until exp. When full it drops expired
// entries first and then arbitrary ones.
func (c *tokenCache) put(key [sha256.Size]byte, id *Identity, exp, now time.Time) {
	if !now.Before(exp) || c.max <= 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.m[key]; !ok && len(c.m) >= c.max {
		for k, e := range c.m {
			if !now.Before(e.exp) {
				delete(c.m, k)
			}
		}
		for k := range c.m {
			if len(c.m) < c.max {
				break
			}
			delete(c.m, k) // map order is random: a cheap random eviction
		}
	}
	c.m[key] = cacheEntry{id: id, exp: exp}
}
