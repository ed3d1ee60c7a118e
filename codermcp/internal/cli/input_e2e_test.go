package cli

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpfleet/mcpfleet/codermcp/internal/codertest/harness"
)

// e2eClient is a Client on the real CLI against a codertest endpoint that
// counts the processes it starts.
func e2eClient(t *testing.T) (*Client, *harness.Harness, *atomic.Int32) {
	t.Helper()
	h := harness.New(t)
	var started atomic.Int32
	c := &Client{Path: h.CLI, Home: h.Home, Timeout: 3 * time.Minute, Grace: time.Second, Env: append([]string(nil), h.Env...),
		OnStart: func(int) { started.Add(1) }}
	return c, h, &started
}

// runAll runs fn on each value, two at a time (the machine is shared).
func runAll(values []string, fn func(v string)) {
	var wg sync.WaitGroup
	sem := make(chan struct{}, 2)
	for _, v := range values {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			fn(v)
		}()
	}
	wg.Wait()
}

// TestHostilePromptsReachTheModelAsData sends option look-alikes and shell
// syntax as prompts through the real CLI: the model endpoint receives each
// one verbatim as the user's message, and nothing a shell would have done
// happened (no shell is involved between codermcp and the CLI).
func TestHostilePromptsReachTheModelAsData(t *testing.T) {
	t.Parallel()
	c, h, _ := e2eClient(t)
	dir := t.TempDir()
	sentinel := filepath.Join(dir, "PWNED")
	prompts := []string{
		"--help", "-c model=\"other\"", "--config=model_provider=\"openai\"", "-ofoo", "--", "- ", "=",
		"--dangerously-bypass-approvals-and-sandbox -C/", "\u2013\u2013help \u2212c x", "@/etc/passwd ~/x ../..", "multi\nline\r\nprompt",
		"$(touch " + sentinel + ") `touch " + sentinel + "`", "x; touch " + sentinel + " && touch " + sentinel + " | cat > " + sentinel,
	}
	runAll(prompts, func(p string) {
		res, err := c.Exec(context.Background(), ExecRequest{Prompt: p, Dir: dir}, nil)
		if err != nil {
			t.Errorf("prompt %q: %v", p, err)
			return
		}
		if !strings.Contains(res.Text, strings.TrimSpace("reply to: "+p)) {
			t.Errorf("prompt %q: reply %q, want the model's answer to exactly that prompt", p, res.Text)
		}
	})
	for _, p := range prompts {
		found := false
		for _, r := range h.Endpoint.Requests() {
			if r.Prompt == p {
				found = true
			}
		}
		if !found {
			t.Errorf("the endpoint never received the prompt %q verbatim", p)
		}
	}
	if _, err := os.Stat(sentinel); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("%s exists (err %v): shell syntax in a prompt was executed", sentinel, err)
	}
}

// TestHostileReviewValuesReachTheModelAsData passes base, commit and title
// values that git accepts but that look like options or shell syntax: the
// real CLI puts each into the review request it sends the model.
func TestHostileReviewValuesReachTheModelAsData(t *testing.T) {
	t.Parallel()
	c, h, _ := e2eClient(t)
	repo := harness.GitRepo(t)
	sentinel := filepath.Join(repo, "PWNED")
	type tc struct {
		req  ReviewRequest
		want string // what the model must see
	}
	var cases []tc
	for _, b := range []string{"a$(touch${IFS}PWNED)", "x;touch${IFS}PWNED", "\u2010uncommitted", "\u2212c", "a=b", "x=--y", "@", "é/日本"} {
		cases = append(cases, tc{ReviewRequest{Base: b, Dir: repo}, "base branch '" + b + "'"})
	}
	for _, ti := range []string{"--uncommitted", "-c model=\"x\"", "--base=main", "$(touch PWNED)", "\u2014base main", "it's \"quoted\" `x`"} {
		cases = append(cases, tc{ReviewRequest{Commit: "HEAD", Title: ti, Dir: repo}, "commit HEAD (\"" + ti + "\")"})
	}
	for _, co := range []string{"a;b", "=", "HEAD~1^2"} {
		cases = append(cases, tc{ReviewRequest{Commit: co, Dir: repo}, "commit " + co})
	}
	for _, p := range []string{"--uncommitted", "--base=main", "-c x=1"} {
		cases = append(cases, tc{ReviewRequest{Prompt: p, Dir: repo}, p})
	}
	var idx []string
	byKey := map[string]tc{}
	for i, c := range cases {
		k := string(rune('a' + i))
		idx = append(idx, k)
		byKey[k] = c
	}
	var mu sync.Mutex
	runAll(idx, func(k string) {
		tc := byKey[k]
		if err := tc.req.Validate(); err != nil {
			t.Errorf("%+v is refused (%v); the case wants a value git accepts", tc.req, err)
			return
		}
		_, err := c.Review(context.Background(), tc.req, nil)
		mu.Lock()
		defer mu.Unlock()
		if err != nil {
			t.Errorf("review %+v: %v", tc.req, err)
		}
	})
	for _, k := range idx {
		if len(h.Endpoint.RequestsWith(byKey[k].want)) == 0 {
			t.Errorf("review %+v: no request to the model contains %q", byKey[k].req, byKey[k].want)
		}
	}
	if _, err := os.Stat(sentinel); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("%s exists: shell syntax in a review value was executed", sentinel)
	}
}

