// Package session keeps coder conversations in memory: a bounded store with
// least-recently-used eviction and an idle-time sweep, per-session
// serialisation (two calls on one session never overlap) and a global limit
// on concurrent CLI runs.
package session

import (
	"context"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/mcpfleet/mcpfleet/codermcp/internal/cli"
)

// Turn is one prompt and what came back.
type Turn struct {
	Prompt    string    `json:"prompt"`
	Response  string    `json:"response"`
	Timestamp time.Time `json:"timestamp"`
}

// Data is a session as callers see it (a copy).
type Data struct {
	ID                  string    `json:"id"`
	CreatedAt           time.Time `json:"createdAt"`
	LastAccessedAt      time.Time `json:"lastAccessedAt"`
	Turns               []Turn    `json:"turns"`
	CoderConversationID string    `json:"coderConversationId,omitempty"`
	// TurnCount counts every turn, including those no longer kept in Turns.
	TurnCount int `json:"turnCount"`
	// WorkingDirectory is where the session's last call ran, so that a
	// follow-up without one continues in the same place.
	WorkingDirectory string `json:"-"`
	// Codex is what a `codex` tool call started the session's thread with,
	// so that `codex-reply` continues it alike; nil for coder sessions.
	Codex *CodexSettings `json:"-"`
}

// CodexSettings are a `codex` call's settings that its replies keep.
type CodexSettings struct {
	Model     string
	Sandbox   string
	Overrides []cli.Override
	// ApprovalPolicy is the thread's approval-policy, which its replies keep.
	ApprovalPolicy string
}

// Summary is the listSessions view of a session.
type Summary struct {
	ID             string `json:"id"`
	CreatedAt      string `json:"createdAt"`
	LastAccessedAt string `json:"lastAccessedAt"`
	TurnCount      int    `json:"turnCount"`
}

// Memory bounds: a session keeps its latest MaxTurns turns (the fallback
// context needs two), each prompt and response clipped to MaxTurnText bytes.
const (
	MaxTurns    = 50
	MaxTurnText = 64 << 10
)

var idRE = regexp.MustCompile(`^[A-Za-z0-9_-]{1,256}$`)

// ValidID reports whether id may be adopted as a session id.
func ValidID(id string) bool { return idRE.MatchString(id) }

// Options configure a Store.
type Options struct {
	Limit          int           // most sessions kept (default 100)
	TTL            time.Duration // idle time before removal (default 24h)
	MaxConcurrency int           // most calls running at once across sessions (default 4)
	Now            func() time.Time
}

// Store holds the sessions. It is safe for concurrent use.
type Store struct {
	opts  Options
	slots chan struct{} // global concurrency limit

	mu       sync.Mutex
	sessions map[key]*entry
}

// key names a session within its owner's sessions: two callers naming
// the same id have two sessions, and neither can reach, see or learn of
// the other's.
type key struct{ owner, id string }

type entry struct {
	owner string
	data  Data
	turn  chan struct{} // 1-slot lock: one call at a time per session
	users int           // calls holding or waiting for this session (never evicted while > 0)
}

