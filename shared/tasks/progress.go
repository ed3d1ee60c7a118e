package tasks

import (
	"context"
	"sync"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// status is a running task's latest progress message.
type status struct {
	mu  sync.Mutex
	msg string
}

type statusKey struct{}

func (s *status) set(msg string) {
	s.mu.Lock()
	s.msg = msg
	s.mu.Unlock()
}

func (s *status) get() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.msg
}

// Progress reports a long call's progress once for both ways of running
// it: as notifications/progress when the request carried a progress token
// (a plain call, or a task whose creating request had one), and as the
// task's statusMessage (tasks/get, tasks/list) while it runs as a task.
// The server's own code decides what to say and how often; Progress only
// delivers. Without a token and outside a task it does nothing.
type Progress struct {
	ctx    context.Context
	srv    *server.MCPServer
	token  mcp.ProgressToken
	status *status

	mu sync.Mutex
	n  int // last progress value sent (strictly increasing)
}

// NewProgress returns the progress reporter for the call req running on
// ctx.
func NewProgress(ctx context.Context, req mcp.CallToolRequest) *Progress {
	p := &Progress{ctx: ctx}
	p.status, _ = ctx.Value(statusKey{}).(*status)
	if req.Params.Meta != nil && req.Params.Meta.ProgressToken != nil {
		if p.srv = server.ServerFromContext(ctx); p.srv != nil {
			p.token = req.Params.Meta.ProgressToken
		}
	}
	return p
}

// Active reports whether anyone hears the progress: the request carried a
// progress token, or the call runs as a task.
func (p *Progress) Active() bool { return p.token != nil || p.status != nil }

// Notifies reports whether progress is sent as notifications/progress.
func (p *Progress) Notifies() bool { return p.token != nil }

// Send delivers msg: it becomes the task's statusMessage, and a
// notifications/progress with the next progress value when the request
// carried a token. A notification that cannot be sent (client gone, the
// session's buffer full) costs only that message.
func (p *Progress) Send(msg string) {
	if p.status != nil {
		p.status.set(msg)
	}
	if p.token == nil {
		return
	}
	p.mu.Lock()
	p.n++
	n := p.n
	p.mu.Unlock()
	_ = p.srv.SendNotificationToClient(p.ctx, "notifications/progress", map[string]any{
		"progressToken": p.token,
		"progress":      n,
		"message":       msg,
	})
}
