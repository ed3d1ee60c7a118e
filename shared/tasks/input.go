package tasks

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// A task that needs a person's answer (an approval) asks inside the task:
//
//   - the task's status becomes input_required while the question is open;
//   - 2026-07-28 tasks extension: tasks/get carries the question in
//     inputRequests, and the client answers with tasks/update. With a shared
//     store, any replica takes the answer: it is queued in the store and the
//     replica running the task picks it up.
//   - 2025-11-25: the client, seeing input_required, calls tasks/result, and
//     the question goes to it as an elicitation/create on that request's
//     stream, tagged with the task (io.modelcontextprotocol/related-task), as
//     the 2025-11-25 tasks section describes. The answer goes straight back
//     to the run.
//
// Ask is what a task's handler calls; the caller bounds the wait with ctx
// (the pipeline's MCP_APPROVAL_TIMEOUT).

// inbox is one task run's open questions.
type inbox struct {
	id      string
	modern  bool
	session string // 2025-11-25: the MCP session that created the task

	mu      sync.Mutex
	seq     int
	open    []*question   // in the order asked
	changed chan struct{} // closed (and replaced) on every change
	ended   bool
	// polling is set while a goroutine takes this task's answers from
	// the store (tasks/update on another replica).
	polling bool
}

// question is one input request of a task.
type question struct {
	key    string // unique over the task's life (the spec's rule)
	params mcp.ElicitationParams
	answer chan reply // buffered 1: the first answer wins
	taken  bool       // 2025-11-25: a tasks/result is asking it now
}

type reply struct {
	res *mcp.ElicitationResult
	err error
}

func newInbox(id string, modern bool) *inbox {
	return &inbox{id: id, modern: modern, changed: make(chan struct{})}
}

// notify wakes every waiter; b.mu is held.
func (b *inbox) notify() {
	close(b.changed)
	b.changed = make(chan struct{})
}

// end marks the run over: nothing more will be asked.
func (b *inbox) end() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.ended {
		b.ended = true
		b.notify()
	}
}

// pending returns the open questions (none: nil).
func (b *inbox) pending() []*question {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]*question(nil), b.open...)
}

// requests is the wire form of the open questions (2026-07-28
// inputRequests); nil when none is open.
func (b *inbox) requests() mcp.InputRequests {
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.open) == 0 {
		return nil
	}
	r := mcp.InputRequests{}
	for _, q := range b.open {
		r[q.key] = mcp.NewElicitationInputRequest(q.params)
	}
	return r
}

// deliver hands an answer to the open question keyed key, once. It
// reports whether key named an open question.
func (b *inbox) deliver(key string, a reply) bool {
	b.mu.Lock()
	var q *question
	for _, o := range b.open {
		if o.key == key {
			q = o
		}
	}
	b.mu.Unlock()
	if q == nil {
		return false
	}
	select {
	case q.answer <- a:
	default:
	}
	return true
}

// answer delivers the responses to the open questions they name; the
// others are ignored, as the extension says.
func (b *inbox) answer(responses mcp.InputResponses) {
	for _, q := range b.pending() {
		if res := server.ElicitationResponse(responses, q.key); res != nil {
			b.deliver(q.key, reply{res: res})
		}
	}
}

type inboxKey struct{}

// CanAsk reports whether ctx is the run of a task whose client can be asked
// inside it (Ask).
func CanAsk(ctx context.Context) bool {
	_, ok := ctx.Value(inboxKey{}).(*inboxRun)
	return ok
}

// inboxRun is what a run's context carries: its keeper and inbox.
type inboxRun struct {
	k *Keeper
	b *inbox
}

// ErrCannotAsk is Ask's error outside a task run.
var ErrCannotAsk = errors.New("not running as a task: nothing to ask inside")

// Ask asks the client of the task running on ctx: the task goes
// input_required with the elicitation as one of its input requests until
// the client answers it (or ctx ends: the caller's timeout or the task's
// cancel), then back to working once no question is open. Calls from
// several goroutines of one run ask at once (several keys pending).
func Ask(ctx context.Context, params mcp.ElicitationParams) (*mcp.ElicitationResult, error) {
	r, ok := ctx.Value(inboxKey{}).(*inboxRun)
	if !ok {
		return nil, ErrCannotAsk
	}
	return r.k.ask(ctx, r.b, params)
}

