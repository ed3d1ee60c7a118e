// Package fleet is proxymcp's view of several HAProxy instances: a set of
// named haproxy.Clients, asked concurrently. A read gives every instance's
// answer or error side by side and fails only when no instance answered; a
// write reports per instance what was sent, HAProxy's answer and whether it
// was applied, and a change that landed on some instances but not on others
// is an error that says which and how to undo or complete it. The
// divergence computation (divergence.go) says where the instances disagree.
//
// Like package haproxy it knows nothing of MCP.
package fleet

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/mcpfleet/mcpfleet/proxymcp/internal/config"
	"github.com/mcpfleet/mcpfleet/proxymcp/internal/haproxy"
	"github.com/mcpfleet/mcpfleet/proxymcp/internal/runtimeapi"
	"github.com/mcpfleet/mcpfleet/shared/envconfig"
)

// Member is one named HAProxy.
type Member struct {
	Name   string
	Client *haproxy.Client
	// ReadTimeout bounds this instance's part of a read, fallback from the
	// runtime API to the stats page included, so that one hung instance
	// never holds a fleet read longer than its own limit. Zero: only the
	// back-end clients' own per-request timeouts apply.
	ReadTimeout time.Duration
}

// ReadContext is ctx bounded by the member's ReadTimeout (ctx itself when
// there is none); call cancel when the read is done.
func (m Member) ReadContext(ctx context.Context) (context.Context, context.CancelFunc) {
	if m.ReadTimeout > 0 {
		return context.WithTimeout(ctx, m.ReadTimeout)
	}
	return ctx, func() {}
}

// Fleet is an ordered set of members with distinct names: the instances of
// PROXY_INSTANCES, or the one HAProxy of a configuration without it.
type Fleet struct {
	members []Member
	index   map[string]int
	sel     *envconfig.Fleet
}

// New returns a fleet of named instances, as PROXY_INSTANCES would list
// them: names follow the member grammar, are distinct and not "all".
func New(members ...Member) (*Fleet, error) {
	names := make([]string, len(members))
	for i, m := range members {
		if m.Client == nil {
			return nil, fmt.Errorf("instance %s has no client", m.Name)
		}
		names[i] = m.Name
	}
	list := strings.Join(names, ",")
	r := envconfig.New(func(k string) string {
		if k == config.Instances.ListVar() {
			return list
		}
		return ""
	})
	sel := config.Instances.Read(r)
	if err := r.Err(); err != nil {
		return nil, err
	}
	if len(sel.Names) != len(members) {
		return nil, errors.New("a fleet needs at least one HAProxy instance")
	}
	return newFleet(members, sel), nil
}

func newFleet(members []Member, sel *envconfig.Fleet) *Fleet {
	f := &Fleet{members: slices.Clone(members), index: make(map[string]int, len(members)), sel: sel}
	for i, m := range members {
		f.index[m.Name] = i
	}
	return f
}

// Named reports whether the instances were named (PROXY_INSTANCES): only
// then do calls choose among them.
func (f *Fleet) Named() bool { return f.sel.Named }

// Names returns the instance names in fleet order.
func (f *Fleet) Names() []string { return slices.Clone(f.sel.Names) }

// Members returns every member in fleet order.
func (f *Fleet) Members() []Member { return slices.Clone(f.members) }

// Member returns one member by name.
func (f *Fleet) Member(name string) (Member, bool) {
	i, ok := f.index[name]
	if !ok {
		return Member{}, false
	}
	return f.members[i], true
}

// Select returns the members a selector names, in fleet order, each once:
// nothing or "all" selects every instance. An unknown name is an
// *envconfig.UnknownMemberError and selects nothing.
func (f *Fleet) Select(names []string) ([]Member, error) {
	sel, err := f.sel.Select(names...)
	if err != nil {
		return nil, err
	}
	out := make([]Member, len(sel))
	for i, n := range sel {
		out[i] = f.members[f.index[n]]
	}
	return out, nil
}

