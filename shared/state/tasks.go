package state

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"time"

	"github.com/redis/go-redis/v9"
)

// Task statuses as MCP names them.
const (
	TaskWorking   = "working"
	TaskCompleted = "completed"
	TaskFailed    = "failed"
	TaskCancelled = "cancelled"
)

// DeadMessage is the status message of a task whose replica stopped
// heartbeating it.
const DeadMessage = "the server running this task stopped"

// TaskRecord is what the store keeps of a task: no arguments, no secrets,
// only who owns it, where it stands and its (size-bounded) result.
type TaskRecord struct {
	ID            string        `json:"id"`
	Issuer        string        `json:"iss"`
	Subject       string        `json:"sub"`
	Status        string        `json:"status"`
	StatusMessage string        `json:"msg,omitempty"`
	Created       time.Time     `json:"created"`
	Updated       time.Time     `json:"updated"`
	TTL           time.Duration `json:"ttl"`
	PollInterval  time.Duration `json:"poll,omitempty"`
	// Modern is set for a task of the 2026-07-28 tasks extension (its
	// Error is then the JSON-RPC error object).
	Modern bool            `json:"modern,omitempty"`
	Input  json.RawMessage `json:"-"` // input_required: the open inputRequests
	Result json.RawMessage `json:"-"` // a CallToolResult, completed tasks only
	Error  string          `json:"-"` // why a failed task failed
}

// Terminal reports whether the status is final.
func (t *TaskRecord) Terminal() bool { return t.Status != TaskWorking && t.Status != "input_required" }

// forgetAfter is how long past its TTL a task record is kept, to answer
// "expired" rather than "not found" (mcp-go keeps a tombstone as long).
const forgetAfter = 6 * time.Minute

func (r *Redis) taskKey(id string) string   { return r.prefix + "task:" + id }
func (r *Redis) beatKey(id string) string   { return r.prefix + "task-beat:" + id }
func (r *Redis) cancelKey(id string) string { return r.prefix + "task-cancel:" + id }
func (r *Redis) inputKey(id string) string  { return r.prefix + "task-input:" + id }
func (r *Redis) ownerKey(iss, sub string) string {
	h := sha256.Sum256([]byte(iss + "\x00" + sub))
	return r.prefix + "tasks-of:" + hex.EncodeToString(h[:16])
}

// putScript writes a task's whole record (meta, status, message, result,
// error, open input requests), its heartbeat while it runs, and its entry
// in its owner's index.
var putScript = newEpochScript(`
redis.call('DEL', KEYS[2])
redis.call('HSET', KEYS[2], 'meta', ARGV[3], 'status', ARGV[4], 'msg', ARGV[5], 'updated', ARGV[13])
if ARGV[6] ~= '' then redis.call('HSET', KEYS[2], 'result', ARGV[6]) end
if ARGV[7] ~= '' then redis.call('HSET', KEYS[2], 'error', ARGV[7]) end
if ARGV[8] ~= '' then redis.call('HSET', KEYS[2], 'input', ARGV[8]) end
redis.call('PEXPIREAT', KEYS[2], ARGV[9])
if ARGV[4] == 'working' or ARGV[4] == 'input_required' then
  redis.call('SET', KEYS[3], '1', 'PX', ARGV[11])
end
redis.call('ZADD', KEYS[4], ARGV[9], ARGV[12])
redis.call('ZREMRANGEBYSCORE', KEYS[4], '-inf', '(' .. ARGV[10])
-- an owner's index lives as long as its newest task
local ttl = redis.call('PTTL', KEYS[4])
if ttl < 0 or tonumber(ARGV[10]) + ttl < tonumber(ARGV[9]) then redis.call('PEXPIREAT', KEYS[4], ARGV[9]) end
return {epoch, 1}`)