// TestEqualsFormKeepsOptionLikeValuesAsData runs the real CLI with argv
// built by hand, skipping validation, to show what the --name=value form is
// worth on its own, and that the old two-item form is how the attack worked.
func TestEqualsFormKeepsOptionLikeValuesAsData(t *testing.T) {
	t.Parallel()
	c, h, _ := e2eClient(t)
	repo := harness.GitRepo(t)
	ctx := context.Background()
	caps, err := c.Caps(ctx)
	if err != nil {
		t.Fatal(err)
	}
	review := []string{"exec", "--cd=" + repo, "review", "--json", "--skip-git-repo-check"}
	data := []struct {
		args []string
		want string
	}{
		{[]string{"--base=--uncommitted"}, "base branch '--uncommitted'"},
		{[]string{"--base=-c"}, "base branch '-c'"},
		{[]string{"--commit=--uncommitted"}, "commit --uncommitted"},
		{[]string{"--commit=HEAD", "--title=--base=main"}, "commit HEAD (\"--base=main\")"},
	}
	for _, d := range data {
		if _, err := c.run(ctx, Command{Path: c.Path, Args: append(append([]string{}, review...), d.args...), Dir: repo, JSON: caps.JSON}, nil); err != nil {
			t.Errorf("%q: %v", d.args, err)
		}
		if len(h.Endpoint.RequestsWith(d.want)) == 0 {
			t.Errorf("%q: the model never saw %q", d.args, d.want)
		}
	}
	// The old form: "--base" then the value as its own item. The CLI takes
	// "--uncommitted" as an option, fails to parse, and nothing reaches the
	// model.
	before := len(h.Endpoint.Requests())
	_, err = c.run(ctx, Command{Path: c.Path, Args: append(append([]string{}, review...), "--base", "--uncommitted"), Dir: repo, JSON: caps.JSON}, nil)
	var ce *Error
	if !errors.As(err, &ce) || !strings.Contains(ce.Cause, "--base") {
		t.Errorf("old form --base --uncommitted: %v; want the CLI's usage error", err)
	}
	if n := len(h.Endpoint.Requests()); n != before {
		t.Errorf("old form reached the model (%d requests)", n-before)
	}
}

// TestRefusedValuesStartNoProcess: every refused value is refused by the
// Client before anything runs, not even the version probe.
func TestRefusedValuesStartNoProcess(t *testing.T) {
	t.Parallel()
	c, h, started := e2eClient(t)
	ctx := context.Background()
	var n int
	for _, v := range hostile {
		reqs := []ReviewRequest{{Base: v}, {Commit: v}, {Commit: "HEAD", Title: v}}
		for _, r := range reqs {
			if r.Validate() == nil {
				continue
			}
			n++
			if _, err := c.Review(ctx, r, nil); err == nil {
				t.Errorf("Review(%+v) ran", r)
			}
		}
		for _, r := range []ExecRequest{{Prompt: "p", Model: v}, {Prompt: "p", ResumeID: v}, {Prompt: v + "\x00"}, {Prompt: "-"}, {Prompt: "p", Dir: v}} {
			if r.Validate() == nil {
				continue
			}
			n++
			if _, err := c.Exec(ctx, r, nil); err == nil {
				t.Errorf("Exec(%+v) ran", r)
			}
		}
	}
	long := strings.Repeat("x", MaxArgBytes+1)
	if _, err := c.Exec(ctx, ExecRequest{Prompt: long}, nil); err == nil {
		t.Error("a prompt over MAX_ARG_STRLEN ran")
	}
	t.Logf("%d refused requests", n+1)
	c.mu.Lock()
	probed := c.caps != nil
	c.mu.Unlock()
	if started.Load() != 0 || probed || len(h.Endpoint.Requests()) != 0 || len(harness.Leftovers(h.Marker)) != 0 {
		t.Errorf("refused requests started %d runs (version probed: %v), %d model requests", started.Load(), probed, len(h.Endpoint.Requests()))
	}
}
