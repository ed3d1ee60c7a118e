// Package state holds what must outlive a process or be seen by every
// replica of a server. Today that is the ledger of used confirmation codes:
// a code is single use across replicas sharing MCP_APPROVAL_SECRET and
// across restarts only if every process consults the same ledger.
//
// Three implementations exist: process memory (Memory), a durable local
// file (File) shared by the processes of one host, and the store every
// replica reaches (Redis behind MCP_STATE_URL), where MarkUsed is
// SET key 1 NX PXAT until within the store's current generation (epoch.go).
package state

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// Ledger records one-time keys until they expire.
type Ledger interface {
	// MarkUsed records key as used until until. firstUse is true for
	// exactly one of any number of calls, in any process sharing the
	// ledger, while key has not expired. issued is when the key came into
	// being: a ledger that may have lost its records since (Redis without
	// persistence) refuses it with a *ResetError; the others ignore it. An
	// error means the ledger could not be read or written; the caller must
	// treat the key as used (fail closed). Keys are printable ASCII
	// without spaces, at most MaxKeyLen bytes.
	MarkUsed(ctx context.Context, key string, issued Stamp, until time.Time) (firstUse bool, err error)
	// Where names the ledger for messages (a file path, a URL without
	// credentials).
	Where() string
}

// Stamp is when a key came into being: the time, and the generation of
// the ledger (Generation) the process that made it knew then, 0 when none.
type Stamp struct {
	At         time.Time
	Generation int64
}

// Generation is the current generation of a ledger that may lose its
// records (Redis, epoch.go) as this process knows it, 0 when unknown: a
// key stamped with it is known to be newer than any records lost before.
// Ledgers that never lose records without failing have none.
func Generation(l Ledger) int64 {
	if g, ok := l.(interface{ generation() int64 }); ok {
		return g.generation()
	}
	return 0
}

// MaxKeyLen is the longest key a Ledger accepts.
const MaxKeyLen = 200

// CheckKey refuses a key a ledger cannot store as one token.
func CheckKey(key string) error {
	if key == "" || len(key) > MaxKeyLen {
		return fmt.Errorf("ledger key of %d bytes: want 1 to %d", len(key), MaxKeyLen)
	}
	for i := 0; i < len(key); i++ {
		if c := key[i]; c <= ' ' || c > '~' {
			return fmt.Errorf("ledger key %q: only printable ASCII without spaces", key)
		}
	}
	return nil
}

// Memory is a Ledger held in this process only: right when no other
// process can present the same keys (codes signed with a per-process
// random secret), wrong for anything shared.
type Memory struct {
	mu   sync.Mutex
	used map[string]time.Time
	now  func() time.Time
}

// NewMemory returns an empty in-process ledger.
func NewMemory() *Memory { return &Memory{used: map[string]time.Time{}, now: time.Now} }

// SetClock replaces the clock deciding which entries expired (tests).
func (m *Memory) SetClock(now func() time.Time) { m.now = now }

// MarkUsed implements Ledger.
func (m *Memory) MarkUsed(_ context.Context, key string, _ Stamp, until time.Time) (bool, error) {
	if err := CheckKey(key); err != nil {
		return false, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.now()
	for k, e := range m.used {
		if !now.Before(e) {
			delete(m.used, k)
		}
	}
	if _, ok := m.used[key]; ok {
		return false, nil
	}
	m.used[key] = until
	return true, nil
}

// Where implements Ledger.
func (m *Memory) Where() string { return "process memory" }
