package serve

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"sync"

	"github.com/mark3labs/mcp-go/server"

	"github.com/mcpfleet/mcpfleet/shared/httpauth"
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
// default stateless session ids did; only DELETE is remembered per process.
// Legacy SSE sessions live in one process with their stream, so they are
// bound in a map for as long as the stream is open.
type sessions struct {
	key []byte

	mu         sync.Mutex
	sse        map[string]string // open SSE session id → owner
	terminated map[string]struct{}
	order      []string // terminated ids, oldest first, to bound the set
}

// maxTerminated bounds the memory of DELETEd streamable sessions.
const maxTerminated = 1 << 16

const sessionPrefix = "mcp-session-"

var sessionB64 = base64.RawURLEncoding

func newSessions(key []byte) *sessions {
	if len(key) == 0 {
		key = make([]byte, 32)
		if _, err := rand.Read(key); err != nil {
			panic("serve: no randomness for the session key: " + err.Error())
		}
	}
	return &sessions{key: key, sse: map[string]string{}, terminated: map[string]struct{}{}}
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

func (s *sessions) mac(random, owner string) string {
	m := hmac.New(sha256.New, s.key)
	m.Write([]byte(random))
	m.Write([]byte{0})
	m.Write([]byte(owner))
	return sessionB64.EncodeToString(m.Sum(nil))
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
	return hmac.Equal([]byte(sum), []byte(s.mac(random, owner)))
}

func (s *sessions) isTerminated(id string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.terminated[id]
	return ok
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
// it with a nil r when it ends sessions itself (shutdown, idle sweep).
func (s *sessions) ResolveSessionIdManager(r *http.Request) server.SessionIdManager {
	return &boundManager{s: s, owner: owner(r), system: r == nil}
}

type boundManager struct {
	s      *sessions
	owner  string
	system bool
}

var errUnknownSession = errors.New("unknown session")

func (m *boundManager) Generate() string { return m.s.mint(m.owner) }

func (m *boundManager) Validate(id string) (bool, error) {
	if !m.s.bound(id, m.owner) {
		return false, errUnknownSession
	}
	return m.s.isTerminated(id), nil
}

func (m *boundManager) Terminate(id string) (bool, error) {
	if !m.system && !m.s.bound(id, m.owner) {
		return false, errUnknownSession
	}
	m.s.terminate(id)
	return false, nil
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
			next.ServeHTTP(w, r)
			return
		}
		if len(ids) > 1 || !s.bound(ids[0], owner(r)) || s.isTerminated(ids[0]) {
			sessionNotFound(w)
			return
		}
		next.ServeHTTP(w, r)
	})
}

type sseHolderKey struct{}

// sseHolder receives the id mcp-go's SSE handler minted for its stream.
type sseHolder struct{ id string }

// trackSSE records which SSE session each open stream carries, so that the
// binding ends with the stream.
func (s *sessions) trackSSE(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
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
