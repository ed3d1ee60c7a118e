package cli

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"time"

	"go.opentelemetry.io/otel/attribute"

	"github.com/mcpfleet/mcpfleet/codermcp/internal/procsweep"
	"github.com/mcpfleet/mcpfleet/codermcp/internal/workspace"
	"github.com/mcpfleet/mcpfleet/shared/backendcall"
)

// Client runs one installed CLI. It is safe for concurrent use.
type Client struct {
	Path    string        // executable name or path
	Home    string        // CODEX_HOME for the child, "" to inherit
	Timeout time.Duration // limit on each run (0: none beyond the caller's context)
	// Grace is how long the CLI gets to exit after SIGTERM before the whole
	// process group is killed (default 3s).
	Grace time.Duration
	// NetworkGrace is how long the CLI may keep "waiting for network"
	// before the run is stopped as a network failure (default 30s); the CLI
	// itself would wait forever.
	NetworkGrace time.Duration
	// Env is added to the child's environment (after the inherited one).
	Env []string
	// Pins go on every turn's and review's command line (PinsFor).
	Pins Pins
	// OnStart, when set, is told each child's pid (= its process group id).
	OnStart func(pid int)
	// Recorder, when set, records each run (turn or review) as a back-end
	// call: mcpfleet_backend_* with operation "exec" and the exit status
	// class as outcome, and a "codex exec" span with the thread id.
	Recorder *backendcall.Recorder

	mu   sync.Mutex
	caps *Caps
}

// Result is what a finished run produced.
type Result struct {
	ThreadID   string   // conversation id (thread.started, or "session id:" in human mode)
	Text       string   // the assistant's messages (human mode: stdout)
	ExitCode   int      // the CLI's exit status
	TurnFailed string   // message of turn.failed, if any
	Errors     []string // top-level error events (retries, fatal errors)
	Stderr     string   // the tail of stderr
}

// Caps detects the CLI's version and capabilities once; a failure is not
// cached, so installing the CLI later fixes a running server.
func (c *Client) Caps(ctx context.Context) (Caps, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.caps != nil {
		return *c.caps, nil
	}
	ctx, cancel := context.WithTimeoutCause(ctx, probeLimit, errProbeLimit)
	defer cancel()
	caps, err := CapsFromAnswers(c.Path, func(args ...string) (string, error) { return c.quick(ctx, args...) })
	if err != nil {
		return Caps{}, err
	}
	c.caps = &caps
	return caps, nil
}

// CapsFromAnswers is how Caps derives the capabilities from the CLI's
// answers (its standard output) to --version, exec --help and, when
// resume exists, exec resume --help, asked through answer.
func CapsFromAnswers(path string, answer func(args ...string) (string, error)) (Caps, error) {
	out, err := answer("--version")
	if err != nil {
		return Caps{}, err
	}
	v, err := ParseVersion(out)
	if err != nil {
		return Caps{}, &Error{Kind: FailExec, Cause: fmt.Sprintf("could not read the version of %s: %v", path, err)}
	}
	if v.Less(MinVersion) {
		return Caps{}, &Error{Kind: FailExec, Cause: fmt.Sprintf("%s is Codex CLI %s; codermcp needs %s or later (npm install -g @openai/codex)", path, v, MinVersion)}
	}
	help, _ := answer("exec", "--help") // advisory: the version table decides when it fails
	caps := CapsFor(v, help)
	if caps.Resume {
		// Where resume's own options go differs by version: ask it.
		if rh, err := answer("exec", "resume", "--help"); err == nil && strings.TrimSpace(rh) != "" {
			caps.ResumeOptionsAfter = strings.Contains(rh, "--json")
		}
	}
	return caps, nil
}

// SetCaps gives the client capabilities derived elsewhere (CapsFromAnswers
// over the answers the start-up probe kept for this very binary), so that
// the first call does not wait for the CLI to be asked again. Capabilities
// already detected are kept.
func (c *Client) SetCaps(caps Caps) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.caps == nil {
		c.caps = &caps
	}
}

// probeLimit bounds one informational command (--version, --help) on its
// own, whatever the caller's limit.
const probeLimit = 30 * time.Second

