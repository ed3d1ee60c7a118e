package appserver

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/mcpfleet/mcpfleet/codermcp/internal/procsweep"
)

// Approval policies the app-server accepts (AskForApproval). "never" runs
// unattended, bounded by the sandbox alone; the others make the CLI ask.
const (
	PolicyUntrusted = "untrusted"  // ask before any command not known to be safe
	PolicyOnRequest = "on-request" // the model asks when it wants to leave the sandbox
	PolicyNever     = "never"
)

// Client runs turns on one installed CLI. It is safe for concurrent use:
// each Turn has its own process.
type Client struct {
	Path string   // the codex executable
	Home string   // CODEX_HOME for the child, "" to inherit
	Env  []string // added to the child's environment
	// Environ, when set, gives the child's base environment instead of this
	// process's (the server passes its own minus its secrets, as for exec).
	Environ func() []string
	// Grace is how long the app-server gets to exit on its own (stdin closed)
	// and then after SIGTERM, before its process group is killed (default 3s).
	Grace time.Duration
	// ApprovalTimeout bounds each approval question (default 5 minutes);
	// an unanswered question is declined, never left to hang the turn
	// (openai/codex#11816 is the removed mcp-server hanging on exactly that).
	ApprovalTimeout time.Duration
	// OnStart, when set, is told the app-server's pid (= its process group id).
	OnStart func(pid int)
	// ClientName and ClientVersion identify us in initialize (the CLI puts
	// them in its user agent).
	ClientName, ClientVersion string
}

// TurnRequest is one turn: a new thread when ThreadID is empty, else the
// continuation of that thread (native resume from the CLI's rollout).
type TurnRequest struct {
	ThreadID              string
	Prompt                string
	Images                []string // local image paths, checked by the caller
	Cwd                   string   // the turn's working directory (absolute)
	Model                 string
	Effort                string   // reasoning effort, "" for the CLI's default
	Sandbox               string   // read-only | workspace-write | danger-full-access
	ApprovalPolicy        string   // Policy*; "" means never
	Env                   []string // added to this turn's child environment (after Client.Env)
	Config                map[string]any
	BaseInstructions      string
	DeveloperInstructions string
}

// Event is a progress event from the turn, in the order the CLI sent them.
type Event struct {
	Method   string // turn/started, item/started, item/completed, turn/completed, error, warning
	ThreadID string
	TurnID   string
	ItemType string // for item/*: agentMessage, commandExecution, fileChange, reasoning, ...
	ItemID   string
	Summary  string // one line for a person: "running: <command>", "agent: <text>", ...
	Raw      json.RawMessage
}

// ApprovalKind says what the agent asks to do.
type ApprovalKind string

const (
	ApproveCommand ApprovalKind = "command" // run a command
	ApprovePatch   ApprovalKind = "patch"   // apply file changes
)

// ApprovalRequest is the CLI's question, as a person should see it.
type ApprovalRequest struct {
	Kind      ApprovalKind
	ThreadID  string
	TurnID    string
	ItemID    string
	Command   string   // the exact command (commands)
	Cwd       string   // its working directory (commands)
	Reason    string   // the agent's stated reason, when it gave one
	Files     []string // paths the patch touches (patches)
	Diff      string   // the patch's unified diffs, when the CLI sent them
	GrantRoot string   // a directory the agent asks to write under for the session (patches)
}

// Decision is an answer to an approval request.
type Decision string

const (
	Accept  Decision = "accept"
	Decline Decision = "decline"
)

// Answer is how an approval request was settled, for the audit log.
type Answer struct {
	Request  ApprovalRequest
	Decision Decision
	// By is who decided: "person" (the callback answered), "timeout" (no
	// answer within ApprovalTimeout), "cancelled" (the turn was cancelled),
	// "no-approver" (no callback: declined).
	By  string
	Err error // the callback's error, if any (declined)
}

