package mcpserver

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/mcpfleet/mcpfleet/shared/tasks"
)

// progress streams notifications/progress for one call: a message per CLI
// step as it happens, throttled (messages arriving inside the throttle window
// are coalesced: the newest three are sent together, with a count of the
// older ones), a
// heartbeat while the CLI is quiet, and a final flush before the result.
// The shared reporter delivers each message: as notifications/progress when
// the request carried a progress token, and as the task's statusMessage
// when the call runs as a task. Without either it does nothing.
type progress struct {
	ctx       context.Context
	rep       *tasks.Progress
	throttle  time.Duration
	heartbeat time.Duration
	started   time.Time

	mu       sync.Mutex
	pending  []string // notes waiting for the throttle window
	lastSent time.Time

	kick   chan struct{}
	finish chan struct{}
	exited chan struct{}
	once   sync.Once
}

func (s *Server) startProgress(ctx context.Context, req mcp.CallToolRequest) *progress {
	p := &progress{ctx: ctx, throttle: s.throttle, heartbeat: s.heartbeat, started: time.Now()}
	if rep := tasks.NewProgress(ctx, req); rep.Active() {
		p.rep = rep
	} else {
		return p
	}
	p.kick = make(chan struct{}, 1)
	p.finish = make(chan struct{})
	p.exited = make(chan struct{})
	go p.run()
	return p
}

func (p *progress) active() bool { return p.kick != nil }

// note queues a step message; it never blocks the CLI reader.
func (p *progress) note(msg string) {
	if !p.active() || msg == "" {
		return
	}
	p.mu.Lock()
	p.pending = append(p.pending, msg)
	p.mu.Unlock()
	select {
	case p.kick <- struct{}{}:
	default:
	}
}

func (p *progress) run() {
	defer close(p.exited)
	hb := time.NewTimer(p.heartbeat)
	defer hb.Stop()
	for {
		select {
		case <-p.finish:
			p.flush()
			return
		case <-p.ctx.Done():
			return
		case <-p.kick:
			p.mu.Lock()
			wait := p.throttle - time.Since(p.lastSent)
			p.mu.Unlock()
			if wait > 0 {
				t := time.NewTimer(wait)
				select {
				case <-t.C:
				case <-p.finish:
					t.Stop()
					p.flush()
					return
				case <-p.ctx.Done():
					t.Stop()
					return
				}
			}
			if p.flush() {
				hb.Reset(p.heartbeat)
			}
		case <-hb.C:
			p.send(fmt.Sprintf("still working (%s elapsed)", time.Since(p.started).Round(time.Second)))
			hb.Reset(p.heartbeat)
		}
	}
}

// flush sends the pending message, if any.
func (p *progress) flush() bool {
	p.mu.Lock()
	notes := p.pending
	p.pending = nil
	p.mu.Unlock()
	if len(notes) == 0 {
		return false
	}
	const keep = 3
	msg := ""
	if len(notes) > keep {
		msg = fmt.Sprintf("(+%d earlier steps) ", len(notes)-keep)
		notes = notes[len(notes)-keep:]
	}
	p.send(msg + strings.Join(notes, "; "))
	return true
}

func (p *progress) send(msg string) {
	p.mu.Lock()
	p.lastSent = time.Now()
	p.mu.Unlock()
	p.rep.Send(msg)
}

// done sends what is pending and returns once the notification has left
// the session's queue, so that it reaches the client before the result.
func (p *progress) done() {
	if !p.active() {
		return
	}
	p.once.Do(func() {
		close(p.finish)
		<-p.exited
		if p.rep.Notifies() {
			waitDrained(p.ctx)
		}
	})
}

// waitDrained waits (briefly) until the session's notification queue is
// empty. mcp-go writes notifications from a separate goroutine, so without
// this the result can overtake the last one.
func waitDrained(ctx context.Context) {
	session := server.ClientSessionFromContext(ctx)
	if session == nil {
		return
	}
	ch := session.NotificationChannel()
	deadline := time.Now().Add(500 * time.Millisecond)
	for len(ch) > 0 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	// The writer has taken it off the queue; give it a moment to write.
	time.Sleep(5 * time.Millisecond)
}
