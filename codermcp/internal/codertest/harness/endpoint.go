package harness

import (
	"strings"
	"sync"

	"github.com/mcpfleet/mcpfleet/codermcp/internal/codertest"
)

// Endpoint is a running codertest endpoint with the record of what it was
// sent and its gates.
type Endpoint struct {
	*codertest.Endpoint
	*recorder
}

// recorder is the endpoint's Observer.
type recorder struct {
	mu          sync.Mutex
	reqs        []codertest.Request
	inFlight    int                      // requests being answered now
	maxInFlight int                      // the most answered at once
	gates       map[string]chan struct{} // [[gate:NAME]], closed by Open
}

func (r *recorder) Began(req codertest.Request) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.reqs = append(r.reqs, req)
	r.inFlight++
	r.maxInFlight = max(r.maxInFlight, r.inFlight)
}

func (r *recorder) Ended() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.inFlight--
}

func (r *recorder) Gate(name string) <-chan struct{} {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.gateLocked(name)
}

// Requests returns every request received so far.
func (r *recorder) Requests() []codertest.Request {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]codertest.Request(nil), r.reqs...)
}

// InFlight returns how many requests are being answered now, and the most
// that were at once since the endpoint started: each running CLI turn
// holds one, so it counts the CLI runs that overlapped.
func (r *recorder) InFlight() (now, most int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.inFlight, r.maxInFlight
}

// Open lets the requests waiting at [[gate:name]], and any later ones,
// through.
func (r *recorder) Open(name string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	g := r.gateLocked(name)
	select {
	case <-g:
	default:
		close(g)
	}
}

func (r *recorder) gateLocked(name string) chan struct{} {
	if r.gates == nil {
		r.gates = map[string]chan struct{}{}
	}
	g, ok := r.gates[name]
	if !ok {
		g = make(chan struct{})
		r.gates[name] = g
	}
	return g
}

// RequestsWith returns the requests whose prompt contains s.
func (r *recorder) RequestsWith(s string) []codertest.Request {
	var out []codertest.Request
	for _, req := range r.Requests() {
		if strings.Contains(req.Prompt, s) {
			out = append(out, req)
		}
	}
	return out
}

// ToldNotRun reports whether the CLI told the model, in a function output
// of a request carrying prompt, that a command was not run (rejected,
// declined or denied): what a declined approval must lead to.
func (e *Endpoint) ToldNotRun(prompt string) bool {
	for _, r := range e.RequestsWith(prompt) {
		for _, out := range r.Outputs {
			low := strings.ToLower(out)
			if strings.Contains(low, "reject") || strings.Contains(low, "declin") || strings.Contains(low, "denied") {
				return true
			}
		}
	}
	return false
}