// Approver answers an approval request. ctx ends at the approval timeout or
// when the turn is cancelled; an error or an ended ctx declines.
type Approver func(ctx context.Context, req ApprovalRequest) (Decision, error)

// Result is what a turn produced.
type Result struct {
	ThreadID    string
	TurnID      string
	Status      string // completed | interrupted | failed
	Error       string // the turn's error message, if it failed
	LastMessage string // the agent's last message (what codex mcp-server returned)
	Text        string // every agent message, in order
	Answers     []Answer
	Stderr      string // the tail of the CLI's stderr
}

// ErrExited is returned when the app-server exits before the turn completes.
var ErrExited = errors.New("codex app-server exited before the turn completed")

// Turn starts `codex app-server`, opens or resumes the thread, runs one
// turn, and stops the app-server's process group. onEvent (may be nil) gets
// progress events; approve (may be nil: every request is declined) answers
// approval requests. Cancelling ctx stops the process group at once and
// returns ctx's error: nothing the turn started outlives the call.
func (c *Client) Turn(ctx context.Context, req TurnRequest, onEvent func(Event), approve Approver) (*Result, error) {
	if req.Prompt == "" && len(req.Images) == 0 {
		return nil, errors.New("appserver: a turn needs a prompt or an image")
	}
	s, err := c.start(ctx, req.Env)
	if err != nil {
		return nil, err
	}
	defer s.stop()
	res, err := s.run(ctx, req, onEvent, approve)
	if res != nil {
		res.Stderr = s.stderr.String()
	}
	return res, err
}

// session is one running app-server.
type session struct {
	c      *Client
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	stdout *os.File
	pgid   int
	marker string
	stderr tailBuffer
	waited chan struct{} // closed when the process has exited
	wmu    sync.Mutex    // serialises writes to stdin

	mu      sync.Mutex
	nextID  int
	pending map[string]chan *message
	inbox   chan *message // notifications and server requests, in order
	readErr error
	done    chan struct{} // closed when stdout reached EOF
}

func (c *Client) start(ctx context.Context, extra []string) (*session, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	cmd := exec.Command(c.Path, "app-server")
	s := &session{c: c, cmd: cmd, marker: procsweep.NewMarker(runMarkerKey), pending: map[string]chan *message{},
		inbox: make(chan *message, 256), done: make(chan struct{}), waited: make(chan struct{})}
	base := os.Environ
	if c.Environ != nil {
		base = c.Environ
	}
	cmd.Env = append(append(base(), c.Env...), extra...)
	if c.Home != "" {
		cmd.Env = append(cmd.Env, "CODEX_HOME="+c.Home)
	}
	cmd.Env = append(cmd.Env, s.marker)
	// Own process group: stopping the turn reaches the npm shim, the native
	// binary and every command the agent started.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Stderr = &s.stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	// Our own pipe rather than StdoutPipe: Wait would close its read end as
	// soon as the process exits, losing the last lines it wrote.
	stdout, w, err := os.Pipe()
	if err != nil {
		stdin.Close()
		return nil, err
	}
	cmd.Stdout = w
	err = cmd.Start()
	w.Close()
	if err != nil {
		stdin.Close()
		stdout.Close()
		return nil, fmt.Errorf("start %s app-server: %w", c.Path, err)
	}
	s.stdin, s.stdout, s.pgid = stdin, stdout, cmd.Process.Pid
	if c.OnStart != nil {
		c.OnStart(s.pgid)
	}
	go func() { _ = cmd.Wait(); close(s.waited) }()
	go s.read(stdout)
	return s, nil
}

func (s *session) grace() time.Duration {
	if s.c.Grace > 0 {
		return s.c.Grace
	}
	return 3 * time.Second
}