// Answer is one instance's part of a read: its value, or the error it gave.
type Answer[T any] struct {
	Instance string
	Value    T
	Source   haproxy.Source
	Err      error
	// Elapsed is how long this instance took (from the start of the read).
	Elapsed time.Duration
}

// InstanceError is one instance's error in a fleet call.
type InstanceError struct {
	Instance string
	Err      error
}

func (e *InstanceError) Error() string { return e.Instance + ": " + e.Err.Error() }

func (e *InstanceError) Unwrap() error { return e.Err }

// NoAnswerError is a read no chosen instance answered.
type NoAnswerError struct {
	Errors []*InstanceError
}

func (e *NoAnswerError) Error() string {
	if len(e.Errors) == 1 {
		return e.Errors[0].Error()
	}
	parts := make([]string, len(e.Errors))
	for i, ie := range e.Errors {
		parts[i] = ie.Error()
	}
	return fmt.Sprintf("no HAProxy instance answered (%s)", strings.Join(parts, "; "))
}

// Unwrap gives the instances' errors, so errors.As finds a common kind
// (every instance saying "not found", every one unreachable).
func (e *NoAnswerError) Unwrap() []error {
	out := make([]error, len(e.Errors))
	for i, ie := range e.Errors {
		out[i] = ie
	}
	return out
}

// Read asks every member concurrently, each under its own ReadTimeout, and
// returns their answers in member order. The error is a *NoAnswerError
// when no member answered; otherwise per-instance errors are in the
// answers, next to the values of the instances that answered.
func Read[T any](ctx context.Context, members []Member, fn func(ctx context.Context, m Member) (T, haproxy.Source, error)) ([]Answer[T], error) {
	out := make([]Answer[T], len(members))
	start := time.Now()
	var wg sync.WaitGroup
	for i, m := range members {
		wg.Add(1)
		go func() {
			defer wg.Done()
			mctx, cancel := m.ReadContext(ctx)
			defer cancel()
			v, src, err := fn(mctx, m)
			if err != nil && mctx.Err() != nil && ctx.Err() == nil {
				// This instance's own limit cut it, not the caller's.
				err = fmt.Errorf("%w (no answer within this instance's %s)", err, m.ReadTimeout)
			}
			out[i] = Answer[T]{Instance: m.Name, Value: v, Source: src, Err: err, Elapsed: time.Since(start)}
		}()
	}
	wg.Wait()
	var errs []*InstanceError
	for _, a := range out {
		if a.Err == nil {
			return out, nil
		}
		errs = append(errs, &InstanceError{Instance: a.Instance, Err: a.Err})
	}
	return out, &NoAnswerError{Errors: errs}
}

// ToolCall is an MCP tool call proxymcp suggests, e.g. to undo a change.
type ToolCall struct {
	Tool string         `json:"tool"`
	Args map[string]any `json:"arguments"`
}

// String gives the call as `tool {"arg":...}`, arguments sorted by name.
func (t ToolCall) String() string {
	b, _ := json.Marshal(t.Args)
	return t.Tool + " " + string(b)
}

func (t ToolCall) with(instances []string) ToolCall {
	args := make(map[string]any, len(t.Args)+1)
	for k, v := range t.Args {
		args[k] = v
	}
	args["instance"] = instances
	return ToolCall{Tool: t.Tool, Args: args}
}

// Change is one write to make on every chosen instance.
type Change struct {
	// Call is the tool call making the change (without "instance"): the
	// call that completes it on the instances it missed.
	Call ToolCall
	// Commands are the runtime API commands each instance is sent.
	Commands []string
	// Sent, optional, says what one instance was sent, from the back end
	// that answered (the stats page's admin form instead of the runtime
	// API's commands, when the runtime API was unreachable); nil: Commands.
	Sent func(m Member, src haproxy.Source) []string
	// Apply makes the change on one instance.
	Apply func(ctx context.Context, m Member) (haproxy.Applied, haproxy.Source, error)
	// Undo, optional, reads one instance before the change and returns the
	// call that would put it back as it was (nil: nothing to undo there).
	// The reads run under the members' ReadTimeout; an instance whose
	// state cannot be read is not changed.
	Undo func(ctx context.Context, m Member) (*ToolCall, error)
}

