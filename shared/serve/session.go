package serve

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/mark3labs/mcp-go/server"

	"github.com/mcpfleet/mcpfleet/shared/httpauth"
	"github.com/mcpfleet/mcpfleet/shared/httpbody"
)

// sessions binds every MCP session to the identity that opened it (the
// token's issuer and subject; "" without OAuth), as the MCP security
// guidance requires: a request naming a session of another caller, or a
// session this server never issued or has ended, gets 404, the same answer
// in every case so that ids cannot be probed.
//
// Streamable HTTP session ids carry their binding: "mcp-session-" + random
// + "." + HMAC(key, random, owner). They are checked without server state,
// so replicas sharing JWT_SECRET accept each other's sessions as mcp-go's
// default stateless session ids did. An ended session (DELETE, idle
// expiry) is remembered in this process and, with MCP_STATE_URL, in the
// shared store, so that every replica refuses it (ended).
// Legacy SSE sessions live in one process with their stream, so they are
// bound in a map for as long as the stream is open.
//
// The sessions this process opened hold memory in mcp-go until they end,
// so they are also kept in a table: one identity holds at most maxPer
// (open SSE streams count too), and a session unused for idle ends — its
// next use is 404, and end frees what mcp-go holds for it.
type sessions struct {
	key    []byte
	macs   sync.Pool // hash.Hash: HMAC-SHA256 under key
	now    func() time.Time
	idle   time.Duration
	maxPer int
	// end frees mcp-go's state of an expired streamable session.
	end func(id string)
	// shared records ended sessions for every replica; nil without
	// MCP_STATE_URL.
	shared endedStore

	mu         sync.Mutex
	sse        map[string]string // open SSE session id → owner
	terminated map[string]struct{}
	order      []string // terminated ids, oldest first, to bound the set
	live       map[string]*liveSession
	held       map[httpauth.Principal]int // live sessions, SSE streams and admissions under way
}

// liveSession is a streamable session this process opened.
type liveSession struct {
	owner httpauth.Principal
	last  time.Time // end of its last request
	busy  int       // its requests and streams in progress
}

// endedStore is the part of the shared state store (state.Redis) that
// records ended sessions.
type endedStore interface {
	EndSession(ctx context.Context, id string, ttl time.Duration) error
	SessionEnded(ctx context.Context, id string) (bool, error)
}

// endedTTL is how long the shared store remembers an ended session. A
// session id stays valid by its binding alone, so past this a replica that
// never saw the session would accept its id again (as a process does once
// maxTerminated newer sessions ended).
const endedTTL = 24 * time.Hour

// storeWait bounds one call to the shared store on a request's path.
const storeWait = 5 * time.Second

// maxTerminated bounds the memory of DELETEd streamable sessions.
const maxTerminated = 1 << 16

const sessionPrefix = "mcp-session-"

var sessionB64 = base64.RawURLEncoding

// macLen is the length of a session id's binding: a SHA-256 sum in
// unpadded base64.
const macLen = (sha256.Size*8 + 5) / 6

func newSessions(key []byte, idle time.Duration, maxPer int) *sessions {
	if len(key) == 0 {
		key = make([]byte, 32)
		if _, err := rand.Read(key); err != nil {
			panic("serve: no randomness for the session key: " + err.Error())
		}
	}
	return &sessions{key: key, now: time.Now, idle: idle, maxPer: maxPer, end: func(string) {},
		sse: map[string]string{}, terminated: map[string]struct{}{},
		live: map[string]*liveSession{}, held: map[httpauth.Principal]int{}}
}

// owner is the binding key of the caller of r.
func owner(r *http.Request) string {
	if r == nil {
		return ""
	}
	id, ok := httpauth.IdentityFromContext(r.Context())
	if !ok {
		return ""
	}
	return id.Owner()
}

// mac is the binding of a session id: HMAC(key, random, owner), encoded.
func (s *sessions) mac(random, owner string) string {
	var sum [sha256.Size]byte
	return sessionB64.EncodeToString(s.sum(random, owner, sum[:0]))
}

// sum appends HMAC(key, random 0 owner) to out. The keyed hashes are
// reused: building one (two SHA-256 states over the padded key) cost more
// than hashing an id on every request.
func (s *sessions) sum(random, owner string, out []byte) []byte {
	m, _ := s.macs.Get().(hash.Hash)
	if m == nil {
		m = hmac.New(sha256.New, s.key)
	}
	m.Reset()
	m.Write([]byte(random))
	m.Write([]byte{0})
	m.Write([]byte(owner))
	out = m.Sum(out)
	s.macs.Put(m)
	return out
}

