package master

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
)

// ReloadOptions shape Reload.
type ReloadOptions struct {
	// Wait bounds how long Reload waits for the outcome ("reload" is
	// asynchronous on 2.6); 15s when zero.
	Wait time.Duration
	// Check, when set, gives HAProxy's own words for a refused reload on
	// versions whose master keeps no startup log (2.6).
	Check *Checker
}

// Outcome is what a reload did, read from the master itself.
type Outcome struct {
	Reloaded bool  `json:"reloaded"`
	Before   Procs `json:"before"`
	After    Procs `json:"after"`
	// NewWorkers are the pids that appeared with this reload.
	NewWorkers []int `json:"new_workers,omitempty"`
	// Serving are the workers left serving after a refused reload.
	Serving []int `json:"serving,omitempty"`
	// Messages are HAProxy's startup messages, and MessagesFrom where they
	// came from: "reload answer" (3.0+), "show startup-logs" or "haproxy -c"
	// (2.6, whose master answers nothing and keeps no startup log).
	Messages     string `json:"messages,omitempty"`
	MessagesFrom string `json:"messages_from,omitempty"`
}

// RefusedError is a reload HAProxy refused: the old worker(s) kept serving.
type RefusedError struct {
	Endpoint string
	Serving  []int
	Messages string
	From     string
}

func (e *RefusedError) Error() string {
	msg := strings.TrimSpace(e.Messages)
	if msg == "" {
		msg = "HAProxy gave no reason"
	}
	return fmt.Sprintf("HAProxy refused the reload (master CLI %s); the previous worker(s) %v keep serving with the previous configuration. HAProxy said (%s):\n%s\nfix the configuration (check it with haproxy -c) and reload again", e.Endpoint, e.Serving, e.From, msg)
}

// ErrUnconfirmed wraps a reload whose outcome the master did not show in time.
var ErrUnconfirmed = errors.New("reload not confirmed")

// Reload asks the master to reload and confirms the outcome from "show
// proc": the master's reload counter moved, and either a new worker
// appeared (Reloaded) or the failure counter moved (a *RefusedError, with
// HAProxy's startup messages). The Outcome is returned in both cases.
func (c *Client) Reload(ctx context.Context, o ReloadOptions) (Outcome, error) {
	wait := o.Wait
	if wait <= 0 {
		wait = 15 * time.Second
	}
	var out Outcome
	before, err := c.ShowProc(ctx)
	if err != nil {
		return out, fmt.Errorf("before reloading: %w", err)
	}
	out.Before = before
	answer, rerr := c.Execute(ctx, "reload")
	if rerr != nil && !errors.As(rerr, new(*ConnError)) {
		return out, rerr
	}
	// 3.0+: "Success=1\n--\n<startup log>"; 2.6: nothing (the master
	// re-executes and the connection just closes). A broken connection is
	// not proof the reload was not taken: "show proc" decides.
	answered, success := false, false
	if s, ok := strings.CutPrefix(answer, "Success="); ok {
		answered, success = true, strings.HasPrefix(s, "1")
		if _, logs, ok := strings.Cut(s, "\n--\n"); ok {
			out.Messages, out.MessagesFrom = strings.TrimSpace(logs), "reload answer"
		}
	}

	deadline := time.Now().Add(wait)
	for {
		after, err := c.ShowProc(ctx)
		if err == nil && after.Master.Reloads > before.Master.Reloads {
			out.After = after
			break
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			why := "the master's reload counter did not move"
			if err != nil {
				why = err.Error()
			}
			if rerr != nil {
				why += fmt.Sprintf(" (sending reload: %v)", rerr)
			}
			return out, fmt.Errorf("%w after %s on %s: %s; look at HAProxy's log and \"show proc\" before retrying", ErrUnconfirmed, wait, c.Endpoint(), why)
		}
		select {
		case <-ctx.Done():
		case <-time.After(50 * time.Millisecond):
		}
	}

	old := before.workerPIDs()
	for _, w := range out.After.Workers {
		if !slices.Contains(old, w.PID) {
			out.NewWorkers = append(out.NewWorkers, w.PID)
		}
	}
	failed := out.After.Master.Failed > before.Master.Failed || (answered && !success)
	if !failed && len(out.NewWorkers) > 0 {
		out.Reloaded = true
		return out, nil
	}
	if !failed {
		return out, fmt.Errorf("%w: the master counted the reload but no new worker appeared on %s (workers %v); look at HAProxy's log", ErrUnconfirmed, c.Endpoint(), out.After.workerPIDs())
	}
	for _, pid := range out.After.workerPIDs() {
		if slices.Contains(old, pid) {
			out.Serving = append(out.Serving, pid)
		}
	}
	if out.Messages == "" {
		c.refusalWords(ctx, o.Check, &out)
	}
	return out, &RefusedError{Endpoint: c.Endpoint(), Serving: out.Serving, Messages: out.Messages, From: out.MessagesFrom}
}

// refusalWords finds HAProxy's words for a refused reload: the master's
// startup log where it keeps one (2.8+), else "haproxy -c" on the same
// files with the same binary.
func (c *Client) refusalWords(ctx context.Context, check *Checker, out *Outcome) {
	if logs, err := c.Execute(ctx, "show startup-logs"); err == nil && !strings.HasPrefix(logs, "Unknown command") && strings.TrimSpace(logs) != "" {
		out.Messages, out.MessagesFrom = strings.TrimSpace(logs), "show startup-logs"
		return
	}
	if check == nil {
		out.MessagesFrom = "none: this master keeps no startup log and no haproxy binary is configured for haproxy -c (PROXY_<NAME>_HAPROXY_BIN)"
		return
	}
	res, err := check.Check(ctx)
	if err != nil {
		out.MessagesFrom = "none: " + err.Error()
		return
	}
	out.Messages, out.MessagesFrom = res.Output, "haproxy -c"
}
