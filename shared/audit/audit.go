// Package audit writes the audit trail of calls that change a back end: one
// JSON object per line, an intent record synced before the change is sent
// and an outcome record after it, so that a crash mid-change still leaves
// the intent. Records never go to stdout, which belongs to the stdio
// transport.
package audit

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/mcpfleet/mcpfleet/shared/envconfig"
)

// Vars documents the audit variable for --help.
var Vars = []envconfig.Var{
	{Name: "MCP_AUDIT_LOG", Default: "stderr", Description: "where audit records of changes go: a file path (appended, fsynced, reopened when deleted or replaced, and on SIGHUP), stderr, or off"},
}

// Config is where records go.
type Config struct {
	// Dest is "stderr", "off" or a file path.
	Dest string
}

// FromEnv reads MCP_AUDIT_LOG. "stdout" is refused: stdout carries the
// stdio transport's messages.
func FromEnv(r *envconfig.Reader) Config {
	v := r.String("MCP_AUDIT_LOG", "stderr")
	switch {
	case strings.EqualFold(v, "stdout") || v == "/dev/stdout" || v == "/proc/self/fd/1":
		r.Fail("MCP_AUDIT_LOG", v, "a file path, stderr or off (stdout carries the MCP protocol)")
	case strings.EqualFold(v, "stderr"):
		v = "stderr"
	case strings.EqualFold(v, "off"):
		v = "off"
	}
	return Config{Dest: v}
}

// Event says which half of a call a record is.
type Event string

// Events.
const (
	Intent  Event = "intent"  // written and synced before the change is sent
	Outcome Event = "outcome" // written after the back end answered (or the call was refused)
)

// Approval values: how a call came to run, or why it did not.
const (
	ByPolicy           = "policy"            // the policy did not require a person (or MCP_APPROVAL=none)
	ByPerson           = "person"            // a person accepted the elicitation
	ByConfirmationCode = "confirmation_code" // the call carried a valid confirmation code
	Declined           = "declined"          // the person declined or cancelled
	Timeout            = "timeout"           // the person did not answer in time
	Refused            = "refused"           // refused: invalid input, bad code, fallback=refuse, audit unwritable
	Pending            = "pending"           // a preview and confirmation code were returned; nothing ran yet
)

// Record is one audit line. Field names are the wire names. Every string
// field is scrubbed of the call's secrets when written, except those tagged
// audit:"closed", which hold values the server picks from a closed set.
type Record struct {
	Time          string         `json:"time" audit:"closed"`
	Event         Event          `json:"event" audit:"closed"`
	Server        string         `json:"server" audit:"closed"`
	ServerVersion string         `json:"server_version" audit:"closed"`
	Tool          string         `json:"tool" audit:"closed"`
	Class         string         `json:"class" audit:"closed"`
	Arguments     map[string]any `json:"arguments"`
	Target        string         `json:"target,omitempty"`
	Commands      []string       `json:"commands,omitempty"`
	// Identity words the caller for people; Issuer and Subject are the
	// OAuth caller's iss and sub as the token carried them, to compare.
	Identity   string `json:"identity"`
	Issuer     string `json:"issuer,omitempty"`
	Subject    string `json:"subject,omitempty"`
	Client     string `json:"client,omitempty"`
	Session    string `json:"session,omitempty"`
	RequestID  string `json:"request_id,omitempty"`
	Approval   string `json:"approval,omitempty" audit:"closed"`
	DryRun     bool   `json:"dry_run"`
	Outcome    string `json:"outcome,omitempty" audit:"closed"` // ok | error (outcome records only)
	Error      string `json:"error,omitempty"`
	DurationMS *int64 `json:"duration_ms,omitempty"`
	// Secrets are values known to be secret beyond those the arguments'
	// shapes reveal (toolcall.Plan.Secrets): never written, and scrubbed
	// from every field.
	Secrets []string `json:"-" audit:"closed"`
}

// Log is an audit destination. It is safe for concurrent use.
type Log struct {
	mu     sync.Mutex
	dest   string
	w      io.Writer // stderr, or f
	f      *os.File  // nil for stderr, and after a failed reopen
	closed bool
	now    func() time.Time
	stopHU func()
}

// Open opens the destination cfg names. A file is created if missing
// (mode 0600) and appended to; a file that cannot be opened is an error, so
// that a server does not start without its audit trail. stderr is the
// process's standard error passed in.
func Open(cfg Config, stderr io.Writer) (*Log, error) {
	l := &Log{dest: cfg.Dest, now: time.Now}
	switch cfg.Dest {
	case "", "stderr":
		l.dest = "stderr"
		l.w = stderr
	case "off":
	default:
		f, err := openFile(cfg.Dest)
		if err != nil {
			return nil, err
		}
		l.f, l.w = f, f
	}
	return l, nil
}

