package serve

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/mcpfleet/mcpfleet/shared/state"
)

// Readiness probe timing: a probe answers from cache for readyTTL, so that
// any number of scrapers or kubelets cost the back end one cheap request
// every few seconds, and a probe that hangs fails after readyTimeout.
const (
	readyTTL     = 3 * time.Second
	readyTimeout = 5 * time.Second
)

// ReadyFunc checks that the back end answers a cheap request now (HAProxy
// show info, a Kafka metadata request, Trino SELECT 1, the CLI's
// --version). Its error says what failed, for the operator.
type ReadyFunc func(ctx context.Context) error

// readiness runs a ReadyFunc at most once per readyTTL; concurrent callers
// share the running probe.
type readiness struct {
	probe   ReadyFunc
	now     func() time.Time
	timeout time.Duration
	logger  *slog.Logger
	// detail reports whether the caller may read what failed; nil: no one.
	detail func(*http.Request) bool
	logged string // the failure last logged, to log each change once

	mu      sync.Mutex
	checked time.Time
	err     error
	running chan struct{} // closed when the running probe ends
}

func newReadiness(probe ReadyFunc, logger *slog.Logger, detail func(*http.Request) bool) *readiness {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	// The shared state store (MCP_STATE_URL) is part of being ready: a
	// replica that cannot reach it refuses codes and tasks.
	backEnd := probe
	probe = func(ctx context.Context) error {
		if err := state.Check(ctx); err != nil {
			return err
		}
		if backEnd != nil {
			return backEnd(ctx)
		}
		return nil
	}
	return &readiness{probe: probe, now: time.Now, timeout: readyTimeout, logger: logger, detail: detail}
}

// check returns the cached result, or runs the probe.
func (r *readiness) check(ctx context.Context) error {
	if r.probe == nil {
		return nil
	}
	r.mu.Lock()
	if !r.checked.IsZero() && r.now().Sub(r.checked) < readyTTL {
		err := r.err
		r.mu.Unlock()
		return err
	}
	if r.running == nil {
		r.running = make(chan struct{})
		go r.run()
	}
	running := r.running
	r.mu.Unlock()
	select {
	case <-running:
	case <-ctx.Done():
		return ctx.Err()
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.err
}

// run probes with its own deadline: a caller giving up does not cancel the
// probe others wait for.
func (r *readiness) run() {
	ctx, cancel := context.WithTimeout(context.Background(), r.timeout)
	err := r.probe(ctx)
	if err == nil && ctx.Err() != nil {
		err = ctx.Err() // the probe ignored its deadline
	}
	cancel()
	r.mu.Lock()
	// The operator reads what failed in the log, once per change.
	if msg := errText(err); msg != r.logged {
		r.logged = msg
		if err != nil {
			r.logger.Warn("not ready: the back end's readiness probe failed", "error", msg)
		} else {
			r.logger.Info("ready: the back end's readiness probe succeeds again")
		}
	}
	r.err, r.checked = err, r.now()
	close(r.running)
	r.running = nil
	r.mu.Unlock()
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// ServeHTTP answers GET /readyz: 200 when the back end answered, else 503,
// saying what failed only to a caller detail admits (the probe's error
// names back-end addresses, user names and paths).
func (r *readiness) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	if err := r.check(req.Context()); err != nil {
		w.WriteHeader(http.StatusServiceUnavailable)
		msg := "the back end is not ready; what failed is in the server's log, on MCP_METRICS_ADDR's /readyz, or here with a valid bearer token"
		if r.detail != nil && r.detail(req) {
			msg = err.Error()
		}
		json.NewEncoder(w).Encode(map[string]string{"status": "unavailable", "error": msg})
		return
	}
	json.NewEncoder(w).Encode(map[string]string{"status": "ready"})
}