// New returns an empty store.
func New(o Options) *Store {
	if o.Limit <= 0 {
		o.Limit = 100
	}
	if o.TTL <= 0 {
		o.TTL = 24 * time.Hour
	}
	if o.MaxConcurrency <= 0 {
		o.MaxConcurrency = 4
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return &Store{opts: o, slots: make(chan struct{}, o.MaxConcurrency), sessions: map[key]*entry{}}
}

// Lease is a call's exclusive hold on one session and one concurrency slot.
type Lease struct {
	s       *Store
	e       *entry
	Created bool // the session did not exist before this call
	once    sync.Once
}

// Acquire finds owner's session id (creating it when absent or unknown; a
// malformed id gets a fresh one), waits until no other call is using it, and
// then waits for a global slot. The wait ends with ctx.
func (s *Store) Acquire(ctx context.Context, owner, id string) (*Lease, error) {
	now := s.opts.Now()
	s.mu.Lock()
	s.sweepLocked(now)
	if !ValidID(id) {
		id = ""
	}
	e := s.sessions[key{owner, id}]
	created := false
	if e == nil {
		if id == "" {
			id = newID()
		}
		e = &entry{owner: owner, data: Data{ID: id, CreatedAt: now, LastAccessedAt: now, Turns: []Turn{}}, turn: make(chan struct{}, 1)}
		s.sessions[key{owner, id}] = e
		created = true
	}
	e.users++ // before eviction, so the session being used is never the victim
	if created {
		s.evictLocked()
	}
	e.data.LastAccessedAt = now
	s.mu.Unlock()

	release := func() {
		s.mu.Lock()
		e.users--
		s.mu.Unlock()
	}
	select {
	case e.turn <- struct{}{}:
	case <-ctx.Done():
		release()
		return nil, ctx.Err()
	}
	select {
	case s.slots <- struct{}{}:
	case <-ctx.Done():
		<-e.turn
		release()
		return nil, ctx.Err()
	}
	return &Lease{s: s, e: e, Created: created}, nil
}

// newID returns a UUID-based session id.
func newID() string { return "session-" + uuid.NewString() }

// ID is the session's id.
func (l *Lease) ID() string { return l.e.data.ID }

// Data returns a copy of the session.
func (l *Lease) Data() Data {
	l.s.mu.Lock()
	defer l.s.mu.Unlock()
	return l.e.data.clone()
}

// Reset clears the history and the CLI conversation id.
func (l *Lease) Reset() {
	l.s.mu.Lock()
	defer l.s.mu.Unlock()
	l.e.data.Turns = []Turn{}
	l.e.data.TurnCount = 0
	l.e.data.CoderConversationID = ""
	l.e.data.WorkingDirectory = ""
	l.e.data.Codex = nil
	l.e.data.LastAccessedAt = l.s.opts.Now()
}

// SetWorkingDirectory records where the session's calls run.
func (l *Lease) SetWorkingDirectory(dir string) {
	l.s.mu.Lock()
	defer l.s.mu.Unlock()
	l.e.data.WorkingDirectory = dir
}

// SetConversationID records (or, with "", forgets) the CLI's conversation id.
func (l *Lease) SetConversationID(id string) {
	l.s.mu.Lock()
	defer l.s.mu.Unlock()
	l.e.data.CoderConversationID = id
}

// SetCodex records the settings a `codex` call started the thread with.
func (l *Lease) SetCodex(c CodexSettings) {
	l.s.mu.Lock()
	defer l.s.mu.Unlock()
	c.Overrides = slices.Clone(c.Overrides)
	l.e.data.Codex = &c
}

// FindThread returns owner's session whose CLI conversation is thread.
func (s *Store) FindThread(owner, thread string) (Data, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sweepLocked(s.opts.Now())
	for _, e := range s.sessions {
		if e.owner == owner && thread != "" && e.data.CoderConversationID == thread {
			return e.data.clone(), true
		}
	}
	return Data{}, false
}

// AddTurn appends a turn and updates lastAccessedAt.
func (l *Lease) AddTurn(prompt, response string) {
	l.s.mu.Lock()
	defer l.s.mu.Unlock()
	now := l.s.opts.Now()
	turns := append(l.e.data.Turns, Turn{Prompt: clipBytes(prompt), Response: clipBytes(response), Timestamp: now})
	if len(turns) > MaxTurns {
		turns = append(turns[:0:0], turns[len(turns)-MaxTurns:]...)
	}
	l.e.data.Turns = turns
	l.e.data.TurnCount++
	l.e.data.LastAccessedAt = now
}

// Release gives the session and the slot back. It is safe to call twice.
func (l *Lease) Release() {
	l.once.Do(func() {
		<-l.s.slots
		<-l.e.turn
		l.s.mu.Lock()
		l.e.users--
		l.e.data.LastAccessedAt = l.s.opts.Now()
		l.s.mu.Unlock()
	})
}

// Slot waits for a global concurrency slot without a session (review runs
// the CLI too and counts against the same limit). Call the returned func to
// give it back.
func (s *Store) Slot(ctx context.Context) (func(), error) {
	select {
	case s.slots <- struct{}{}:
		var once sync.Once
		return func() { once.Do(func() { <-s.slots }) }, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// Get returns a copy of owner's session id.
func (s *Store) Get(owner, id string) (Data, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sweepLocked(s.opts.Now())
	e, ok := s.sessions[key{owner, id}]
	if !ok {
		return Data{}, false
	}
	return e.data.clone(), true
}

// List summarises owner's active sessions, most recently used first.
func (s *Store) List(owner string) []Summary {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sweepLocked(s.opts.Now())
	out := make([]Summary, 0, len(s.sessions))
	entries := make([]*entry, 0, len(s.sessions))
	for _, e := range s.sessions {
		if e.owner == owner {
			entries = append(entries, e)
		}
	}
	slices.SortFunc(entries, func(a, b *entry) int {
		if c := b.data.LastAccessedAt.Compare(a.data.LastAccessedAt); c != 0 {
			return c
		}
		return strings.Compare(a.data.ID, b.data.ID)
	})
	for _, e := range entries {
		out = append(out, Summary{
			ID:             e.data.ID,
			CreatedAt:      e.data.CreatedAt.UTC().Format(time.RFC3339Nano),
			LastAccessedAt: e.data.LastAccessedAt.UTC().Format(time.RFC3339Nano),
			TurnCount:      e.data.TurnCount,
		})
	}
	return out
}

// Sweep removes sessions idle for longer than the TTL.
func (s *Store) Sweep() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sweepLocked(s.opts.Now())
}

// RunSweeper sweeps every interval until ctx ends.
func (s *Store) RunSweeper(ctx context.Context, interval time.Duration) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			s.Sweep()
		}
	}
}