// stop ends the app-server: stdin closed (it exits on EOF after flushing
// the thread's rollout, which a later thread/resume reads), then SIGTERM
// (the npm shim forwards it), then SIGKILL to the group; and whatever left
// the group but carries the run's marker.
func (s *session) stop() {
	_ = s.stdin.Close()
	select {
	case <-s.waited:
	case <-time.After(s.grace()):
		_ = syscall.Kill(-s.pgid, syscall.SIGTERM)
		select {
		case <-s.waited:
		case <-time.After(s.grace()):
		}
	}
	s.kill()
	<-s.waited
	// A descendant outside the group may still hold the pipe: stop reading.
	select {
	case <-s.done:
	case <-time.After(2 * time.Second):
	}
	s.stdout.Close()
}

// kill stops everything at once (cancellation: no orphan, no waiting).
func (s *session) kill() {
	_ = syscall.Kill(-s.pgid, syscall.SIGKILL)
	procsweep.KillMarked(s.marker)
}

func (s *session) read(r io.Reader) {
	defer close(s.done)
	br := bufio.NewReaderSize(r, 1<<20)
	for {
		line, err := br.ReadBytes('\n')
		if len(strings.TrimSpace(string(line))) > 0 {
			var m message
			if jerr := json.Unmarshal(line, &m); jerr == nil {
				s.dispatch(&m)
			}
		}
		if err != nil {
			s.mu.Lock()
			s.readErr = err
			s.mu.Unlock()
			return
		}
	}
}

func (s *session) dispatch(m *message) {
	if m.isResponse() {
		s.mu.Lock()
		ch := s.pending[string(m.ID)]
		delete(s.pending, string(m.ID))
		s.mu.Unlock()
		if ch != nil {
			ch <- m
		}
		return
	}
	if m.Method == "" {
		return
	}
	// Progress notifications that carry text token by token would flood the
	// inbox; the completed items carry the same text.
	if strings.HasSuffix(m.Method, "Delta") || strings.HasSuffix(m.Method, "/delta") {
		return
	}
	select {
	case s.inbox <- m:
	case <-s.waited:
	}
}

func (s *session) write(m any) error {
	b, err := json.Marshal(m)
	if err != nil {
		return err
	}
	s.wmu.Lock()
	defer s.wmu.Unlock()
	_, err = s.stdin.Write(append(b, '\n'))
	return err
}