// PutTask stores task t (a new one is working) with its first heartbeat
// (alive for beat). The replica running a task also calls it to write the
// record again after the store lost it (its heartbeat or end found the
// record gone): with the status, message, result and open input requests
// the replica holds.
func (r *Redis) PutTask(ctx context.Context, t *TaskRecord, beat time.Duration) error {
	meta, _ := json.Marshal(t)
	exp := t.Created.Add(t.TTL + forgetAfter)
	if beat < time.Millisecond {
		beat = time.Millisecond
	}
	now := time.Now()
	upd := t.Updated
	if upd.IsZero() {
		upd = now
	}
	_, err := r.run(ctx, putScript, []string{r.taskKey(t.ID), r.beatKey(t.ID), r.ownerKey(t.Issuer, t.Subject)},
		meta, t.Status, t.StatusMessage, []byte(t.Result), t.Error, []byte(t.Input),
		exp.UnixMilli(), now.UnixMilli(), beat.Milliseconds(), t.ID, upd.UnixMilli())
	return err
}

func itoa(n int64) string { b, _ := json.Marshal(n); return string(b) }

// finishScript moves a task out of working: only from working, so that a
// cancel and the run's end do not overwrite each other (0); -1 when the
// store has no such task.
var finishScript = newEpochScript(`
local s = redis.call('HGET', KEYS[2], 'status')
if not s then return {epoch, -1} end
if s ~= 'working' and s ~= 'input_required' then return {epoch, 0} end
redis.call('HSET', KEYS[2], 'status', ARGV[3], 'msg', ARGV[4], 'result', ARGV[5], 'error', ARGV[6], 'updated', ARGV[7])
redis.call('HDEL', KEYS[2], 'input')
redis.call('DEL', KEYS[3])
return {epoch, 1}`)

// ErrNoTask is a task the store does not hold: it expired, or the store
// lost it (see Epoch).
var ErrNoTask = errors.New("the shared state store holds no such task")

// FinishTask ends a working task with status (completed, failed,
// cancelled), a message, a result (completed) or an error text (failed).
// It reports false when the task had already ended (cancelled from
// another replica, reported dead), and ErrNoTask when the store has no
// such task (expired, or lost: its runner may write it again, PutTask).
func (r *Redis) FinishTask(ctx context.Context, id, status, msg string, result []byte, errText string) (bool, error) {
	n, err := r.run(ctx, finishScript, []string{r.taskKey(id), r.beatKey(id)},
		status, msg, result, errText, time.Now().UnixMilli())
	if err != nil {
		return false, err
	}
	if n == -1 {
		return false, ErrNoTask
	}
	return n == 1, nil
}

// beatScript renews a working task's heartbeat and progress message and
// says whether a cancel was requested (1), the task is no longer working
// (2) or the store has no such task (3).
var beatScript = newEpochScript(`
if redis.call('EXISTS', KEYS[4]) == 1 then return {epoch, 1} end
local s = redis.call('HGET', KEYS[2], 'status')
if not s then return {epoch, 3} end
if s ~= 'working' and s ~= 'input_required' then return {epoch, 2} end
redis.call('SET', KEYS[3], '1', 'PX', ARGV[3])
if ARGV[4] ~= '' then redis.call('HSET', KEYS[2], 'msg', ARGV[4]) end
return {epoch, 0}`)

// Beat renews task id's heartbeat for alive and records its progress
// message. stop is true when the task was cancelled (from any replica) or
// ended elsewhere: its run should end. ErrNoTask: the store has no such
// task (expired, or lost: its runner writes it again, PutTask).
func (r *Redis) Beat(ctx context.Context, id string, alive time.Duration, msg string) (stop bool, err error) {
	n, err := r.run(ctx, beatScript, []string{r.taskKey(id), r.beatKey(id), r.cancelKey(id)},
		alive.Milliseconds(), msg)
	switch {
	case err != nil:
		return false, err
	case n == 3:
		return false, ErrNoTask
	}
	return n != 0, nil
}

// getScript reads a task's record and whether its heartbeat is alive.
var getScript = newEpochScript(`
return {epoch, redis.call('EXISTS', KEYS[3]), redis.call('HGETALL', KEYS[2])}`)

