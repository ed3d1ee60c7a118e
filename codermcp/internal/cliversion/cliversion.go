// Package cliversion finds out what the installed Codex CLI supports by
// running it: its help text, how it parses configuration values it is
// given on purpose wrong (the error lists what it accepts), the first event
// of a turn against a closed local port, and its app-server's answer to an
// unknown method (which lists the methods it has). Flags and protocols
// churn between releases (see shared/notes/coder-cli.md), so nothing is
// assumed from the version number: the version only names, in errors, the
// oldest release known to have a missing feature.
//
// A probe takes a few seconds of CLI runs, so its result is stored in the
// user cache directory keyed on the binary's path, size and modification
// time, and reused across server restarts until the CLI is reinstalled.
package cliversion

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
)

// Features is what one installed CLI supports.
type Features struct {
	Path    string `json:"path"`    // the CLI probed
	Version string `json:"version"` // e.g. "0.171.0"

	// ExecJSON: `codex exec --json` exists. EventStream says what it
	// prints: "thread" (thread.started/item.*/turn.* events, with the thread
	// id) or "legacy" ({"id","msg"} events without a thread id, 0.36.0).
	ExecJSON    bool   `json:"execJson"`
	EventStream string `json:"eventStream,omitempty"`
	// Resume: native continuation with `codex exec resume <id>`, which needs
	// the thread id from the event stream.
	Resume bool `json:"resume"`
	// ResumeOptionsAfter: `exec resume` takes its own options (--json, -m,
	// --skip-git-repo-check) after "resume". When false (0.50.0) they must
	// come before it: `exec --json … resume <id> -- <prompt>`; after it they
	// fail with "unexpected argument '--json'".
	ResumeOptionsAfter bool `json:"resumeOptionsAfter"`
	ResumeImages       bool `json:"resumeImages"` // `exec resume --image`

	Images       bool     `json:"images"`       // exec --image
	Profile      bool     `json:"profile"`      // exec --profile
	AddDir       bool     `json:"addDir"`       // exec --add-dir (extra writable directories)
	SandboxFlag  bool     `json:"sandboxFlag"`  // exec --sandbox
	SandboxModes []string `json:"sandboxModes"` // the values --sandbox accepts
	Review       bool     `json:"review"`       // exec review
	SkipGitCheck bool     `json:"skipGitCheck"` // exec --skip-git-repo-check

	// ReasoningEfforts the configuration accepts. EffortsFromModel: the CLI
	// takes any value and leaves the choice to the model's catalogue (0.153+);
	// ReasoningEfforts then lists the values codermcp offers.
	ReasoningEfforts []string `json:"reasoningEfforts"`
	EffortsFromModel bool     `json:"effortsFromModel"`

	// WebSearch is how to switch web search in exec: "web_search" (a mode:
	// WebSearchModes), "tools.web_search" (a boolean), or "" (not at all).
	WebSearch      string   `json:"webSearch"`
	WebSearchModes []string `json:"webSearchModes,omitempty"`

	MCPServer bool `json:"mcpServer"` // `codex mcp-server` (removed in 0.154.0)
	// AppServer is the app-server protocol: "v2" (thread/start, turn/start,
	// item/*/requestApproval: what internal/appserver drives), "v1" (only
	// newConversation/sendUserMessage, 0.50.0) or "" (no app-server).
	AppServer        string   `json:"appServer"`
	AppServerMethods []string `json:"appServerMethods,omitempty"`
}

// Feature names, as Require takes them and errors name them.
const (
	FeatureResume     = "native resume"
	FeatureApprovals  = "approval requests (app-server v2)"
	FeatureImages     = "images"
	FeatureProfile    = "profile"
	FeatureAddDir     = "extra writable directories (--add-dir)"
	FeatureWebSearch  = "web search on/off"
	FeatureReview     = "review"
	FeatureEffort     = "reasoning effort"
	FeatureSandbox    = "sandbox mode"
	FeatureJSONEvents = "JSON events"
)

// KnownSince is the oldest CLI release verified to have each feature (by
// running the matrix of scripts/install/codermcp.sh). The feature may be
// older; this is the version a user is told to install.
var KnownSince = map[string]string{
	FeatureResume:     "0.50.0",
	FeatureApprovals:  "0.153.4",
	FeatureImages:     "0.36.0",
	FeatureProfile:    "0.36.0",
	FeatureAddDir:     "0.153.4",
	FeatureWebSearch:  "0.36.0",
	FeatureReview:     "0.153.4",
	FeatureEffort:     "0.36.0",
	FeatureSandbox:    "0.36.0",
	FeatureJSONEvents: "0.50.0",
}

// MissingError is a call that needs a feature the installed CLI lacks.
type MissingError struct {
	Feature   string // one of the Feature* names
	Installed string // the installed version
	Since     string // the oldest release known to have it
	Detail    string // e.g. the value that is not accepted
}