// mint returns a new session id bound to owner.
func (s *sessions) mint(owner string) string {
	b := make([]byte, 18)
	if _, err := rand.Read(b); err != nil {
		panic("serve: no randomness for a session id: " + err.Error())
	}
	random := sessionB64.EncodeToString(b)
	return sessionPrefix + random + "." + s.mac(random, owner)
}

// bound reports whether id was minted by this server for owner.
func (s *sessions) bound(id, owner string) bool {
	rest, ok := strings.CutPrefix(id, sessionPrefix)
	if !ok {
		return false
	}
	random, sum, ok := strings.Cut(rest, ".")
	if !ok || random == "" {
		return false
	}
	var raw [sha256.Size]byte
	var want [macLen]byte
	sessionB64.Encode(want[:], s.sum(random, owner, raw[:0]))
	return hmac.Equal([]byte(sum), want[:])
}

func (s *sessions) isTerminated(id string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.terminated[id]
	return ok
}

// ended reports whether session id ended here or, with a shared store, on
// any replica. An error means the store did not answer: the caller refuses
// the request (an ended session must not come back because Redis is down).
func (s *sessions) ended(ctx context.Context, id string) (bool, error) {
	if s.isTerminated(id) {
		return true, nil
	}
	if s.shared == nil {
		return false, nil
	}
	ctx, cancel := context.WithTimeout(ctx, storeWait)
	defer cancel()
	ended, err := s.shared.SessionEnded(ctx, id)
	if err == nil && ended {
		s.terminate(id) // remembered here: the next request needs no store call
	}
	return ended, err
}

// share records the end of session id in the shared store, if any.
func (s *sessions) share(ctx context.Context, id string) error {
	if s.shared == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), storeWait)
	defer cancel()
	return s.shared.EndSession(ctx, id, endedTTL)
}

func (s *sessions) terminate(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.terminated[id]; ok {
		return
	}
	s.terminated[id] = struct{}{}
	s.order = append(s.order, id)
	if len(s.order) > maxTerminated {
		delete(s.terminated, s.order[0])
		s.order = s.order[1:]
	}
}

// ResolveSessionIdManager implements server.SessionIdManagerResolver: the
// manager it returns mints and checks ids for the caller of r. mcp-go calls
// it with a nil r when it ends sessions itself (shutdown), and the idle
// expiry with a request marked as the system's.
func (s *sessions) ResolveSessionIdManager(r *http.Request) server.SessionIdManager {
	m := &boundManager{s: s, owner: owner(r), system: r == nil, shutdown: r == nil, ctx: context.Background()}
	if r != nil {
		m.ctx = r.Context()
		m.system = r.Context().Value(systemKey{}) != nil
		m.minted, _ = r.Context().Value(mintedKey{}).(*string)
	}
	return m
}

// systemKey marks the server's own request ending an expired session.
type systemKey struct{}

// mintedKey carries where to note the id an initialize was given.
type mintedKey struct{}

type boundManager struct {
	s        *sessions
	owner    string
	system   bool
	shutdown bool // mcp-go ends the sessions of a stopping process
	minted   *string
	ctx      context.Context
}

var errUnknownSession = errors.New("unknown session")

func (m *boundManager) Generate() string {
	id := m.s.mint(m.owner)
	if m.minted != nil {
		*m.minted = id
	}
	return id
}

func (m *boundManager) Validate(id string) (bool, error) {
	if !m.s.bound(id, m.owner) {
		return false, errUnknownSession
	}
	return m.s.ended(m.ctx, id)
}

func (m *boundManager) Terminate(id string) (bool, error) {
	if !m.system && !m.s.bound(id, m.owner) {
		return false, errUnknownSession
	}
	m.s.terminate(id)
	m.s.forget(id)
	if m.shutdown {
		// mcp-go ends every session as this process stops: nothing a
		// client asked for, and no store call per session to hold the
		// shutdown.
		return false, nil
	}
	// The client's DELETE fails when the other replicas cannot be told:
	// it may retry, and until then only this replica refuses the session.
	return false, m.s.share(m.ctx, id)
}

