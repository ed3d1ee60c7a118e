package approval

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/mcpfleet/mcpfleet/shared/state"
	"github.com/mcpfleet/mcpfleet/shared/state/redistest"
)

var alice = Caller{Kind: CallerOAuth, Issuer: "https://idp.example.com/realms/main", Subject: "alice"}

func binding() Binding {
	return Binding{Tool: "del_server", Target: "unix:///run/haproxy/admin.sock", Caller: alice, Purpose: "confirm",
		Arguments: map[string]any{"backend": "be_app", "server": "app2", "port": 8080.0, "opts": map[string]any{"a": 1.0, "b": []any{"x", true, nil}}}}
}

func reasonOf(t *testing.T, err error) Reason {
	t.Helper()
	var ce *CodeError
	if !errors.As(err, &ce) {
		t.Fatalf("error %v (%T) is not a *CodeError", err, err)
	}
	return ce.Reason
}

// TestRedeemAttacks covers every way a code can be misused: each must be
// refused with the reason that says which check failed, and nothing that is
// the same call spelled differently may be refused.
func TestRedeemAttacks(t *testing.T) {
	now := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)
	codes := NewCodes([]byte(strings.Repeat("k", 32)), 5*time.Minute, nil)
	codes.SetClock(func() time.Time { return now })
	other := NewCodes([]byte(strings.Repeat("z", 32)), 5*time.Minute, nil)
	other.SetClock(func() time.Time { return now })

	issue := func(c *Codes, b Binding) string {
		code, err := c.Issue(b)
		if err != nil {
			t.Fatal(err)
		}
		return code
	}
	mod := func(f func(*Binding)) Binding { b := binding(); f(&b); return b }
	flip := func(code string, i int) string {
		b := []byte(code)
		if b[i] == 'A' {
			b[i] = 'B'
		} else {
			b[i] = 'A'
		}
		return string(b)
	}
	// A payload re-signed with nothing: claims edited to point at another tool.
	edited := func() string {
		code := issue(codes, binding())
		p, sig, _ := strings.Cut(strings.TrimPrefix(code, codePrefix), ".")
		raw, _ := base64.RawURLEncoding.DecodeString(p)
		var cl map[string]any
		json.Unmarshal(raw, &cl)
		cl["t"] = "add_server"
		raw, _ = json.Marshal(cl)
		return codePrefix + base64.RawURLEncoding.EncodeToString(raw) + "." + sig
	}

	tests := []struct {
		name  string
		code  func() string
		use   Binding
		want  Reason // "" = accepted
		clock time.Duration
	}{
		{"same call", func() string { return issue(codes, binding()) }, binding(), "", 0},
		{"same arguments in another key order and number spelling", func() string { return issue(codes, binding()) },
			mod(func(b *Binding) {
				b.Arguments = map[string]any{"opts": map[string]any{"b": []any{"x", true, nil}, "a": json.Number("1.0")}, "port": json.Number("8.08e3"), "server": "app2", "backend": "be_app"}
			}), "", 0},
		{"int and float of one value", func() string { return issue(codes, binding()) },
			mod(func(b *Binding) { b.Arguments["port"] = 8080 }), "", 0},
		{"confirm and dryRun are not part of the call", func() string { return issue(codes, binding()) },
			mod(func(b *Binding) { b.Arguments["confirm"] = "x"; b.Arguments["dryRun"] = false }), "", 0},
		{"another caller", func() string { return issue(codes, binding()) }, mod(func(b *Binding) { b.Caller.Subject = "mallory" }), OtherCaller, 0},
		{"anonymous for a caller's code", func() string { return issue(codes, binding()) }, mod(func(b *Binding) { b.Caller = Caller{Kind: CallerAnonymous} }), OtherCaller, 0},
		{"other argument value", func() string { return issue(codes, binding()) }, mod(func(b *Binding) { b.Arguments["server"] = "app3" }), OtherArguments, 0},
		{"other nested value", func() string { return issue(codes, binding()) }, mod(func(b *Binding) { b.Arguments["opts"] = map[string]any{"a": 2.0, "b": []any{"x", true, nil}} }), OtherArguments, 0},
		{"array order matters", func() string { return issue(codes, binding()) }, mod(func(b *Binding) { b.Arguments["opts"] = map[string]any{"a": 1.0, "b": []any{true, "x", nil}} }), OtherArguments, 0},
		{"extra argument", func() string { return issue(codes, binding()) }, mod(func(b *Binding) { b.Arguments["force"] = true }), OtherArguments, 0},
		{"missing argument", func() string { return issue(codes, binding()) }, mod(func(b *Binding) { delete(b.Arguments, "port") }), OtherArguments, 0},
		{"string for number", func() string { return issue(codes, binding()) }, mod(func(b *Binding) { b.Arguments["port"] = "8080" }), OtherArguments, 0},
		{"null for absent", func() string { return issue(codes, binding()) }, mod(func(b *Binding) { b.Arguments["weight"] = nil }), OtherArguments, 0},
		{"case of a value", func() string { return issue(codes, binding()) }, mod(func(b *Binding) { b.Arguments["server"] = "APP2" }), OtherArguments, 0},
		{"trailing space in a value", func() string { return issue(codes, binding()) }, mod(func(b *Binding) { b.Arguments["server"] = "app2 " }), OtherArguments, 0},
		{"other tool", func() string { return issue(codes, binding()) }, mod(func(b *Binding) { b.Tool = "shutdown_session" }), OtherTool, 0},
		{"other target", func() string { return issue(codes, binding()) }, mod(func(b *Binding) { b.Target = "unix:///run/haproxy/other.sock" }), OtherTarget, 0},
		{"elicitation state used as confirmation", func() string { return issue(codes, mod(func(b *Binding) { b.Purpose = "elicit" })) }, binding(), OtherPurpose, 0},
		{"expired", func() string { return issue(codes, binding()) }, binding(), Expired, 5 * time.Minute},
		{"expired long ago", func() string { return issue(codes, binding()) }, binding(), Expired, 48 * time.Hour},
		{"wrong key", func() string { return issue(other, binding()) }, binding(), Forged, 0},
		{"claims edited, old signature", edited, binding(), Forged, 0},
		{"signature byte flipped", func() string { c := issue(codes, binding()); return flip(c, len(c)-3) }, binding(), Forged, 0},
		{"payload byte flipped", func() string { c := issue(codes, binding()); return flip(c, len(codePrefix)+4) }, binding(), Forged, 0},
		{"truncated signature", func() string { c := issue(codes, binding()); return c[:len(c)-5] }, binding(), Malformed, 0},
		{"truncated to payload", func() string {
			c := issue(codes, binding())
			p, _, _ := strings.Cut(c, "."+strings.Split(c, ".")[2])
			return p
		}, binding(), Malformed, 0},
		{"prefix only", func() string { return codePrefix }, binding(), Malformed, 0},
		{"no prefix", func() string { return strings.TrimPrefix(issue(codes, binding()), codePrefix) }, binding(), Malformed, 0},
		{"true", func() string { return "true" }, binding(), Malformed, 0},
		{"empty", func() string { return "" }, binding(), Malformed, 0},
		{"yes", func() string { return "yes" }, binding(), Malformed, 0},
		{"SQL in code", func() string { return codePrefix + "'; DROP TABLE t; --.x" }, binding(), Malformed, 0},
		{"huge", func() string { return codePrefix + strings.Repeat("A", 1<<16) + "." + strings.Repeat("B", 43) }, binding(), Forged, 0},
		{"unicode", func() string { return codePrefix + "ü.ö" }, binding(), Malformed, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code := tc.code()
			saved := now
			now = now.Add(tc.clock)
			defer func() { now = saved }()
			_, err := codes.Redeem(t.Context(), code, tc.use)
			if tc.want == "" {
				if err != nil {
					t.Fatalf("refused a valid code: %v", err)
				}
				if _, err := codes.Redeem(t.Context(), code, tc.use); reasonOf(t, err) != Used {
					t.Fatalf("second use: %v, want %s", err, Used)
				}
				return
			}
			if err == nil {
				t.Fatalf("accepted; want refusal %q", tc.want)
			}
			if got := reasonOf(t, err); got != tc.want {
				t.Fatalf("reason %q (%v), want %q", got, err, tc.want)
			}
			if !strings.Contains(err.Error(), "call the tool again without confirm") {
				t.Errorf("message does not say what to do: %v", err)
			}
		})
	}
}