var errProbeLimit = errors.New("codermcp: informational CLI command limit reached")

// Help returns the CLI's --help text.
func (c *Client) Help(ctx context.Context) (string, error) {
	ctx, cancel := context.WithTimeoutCause(ctx, probeLimit, errProbeLimit)
	defer cancel()
	return c.quick(ctx, "--help")
}

// quick runs a short informational command and returns its stdout.
func (c *Client) quick(ctx context.Context, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, c.Path, args...)
	cmd.Env = c.env("")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 2 * time.Second
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		if ctx.Err() != nil {
			// Killed because time ran out (or the caller left), not because
			// the CLI failed: say so, naming the command.
			step := strings.TrimSpace(c.Path + " " + strings.Join(args, " "))
			if errors.Is(context.Cause(ctx), errProbeLimit) {
				return "", &Error{Kind: FailExec, Err: err, Step: step,
					Cause: fmt.Sprintf("%s did not finish within %s and was stopped; check that CODER_CLI_PATH (%s) is the Codex CLI and starts on this machine", step, probeLimit, c.Path)}
			}
			e := c.stopped(ctx)
			e.Step = step
			return "", e
		}
		if ee := new(exec.ExitError); errors.As(err, &ee) {
			return stdout.String(), &Error{Kind: FailExec, Err: err,
				Cause: fmt.Sprintf("%s %s: %v: %s", c.Path, strings.Join(args, " "), err, mainCause(stderr.String(), stdout.String()))}
		}
		return "", startError(c.Path, err)
	}
	return stdout.String(), nil
}

// startError explains why the CLI could not be started at all.
func startError(path string, err error) *Error {
	return &Error{Kind: FailExec, Err: err, Cause: fmt.Sprintf("cannot run %s: %v", path, unwrapExec(err))}
}

func unwrapExec(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe
	}
	return err
}

// env is the child's environment: ours minus the server's own secrets and
// transport settings (the CLI runs model-chosen commands), plus CODEX_HOME
// and the callback URI.
func (c *Client) env(callbackURI string) []string {
	env := InheritedEnv()
	env = append(env, c.Env...)
	if c.Home != "" {
		env = append(env, "CODEX_HOME="+c.Home)
	}
	return append(env, CallbackEnv(callbackURI)...)
}

// InheritedEnv is what a CLI child inherits of this process's environment:
// all of it but the server's own secrets and transport settings (MCP_*,
// OAUTH_*, OIDC_*, JWT_*, CODER_*), for every way the CLI is run (exec,
// app-server).
func InheritedEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if dropFromChild(k) {
			continue
		}
		env = append(env, kv)
	}
	return env
}

// CallbackEnv is the environment that gives the CLI a callback URI.
func CallbackEnv(uri string) []string {
	if uri == "" {
		return nil
	}
	return []string{"CODER_MCP_CALLBACK_URI=" + uri, "CODEX_MCP_CALLBACK_URI=" + uri}
}

func dropFromChild(k string) bool {
	for _, p := range []string{"MCP_", "OAUTH_", "OIDC_", "JWT_", "CODER_", "CODEX_MCP_CALLBACK_URI"} {
		if strings.HasPrefix(k, p) {
			return true
		}
	}
	return false
}

// Command is one planned CLI run: exactly what Run starts. It is built
// once (ExecCommand, ReviewCommand) and then shown in a dry run, approved,
// audited and run as the same value.
type Command struct {
	Path        string   // the program
	Args        []string // its arguments, without the program name
	Dir         string   // the child's working directory ("" = the server's)
	CallbackURI string   // added to the child's environment
	JSON        bool     // the CLI speaks --json (how its output is read)
}

// String renders the command line as a POSIX shell would need it typed:
// what a person approving the call reads.
func (cmd Command) String() string {
	parts := make([]string, 0, len(cmd.Args)+1)
	parts = append(parts, ShellQuote(cmd.Path))
	for _, a := range cmd.Args {
		parts = append(parts, ShellQuote(a))
	}
	return strings.Join(parts, " ")
}

var (
	humanHeaderRE = regexp.MustCompile(`^\[[0-9T:.+\-Z]+\] (\S.*)$`)
)