func openFile(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open audit log %s (MCP_AUDIT_LOG): %w; make the file writable, choose another path, or set MCP_AUDIT_LOG=stderr", path, err)
	}
	return f, nil
}

// Enabled reports whether records are written at all.
func (l *Log) Enabled() bool { return l != nil && l.dest != "off" }

// Write stamps rec with the time, removes its secrets, and appends it as
// one line; for a file it syncs before returning. An error means the
// record is not durable and the change it describes must not be made.
//
// Secrets are removed in one place for every server: the values of
// secret-shaped arguments (see redactArgs), URL passwords in any field,
// and rec.Secrets are replaced by Redacted in every spelling, in every
// field — commands, target, error, arguments — not only where the
// argument was.
func (l *Log) Write(rec Record) error {
	if !l.Enabled() {
		return nil
	}
	rec.Time = l.now().UTC().Format("2006-01-02T15:04:05.000Z07:00")
	var secrets []string
	rec.Arguments, secrets = redactArgs(rec.Arguments)
	secrets = append(secrets, rec.Secrets...)
	for _, s := range rec.texts() {
		embedded(s, &secrets)
	}
	rec.scrub(secrets)
	line, err := json.Marshal(rec)
	if err != nil {
		return fmt.Errorf("encode audit record: %w", err)
	}
	line = append(line, '\n')
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return fmt.Errorf("write audit record to %s: the audit log is closed", l.dest)
	}
	if err := l.follow(); err != nil {
		return err
	}
	if _, err := l.w.Write(line); err != nil {
		return fmt.Errorf("write audit record to %s: %w", l.dest, err)
	}
	if l.f != nil {
		if err := l.f.Sync(); err != nil {
			return fmt.Errorf("sync audit record to %s: %w", l.dest, err)
		}
	}
	return nil
}

// follow makes sure a file destination's records go to the file at its
// path: a file deleted, renamed away or replaced since it was opened would
// otherwise take records no one can read (a deleted inode), so it is
// reopened; a path that cannot be opened (a directory now, a directory
// made read-only) fails, and the change is refused. It also retries after
// a failed reopen. l.mu is held.
func (l *Log) follow() error {
	if l.dest == "stderr" {
		return nil
	}
	if l.f != nil {
		held, err1 := l.f.Stat()
		named, err2 := os.Stat(l.dest)
		if err1 == nil && err2 == nil && os.SameFile(held, named) {
			return nil
		}
		l.f.Close()
		l.f, l.w = nil, nil
	}
	f, err := openFile(l.dest)
	if err != nil {
		return fmt.Errorf("the audit log %s was deleted or replaced (or could not be reopened earlier), and reopening it failed: %w", l.dest, err)
	}
	l.f, l.w = f, f
	return nil
}

// Reopen closes and reopens a file destination, for log rotation by rename.
// On failure the log stays closed and every change is refused until a
// later Reopen succeeds.
func (l *Log) Reopen() error {
	if l == nil || l.dest == "off" || l.dest == "stderr" {
		return nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return nil
	}
	if l.f != nil {
		l.f.Close()
		l.f, l.w = nil, nil
	}
	f, err := openFile(l.dest)
	if err != nil {
		return err
	}
	l.f, l.w = f, f
	return nil
}

// ReopenOnSIGHUP reopens a file destination whenever the process receives
// SIGHUP; onErr hears about a failed reopen. It returns at once; Close stops
// it.
func (l *Log) ReopenOnSIGHUP(onErr func(error)) {
	if l == nil || l.dest == "off" || l.dest == "stderr" {
		return
	}
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, syscall.SIGHUP)
	done := make(chan struct{})
	go func() {
		for {
			select {
			case <-ch:
				if err := l.Reopen(); err != nil && onErr != nil {
					onErr(err)
				}
			case <-done:
				return
			}
		}
	}()
	l.mu.Lock()
	l.stopHU = func() { signal.Stop(ch); close(done) }
	l.mu.Unlock()
}

// Close stops SIGHUP handling and closes a file destination.
func (l *Log) Close() error {
	if l == nil {
		return nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.stopHU != nil {
		l.stopHU()
		l.stopHU = nil
	}
	var err error
	if l.f != nil {
		err = l.f.Close()
		l.f = nil
	}
	l.w, l.closed = nil, true
	if err != nil && !errors.Is(err, os.ErrClosed) {
		return err
	}
	return nil
}
