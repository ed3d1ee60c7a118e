package serve

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpfleet/mcpfleet/shared/httpauth"
	"github.com/mcpfleet/mcpfleet/shared/httpauth/idptest"
)

const sessionSecret = "0123456789abcdef0123456789abcdef-session-secret"

// identities is a server configuration and tokens of distinct callers:
// alice opens sessions, the others attack them.
type identities struct {
	name    string
	cfg     httpauth.Config
	alice   string
	attacks map[string]string // who → token
}

func sessionSuites(t *testing.T) []identities {
	idp := idptest.New(t, idptest.Options{})
	const aud = "api://mcp"
	oidcTok := func(sub string) string { c := idp.Claims(aud); c["sub"] = sub; return idp.Sign(c) }
	exp := time.Now().Add(time.Hour).Unix()
	hmacTok := func(iss, sub string) string {
		c := map[string]any{"sub": sub, "aud": "x", "exp": exp}
		if iss != "" {
			c["iss"] = iss
		}
		return idptest.SignHS256(sessionSecret, c)
	}
	return []identities{
		{
			name:  "oidc",
			cfg:   httpauth.Config{Provider: "oidc", Issuer: idp.Issuer(), Audience: aud, HTTPClient: idp.HTTPClient()},
			alice: oidcTok("alice"),
			attacks: map[string]string{
				"bob":                       oidcTok("bob"),
				"subject with a suffix":     oidcTok("alice "),
				"subject in another case":   oidcTok("Alice"),
				"subject with a NUL suffix": oidcTok("alice\x00"),
			},
		},
		{
			name:  "hmac",
			cfg:   httpauth.Config{Provider: "hmac", JWTSecret: sessionSecret, Audience: "x"},
			alice: hmacTok("https://idp-a.example", "alice"),
			attacks: map[string]string{
				"bob":                          hmacTok("https://idp-a.example", "bob"),
				"alice at another issuer":      hmacTok("https://idp-b.example", "alice"),
				"alice without an issuer":      hmacTok("", "alice"),
				"issuer with subject appended": hmacTok("https://idp-a.examplealice", "x"),
				"issuer ending in the subject": hmacTok("https://idp-a.examplea", "lice"),
				"subject carrying the issuer":  hmacTok("", "https://idp-a.examplealice"),
				"subject carrying the prefix":  hmacTok("", "21:https://idp-a.examplealice"),
			},
		},
	}
}

// client is a caller with a bearer token.
type client struct {
	t     *testing.T
	base  string
	token string
}

func (c client) do(method, path, session, body string, extra ...string) (*http.Response, string) {
	c.t.Helper()
	req, _ := http.NewRequest(method, c.base+path, strings.NewReader(body))
	if body == "" {
		req.Body = http.NoBody
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", "Bearer "+c.token)
	if session != "" {
		req.Header.Set("Mcp-Session-Id", session)
	}
	for i := 0; i+1 < len(extra); i += 2 {
		req.Header.Add(extra[i], extra[i+1])
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	resp, err := http.DefaultClient.Do(req.WithContext(ctx))
	if err != nil {
		c.t.Fatalf("%s %s: %v", method, path, err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	return resp, string(b)
}

// stream is an open SSE response whose data lines are collected.
type stream struct {
	mu     sync.Mutex
	events []string
	cancel context.CancelFunc
	first  chan string // the first data line
}

func (c client) open(path, session string) (*stream, *http.Response) {
	c.t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, c.base+path, nil)
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Authorization", "Bearer "+c.token)
	if session != "" {
		req.Header.Set("Mcp-Session-Id", session)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		cancel()
		c.t.Fatalf("GET %s: %v", path, err)
	}
	s := &stream{cancel: cancel, first: make(chan string, 1)}
	c.t.Cleanup(func() { cancel(); resp.Body.Close() })
	go func() {
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			if d, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
				s.mu.Lock()
				s.events = append(s.events, d)
				if len(s.events) == 1 {
					s.first <- d
				}
				s.mu.Unlock()
			}
		}
	}()
	return s, resp
}

func (s *stream) data() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.events...)
}

