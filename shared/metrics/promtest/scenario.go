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
	// Anonymous serves without OAuth: no token on calls and scrapes;
	// Unauthenticated and Malformed must be 0.
	Anonymous bool
	// Rules are the alert rules Prometheus evaluates, checked with promtool
	// first; empty means the README's (READMERules of README.md).
	Rules string
	// Calls are made in order before Expect is asserted.
	Calls []Call
	// Unauthenticated and Malformed are how many initialize requests are
	// sent without a token and with a malformed one; each must get 401.
	Unauthenticated, Malformed int
	// Expect are PromQL queries and the values they must reach.
	Expect map[string]float64
	// Stop, when set, takes the back end away after Expect holds. Failing
	// (whose Want must then be ToolError, as it is when zero) is then
	// called every 200 ms, as a client would, until every alert of Alerts
	// is active.
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

// Run drives sc against bin (e2e.Build's output) and fails the test at the
// first difference; the server, client and Prometheus it returns keep
// running until the test ends.
func Run(t testing.TB, bin string, sc Scenario) *Running {
	t.Helper()
	Binary(t, "prometheus")
	rules := sc.Rules
	if rules == "" {
		rules = READMERules(t, "README.md")
	}
	CheckRules(t, rules)
	env := sc.Env
	var opts Options
	var httpClient *http.Client
	if !sc.Anonymous {
		env = append(append([]string(nil), env...), e2e.OAuthEnv...)
		opts.BearerToken = e2e.OAuthToken("prometheus")
		httpClient = e2e.Bearer(e2e.OAuthToken("alice"))
	} else if sc.Unauthenticated+sc.Malformed > 0 {
		t.Fatal("promtest: an Anonymous scenario refuses no tokens")
	}
	srv := e2e.StartHTTP(t, bin, env)
	opts.Targets = []string{strings.TrimPrefix(srv.Base, "http://")}
	opts.Rules = []string{rules}
	prom := Start(t, opts)
	cs := e2e.Connect(t, srv.MCPURL(), httpClient)

	for _, c := range sc.Calls {
		for range max(c.Times, 1) {
			if isErr, err := CallTool(t, cs, c.Tool, c.Args); !c.check(t, isErr, err) {
				t.FailNow()
			}
		}
	}
	initMsg := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`
	for range sc.Unauthenticated {
		if resp, _ := e2e.Post(t, srv.MCPURL(), initMsg); resp.StatusCode != http.StatusUnauthorized {
			t.Fatalf("no token: HTTP %d", resp.StatusCode)
		}
	}
	for range sc.Malformed {
		if resp, _ := e2e.Post(t, srv.MCPURL(), initMsg, "Authorization", "Bearer not.a.jwt"); resp.StatusCode != http.StatusUnauthorized {
			t.Fatalf("malformed token: HTTP %d", resp.StatusCode)
		}
	}
	prom.Expect(t, sc.queries(sc.Expect))

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
	return &Running{Server: srv, Client: cs, Prom: prom}
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
