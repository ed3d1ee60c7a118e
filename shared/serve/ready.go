package serve

import (
	"context"
	"encoding/json"
	"net/http"
	"sync"
	"time"
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

	mu      sync.Mutex
	checked time.Time
	err     error
	running chan struct{} // closed when the running probe ends
}

func newReadiness(probe ReadyFunc) *readiness {
	return &readiness{probe: probe, now: time.Now, timeout: readyTimeout}
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
	r.err, r.checked = err, r.now()
	close(r.running)
	r.running = nil
	r.mu.Unlock()
}

// ServeHTTP answers GET /readyz: 200 when the back end answered, else 503
// with what failed.
func (r *readiness) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	if err := r.check(req.Context()); err != nil {
		w.WriteHeader(http.StatusServiceUnavailable)
		json.NewEncoder(w).Encode(map[string]string{"status": "unavailable", "error": err.Error()})
		return
	}
	json.NewEncoder(w).Encode(map[string]string{"status": "ready"})
}