// Outcome is what one instance did with a change.
type Outcome struct {
	Instance string         `json:"instance"`
	Sent     []string       `json:"sent"`
	Source   haproxy.Source `json:"source,omitempty"`
	// Answer is HAProxy's answer: its message on success, its refusal.
	Answer string `json:"answer"`
	// Applied: the instance holds the requested state (Changed false when it already did).
	Applied bool `json:"applied"`
	Changed bool `json:"changed"`
	// Uncertain: the change may or may not have taken effect (HAProxy's
	// answer could not be confirmed, the exchange broke off, or only some
	// of its steps ran).
	Uncertain bool   `json:"uncertain,omitempty"`
	Error     string `json:"error,omitempty"`
	// State is what was read back when HAProxy's answer was unusual.
	State string `json:"state_read_back,omitempty"`

	Err  error     `json:"-"`
	Undo *ToolCall `json:"-"`
}

// Write makes the change on every member concurrently. It returns every
// instance's outcome and, unless every instance applied it, an error: a
// *PartialError when some did, a *NotAppliedError when none did.
func Write(ctx context.Context, members []Member, ch Change) ([]Outcome, error) {
	out := make([]Outcome, len(members))
	var wg sync.WaitGroup
	for i, m := range members {
		wg.Add(1)
		go func() {
			defer wg.Done()
			out[i] = writeOne(ctx, m, ch)
		}()
	}
	wg.Wait()
	var applied, failed, uncertain []string
	for _, o := range out {
		switch {
		case o.Applied:
			applied = append(applied, o.Instance)
		case o.Uncertain:
			uncertain = append(uncertain, o.Instance)
		default:
			failed = append(failed, o.Instance)
		}
	}
	switch {
	case len(failed) == 0 && len(uncertain) == 0:
		return out, nil
	case len(applied) == 0 && len(uncertain) == 0:
		return out, &NotAppliedError{Outcomes: out}
	}
	return out, newPartial(ch, out, applied, failed, uncertain)
}

func writeOne(ctx context.Context, m Member, ch Change) Outcome {
	o := Outcome{Instance: m.Name, Sent: ch.Commands}
	if ch.Undo != nil {
		rctx, cancel := m.ReadContext(ctx)
		undo, err := ch.Undo(rctx, m)
		cancel()
		if err != nil {
			o.Sent = nil
			o.Err = fmt.Errorf("reading its current state before the change failed, so nothing was sent: %w", err)
			o.Error = o.Err.Error()
			return o
		}
		o.Undo = undo
	}
	res, src, err := ch.Apply(ctx, m)
	o.Source = src
	if ch.Sent != nil {
		o.Sent = ch.Sent(m, src)
	}
	if err == nil {
		o.Applied, o.Changed, o.Answer, o.State = true, res.Changed, res.Message, res.State
		return o
	}
	o.Err, o.Error = err, err.Error()
	o.Answer = answerOf(err)
	var na *haproxy.NotAppliedError
	var pe *haproxy.PartialError
	switch {
	case errors.As(err, &pe):
		o.Uncertain = true
	case errors.As(err, &na):
		o.State = na.State
		o.Uncertain = na.Unverified || na.ReadErr != nil
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded), isCutOff(err):
		// The command may have reached HAProxy before the answer was lost.
		o.Uncertain = true
	}
	return o
}

// NotAppliedError is a change no instance applied.
type NotAppliedError struct {
	Outcomes []Outcome
}

func (e *NotAppliedError) Error() string {
	parts := make([]string, len(e.Outcomes))
	for i, o := range e.Outcomes {
		parts[i] = o.Instance + ": " + o.Error
	}
	return "not applied on any instance, nothing was changed (" + strings.Join(parts, "; ") + ")"
}