// guardStreamable answers 404 to any /mcp request that names a session
// (Mcp-Session-Id) not bound to its caller or ended. mcp-go validates the
// session of a POST, but not of a GET stream, and a failed DELETE check is
// a 500 there; this guard makes every method the same. The id checked is
// the one header value mcp-go reads: a request with several is refused.
func (s *sessions) guardStreamable(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ids := r.Header.Values(server.HeaderKeySessionID)
		if len(ids) == 0 {
			s.open(w, r, next)
			return
		}
		if len(ids) > 1 || !s.bound(ids[0], owner(r)) {
			sessionNotFound(w)
			return
		}
		ended, err := s.ended(r.Context(), ids[0])
		if err != nil {
			storeUnavailable(w, err)
			return
		}
		if ended || !s.enter(ids[0]) {
			sessionNotFound(w)
			return
		}
		defer s.leave(ids[0])
		next.ServeHTTP(w, r)
	})
}

// open serves a request naming no session. One that can open a session
// (initialize, or a GET that opens a listening stream) is admitted within
// the caller's MCP_MAX_SESSIONS_PER_IDENTITY, and the session it opens is
// kept in the table.
func (s *sessions) open(w http.ResponseWriter, r *http.Request, next http.Handler) {
	if r.Method == http.MethodPost && !isInitialize(r) {
		next.ServeHTTP(w, r)
		return
	}
	if r.Method != http.MethodPost && r.Method != http.MethodGet {
		next.ServeHTTP(w, r)
		return
	}
	p := httpauth.PrincipalFromContext(r.Context())
	if !s.admit(p) {
		s.tooManySessions(w, p)
		return
	}
	var minted string
	next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), mintedKey{}, &minted)))
	s.mu.Lock()
	defer s.mu.Unlock()
	// A GET's session lives as long as its stream, which has just ended;
	// mcp-go registers an initialize's session even when it answers an
	// error, so it is kept until it ends or expires.
	if minted == "" || r.Method == http.MethodGet {
		s.releaseLocked(p)
		return
	}
	s.live[minted] = &liveSession{owner: p, last: s.now()}
}

// isInitialize reports whether the POST body (already read into memory by
// limitBody) is a 2025-era initialize, the one message that opens a
// session.
func isInitialize(r *http.Request) bool {
	body, err := httpbody.Read(r)
	if err != nil {
		return false
	}
	var m struct {
		Method string `json:"method"`
	}
	return json.Unmarshal(body, &m) == nil && m.Method == "initialize"
}

// admit takes a session slot for p.
func (s *sessions) admit(p httpauth.Principal) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.held[p] >= s.maxPer {
		return false
	}
	s.held[p]++
	return true
}

func (s *sessions) release(p httpauth.Principal) {
	s.mu.Lock()
	s.releaseLocked(p)
	s.mu.Unlock()
}

func (s *sessions) releaseLocked(p httpauth.Principal) {
	if s.held[p]--; s.held[p] <= 0 {
		delete(s.held, p)
	}
}

// tooManySessions answers 429: the caller holds maxPer sessions.
func (s *sessions) tooManySessions(w http.ResponseWriter, p httpauth.Principal) {
	s.mu.Lock()
	// The earliest a session of p's can expire, if none is used meanwhile.
	wait := s.idle
	for _, l := range s.live {
		if l.owner == p && l.busy == 0 {
			wait = min(wait, max(l.last.Add(s.idle).Sub(s.now()), time.Second))
		}
	}
	s.mu.Unlock()
	tooMany(w, wait, fmt.Sprintf("too many MCP sessions: this identity already holds %d open sessions on this server (MCP_MAX_SESSIONS_PER_IDENTITY); "+
		"end sessions you no longer use (DELETE /mcp with their Mcp-Session-Id, or close SSE streams), wait until idle ones expire (MCP_SESSION_IDLE_TIMEOUT %s), "+
		"or ask the operator to raise MCP_MAX_SESSIONS_PER_IDENTITY", s.maxPer, s.idle))
}

// enter marks a request of session id as under way. A session of this
// process idle past the timeout ends here (enter reports false); ids of
// sessions this process did not open (another replica's, or from before a
// restart) hold nothing here and pass.
func (s *sessions) enter(id string) bool {
	s.mu.Lock()
	l, ok := s.live[id]
	if !ok {
		s.mu.Unlock()
		return true
	}
	if l.busy == 0 && s.now().Sub(l.last) >= s.idle {
		s.expireLocked(id, l)
		s.mu.Unlock()
		s.end(id)
		return false
	}
	l.busy++
	s.mu.Unlock()
	return true
}