// call sends a request and waits for its response, dispatching whatever
// arrives meanwhile through handle (notifications and server requests).
func (s *session) call(ctx context.Context, method string, params, out any, handle func(*message)) error {
	s.mu.Lock()
	s.nextID++
	id := json.RawMessage(strconv.Itoa(s.nextID))
	ch := make(chan *message, 1)
	s.pending[string(id)] = ch
	s.mu.Unlock()
	p, err := json.Marshal(params)
	if err != nil {
		return err
	}
	if err := s.write(message{JSONRPC: "2.0", ID: id, Method: method, Params: p}); err != nil {
		return s.exitError(method, err)
	}
	for {
		select {
		case resp := <-ch:
			if resp.Error != nil {
				return fmt.Errorf("codex app-server %s: %w", method, resp.Error)
			}
			if out != nil {
				if err := json.Unmarshal(resp.Result, out); err != nil {
					return fmt.Errorf("codex app-server %s: cannot read the result: %w", method, err)
				}
			}
			return nil
		case m := <-s.inbox:
			handle(m)
		case <-s.done:
			// Responses already read are delivered before done closes.
			select {
			case resp := <-ch:
				ch <- resp
				continue
			default:
			}
			return s.exitError(method, nil)
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

func (s *session) exitError(step string, err error) error {
	msg := strings.TrimSpace(s.stderr.String())
	if i := strings.LastIndexByte(msg, '\n'); i >= 0 && len(msg)-i < 400 {
		msg = msg[i+1:]
	}
	if msg == "" && err != nil {
		msg = err.Error()
	}
	return fmt.Errorf("%w (during %s): %s", ErrExited, step, msg)
}

func (s *session) reply(id json.RawMessage, result any) {
	b, _ := json.Marshal(result)
	_ = s.write(message{JSONRPC: "2.0", ID: id, Result: b})
}

func (s *session) replyError(id json.RawMessage, code int, msg string) {
	_ = s.write(message{JSONRPC: "2.0", ID: id, Error: &RPCError{Code: code, Message: msg}})
}

func (s *session) run(ctx context.Context, req TurnRequest, onEvent func(Event), approve Approver) (*Result, error) {
	res := &Result{}
	t := newTurnState(s, res, onEvent, approve, s.c.approvalTimeout())
	defer t.wait()
	// Cancellation kills the group at once: the turn is abandoned, and an
	// approval callback still waiting for a person sees its ctx end.
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	t.ctx = ctx
	stopWatch := context.AfterFunc(ctx, s.kill)
	defer stopWatch()

	name, version := s.c.ClientName, s.c.ClientVersion
	if name == "" {
		name, version = "codermcp", "dev"
	}
	if err := s.call(ctx, "initialize", initializeParams{ClientInfo: clientInfo{Name: name, Version: version}}, nil, t.handle); err != nil {
		return nil, s.cancelled(ctx, err)
	}
	if err := s.write(message{JSONRPC: "2.0", Method: "initialized"}); err != nil {
		return nil, s.cancelled(ctx, s.exitError("initialized", err))
	}
	policy := req.ApprovalPolicy
	if policy == "" {
		policy = PolicyNever
	}
	tp := threadParams{ThreadID: req.ThreadID, Cwd: req.Cwd, Model: req.Model, ApprovalPolicy: policy, Sandbox: req.Sandbox,
		Config: req.Config, BaseInstructions: req.BaseInstructions, DeveloperInstructions: req.DeveloperInstructions}
	method := "thread/start"
	if req.ThreadID != "" {
		method = "thread/resume"
	}
	var tr threadResponse
	if err := s.call(ctx, method, tp, &tr, t.handle); err != nil {
		return nil, s.cancelled(ctx, err)
	}
	res.ThreadID = tr.Thread.ID
	var input []userInput
	if req.Prompt != "" {
		input = append(input, userInput{Type: "text", Text: req.Prompt})
	}
	for _, p := range req.Images {
		input = append(input, userInput{Type: "localImage", Path: p})
	}
	var turnResp turnResponse
	if err := s.call(ctx, "turn/start", turnStartParams{ThreadID: res.ThreadID, Input: input, Effort: req.Effort}, &turnResp, t.handle); err != nil {
		return res, s.cancelled(ctx, err)
	}
	res.TurnID = turnResp.Turn.ID
	for !t.completed {
		select {
		case m := <-s.inbox:
			t.handle(m)
		case <-s.done:
			// Drain what was read before EOF, then give up.
			for {
				select {
				case m := <-s.inbox:
					t.handle(m)
					continue
				default:
				}
				break
			}
			if !t.completed {
				return res, s.cancelled(ctx, s.exitError("turn", nil))
			}
		case <-ctx.Done():
			return res, ctx.Err()
		}
	}
	res.Text = strings.Join(t.messages, "\n\n")
	if n := len(t.messages); n > 0 {
		res.LastMessage = t.messages[n-1]
	}
	t.wait()
	res.Answers = t.answers()
	return res, nil
}

// cancelled prefers the caller's cancellation over the broken pipe it caused.
func (s *session) cancelled(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return err
}

func (c *Client) approvalTimeout() time.Duration {
	if c.ApprovalTimeout > 0 {
		return c.ApprovalTimeout
	}
	return 5 * time.Minute
}

// tailBuffer keeps the last 16 KiB written to it.
type tailBuffer struct {
	mu  sync.Mutex
	buf []byte
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if over := len(t.buf) - 16<<10; over > 0 {
		t.buf = append([]byte(nil), t.buf[over:]...)
	}
	return len(p), nil
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.buf)
}