func (e *MissingError) Error() string {
	what := e.Feature
	if e.Detail != "" {
		what += " (" + e.Detail + ")"
	}
	return fmt.Sprintf("%s is not supported by the installed Codex CLI %s; it needs Codex CLI %s or later (npm install -g @openai/codex@latest, or set CODER_CLI_PATH to a newer CLI)",
		what, e.Installed, e.Since)
}

// Supports reports whether the CLI has feature.
func (f Features) Supports(feature string) bool {
	switch feature {
	case FeatureResume:
		return f.Resume
	case FeatureApprovals:
		return f.AppServer == "v2"
	case FeatureImages:
		return f.Images
	case FeatureProfile:
		return f.Profile
	case FeatureAddDir:
		return f.AddDir
	case FeatureWebSearch:
		return f.WebSearch != ""
	case FeatureReview:
		return f.Review
	case FeatureEffort:
		return len(f.ReasoningEfforts) > 0 || f.EffortsFromModel
	case FeatureSandbox:
		return f.SandboxFlag
	case FeatureJSONEvents:
		return f.ExecJSON && f.EventStream == "thread"
	}
	return false
}

// Require returns a *MissingError naming the version to install when the
// CLI lacks feature, else nil.
func (f Features) Require(feature string) error {
	if f.Supports(feature) {
		return nil
	}
	return &MissingError{Feature: feature, Installed: f.Version, Since: KnownSince[feature]}
}

// RequireEffort checks that the CLI accepts a reasoning effort value.
func (f Features) RequireEffort(effort string) error {
	if f.EffortsFromModel || slices.Contains(f.ReasoningEfforts, effort) {
		return nil
	}
	since := "0.153.4" // where none and xhigh were verified (effort chosen by the model catalogue)
	return &MissingError{Feature: FeatureEffort, Installed: f.Version, Since: since,
		Detail: fmt.Sprintf("%q; this CLI accepts %s", effort, strings.Join(f.ReasoningEfforts, ", "))}
}

// AllEfforts are the reasoning efforts codermcp offers when the CLI leaves
// the choice to the model.
var AllEfforts = []string{"none", "minimal", "low", "medium", "high", "xhigh"}

// Detector probes one CLI in the background (started with the server, so
// the probe stays off the first call's path) and hands the result to
// whoever needs it. A failed probe is tried again on the next Get. Close
// ends it with its server.
type Detector struct {
	Prober *Prober
	Path   string

	mu      sync.Mutex
	done    chan struct{}
	f       Features
	err     error
	life    context.Context // the probes' context: Close's cancel ends it
	stop    context.CancelFunc
	closed  bool
	running sync.WaitGroup
}

// errClosed is what Get says after Close.
var errClosed = errors.New("the server is shutting down: its feature probe was stopped")

// Start begins the probe unless one has run or is running.
func (d *Detector) Start(ctx context.Context) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.done != nil || d.closed {
		return
	}
	if d.life == nil {
		// Not the caller's cancellation: a probe that a call started (Get)
		// serves every call after it. Only Close ends it.
		d.life, d.stop = context.WithCancel(context.WithoutCancel(ctx))
	}
	done := make(chan struct{})
	d.done = done
	d.running.Add(1)
	go func() {
		defer d.running.Done()
		p := d.Prober
		if p == nil {
			p = &Prober{}
		}
		f, err := p.Probe(d.life, d.Path)
		d.mu.Lock()
		d.f, d.err = f, err
		if err != nil {
			d.done = nil // the next Get probes again
		}
		d.mu.Unlock()
		close(done)
	}()
}

// Close stops a probe still running and waits for it to end, so that no
// probe outlives its server: its CLI's process group is killed, its
// throwaway home removed, and nothing is written to the cache afterwards
// (a stopped probe is not cached). Get then answers errClosed, unless a
// probe had finished.
func (d *Detector) Close() {
	d.mu.Lock()
	d.closed = true
	if d.stop != nil {
		d.stop()
	}
	d.mu.Unlock()
	d.running.Wait()
}

// Get returns the features, waiting for the probe (starting it if needed)
// until ctx ends.
func (d *Detector) Get(ctx context.Context) (Features, error) {
	d.Start(ctx)
	d.mu.Lock()
	done := d.done
	d.mu.Unlock()
	if done != nil {
		select {
		case <-done:
		case <-ctx.Done():
			return Features{}, fmt.Errorf("the Codex CLI's features are still being probed: %w", context.Cause(ctx))
		}
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed && d.done == nil { // stopped, or never run
		return Features{}, errClosed
	}
	return d.f, d.err
}

// All is every feature name, in the order version_info lists them.
var All = []string{FeatureJSONEvents, FeatureResume, FeatureApprovals, FeatureImages, FeatureProfile, FeatureAddDir, FeatureWebSearch, FeatureReview, FeatureEffort, FeatureSandbox}