// HumanReply is the assistant's last message in a human-mode transcript
// (CLIs without --json events, 0.36.0): the lines after the last
// "[time] codex" header up to the next header ("[time] tokens used: …").
// A transcript without such a header is returned whole.
func HumanReply(lines []string) string {
	start := -1
	for i, l := range lines {
		if m := humanHeaderRE.FindStringSubmatch(strings.TrimSpace(l)); m != nil && m[1] == "codex" {
			start = i + 1
		}
	}
	if start < 0 {
		return strings.TrimSpace(strings.Join(lines, "\n"))
	}
	end := len(lines)
	for i := start; i < len(lines); i++ {
		if humanHeaderRE.MatchString(strings.TrimSpace(lines[i])) {
			end = i
			break
		}
	}
	return strings.TrimSpace(strings.Join(lines[start:end], "\n"))
}

// KnowsThread reports whether the CLI's configuration directory holds the
// rollout of conversation id (sessions/YYYY/MM/DD/rollout-…-<id>.jsonl).
// Some CLIs (0.50.0) resume an unknown id by silently starting a new
// conversation, so the server looks before it resumes. An unreadable
// directory counts as knowing it (the CLI's own error then decides).
func (c *Client) KnowsThread(id string) bool {
	home := c.Home
	if home == "" {
		home = os.Getenv("CODEX_HOME")
	}
	if home == "" || id == "" {
		return true
	}
	root := filepath.Join(home, "sessions")
	if _, err := os.Stat(root); err != nil {
		return !os.IsNotExist(err)
	}
	found := false
	_ = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(d.Name(), id+".jsonl") {
			found = true
			return fs.SkipAll
		}
		return nil
	})
	return found
}

// ShellQuote quotes s for a POSIX shell when it needs it.
func ShellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./=:,@%+", r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// ExecCommand plans one coder turn on a CLI with caps, or refuses req.
func (c *Client) ExecCommand(caps Caps, req ExecRequest) (Command, error) {
	req.Pins = c.Pins
	args, err := ExecArgs(caps, req)
	if err != nil {
		return Command{}, err
	}
	return Command{Path: c.Path, Args: args, Dir: req.Dir, CallbackURI: req.CallbackURI, JSON: caps.JSON}, nil
}

// Profiles are the profiles this client's CLI home offers (Profiles).
func (c *Client) Profiles() []string {
	home := c.Home
	if home == "" {
		home = os.Getenv("CODEX_HOME")
	}
	if home == "" {
		return nil
	}
	return Profiles(home)
}

// SandboxPins are the pins every run of this client names.
func (c *Client) SandboxPins() Pins { return c.Pins }

// ReviewCommand plans one review on a CLI with caps, or refuses req.
func (c *Client) ReviewCommand(caps Caps, req ReviewRequest) (Command, error) {
	if !caps.Review {
		if err := req.Validate(); err != nil {
			return Command{}, err
		}
		return Command{}, &Error{Kind: FailExec, Cause: fmt.Sprintf("Codex CLI %s has no `exec review`; upgrade to %s or later", caps.Version, versionReview)}
	}
	req.Pins = c.Pins
	args, err := ReviewArgs(caps, req)
	if err != nil {
		return Command{}, err
	}
	return Command{Path: c.Path, Args: args, Dir: req.Dir, JSON: caps.JSON}, nil
}

// Run runs a planned command. onEvent (may be nil) sees every event as it
// arrives, from one goroutine.
func (c *Client) Run(ctx context.Context, cmd Command, onEvent func(Event)) (*Result, error) {
	if cmd.Path != c.Path {
		return nil, &Error{Kind: FailExec, Cause: fmt.Sprintf("the command was planned for %s, not this client's %s", cmd.Path, c.Path)}
	}
	return c.run(ctx, cmd, onEvent)
}

// Exec runs one coder turn. onEvent (may be nil) sees every event as it
// arrives, from one goroutine.
func (c *Client) Exec(ctx context.Context, req ExecRequest, onEvent func(Event)) (*Result, error) {
	if err := req.Validate(); err != nil {
		return nil, err // before anything, even the version probe, runs
	}
	caps, err := c.Caps(ctx)
	if err != nil {
		return nil, err
	}
	cmd, err := c.ExecCommand(caps, req)
	if err != nil {
		return nil, err
	}
	return c.run(ctx, cmd, onEvent)
}

