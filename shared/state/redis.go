package state

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
)

// URLVar is the variable naming the state store replicas share.
const URLVar = "MCP_STATE_URL"

// Redis is the state store every replica reaches: used confirmation codes
// (SET key 1 NX PXAT until), task records and ended sessions, each key with
// an expiry. It never falls back to process memory: a call that cannot
// reach Redis fails with an error naming MCP_STATE_URL (without its
// password), and the caller refuses what depended on it.
type Redis struct {
	c      *redis.Client
	where  string // the URL without credentials
	prefix string
	// scopes are this client's stores by prefix, so that every user of
	// one prefix shares one remembered generation (epoch) and Check
	// reaches each generation key.
	scopes *scopes
	// known is the generation (Redis TIME, unix ms) this process last saw
	// under prefix; 0 before the first call.
	known atomic.Int64
}

type scopes struct {
	mu sync.Mutex
	by map[string]*Redis
}

// Prefix starts every key mcpfleet stores.
const Prefix = "mcpfleet:"

// Redact returns raw with any password replaced by "xxxxx", for messages.
func Redact(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		// An unparsable URL may still hold a password: show only its scheme.
		if i := strings.Index(raw, "://"); i > 0 && i < 10 {
			return raw[:i] + "://(unparsable URL)"
		}
		return "(unparsable URL)"
	}
	if u.User != nil {
		if _, ok := u.User.Password(); ok {
			u.User = url.UserPassword(u.User.Username(), "xxxxx")
		}
	}
	u.RawQuery = "" // query parameters may carry credentials too
	return u.Redacted()
}

// CheckURL reports whether raw is a state store URL this build can open:
// redis://[user:password@]host[:port][/db] or rediss:// (TLS).
func CheckURL(raw string) error {
	_, err := parseURL(raw)
	return err
}

func parseURL(raw string) (*redis.Options, error) {
	if !strings.HasPrefix(raw, "redis://") && !strings.HasPrefix(raw, "rediss://") {
		return nil, fmt.Errorf("%s %s: want redis://[user:password@]host[:port][/db] or rediss://… (TLS)", URLVar, Redact(raw))
	}
	o, err := redis.ParseURL(raw)
	if err != nil {
		// go-redis's message may quote the URL: say only what to fix.
		return nil, fmt.Errorf("%s %s is not a valid Redis URL: want redis://[user:password@]host[:port][/db] or rediss://…", URLVar, Redact(raw))
	}
	// Short bounds: a store that does not answer fails the call promptly
	// instead of holding it (and every caller behind it).
	o.DialTimeout = 2 * time.Second
	o.ReadTimeout = 2 * time.Second
	o.WriteTimeout = 2 * time.Second
	o.MaxRetries = 1
	return o, nil
}

// quiet drops go-redis's own log lines: they name the address and repeat
// what the returned errors say (StoreError, with MCP_STATE_URL).
type quiet struct{}

func (quiet) Printf(context.Context, string, ...interface{}) {}

func init() { redis.SetLogger(quiet{}) }

var (
	openMu sync.Mutex
	opened = map[string]*Redis{}
)

// OpenRedis returns the store behind raw, one client per URL per process
// (the ledger, the tasks and the sessions share it). Nothing is dialled
// until the first call.
func OpenRedis(raw string) (*Redis, error) {
	o, err := parseURL(raw)
	if err != nil {
		return nil, err
	}
	openMu.Lock()
	defer openMu.Unlock()
	if r, ok := opened[raw]; ok {
		return r, nil
	}
	r := &Redis{c: redis.NewClient(o), where: Redact(raw), prefix: Prefix, scopes: &scopes{by: map[string]*Redis{}}}
	r.scopes.by[Prefix] = r
	opened[raw] = r
	go r.begin()
	return r, nil
}

// Check pings every store this process opened, under every prefix in use:
// nil when there is none or all answer. /readyz reports it. Each ping also
// starts a new generation where the store lost its records, so that after
// a restart one comes into being before the replicas take traffic.
func Check(ctx context.Context) error {
	openMu.Lock()
	var rs []*Redis
	for _, r := range opened {
		r.scopes.mu.Lock()
		for _, s := range r.scopes.by {
			rs = append(rs, s)
		}
		r.scopes.mu.Unlock()
	}
	openMu.Unlock()
	for _, r := range rs {
		if err := r.Ping(ctx); err != nil {
			return err
		}
	}
	return nil
}