// waitFor waits until an event containing want arrived and returns every
// event so far.
func (s *stream) waitFor(t *testing.T, want string) []string {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		for _, e := range s.data() {
			if strings.Contains(e, want) {
				return s.data()
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("no event with %q; got %q", want, s.data())
	return nil
}

const (
	toolsCall = `{"jsonrpc":"2.0","id":"x-call","method":"tools/call","params":{"name":"whoami","arguments":{}}}`
	toolsList = `{"jsonrpc":"2.0","id":"x-list","method":"tools/list"}`
	pingMsg   = `{"jsonrpc":"2.0","id":"x-ping","method":"ping"}`
	cancelMsg = `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"a-call"}}`
	answerMsg = `{"jsonrpc":"2.0","id":1,"result":{}}`
	batchMsg  = `[` + toolsCall + `]`
	initMsg   = `{"jsonrpc":"2.0","id":"x-init","method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`
)

// TestStreamableSessionBelongsToItsCaller (issue 12 item 7): on the real
// HTTP surface with OAuth (OIDC and hmac), every way another caller can
// name alice's streamable HTTP session gets 404; the tool never runs for
// them, nothing arrives on alice's listening stream, alice's session keeps
// working, and ids never issued or ended are 404 for alice too.
func TestStreamableSessionBelongsToItsCaller(t *testing.T) {
	for _, suite := range sessionSuites(t) {
		t.Run(suite.name, func(t *testing.T) {
			p := newInproc(t, Config{}, &suite.cfg)
			alice := client{t, p.base, suite.alice}
			resp, body := alice.do(http.MethodPost, "/mcp", "", initMsg)
			sa := resp.Header.Get("Mcp-Session-Id")
			if resp.StatusCode != http.StatusOK || sa == "" {
				t.Fatalf("alice's initialize: HTTP %d %q %s", resp.StatusCode, sa, body)
			}
			alice.do(http.MethodPost, "/mcp", sa, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
			listen, lresp := alice.open("/mcp", sa)
			if lresp.StatusCode != http.StatusOK {
				t.Fatalf("alice's listening stream: HTTP %d", lresp.StatusCode)
			}
			random, _, _ := strings.Cut(strings.TrimPrefix(sa, sessionPrefix), ".")
			variants := 0
			for who, token := range suite.attacks {
				mallory := client{t, p.base, token}
				r, _ := mallory.do(http.MethodPost, "/mcp", "", initMsg)
				sb := r.Header.Get("Mcp-Session-Id")
				_, bmac, _ := strings.Cut(strings.TrimPrefix(sb, sessionPrefix), ".")
				type attempt struct {
					name, method, session, body string
					extra                       []string
				}
				attempts := []attempt{
					{"tools/call", http.MethodPost, sa, toolsCall, nil},
					{"tools/list", http.MethodPost, sa, toolsList, nil},
					{"ping", http.MethodPost, sa, pingMsg, nil},
					{"cancel alice's request", http.MethodPost, sa, cancelMsg, nil},
					{"answer a server request", http.MethodPost, sa, answerMsg, nil},
					{"batch", http.MethodPost, sa, batchMsg, nil},
					{"initialize naming the session", http.MethodPost, sa, initMsg, nil},
					{"listen", http.MethodGet, sa, "", nil},
					{"delete", http.MethodDelete, sa, "", nil},
					{"id in upper case", http.MethodPost, strings.ToUpper(sa), toolsCall, nil},
					{"id with a suffix", http.MethodPost, sa + "x", toolsCall, nil},
					{"id without its MAC", http.MethodPost, sessionPrefix + random, toolsCall, nil},
					{"alice's random with mallory's MAC", http.MethodPost, sessionPrefix + random + "." + bmac, toolsCall, nil},
					{"own id then alice's", http.MethodPost, sb, toolsCall, []string{"Mcp-Session-Id", sa}},
					{"alice's id then own", http.MethodPost, sa, toolsCall, []string{"Mcp-Session-Id", sb}},
					{"alice's id as a second header", http.MethodGet, sb, "", []string{"Mcp-Session-Id", sa}},
				}
				for _, a := range attempts {
					resp, body := mallory.do(a.method, "/mcp", a.session, a.body, a.extra...)
					variants++
					if resp.StatusCode != http.StatusNotFound {
						t.Errorf("%s, %s: HTTP %d %s, want 404", who, a.name, resp.StatusCode, body)
					} else if !strings.Contains(body, "session not found") {
						t.Errorf("%s, %s: body %q", who, a.name, body)
					}
				}
			}
			// Ids this server never issued: 404 for alice too.
			for _, id := range []string{"mcp-session-6f1c1f2e-8c9b-4f0e-9a34-1d2b3c4d5e6f", "x", sa[:len(sa)-1], strings.Replace(sa, ".", "", 1)} {
				if resp, body := alice.do(http.MethodPost, "/mcp", id, toolsCall); resp.StatusCode != http.StatusNotFound {
					t.Errorf("unknown id %q: HTTP %d %s", id, resp.StatusCode, body)
				}
				variants++
			}
			if n := p.calls.Load(); n != 0 {
				t.Fatalf("the tool ran %d times for other callers", n)
			}
			// Alice's session still works, and her listening stream saw
			// nothing of the attempts.
			if resp, body := alice.do(http.MethodPost, "/mcp", sa, toolsCall); resp.StatusCode != http.StatusOK || !strings.Contains(body, "alice") {
				t.Fatalf("alice's own call: HTTP %d %s", resp.StatusCode, body)
			}
			if got := listen.data(); len(got) != 0 {
				t.Errorf("alice's listening stream received %q", got)
			}
			// Ended sessions are 404, for alice too.
			if resp, body := alice.do(http.MethodDelete, "/mcp", sa, ""); resp.StatusCode != http.StatusOK {
				t.Fatalf("alice's DELETE: HTTP %d %s", resp.StatusCode, body)
			}
			if resp, _ := alice.do(http.MethodPost, "/mcp", sa, toolsCall); resp.StatusCode != http.StatusNotFound {
				t.Errorf("alice's ended session: HTTP %d, want 404", resp.StatusCode)
			}
			if n := p.calls.Load(); n != 1 {
				t.Errorf("the tool ran %d times, want 1 (alice's call)", n)
			}
			t.Logf("%d hostile session uses refused", variants)
		})
	}
}

// TestSSESessionBelongsToItsCaller (issue 12 item 7, legacy SSE): another
// caller's POST to alice's /message?sessionId= gets 404 in every form; the
// tool never runs and nothing is delivered on alice's stream: the next
// event there is the answer to alice's own ping.
func TestSSESessionBelongsToItsCaller(t *testing.T) {
	for _, suite := range sessionSuites(t) {
		t.Run(suite.name, func(t *testing.T) {
			p := newInproc(t, Config{}, &suite.cfg)
			alice := client{t, p.base, suite.alice}
			sse, resp := alice.open("/sse", "")
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("alice's SSE stream: HTTP %d", resp.StatusCode)
			}
			var endpoint string
			select {
			case endpoint = <-sse.first:
			case <-time.After(10 * time.Second):
				t.Fatal("no endpoint event")
			}
			u, err := url.Parse(endpoint)
			if err != nil {
				t.Fatal(err)
			}
			sa := u.Query().Get("sessionId")
			msg := func(q string) string { return "/message?" + q }
			alice.do(http.MethodPost, msg("sessionId="+url.QueryEscape(sa)), "", initMsg)
			sse.waitFor(t, `"x-init"`)
			alice.do(http.MethodPost, msg("sessionId="+url.QueryEscape(sa)), "", `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
			variants := 0
			for who, token := range suite.attacks {
				mallory := client{t, p.base, token}
				own, _ := mallory.open("/sse", "")
				var sb string
				select {
				case e := <-own.first:
					ou, _ := url.Parse(e)
					sb = ou.Query().Get("sessionId")
				case <-time.After(10 * time.Second):
					t.Fatal("no endpoint event for mallory")
				}
				enc := ""
				for _, b := range []byte(sa) {
					enc += "%" + strings.ToUpper(string("0123456789abcdef"[b>>4])+string("0123456789abcdef"[b&15]))
				}
				type attempt struct{ name, query, body string }
				q := url.QueryEscape
				attempts := []attempt{
					{"tools/call", "sessionId=" + q(sa), toolsCall},
					{"tools/list", "sessionId=" + q(sa), toolsList},
					{"ping", "sessionId=" + q(sa), pingMsg},
					{"cancel alice's request", "sessionId=" + q(sa), cancelMsg},
					{"answer a server request", "sessionId=" + q(sa), answerMsg},
					{"initialize", "sessionId=" + q(sa), initMsg},
					{"percent-encoded id", "sessionId=" + enc, toolsCall},
					{"encoded parameter name", "session%49d=" + q(sa), toolsCall},
					{"id in upper case", "sessionId=" + q(strings.ToUpper(sa)), toolsCall},
					{"own id then alice's", "sessionId=" + q(sb) + "&sessionId=" + q(sa), toolsCall},
					{"alice's id then own", "sessionId=" + q(sa) + "&sessionId=" + q(sb), toolsCall},
					{"no id", "", toolsCall},
					{"empty id", "sessionId=", toolsCall},
					{"own id with alice's in another parameter", "sessionId=" + q(sb) + "&sessionid=" + q(sa), ""},
				}
				for _, a := range attempts {
					if a.body == "" {
						continue // would be accepted: mallory's own session
					}
					resp, body := mallory.do(http.MethodPost, msg(a.query), "", a.body)
					variants++
					if resp.StatusCode != http.StatusNotFound {
						t.Errorf("%s, %s: HTTP %d %s, want 404", who, a.name, resp.StatusCode, body)
					}
				}
				// Alice's SSE id on the streamable transport.
				if resp, _ := mallory.do(http.MethodPost, "/mcp", sa, toolsCall); resp.StatusCode != http.StatusNotFound {
					t.Errorf("%s: alice's SSE id as Mcp-Session-Id: HTTP %d", who, resp.StatusCode)
				}
				variants++
				own.cancel()
			}
			if n := p.calls.Load(); n != 0 {
				t.Fatalf("the tool ran %d times for other callers", n)
			}
			// The next event on alice's stream is her own answer, and
			// nothing else follows.
			before := len(sse.data())
			alice.do(http.MethodPost, msg("sessionId="+url.QueryEscape(sa)), "", `{"jsonrpc":"2.0","id":"a-ping","method":"ping"}`)
			got := sse.waitFor(t, `"a-ping"`)
			time.Sleep(200 * time.Millisecond)
			if after := sse.data()[before:]; len(after) != 1 || !strings.Contains(after[0], `"a-ping"`) || len(got) != before+1 {
				t.Errorf("alice's stream after the attempts: %q", after)
			}
			// Once alice's stream is closed, her id is unknown, for her too.
			sse.cancel()
			deadline := time.Now().Add(5 * time.Second)
			for {
				resp, _ := alice.do(http.MethodPost, msg("sessionId="+url.QueryEscape(sa)), "", pingMsg)
				if resp.StatusCode == http.StatusNotFound {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("alice's closed SSE session: HTTP %d, want 404", resp.StatusCode)
				}
				time.Sleep(20 * time.Millisecond)
			}
			t.Logf("%d hostile session uses refused", variants)
		})
	}
}