// Review runs one review.
func (c *Client) Review(ctx context.Context, req ReviewRequest, onEvent func(Event)) (*Result, error) {
	if err := req.Validate(); err != nil {
		return nil, err // before anything, even the version probe, runs
	}
	caps, err := c.Caps(ctx)
	if err != nil {
		return nil, err
	}
	cmd, err := c.ReviewCommand(caps, req)
	if err != nil {
		return nil, err
	}
	return c.run(ctx, cmd, onEvent)
}

// ErrTimeout is the cancellation cause of the configured time limit. Callers
// that bound a whole call (several runs) use it as their context's cause too,
// so that running out of time is reported as a timeout, not a cancellation.
var ErrTimeout = errors.New("codermcp: time limit reached")

const stderrTail = 32 << 10

func (c *Client) run(ctx context.Context, planned Command, onEvent func(Event)) (res *Result, err error) {
	ctx, call := c.Recorder.Start(ctx, "exec")
	defer func() { endRun(call, res, err) }()
	return c.runCLI(ctx, planned, onEvent)
}

// Exit status classes: the outcome label of a CLI run (a closed set).
const (
	RunOK            = "ok"
	RunCancelled     = "cancelled"
	RunTimeout       = "timeout"
	RunAuth          = "auth"           // the model provider refused the credentials
	RunModel         = "model"          // the model or its provider failed the turn
	RunUnknownThread = "unknown_thread" // the session to resume does not exist
	RunExitNonZero   = "exit_nonzero"   // the CLI exited with a non-zero status
	RunError         = "error"          // it could not start, or failed otherwise
)

// ExitClass is the class of a run's end, for the outcome label.
func ExitClass(res *Result, err error) string {
	if err == nil {
		return RunOK
	}
	var e *Error
	if errors.As(err, &e) {
		switch e.Kind {
		case FailCanceled:
			return RunCancelled
		case FailTimeout:
			return RunTimeout
		case FailAuth:
			return RunAuth
		case FailModel:
			return RunModel
		case FailUnknownThread:
			return RunUnknownThread
		}
	}
	if res != nil && res.ExitCode != 0 {
		return RunExitNonZero
	}
	return RunError
}

func endRun(call *backendcall.Call, res *Result, err error) {
	class := ExitClass(res, err)
	if call.Traced() {
		attrs := []attribute.KeyValue{attribute.String("codex.exit_class", class)}
		if res != nil {
			attrs = append(attrs, attribute.String("codex.thread_id", res.ThreadID), attribute.Int("process.exit.code", res.ExitCode))
		}
		call.SetAttributes(attrs...)
	}
	call.SetOutcome(class)
	call.End(err)
}