// Unwrap gives the instances' errors.
func (e *NotAppliedError) Unwrap() []error {
	var out []error
	for _, o := range e.Outcomes {
		if o.Err != nil {
			out = append(out, &InstanceError{Instance: o.Instance, Err: o.Err})
		}
	}
	return out
}

// PartialError is a change some instances applied and others did not.
type PartialError struct {
	Applied   []string // hold the requested state now
	Failed    []string // did not change
	Uncertain []string // may or may not have changed
	Outcomes  []Outcome
	// Complete is the call that would make the change on the instances it
	// missed, once their problem is fixed.
	Complete ToolCall
	// Undo are the calls that would put the applied instances back, one
	// per distinct previous state (empty when the change has no undo).
	Undo []ToolCall
}

func newPartial(ch Change, out []Outcome, applied, failed, uncertain []string) *PartialError {
	e := &PartialError{Applied: applied, Failed: failed, Uncertain: uncertain, Outcomes: out,
		Complete: ch.Call.with(append(slices.Clone(failed), uncertain...))}
	groups := map[string]int{}
	var calls []ToolCall
	var members [][]string
	for _, o := range out {
		if !o.Applied || !o.Changed || o.Undo == nil {
			continue
		}
		k := o.Undo.String()
		i, ok := groups[k]
		if !ok {
			i = len(calls)
			groups[k] = i
			calls = append(calls, *o.Undo)
			members = append(members, nil)
		}
		members[i] = append(members[i], o.Instance)
	}
	for i, c := range calls {
		e.Undo = append(e.Undo, c.with(members[i]))
	}
	return e
}

func (e *PartialError) Error() string {
	var b strings.Builder
	b.WriteString("partially applied: ")
	if len(e.Applied) > 0 {
		fmt.Fprintf(&b, "changed on %s", strings.Join(e.Applied, ", "))
	} else {
		b.WriteString("changed on no instance")
	}
	if len(e.Failed) > 0 {
		fmt.Fprintf(&b, "; NOT changed on %s", strings.Join(e.Failed, ", "))
	}
	if len(e.Uncertain) > 0 {
		fmt.Fprintf(&b, "; unknown on %s", strings.Join(e.Uncertain, ", "))
	}
	b.WriteString(" (")
	first := true
	for _, o := range e.Outcomes {
		if o.Applied {
			continue
		}
		if !first {
			b.WriteString("; ")
		}
		first = false
		b.WriteString(o.Instance + ": " + o.Error)
	}
	b.WriteString("). The instances now differ. To complete it, fix the cause and call ")
	b.WriteString(e.Complete.String())
	switch len(e.Undo) {
	case 0:
	case 1:
		b.WriteString("; to undo it, call " + e.Undo[0].String())
	default:
		parts := make([]string, len(e.Undo))
		for i, u := range e.Undo {
			parts[i] = u.String()
		}
		b.WriteString("; to undo it, call " + strings.Join(parts, " and "))
	}
	return b.String()
}

// Unwrap gives the failed instances' errors.
func (e *PartialError) Unwrap() []error {
	var out []error
	for _, o := range e.Outcomes {
		if o.Err != nil {
			out = append(out, &InstanceError{Instance: o.Instance, Err: o.Err})
		}
	}
	return out
}

// answerOf returns HAProxy's own words in an error, if it answered.
func answerOf(err error) string {
	var re *runtimeapi.ReplyError
	var na *haproxy.NotAppliedError
	switch {
	case errors.As(err, &re):
		return re.Message
	case errors.As(err, &na):
		return na.Message
	}
	return ""
}

// isCutOff: the exchange broke off or timed out after the command may have
// been sent.
func isCutOff(err error) bool {
	return errors.Is(err, runtimeapi.ErrCutOff) || errors.Is(err, os.ErrDeadlineExceeded)
}
