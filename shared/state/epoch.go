package state

import (
	"context"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"
)

// A Redis without persistence forgets every key when it restarts (so does
// FLUSHALL, or a failover to an empty node), and nothing in the store says
// so: a used code would look unused, a task unknown. So the store holds a
// generation ("epoch"): one key per prefix whose value is the Redis TIME
// (unix ms) at which the store was first seen without it. Every script
// that relies on what the store remembers reads it in the same call; where
// it is missing, unreadable, or older than the one this process saw, the
// store lost its records about then, and the script starts a new
// generation (scripts run atomically: of replicas racing on a reset,
// exactly one creates it and the others read it). A key is stamped with
// the generation its issuer knew: one of another generation, issued before
// the current one began, is refused (MarkUsed); task runners rewrite what
// they hold (TaskRecord).
//
// Known limits: a failover to a replica that holds an older copy of the
// data (Redis replication is asynchronous) keeps the generation key and
// loses the newest writes unnoticed; so does an operator deleting single
// keys. Only persistence (appendonly) and a replica with WAIT cover those.

// EpochTTL is how long a generation key lives without traffic: every
// scripted call (heartbeats every MCP_TASK_HEARTBEAT, /readyz probes,
// confirmations) renews it, so it only expires in a store idle for 30
// days, longer than a code (MCP_APPROVAL_TIMEOUT, 5 minutes by default) or
// a task (MCP_TASK_TTL, an hour by default) that could depend on it lives.
// Should it expire anyway, the next call starts a new generation, which
// refuses older codes: a spurious reset fails closed.
const EpochTTL = 30 * 24 * time.Hour

// resetSkew is how far a replica's clock may run ahead of Redis's: a code
// issued by such a replica before a reset carries a time up to that much
// after it. NTP keeps hosts within milliseconds; two seconds covers a
// host that is badly off, and costs only that a code stamped with an older
// generation (its issuer had not seen the reset yet) and issued within two
// seconds after it is refused once.
var resetSkew = 2 * time.Second

// epochLua sets epoch to the current generation (see above). KEYS[1] is
// the generation key, ARGV[1] the generation this process knew (0: none),
// ARGV[2] EpochTTL in ms; a script's own keys and arguments follow.
const epochLua = `
local epoch = tonumber(redis.pcall('GET', KEYS[1]))
if not epoch or epoch ~= math.floor(epoch) or epoch <= 0 or epoch < tonumber(ARGV[1]) then
  local t = redis.call('TIME')
  -- never before the generation this process knew: a Redis clock that
  -- stepped back would otherwise reset it on every call
  epoch = math.max(tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000), tonumber(ARGV[1]))
  redis.call('SET', KEYS[1], string.format('%.0f', epoch), 'PX', ARGV[2])
elseif redis.call('PTTL', KEYS[1]) < tonumber(ARGV[2]) / 2 then
  -- renewed once half its life is gone: a read on most calls, not a write
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
end
`

// newEpochScript returns a script running body after epochLua; body
// returns {epoch, value, ...}.
func newEpochScript(body string) *redis.Script { return redis.NewScript(epochLua + body) }

var pingScript = newEpochScript(`return {epoch, 0}`)

// runAll runs s with the generation key and arguments before keys and
// args, remembers the generation it returns, and returns the rest of its
// reply.
func (r *Redis) runAll(ctx context.Context, s *redis.Script, keys []string, args ...any) ([]any, error) {
	k := append([]string{r.prefix + "epoch"}, keys...)
	a := append([]any{r.known.Load(), EpochTTL.Milliseconds()}, args...)
	v, err := s.Run(ctx, r.c, k, a...).Slice()
	if err != nil {
		return nil, r.wrap(err)
	}
	e, ok := v[0].(int64)
	if len(v) < 2 || !ok {
		return nil, r.wrap(fmt.Errorf("unexpected script reply %v", v))
	}
	for {
		// The newest generation wins: replies to concurrent calls may
		// arrive out of order.
		old := r.known.Load()
		if e <= old || r.known.CompareAndSwap(old, e) {
			break
		}
	}
	return v[1:], nil
}

// run is runAll for a script whose value is one integer.
func (r *Redis) run(ctx context.Context, s *redis.Script, keys []string, args ...any) (int64, error) {
	v, err := r.runAll(ctx, s, keys, args...)
	if err != nil {
		return 0, err
	}
	n, _ := v[0].(int64)
	return n, nil
}

func (r *Redis) generation() int64 { return r.known.Load() }

// begin starts the store's generation under r's prefix if it has none, as
// the process starts, so that a new store's generation predates the codes
// issued after the start (a code issued before it is refused once). A store
// that does not answer yet gets one at its first call.
func (r *Redis) begin() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	r.Ping(ctx) // an error is the first call's to report
}

// Epoch is when the store's current generation began, as this process
// last saw it (zero before its first call): records written before then
// may be gone.
func (r *Redis) Epoch() time.Time {
	if ms := r.known.Load(); ms > 0 {
		return time.UnixMilli(ms)
	}
	return time.Time{}
}

// ResetError refuses a key issued before the store's current generation:
// the store lost its records since (restarted without persistence,
// flushed, failed over to an empty node), so whether the key was used
// cannot be known.
type ResetError struct {
	Where string
	At    time.Time
}

func (e *ResetError) Error() string {
	return fmt.Sprintf("the shared state store (%s %s) lost its records at %s (Redis restarted without persistence, was flushed, or failed over to an empty node), so a code issued before then cannot be proven unused",
		URLVar, e.Where, e.At.UTC().Format(time.RFC3339))
}
