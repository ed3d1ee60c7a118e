package promtest

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpfleet/mcpfleet/shared/e2e"
)

// Outcome is what a tool call must end in.
type Outcome int

const (
	// OK: a result without isError.
	OK Outcome = iota
	// ToolError: a result with isError set.
	ToolError
	// ProtocolError: a JSON-RPC error instead of a result.
	ProtocolError
)

func (o Outcome) String() string {
	return [...]string{"ok", "tool_error", "protocol_error"}[o]
}

// Call is a tool call a Scenario makes Times times (once when 0), each
// ending in Want.
type Call struct {
	Tool  string
	Args  map[string]any
	Want  Outcome
	Times int
}

// WantAlert is an alert that must become active (pending or firing), with
// every label of Labels.
type WantAlert struct {
	Name   string
	Labels map[string]string
}

// Scenario is one server's end-to-end Prometheus test: the built binary
// runs over streamable HTTP, a real Prometheus scrapes it every second and
// evaluates its alert rules, and the known calls must show in PromQL.
//
// In every query of Expect and After, "{S," and "{S}" stand for the
// server's own label: {server="<Server>",… and {server="<Server>"}.
type Scenario struct {
	// Server is the binary's server label (mcpfleet_build_info{server=…}).
	Server string
	// Env is the binary's environment (back end); OAuth is added unless
	// Anonymous.
	Env []string
	// Anonymous (Run only) serves without OAuth: no token on calls and
	// scrapes; Unauthenticated and Malformed must be 0.
	Anonymous bool
	// Rules are the alert rules Prometheus evaluates, checked with promtool
	// first; empty means the README's (READMERules of README.md).
	Rules string
	// NoRules loads no rules and checks no alerts (a library with no
	// README rules of its own).
	NoRules bool
	// Calls are made in order before Expect is asserted.
	Calls []Call
	// Unauthenticated and Malformed are how many initialize requests are
	// sent without a token and with a malformed one; each must get 401.
	Unauthenticated, Malformed int
	// Expect are PromQL queries and the values they must reach, besides
	// those Calls, Unauthenticated and Malformed imply (see Implied).
	Expect map[string]float64
	// Stop, when set, takes the back end away after Expect holds. Failing
	// is then called every 200 ms, as a client would, until every alert of
	// Alerts is active; each of its calls must end in a tool error (its
	// Want is not read).
	Stop    func() error
	Failing Call
	// StopTimeout, when set, bounds the waits after Stop (default: the
	// Prometheus's 60 s).
	StopTimeout time.Duration
	// Alerts must become active: after Stop when it is set, else after
	// Expect holds.
	Alerts []WantAlert
	// After, when set, returns PromQL queries and their values once the
	// alerts are active, given how many Failing calls were made.
	After func(failed int) map[string]float64
}

// Running is a Scenario that ran, for assertions a scenario cannot say.
type Running struct {
	// Base is the server's base URL; Server is nil for RunAt.
	Base   string
	Server *e2e.HTTPServer
	Client *mcp.ClientSession
	Prom   *Prometheus
}

// CallTool makes one tool call and reports whether it was a tool error; a
// protocol (JSON-RPC) error is returned as err.
func CallTool(t testing.TB, cs *mcp.ClientSession, tool string, args map[string]any) (bool, error) {
	t.Helper()
	// A turn of codermcp runs a real CLI: on a loaded machine that takes a while.
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		return false, err
	}
	return res.IsError, nil
}

func (c Call) check(t testing.TB, isErr bool, err error) bool {
	t.Helper()
	got := OK
	switch {
	case err != nil:
		got = ProtocolError
	case isErr:
		got = ToolError
	}
	if got != c.Want {
		t.Errorf("%s %v: %s (err: %v), want %s", c.Tool, c.Args, got, err, c.Want)
		return false
	}
	return true
}

// Run drives sc against bin (e2e.Build's output), started over
// streamable HTTP with OAuth on unless sc.Anonymous, and fails the test at
// the first difference; what it returns keeps running until the test ends.
func Run(t testing.TB, bin string, sc Scenario) *Running {
	t.Helper()
	Binary(t, "prometheus")
	env, target := sc.Env, Target{}
	if !sc.Anonymous {
		env = append(append([]string(nil), env...), e2e.OAuthEnv...)
		// A scrape is a client of its own: Prometheus, not alice.
		target.Token, target.ScrapeToken = e2e.OAuthToken("alice"), e2e.OAuthToken("prometheus")
	}
	srv := e2e.StartHTTP(t, bin, env)
	target.Base = srv.Base
	r := RunAt(t, target, sc)
	r.Server = srv
	return r
}

// Target is a server already serving streamable HTTP, e.g. in process.
type Target struct {
	// Base is its base URL: /mcp and /metrics are below it.
	Base string
	// Token, when set, is the bearer token of the calls, and of the
	// scrapes unless ScrapeToken is set.
	Token, ScrapeToken string
}