// TestRefusedCodeStaysValid: a refused attempt (other arguments) does not
// burn the code for the call it was issued for.
func TestRefusedCodeStaysValid(t *testing.T) {
	codes := NewCodes(RandomSecret(), time.Minute, nil)
	code, _ := codes.Issue(binding())
	b := binding()
	b.Arguments = map[string]any{"backend": "be_other"}
	if _, err := codes.Redeem(t.Context(), code, b); err == nil {
		t.Fatal("accepted other arguments")
	}
	if _, err := codes.Redeem(t.Context(), code, binding()); err != nil {
		t.Fatalf("the right call was refused after a wrong attempt: %v", err)
	}
}

// TestRedeemRace: 50 goroutines race one code; exactly one wins and the
// others are told it was used.
func TestRedeemRace(t *testing.T) {
	for round := 0; round < 20; round++ {
		codes := NewCodes(RandomSecret(), time.Minute, nil)
		code, _ := codes.Issue(binding())
		var wins, used atomic.Int32
		var wg sync.WaitGroup
		start := make(chan struct{})
		for i := 0; i < 50; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				_, err := codes.Redeem(t.Context(), code, binding())
				if err == nil {
					wins.Add(1)
				} else if reasonOf(t, err) == Used {
					used.Add(1)
				}
			}()
		}
		close(start)
		wg.Wait()
		if wins.Load() != 1 || used.Load() != 49 {
			t.Fatalf("round %d: %d winners, %d told used; want 1 and 49", round, wins.Load(), used.Load())
		}
	}
}