func (k *Keeper) ask(ctx context.Context, b *inbox, params mcp.ElicitationParams) (*mcp.ElicitationResult, error) {
	b.mu.Lock()
	if b.ended {
		b.mu.Unlock()
		return nil, ErrCannotAsk
	}
	b.seq++
	q := &question{key: fmt.Sprintf("approve-%d", b.seq), params: params, answer: make(chan reply, 1)}
	b.open = append(b.open, q)
	b.notify()
	poll := k.store != nil && b.modern && !b.polling
	if poll {
		b.polling = true
	}
	b.mu.Unlock()
	k.setStatus(b)
	defer func() {
		b.mu.Lock()
		for i, o := range b.open {
			if o == q {
				b.open = append(b.open[:i:i], b.open[i+1:]...)
				b.notify()
				break
			}
		}
		b.mu.Unlock()
		k.setStatus(b)
	}()
	if poll {
		// tasks/update may reach another replica: it queues the answers
		// in the store, and this run takes them from there.
		go k.takeStoredAnswers(b)
	}
	select {
	case a := <-q.answer:
		return a.res, a.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// setStatus records the run's status — input_required with its open
// questions, or working — in the modern task and in the shared store.
func (k *Keeper) setStatus(b *inbox) {
	reqs := b.requests()
	status := "working"
	if reqs != nil {
		status = "input_required"
	}
	k.mu.Lock()
	t := k.modern[b.id]
	k.mu.Unlock()
	if t != nil {
		t.mu.Lock()
		if t.status == "working" || t.status == "input_required" {
			t.status, t.updated, t.input = status, time.Now(), reqs
		}
		t.mu.Unlock()
	}
	if k.store != nil && !k.isCrashed() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		var raw []byte
		if reqs != nil {
			raw, _ = json.Marshal(reqs)
		}
		if err := k.store.SetInput(ctx, b.id, status, raw); err != nil {
			k.logf("task %s: recording status %s: %v", b.id, status, err)
		}
	}
	k.notifyStatus(b.id)
}

// takeStoredAnswers moves answers queued in the store (tasks/update on any
// replica) to the open questions while any is open.
func (k *Keeper) takeStoredAnswers(b *inbox) {
	ctx := context.Background()
	for {
		b.mu.Lock()
		if len(b.open) == 0 || b.ended {
			b.polling = false
			b.mu.Unlock()
			return
		}
		b.mu.Unlock()
		raw, err := k.store.PopInput(ctx, b.id, time.Second)
		if err != nil {
			k.logf("task %s: reading answers from the store: %v", b.id, err)
			time.Sleep(k.cfg.Heartbeat)
			continue
		}
		var responses mcp.InputResponses
		if raw != nil && json.Unmarshal(raw, &responses) == nil {
			b.answer(responses)
		}
	}
}

// attach puts b on a run's context.
func (k *Keeper) attach(ctx context.Context, b *inbox) context.Context {
	return context.WithValue(ctx, inboxKey{}, &inboxRun{k: k, b: b})
}

// inboxOf returns task id's inbox on this replica.
func (k *Keeper) inboxOf(id string) *inbox {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.inboxes[id]
}

// askOverResult is the 2025-11-25 way: while a tasks/result for a task of
// this replica waits, every question the task asks goes to the client on
// that request's stream, tagged with the task. It returns once the run has
// ended (mcp-go then answers tasks/result with the outcome) or the request
// ends.
func (k *Keeper) askOverResult(ctx context.Context, id string) {
	b := k.inboxOf(id)
	if b == nil || b.session != sessionOf(ctx) {
		return // mcp-go answers for a task of another session: not found
	}
	for {
		b.mu.Lock()
		ended, changed := b.ended, b.changed
		var q *question
		for _, o := range b.open {
			if !o.taken {
				q = o
				break
			}
		}
		if q != nil {
			q.taken = true
		}
		b.mu.Unlock()
		if ended {
			return
		}
		if q != nil {
			params := q.params
			params.Meta = mcp.WithRelatedTask(id)
			k.mu.Lock()
			s := k.server
			k.mu.Unlock()
			res, err := s.RequestElicitation(ctx, mcp.ElicitationRequest{
				Request: mcp.Request{Method: string(mcp.MethodElicitationCreate)},
				Params:  params,
			})
			if err != nil && ctx.Err() != nil {
				// This tasks/result ended: the next one asks again.
				b.mu.Lock()
				q.taken = false
				b.mu.Unlock()
				return
			}
			b.deliver(q.key, reply{res: res, err: err})
			continue
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return
		}
	}
}

// update answers tasks/update (2026-07-28) for the caller's task t of this
// replica: responses for open questions reach the run; others are
// ignored, as the extension says.
func (k *Keeper) update(t *modernTask, responses mcp.InputResponses) {
	if b := k.inboxOf(t.id); b != nil {
		b.answer(responses)
	}
}

// sessionOf is the MCP session id of ctx's request ("" without one).
func sessionOf(ctx context.Context) string {
	if s := server.ClientSessionFromContext(ctx); s != nil {
		return s.SessionID()
	}
	return ""
}