// SweepInterval is a sensible sweep period for a TTL.
func SweepInterval(ttl time.Duration) time.Duration {
	iv := ttl / 4
	return max(min(iv, time.Minute), 100*time.Millisecond)
}

func (s *Store) sweepLocked(now time.Time) {
	for k, e := range s.sessions {
		if e.users == 0 && now.Sub(e.data.LastAccessedAt) > s.opts.TTL {
			delete(s.sessions, k)
		}
	}
}

// evictLocked drops least recently used idle sessions until within the limit.
func (s *Store) evictLocked() {
	for len(s.sessions) > s.opts.Limit {
		var victim *entry
		for _, e := range s.sessions {
			if e.users > 0 {
				continue
			}
			if victim == nil || e.data.LastAccessedAt.Before(victim.data.LastAccessedAt) ||
				(e.data.LastAccessedAt.Equal(victim.data.LastAccessedAt) && e.data.CreatedAt.Before(victim.data.CreatedAt)) {
				victim = e
			}
		}
		if victim == nil {
			return // every session is busy; the limit is restored as they finish
		}
		delete(s.sessions, key{victim.owner, victim.data.ID})
	}
}

func (d Data) clone() Data {
	d.Turns = slices.Clone(d.Turns)
	return d
}

// ContextPrompt builds a prompt that carries the last two turns, for when
// the CLI cannot resume the conversation natively.
func ContextPrompt(turns []Turn, prompt string) string {
	if len(turns) == 0 {
		return prompt
	}
	if len(turns) > 2 {
		turns = turns[len(turns)-2:]
	}
	var b strings.Builder
	b.WriteString("Context from our previous conversation:\n")
	for _, t := range turns {
		b.WriteString("User: ")
		b.WriteString(clip(t.Prompt, 2000))
		b.WriteString("\nAssistant: ")
		b.WriteString(clip(t.Response, 4000))
		b.WriteString("\n")
	}
	b.WriteString("\nContinue from there. New request: ")
	b.WriteString(prompt)
	return b.String()
}

// clipBytes bounds a stored text, cutting on a rune boundary.
func clipBytes(s string) string {
	if len(s) <= MaxTurnText {
		return s
	}
	cut := MaxTurnText
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

func clip(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n]) + "…"
}