func TestPrecondition(t *testing.T) {
	codes := NewCodes(RandomSecret(), time.Minute, nil)
	b := binding()
	b.Precondition = "exists addr=10.0.0.12:8080"
	code, _ := codes.Issue(b)
	cl, err := codes.Redeem(t.Context(), code, b)
	if err != nil {
		t.Fatal(err)
	}
	if !PreconditionMatches(cl.Precondition, "exists addr=10.0.0.12:8080") {
		t.Error("same precondition did not match")
	}
	if PreconditionMatches(cl.Precondition, "exists addr=10.0.0.13:8080") || PreconditionMatches(cl.Precondition, "") {
		t.Error("changed precondition matched")
	}
	if !PreconditionMatches("", "anything") {
		t.Error("a code without precondition must not require one")
	}
}

func TestCanonicalRejectsNonFinite(t *testing.T) {
	if _, err := CanonicalArguments(map[string]any{"x": json.Number("1e")}); err == nil {
		t.Error("accepted a malformed number")
	}
}

func TestPolicyNeeds(t *testing.T) {
	for _, tc := range []struct {
		p                   Policy
		read, change, destr bool
	}{
		{Destructive, false, false, true}, {Change, false, true, true}, {None, false, false, false}, {"", false, false, true},
	} {
		if tc.p.Needs("read") != tc.read || tc.p.Needs("change") != tc.change || tc.p.Needs("destructive") != tc.destr {
			t.Errorf("policy %q: wrong classes", tc.p)
		}
	}
}