func (c *Client) runCLI(ctx context.Context, planned Command, onEvent func(Event)) (*Result, error) {
	caps := Caps{JSON: planned.JSON} // how to read the output: all run needs of the caps
	args, dir, callbackURI := planned.Args, planned.Dir, planned.CallbackURI
	if c.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeoutCause(ctx, c.Timeout, ErrTimeout)
		defer cancel()
	}
	if err := ctx.Err(); err != nil {
		return nil, c.stopped(ctx)
	}
	if dir != "" {
		// The directory was checked when the call was planned; a symlink
		// swapped in since would move the run (and its sandbox) elsewhere.
		if err := workspace.Unchanged(dir); err != nil {
			return nil, &Error{Kind: FailExec, Err: err, Cause: err.Error() + "; nothing was run: call again to have the directory checked anew"}
		}
	}
	cmd := exec.Command(c.Path, args...)
	cmd.Dir = dir
	marker := procsweep.NewMarker(runMarkerKey)
	cmd.Env = append(c.env(callbackURI), marker)
	// Own process group: cancellation reaches the CLI and everything it
	// started (the npm shim's native binary, the model's shell commands).
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	// cmd.Stdin stays nil (the null device): an open stdin makes the CLI wait
	// for EOF, and ours is the MCP stdio stream.
	outR, outW, err := os.Pipe()
	if err != nil {
		return nil, startError(c.Path, err)
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		outR.Close()
		outW.Close()
		return nil, startError(c.Path, err)
	}
	cmd.Stdout, cmd.Stderr = outW, errW
	if ctx.Err() != nil {
		// Cancelled while the pipes were made: the hand-off itself.
		outR.Close()
		outW.Close()
		errR.Close()
		errW.Close()
		return nil, c.stopped(ctx)
	}
	err = cmd.Start()
	outW.Close()
	errW.Close()
	if err != nil {
		outR.Close()
		errR.Close()
		return nil, startError(c.Path, err)
	}
	pgid := cmd.Process.Pid
	if c.OnStart != nil {
		c.OnStart(pgid)
	}

	res := &Result{}
	var (
		mu      sync.Mutex // guards res while readers run
		stderr  tailBuffer
		readers sync.WaitGroup
		text    []string
	)
	netDown := make(chan string, 1) // the CLI says it waits for the network
	netUp := make(chan struct{}, 1) // the CLI made progress again
	notify := func(ch chan string, msg string) {
		select {
		case ch <- msg:
		default:
		}
	}
	emit := func(ev Event) {
		if onEvent != nil {
			onEvent(ev)
		}
	}
	readers.Add(2)
	go func() {
		defer readers.Done()
		scanLines(outR, func(line []byte) {
			if !caps.JSON {
				mu.Lock()
				text = append(text, string(line))
				if res.ThreadID == "" {
					res.ThreadID = SessionIDFromText(string(line))
				}
				mu.Unlock()
				// Human mode has no events: the transcript lines (on stdout
				// in 0.36.0) are the progress.
				if s := strings.TrimSpace(string(line)); s != "" && !isNoise(s) {
					emit(Event{Type: "log", Message: s})
				}
				return
			}
			ev, ok := ParseEvent(line)
			if !ok {
				return
			}
			mu.Lock()
			switch ev.Type {
			case "thread.started":
				res.ThreadID = ev.ThreadID
			case "turn.failed":
				if ev.Error != nil {
					res.TurnFailed = ev.Error.Message
				} else {
					res.TurnFailed = "turn failed"
				}
			case "error":
				res.Errors = append(res.Errors, ev.Message)
				if networkWaitRE.MatchString(ev.Message) {
					notify(netDown, ev.Message)
				}
			case "item.completed":
				if ev.Item != nil && ev.Item.Type == "agent_message" {
					text = append(text, ev.Item.Text)
				}
			}
			mu.Unlock()
			if strings.HasPrefix(ev.Type, "item.") || ev.Type == "turn.completed" {
				select {
				case netUp <- struct{}{}:
				default:
				}
			}
			emit(ev)
		})
	}()
	go func() {
		defer readers.Done()
		scanLines(errR, func(line []byte) {
			mu.Lock()
			stderr.Write(line)
			stderr.Write([]byte{'\n'})
			if !caps.JSON && res.ThreadID == "" {
				res.ThreadID = SessionIDFromText(string(line))
			}
			mu.Unlock()
			if !caps.JSON {
				// Human mode has no events: the transcript lines are the progress.
				if s := strings.TrimSpace(string(line)); s != "" && !isNoise(s) {
					emit(Event{Type: "log", Message: s})
				}
			}
		})
	}()

	waited := make(chan error, 1)
	go func() { waited <- cmd.Wait() }()
	grace := c.NetworkGrace
	if grace <= 0 {
		grace = 30 * time.Second
	}
	var (
		waitErr    error
		netTimer   <-chan time.Time
		netCause   string
		netFailure bool
	)