// RunAt drives sc against a server that is already running, as Run does.
func RunAt(t testing.TB, target Target, sc Scenario) *Running {
	t.Helper()
	Binary(t, "prometheus")
	opts := Options{Targets: []string{strings.TrimPrefix(target.Base, "http://")}, BearerToken: target.ScrapeToken}
	if !sc.NoRules {
		rules := sc.Rules
		if rules == "" {
			rules = READMERules(t, "README.md")
		}
		CheckRules(t, rules)
		opts.Rules = []string{rules}
	}
	if opts.BearerToken == "" {
		opts.BearerToken = target.Token
	}
	var httpClient *http.Client
	if target.Token != "" {
		httpClient = e2e.Bearer(target.Token)
	} else if sc.Unauthenticated+sc.Malformed > 0 {
		t.Fatal("promtest: a scenario without a token refuses no tokens")
	}
	prom := Start(t, opts)
	mcpURL := target.Base + "/mcp"
	cs := e2e.Connect(t, mcpURL, httpClient)

	for _, c := range sc.Calls {
		for range max(c.Times, 1) {
			if isErr, err := CallTool(t, cs, c.Tool, c.Args); !c.check(t, isErr, err) {
				t.FailNow()
			}
		}
	}
	initMsg := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`
	for range sc.Unauthenticated {
		if resp, _ := e2e.Post(t, mcpURL, initMsg); resp.StatusCode != http.StatusUnauthorized {
			t.Fatalf("no token: HTTP %d", resp.StatusCode)
		}
	}
	for range sc.Malformed {
		if resp, _ := e2e.Post(t, mcpURL, initMsg, "Authorization", "Bearer not.a.jwt"); resp.StatusCode != http.StatusUnauthorized {
			t.Fatalf("malformed token: HTTP %d", resp.StatusCode)
		}
	}
	want := sc.Implied()
	for q, v := range sc.Expect {
		want[q] = v
	}
	prom.Expect(t, sc.queries(want))

	failed, halt := 0, func() {}
	if sc.Stop != nil {
		if sc.StopTimeout > 0 {
			prom.Timeout = sc.StopTimeout
		}
		if err := sc.Stop(); err != nil {
			t.Fatal(err)
		}
		// The calls go on, as a client's would, until the alerts are
		// active: a rate needs the failures to keep coming across scrapes.
		f := sc.Failing
		f.Want = ToolError
		stop, done := make(chan struct{}), make(chan struct{})
		go func() {
			defer close(done)
			for {
				select {
				case <-stop:
					return
				case <-time.After(200 * time.Millisecond):
					isErr, err := CallTool(t, cs, f.Tool, f.Args)
					f.check(t, isErr, err)
					failed++
				}
			}
		}()
		halt = sync.OnceFunc(func() { close(stop); <-done })
		defer halt() // a failed wait ends the calls too
	}
	for _, a := range sc.Alerts {
		got := prom.WaitAlert(t, a.Name, a.Labels)
		t.Logf("%s is %s: %v", a.Name, got.State, got.Labels)
	}
	halt()
	if sc.After != nil {
		prom.Expect(t, sc.queries(sc.After(failed)))
	}
	return &Running{Base: target.Base, Client: cs, Prom: prom}
}

// Implied returns the queries every scenario's calls imply, "{S" as in
// Expect: per tool and outcome (ok, tool_error), mcpfleet_tool_calls_total
// and the tool's duration count and +Inf bucket; the tools/call requests
// and those that ended in a protocol error; the refused tokens by reason;
// and mcpfleet_build_info.
func (sc Scenario) Implied() map[string]float64 {
	want := map[string]float64{`mcpfleet_build_info{S}`: 1}
	calls, protocolErrors := 0, 0
	for _, c := range sc.Calls {
		n := max(c.Times, 1)
		calls += n
		if c.Want == ProtocolError {
			protocolErrors += n
			continue
		}
		want[fmt.Sprintf(`sum(mcpfleet_tool_calls_total{S,tool=%q,outcome=%q})`, c.Tool, c.Want)] += float64(n)
		want[fmt.Sprintf(`sum(mcpfleet_tool_call_duration_seconds_count{S,tool=%q})`, c.Tool)] += float64(n)
		want[fmt.Sprintf(`sum(mcpfleet_tool_call_duration_seconds_bucket{S,tool=%q,le="+Inf"})`, c.Tool)] += float64(n)
	}
	if calls > 0 {
		want[`sum(mcpfleet_requests_total{S,method="tools/call"})`] = float64(calls)
		want[`sum(mcpfleet_requests_total{S,method="tools/call",outcome="error"}) or vector(0)`] = float64(protocolErrors)
	}
	if sc.Unauthenticated > 0 {
		want[`sum(mcpfleet_auth_failures_total{S,reason="missing"})`] = float64(sc.Unauthenticated)
	}
	if sc.Malformed > 0 {
		want[`sum(mcpfleet_auth_failures_total{S,reason="malformed"})`] = float64(sc.Malformed)
	}
	return want
}

// queries puts the server's label in place of {S, and {S}.
func (sc Scenario) queries(in map[string]float64) map[string]float64 {
	out := make(map[string]float64, len(in))
	label := fmt.Sprintf("server=%q", sc.Server)
	for q, v := range in {
		q = strings.ReplaceAll(q, "{S,", "{"+label+",")
		q = strings.ReplaceAll(q, "{S}", "{"+label+"}")
		out[q] = v
	}
	return out
}

// NoNewSeries checks that distinct inputs add no series: it runs round(-1)
// (every label combination the rounds make, once), scrapes metricsURL,
// runs round(0) … round(rounds-1), scrapes again and fails the test for
// each series the rounds added. It returns the last scrape.
func NoNewSeries(t testing.TB, metricsURL string, rounds int, round func(i int)) map[string]float64 {
	t.Helper()
	round(-1)
	before := Scrape(t, metricsURL)
	for i := range rounds {
		round(i)
	}
	after := Scrape(t, metricsURL)
	for k := range after {
		if _, ok := before[k]; !ok {
			t.Errorf("new series after %d rounds of distinct calls: %s", rounds, k)
		}
	}
	return after
}