// TestCallerComparedAsValues: a code bound to alice at her issuer is
// refused for every other identity, however its fields are spelled to look
// like hers (the old formatted "oauth:<sub> user=<name>" let a subject
// "alice user=alice" pass); an OAuth caller without a subject gets no code.
func TestCallerComparedAsValues(t *testing.T) {
	codes := NewCodes(RandomSecret(), time.Minute, nil)
	iss := alice.Issuer
	oauth := func(iss, sub string) Caller { return Caller{Kind: CallerOAuth, Issuer: iss, Subject: sub} }
	hostile := []struct {
		name string
		c    Caller
	}{
		{"other subject", oauth(iss, "bob")},
		{"subject with a space and user=", oauth(iss, "alice user=alice")},
		{"subject spelled as the old identity", oauth(iss, "oauth:alice user=alice")},
		{"subject with email=", oauth(iss, "alice email=alice@example.com")},
		{"subject with trailing space", oauth(iss, "alice ")},
		{"subject with leading space", oauth(iss, " alice")},
		{"subject quoted", oauth(iss, `"alice"`)},
		{"subject single-quoted", oauth(iss, `'alice'`)},
		{"subject with newline", oauth(iss, "alice\n")},
		{"subject with CRLF and a forged record", oauth(iss, "alice\r\nuser=alice")},
		{"subject with NUL", oauth(iss, "alice\x00")},
		{"subject NUL-prefixed", oauth(iss, "\x00alice")},
		{"subject with a tab", oauth(iss, "alice\t")},
		{"Cyrillic a look-alike", oauth(iss, "\u0430lice")},
		{"fullwidth look-alike", oauth(iss, "\uff41lice")},
		{"zero-width joiner", oauth(iss, "al\u200dice")},
		{"combining accent", oauth(iss, "alice\u0301")},
		{"upper case", oauth(iss, "Alice")},
		{"invalid UTF-8", oauth(iss, "alice\xff")},
		{"same subject, another issuer", oauth("https://evil.example.com/", "alice")},
		{"same subject, issuer with trailing slash", oauth(iss+"/", "alice")},
		{"same subject, issuer upper-cased", oauth(strings.ToUpper(iss), "alice")},
		{"same subject, no issuer", oauth("", "alice")},
		{"issuer and subject shifted", oauth(iss+"a", "lice")},
		{"issuer and subject shifted the other way", oauth(iss[:len(iss)-1], iss[len(iss)-1:]+"alice")},
		{"subject holding the issuer", oauth("", iss+"alice")},
		{"local user alice", Caller{Kind: CallerLocal, Subject: "alice"}},
		{"anonymous", Caller{Kind: CallerAnonymous}},
		{"kind spelled in the subject", Caller{Kind: CallerLocal, Subject: "oauth:alice"}},
	}
	for _, h := range hostile {
		t.Run(h.name, func(t *testing.T) {
			code, err := codes.Issue(binding())
			if err != nil {
				t.Fatal(err)
			}
			b := binding()
			b.Caller = h.c
			if _, err := codes.Redeem(t.Context(), code, b); reasonOf(t, err) != OtherCaller {
				t.Fatalf("%+q redeemed alice's code: %v", h.c, err)
			}
			if _, err := codes.Redeem(t.Context(), code, binding()); err != nil {
				t.Fatalf("alice's own code after the attempt: %v", err)
			}
		})
	}
	for _, c := range []Caller{oauth(iss, ""), oauth(iss, "  "), oauth("", ""), {}} {
		b := binding()
		b.Caller = c
		if _, err := codes.Issue(b); err == nil {
			t.Errorf("issued a code to %+q", c)
		}
		code, _ := codes.Issue(binding())
		if _, err := codes.Redeem(t.Context(), code, b); err == nil {
			t.Errorf("%+q redeemed alice's code", c)
		}
	}
}

// TestRedeemAfterStoreReset (issue 30): with a Redis ledger (two
// replicas), a code used before the store lost its records (FLUSHALL, as
// a restart without persistence) is refused on both, naming MCP_STATE_URL
// and the reset, and so is one issued then but never used; a code issued
// after it carries the new generation and works once.
func TestRedeemAfterStoreReset(t *testing.T) {
	srv := redistest.Start(t, false)
	secret := RandomSecret()
	replica := func(name string) *Codes {
		r, err := state.OpenRedis(srv.URL() + "?client_name=" + name)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { r.Close() })
		if err := r.Ping(t.Context()); err != nil { // as /readyz does
			t.Fatal(err)
		}
		return NewCodes(secret, time.Minute, r.Scoped("approvaltest"))
	}
	a, b := replica("a"), replica("b")
	used, err := a.Issue(binding())
	if err != nil {
		t.Fatal(err)
	}
	unused, _ := a.Issue(binding())
	if _, err := a.Redeem(t.Context(), used, binding()); err != nil {
		t.Fatalf("first use: %v", err)
	}
	raw := redis.NewClient(&redis.Options{Addr: fmt.Sprintf("127.0.0.1:%d", srv.Port)})
	defer raw.Close()
	if err := raw.FlushAll(t.Context()).Err(); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		codes *Codes
		code  string
	}{{b, used}, {a, used}, {b, unused}} {
		_, err := c.codes.Redeem(t.Context(), c.code, binding())
		if reasonOf(t, err) != Reset || !strings.Contains(err.Error(), "MCP_STATE_URL") || !strings.Contains(err.Error(), "lost its records at") {
			t.Fatalf("a code issued before the reset: %v, want refused naming the reset", err)
		}
	}
	fresh, _ := b.Issue(binding()) // b saw the new generation just above
	if _, err := a.Redeem(t.Context(), fresh, binding()); err != nil {
		t.Fatalf("a code issued after the reset: %v", err)
	}
	if _, err := b.Redeem(t.Context(), fresh, binding()); reasonOf(t, err) != Used {
		t.Fatalf("a code issued after the reset, used again: %v", err)
	}
}