// GetTask returns task id, or nil when the store has no such task. A
// working task whose heartbeat expired is reported (and recorded) failed
// with DeadMessage.
func (r *Redis) GetTask(ctx context.Context, id string) (*TaskRecord, error) {
	v, err := r.runAll(ctx, getScript, []string{r.taskKey(id), r.beatKey(id)})
	if err != nil {
		return nil, err
	}
	beat, _ := v[0].(int64)
	kv, _ := v[1].([]any)
	if len(kv) == 0 {
		return nil, nil
	}
	f := make(map[string]string, len(kv)/2)
	for i := 0; i+1 < len(kv); i += 2 {
		k, _ := kv[i].(string)
		f[k], _ = kv[i+1].(string)
	}
	t := &TaskRecord{}
	if err := json.Unmarshal([]byte(f["meta"]), t); err != nil {
		return nil, r.wrap(errors.New("task record " + id + " is unreadable"))
	}
	t.Status, t.StatusMessage, t.Error = f["status"], f["msg"], f["error"]
	if f["result"] != "" {
		t.Result = json.RawMessage(f["result"])
	}
	if f["input"] != "" {
		t.Input = json.RawMessage(f["input"])
	}
	if u := f["updated"]; u != "" {
		var ms int64
		if json.Unmarshal([]byte(u), &ms) == nil && ms > 0 {
			t.Updated = time.UnixMilli(ms)
		}
	}
	if !t.Terminal() && beat == 0 {
		if _, err := r.FinishTask(ctx, id, TaskFailed, DeadMessage, nil, DeadMessage); errors.Is(err, ErrNoTask) {
			return nil, nil // gone meanwhile
		} else if err != nil {
			return nil, err
		}
		return r.GetTask(ctx, id)
	}
	return t, nil
}

// CancelTask records a cancel request for a working task (its replica's
// next heartbeat ends the run) and marks it cancelled. It reports false
// when the task had already ended or the store does not hold it (the
// cancel request still reaches a run whose record was lost).
func (r *Redis) CancelTask(ctx context.Context, id, msg string) (bool, error) {
	if err := r.c.Set(ctx, r.cancelKey(id), "1", time.Hour).Err(); err != nil {
		return false, r.wrap(err)
	}
	ok, err := r.FinishTask(ctx, id, TaskCancelled, msg, nil, "")
	if errors.Is(err, ErrNoTask) {
		return false, nil
	}
	return ok, err
}

// ListTasks returns the ids of the tasks of (iss, sub) the store still
// holds.
func (r *Redis) ListTasks(ctx context.Context, iss, sub string) ([]string, error) {
	ids, err := r.c.ZRangeByScore(ctx, r.ownerKey(iss, sub), &redis.ZRangeBy{Min: itoa(time.Now().UnixMilli()), Max: "+inf"}).Result()
	if err != nil && !errors.Is(err, redis.Nil) {
		return nil, r.wrap(err)
	}
	return ids, nil
}

// inputScript moves a running task between working and input_required
// (ARGV[1]), with its open inputRequests (ARGV[2]) while input_required.
var inputScript = redis.NewScript(`
local s = redis.call('HGET', KEYS[1], 'status')
if s ~= 'working' and s ~= 'input_required' then return 0 end
redis.call('HSET', KEYS[1], 'status', ARGV[1], 'updated', ARGV[3])
if ARGV[2] == '' then redis.call('HDEL', KEYS[1], 'input') else redis.call('HSET', KEYS[1], 'input', ARGV[2]) end
return 1`)

// SetInput records a running task's move to input_required with its open
// input requests (JSON), or back to working (status "working", no
// requests). A task that has ended is left as it is.
func (r *Redis) SetInput(ctx context.Context, id, status string, requests []byte) error {
	_, err := inputScript.Run(ctx, r.c, []string{r.taskKey(id)}, status, requests, time.Now().UnixMilli()).Int()
	return r.wrap(err)
}

// PushInput queues a client's input responses (JSON) for task id, for the
// replica running it (PopInput). They are kept at most ttl.
func (r *Redis) PushInput(ctx context.Context, id string, responses []byte, ttl time.Duration) error {
	_, err := r.c.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.RPush(ctx, r.inputKey(id), responses)
		p.PExpire(ctx, r.inputKey(id), ttl)
		return nil
	})
	return r.wrap(err)
}

// PopInput takes the oldest input responses queued for task id, waiting up
// to wait; nil when none came.
func (r *Redis) PopInput(ctx context.Context, id string, wait time.Duration) ([]byte, error) {
	v, err := r.c.BLPop(ctx, wait, r.inputKey(id)).Result()
	if errors.Is(err, redis.Nil) {
		return nil, nil
	}
	if err != nil {
		return nil, r.wrap(err)
	}
	return []byte(v[1]), nil
}