// Close closes the client (tests; a server keeps it until it exits).
func (r *Redis) Close() error {
	openMu.Lock()
	for k, v := range opened {
		if v == r {
			delete(opened, k)
		}
	}
	openMu.Unlock()
	return r.c.Close()
}

// Where implements Ledger: the URL without its password.
func (r *Redis) Where() string { return r.where }

// Ping checks that the store answers and holds a generation under this
// prefix (starting one where it is missing): one round trip, as PING.
func (r *Redis) Ping(ctx context.Context) error {
	_, err := r.run(ctx, pingScript, nil)
	return err
}

// StoreError is a state store call that failed: the store could not be
// reached or refused the call.
type StoreError struct {
	Where string
	Err   error
}

func (e *StoreError) Error() string {
	return fmt.Sprintf("the shared state store (%s %s) did not answer: %v; check that Redis is running and reachable from this server, or unset %s to keep state in this process only (then replicas do not share it)",
		URLVar, e.Where, e.Err, URLVar)
}

func (e *StoreError) Unwrap() error { return e.Err }

func (r *Redis) wrap(err error) error {
	if err == nil || errors.Is(err, redis.Nil) {
		return err
	}
	var se *StoreError
	if errors.As(err, &se) {
		return err
	}
	return &StoreError{Where: r.where, Err: err}
}

// markScript is SET key 1 NX PXAT until, for a key issued in this
// generation only: one stamped with another generation (ARGV[6]) and
// issued before it began (ARGV[3], with the skew margin ARGV[5]) may have
// been used in the records the store lost (-1).
var markScript = newEpochScript(`
if tonumber(ARGV[6]) ~= epoch and tonumber(ARGV[3]) < epoch + tonumber(ARGV[5]) then return {epoch, -1} end
if redis.call('SET', KEYS[2], '1', 'NX', 'PXAT', ARGV[4]) then return {epoch, 1} end
return {epoch, 0}`)

// MarkUsed implements Ledger: SET key 1 NX PXAT until, refused with a
// *ResetError when key was issued before the store's current generation
// (the store lost its records since: whether it was used cannot be known).
// A key stamped with the current generation is of it whatever the clocks
// say; one stamped otherwise is judged by its time.
func (r *Redis) MarkUsed(ctx context.Context, key string, issued Stamp, until time.Time) (bool, error) {
	if err := CheckKey(key); err != nil {
		return false, err
	}
	if !until.After(time.Now()) {
		// Already expired: nothing to record, and PXAT in the past is an
		// error. The caller checks expiry itself; first use stands.
		until = time.Now().Add(time.Second)
	}
	v, err := r.run(ctx, markScript, []string{r.prefix + "used:" + key},
		issued.At.UnixMilli(), until.UnixMilli(), resetSkew.Milliseconds(), issued.Generation)
	if err != nil {
		return false, err
	}
	if v == -1 {
		return false, &ResetError{Where: r.where, At: time.UnixMilli(r.known.Load())}
	}
	return v == 1, nil
}

// EndSession records a terminated (DELETEd) 2025-11-25 session for ttl, so
// that every replica refuses it.
func (r *Redis) EndSession(ctx context.Context, id string, ttl time.Duration) error {
	if ttl < time.Second {
		ttl = time.Second
	}
	return r.wrap(r.c.Set(ctx, r.prefix+"session-ended:"+id, "1", ttl).Err())
}

// SessionEnded reports whether a replica recorded session id as
// terminated.
func (r *Redis) SessionEnded(ctx context.Context, id string) (bool, error) {
	n, err := r.c.Exists(ctx, r.prefix+"session-ended:"+id).Result()
	if err != nil {
		return false, r.wrap(err)
	}
	return n > 0, nil
}

// Scoped returns the store with keys under the name of one server, so
// that servers sharing a Redis never see each other's codes or tasks. It
// is the same store (and generation) for every call naming server.
func (r *Redis) Scoped(server string) *Redis {
	if server == "" {
		return r
	}
	p := Prefix + server + ":"
	r.scopes.mu.Lock()
	defer r.scopes.mu.Unlock()
	if c, ok := r.scopes.by[p]; ok {
		return c
	}
	c := &Redis{c: r.c, where: r.where, prefix: p, scopes: r.scopes}
	r.scopes.by[p] = c
	go c.begin()
	return c
}