wait:
	for {
		select {
		case waitErr = <-waited:
			break wait
		case <-ctx.Done():
			waitErr = c.terminate(pgid, waited)
			break wait
		case msg := <-netDown:
			if netTimer == nil {
				netTimer = time.After(grace)
			}
			netCause = msg
		case <-netUp:
			netTimer = nil
		case <-netTimer:
			netFailure = true
			waitErr = c.terminate(pgid, waited)
			break wait
		}
	}
	// Whatever the CLI left running in its group goes too; after a
	// cancellation, so does anything it started outside the group.
	_ = syscall.Kill(-pgid, syscall.SIGKILL)
	if ctx.Err() != nil || netFailure {
		procsweep.KillMarked(marker)
	}
	readersDone := make(chan struct{})
	go func() { readers.Wait(); close(readersDone) }()
	select {
	case <-readersDone:
	case <-time.After(2 * time.Second):
		// A descendant outside the group still holds a pipe; stop reading.
		outR.Close()
		errR.Close()
		<-readersDone
	}
	outR.Close()
	errR.Close()

	mu.Lock()
	defer mu.Unlock()
	if caps.JSON {
		res.Text = strings.TrimSpace(strings.Join(text, "\n\n"))
	} else {
		res.Text = HumanReply(text)
	}
	res.Stderr = stderr.String()
	res.ExitCode = cmd.ProcessState.ExitCode()
	if ctx.Err() != nil {
		return res, c.stopped(ctx)
	}
	if netFailure {
		return res, &Error{Kind: FailExec, Cause: fmt.Sprintf("the model provider is unreachable (%s); stopped after waiting %s", netCause, grace)}
	}
	if waitErr == nil && res.ExitCode == 0 && res.TurnFailed == "" {
		return res, nil
	}
	texts := []string{res.TurnFailed}
	for i := len(res.Errors) - 1; i >= 0; i-- {
		texts = append(texts, res.Errors[i])
	}
	texts = append(texts, stderrCause(res.Stderr), res.Stderr)
	if !caps.JSON {
		texts = append(texts, res.Text)
	}
	e := classify(texts...)
	if e.Kind == FailExec && res.ExitCode != 0 {
		e.Cause = fmt.Sprintf("exit status %d: %s", res.ExitCode, e.Cause)
	}
	return res, e
}

// terminate stops the process group: SIGTERM (the npm shim forwards it to
// the native binary), then SIGKILL to the group after the grace period.
func (c *Client) terminate(pgid int, waited <-chan error) error {
	grace := c.Grace
	if grace <= 0 {
		grace = 3 * time.Second
	}
	_ = syscall.Kill(-pgid, syscall.SIGTERM)
	t := time.NewTimer(grace)
	defer t.Stop()
	select {
	case err := <-waited:
		return err
	case <-t.C:
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
		return <-waited
	}
}

// stopped explains why a run ended early: our limit, or the caller.
func (c *Client) stopped(ctx context.Context) *Error {
	if errors.Is(context.Cause(ctx), ErrTimeout) {
		return &Error{Kind: FailTimeout, Limit: c.Timeout, Err: context.DeadlineExceeded}
	}
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		// The caller's own deadline (e.g. a client-side request timeout).
		return &Error{Kind: FailTimeout, Err: context.DeadlineExceeded}
	}
	return &Error{Kind: FailCanceled, Err: context.Canceled}
}

// scanLines calls fn for each line of r (without the newline). Lines longer
// than the buffer are delivered in pieces rather than failing the stream.
func scanLines(r io.Reader, fn func([]byte)) {
	br := bufio.NewReaderSize(r, 64<<10)
	var long []byte
	for {
		chunk, isPrefix, err := br.ReadLine()
		if len(chunk) > 0 || (!isPrefix && long != nil) {
			if isPrefix {
				long = append(long, chunk...)
				if len(long) > 16<<20 { // a runaway line: hand over what we have
					fn(long)
					long = nil
				}
			} else if long != nil {
				fn(append(long, chunk...))
				long = nil
			} else {
				fn(chunk)
			}
		}
		if err != nil {
			return
		}
	}
}

// tailBuffer keeps the last stderrTail bytes written.
type tailBuffer struct{ b []byte }

func (t *tailBuffer) Write(p []byte) {
	t.b = append(t.b, p...)
	if len(t.b) > 2*stderrTail {
		t.b = append(t.b[:0], t.b[len(t.b)-stderrTail:]...)
	}
}

func (t *tailBuffer) String() string {
	if len(t.b) > stderrTail {
		return string(t.b[len(t.b)-stderrTail:])
	}
	return string(t.b)
}