func (s *sessions) leave(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if l, ok := s.live[id]; ok {
		l.busy--
		l.last = s.now()
	}
}

// forget drops an ended session from the table.
func (s *sessions) forget(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if l, ok := s.live[id]; ok {
		delete(s.live, id)
		s.releaseLocked(l.owner)
	}
}

// expireLocked ends session id in the table; the caller then calls s.end.
func (s *sessions) expireLocked(id string, l *liveSession) {
	delete(s.live, id)
	s.releaseLocked(l.owner)
	if _, ok := s.terminated[id]; !ok {
		s.terminated[id] = struct{}{}
		s.order = append(s.order, id)
		if len(s.order) > maxTerminated {
			delete(s.terminated, s.order[0])
			s.order = s.order[1:]
		}
	}
}

// sweep ends every session idle past the timeout and frees what mcp-go
// holds for it; it returns how many ended.
func (s *sessions) sweep() int {
	s.mu.Lock()
	var ended []string
	now := s.now()
	for id, l := range s.live {
		if l.busy == 0 && now.Sub(l.last) >= s.idle {
			s.expireLocked(id, l)
			ended = append(ended, id)
		}
	}
	s.mu.Unlock()
	for _, id := range ended {
		s.end(id)
	}
	return len(ended)
}

// sweepEvery runs sweep until stop is closed.
func (s *sessions) sweepEvery(interval time.Duration, stop <-chan struct{}) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
			s.sweep()
		}
	}
}

type sseHolderKey struct{}

// sseHolder receives the id mcp-go's SSE handler minted for its stream.
type sseHolder struct{ id string }

// trackSSE records which SSE session each open stream carries, so that the
// binding ends with the stream.
func (s *sessions) trackSSE(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet {
			next.ServeHTTP(w, r)
			return
		}
		p := httpauth.PrincipalFromContext(r.Context())
		if !s.admit(p) {
			s.tooManySessions(w, p)
			return
		}
		defer s.release(p)
		h := &sseHolder{}
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), sseHolderKey{}, h)))
		if h.id != "" {
			s.mu.Lock()
			delete(s.sse, h.id)
			s.mu.Unlock()
		}
	})
}

// newSSESessionID is mcp-go's SSE session id generator: an id bound to the
// caller of the stream being opened.
func (s *sessions) newSSESessionID(_ context.Context, r *http.Request) (string, error) {
	o := owner(r)
	id := s.mint(o)
	s.mu.Lock()
	s.sse[id] = o
	s.mu.Unlock()
	if h, ok := r.Context().Value(sseHolderKey{}).(*sseHolder); ok {
		h.id = id
	}
	return id, nil
}

// guardSSEMessage answers 404 to a /message POST whose sessionId is not an
// open SSE session of its caller. The id checked is the one query value
// mcp-go reads: a request with several is refused.
func (s *sessions) guardSSEMessage(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ids := r.URL.Query()["sessionId"]
		if len(ids) != 1 {
			sessionNotFound(w)
			return
		}
		s.mu.Lock()
		o, open := s.sse[ids[0]]
		s.mu.Unlock()
		if !open || !hmac.Equal([]byte(o), []byte(owner(r))) {
			sessionNotFound(w)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// sessionNotFound is the one answer for an unknown, ended or foreign session.
func sessionNotFound(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusNotFound)
	json.NewEncoder(w).Encode(map[string]any{
		"jsonrpc": "2.0",
		"id":      nil,
		"error": map[string]any{
			"code":    -32600,
			"message": "session not found: it does not exist, has ended, or was opened by another caller; start a new session with initialize",
		},
	})
}

// storeUnavailable answers 503 when the shared store could not say whether
// a session ended: the request is refused rather than served on a session
// another replica may have ended.
func storeUnavailable(w http.ResponseWriter, err error) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Retry-After", "5")
	w.WriteHeader(http.StatusServiceUnavailable)
	json.NewEncoder(w).Encode(map[string]any{
		"jsonrpc": "2.0",
		"id":      nil,
		"error": map[string]any{
			"code":    -32603,
			"message": "cannot check whether this MCP session ended on another replica: " + err.Error(),
		},
	})
}
