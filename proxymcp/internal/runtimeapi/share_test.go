package runtimeapi_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpfleet/mcpfleet/proxymcp/internal/haproxytest"
	"github.com/mcpfleet/mcpfleet/proxymcp/internal/runtimeapi"
)

// TestReadSharesOnlyInFlightAnswers: identical reads made while one is on
// its way get its answer (one exchange); a read after the answer arrived
// sends again (nothing is cached); different commands and Execute (the
// path of writes) never share; a caller that gives up does not take the
// answer from those still waiting; when all give up, the next read starts
// afresh. The relay holds HAProxy's answers back, so "on its way" is a
// state the test controls, not a timing guess.
func TestReadSharesOnlyInFlightAnswers(t *testing.T) {
	h := haproxytest.Run(t, haproxytest.Options{})
	type call struct {
		out string
		err error
	}
	for _, tc := range []struct {
		name string
		// callers, each with its command, whether it reads (else
		// Execute) and whether it gives up before the answer.
		cmds    []string
		execute []bool
		giveUp  []bool
		// want: how many times each command reaches the socket.
		want map[string]int
	}{
		{name: "identical reads share", cmds: []string{"show info", "show info", "show info", "show info", "show info"}, want: map[string]int{"show info": 1}},
		{name: "different reads do not", cmds: []string{"show info", "show stat", "show info", "show stat"}, want: map[string]int{"show info": 1, "show stat": 1}},
		{name: "execute never shares", cmds: []string{"show info", "show info", "show info"}, execute: []bool{true, true, false}, want: map[string]int{"show info": 3}},
		{name: "the first caller gives up, the others get the answer", cmds: []string{"show info", "show info", "show info"}, giveUp: []bool{true, false, false}, want: map[string]int{"show info": 1}},
		{name: "a later caller gives up, the others get the answer", cmds: []string{"show info", "show info", "show info"}, giveUp: []bool{false, false, true}, want: map[string]int{"show info": 1}},
		{name: "case and spaces are different commands", cmds: []string{"show info", "show  info", "show info "}, execute: nil, want: map[string]int{"show info": 1, "show  info": 1, "show info ": 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			relay := newRecordingRelay(t, h.Socket)
			c := &runtimeapi.Client{Network: "unix", Address: relay.path, Timeout: 30 * time.Second, MaxConns: 4}
			defer c.Close()
			// Warm one connection (prompt mode), then hold the answers.
			if _, err := c.Execute(context.Background(), "show version"); err != nil {
				t.Fatal(err)
			}
			base := relay.sentText()
			relay.hold()
			got := make([]call, len(tc.cmds))
			var wg sync.WaitGroup
			cancels := make([]context.CancelFunc, len(tc.cmds))
			for i, cmd := range tc.cmds {
				ctx, cancel := context.WithCancel(context.Background())
				cancels[i] = cancel
				defer cancel()
				wg.Add(1)
				go func() {
					defer wg.Done()
					if i < len(tc.execute) && tc.execute[i] {
						got[i].out, got[i].err = c.Execute(ctx, cmd)
					} else {
						got[i].out, got[i].err = c.Read(ctx, cmd)
					}
				}()
				// The first caller's command reaches the socket before the
				// next caller starts: the others start while it is on its
				// way (or, for Execute, queue or open their own).
				if i == 0 {
					relay.waitSent(t, cmd+"\n", strings.Count(base, cmd+"\n")+1)
				}
			}
			// Every reader has joined (or started) its read before anyone
			// gives up or any answer arrives.
			readers := map[string]int{}
			for i, cmd := range tc.cmds {
				if i >= len(tc.execute) || !tc.execute[i] {
					readers[cmd]++
				}
			}
			for cmd, n := range readers {
				for deadline := time.Now().Add(10 * time.Second); runtimeapi.Waiting(c, cmd) < n; time.Sleep(time.Millisecond) {
					if time.Now().After(deadline) {
						t.Fatalf("%d readers of %q never all waited (%d)", n, cmd, runtimeapi.Waiting(c, cmd))
					}
				}
			}
			// Give up where asked (and wait until those callers left), then
			// let the answers through.
			for i, cmd := range tc.cmds {
				if i < len(tc.giveUp) && tc.giveUp[i] {
					cancels[i]()
					readers[cmd]--
					for deadline := time.Now().Add(10 * time.Second); runtimeapi.Waiting(c, cmd) > readers[cmd]; time.Sleep(time.Millisecond) {
						if time.Now().After(deadline) {
							t.Fatalf("caller %d never stopped waiting", i)
						}
					}
				}
			}
			relay.release()
			wg.Wait()
			for i, g := range got {
				if i < len(tc.giveUp) && tc.giveUp[i] {
					if g.err == nil || !errors.Is(g.err, context.Canceled) {
						t.Errorf("caller %d gave up but got %q, %v", i, g.out, g.err)
					}
					continue
				}
				if g.err != nil || !strings.Contains(g.out, ":") {
					t.Errorf("caller %d (%q): %q, %v", i, tc.cmds[i], g.out, g.err)
				}
			}
			sent := strings.TrimPrefix(relay.sentText(), base)
			for cmd, n := range tc.want {
				if c := countLines(sent, cmd); c != n {
					t.Errorf("%q sent %d times, want %d (sent %q)", cmd, c, n, sent)
				}
			}
		})
	}

	// After an answer arrived, the same read is sent again: no answer is
	// kept past its exchange.
	relay := newRecordingRelay(t, h.Socket)
	c := &runtimeapi.Client{Network: "unix", Address: relay.path, Timeout: 30 * time.Second, MaxConns: 4}
	defer c.Close()
	for i := 0; i < 3; i++ {
		if _, err := c.Read(context.Background(), "show info"); err != nil {
			t.Fatal(err)
		}
	}
	if n := countLines(relay.sentText(), "show info"); n != 3 {
		t.Errorf("three reads one after the other sent show info %d times, want 3", n)
	}

	// Every caller gives up: the exchange is abandoned and the next read
	// sends the command again instead of joining it.
	relay.hold()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { _, err := c.Read(ctx, "show info"); done <- err }()
	relay.waitSent(t, "show info\n", 4)
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("abandoned read: %v", err)
	}
	relay.release()
	if _, err := c.Read(context.Background(), "show info"); err != nil {
		t.Fatal(err)
	}
	if n := countLines(relay.sentText(), "show info"); n != 5 {
		t.Errorf("after every caller gave up, the next read sent show info (total %d), want 5", n)
	}
}

// countLines counts the lines equal to cmd among what the client sent.
func countLines(sent, cmd string) int {
	n := 0
	for _, l := range strings.Split(sent, "\n") {
		if strings.TrimPrefix(l, "prompt;") == cmd || l == cmd {
			n++
		}
	}
	return n
}

// TestReadDecodedSharesOneDecode: callers that share one answer also
// share its decoding (one Decode for five callers, the same value for
// all), and a read that starts after an answer arrived decodes its own,
// newer answer: HAProxy's state changes between the two reads and the
// second sees the change.
func TestReadDecodedSharesOneDecode(t *testing.T) {
	h := haproxytest.Run(t, haproxytest.Options{})
	relay := newRecordingRelay(t, h.Socket)
	c := &runtimeapi.Client{Network: "unix", Address: relay.path, Timeout: 30 * time.Second, MaxConns: 4}
	defer c.Close()
	type answer struct{ text string }
	var mu sync.Mutex
	decodes := 0
	d := &runtimeapi.Decoder[*answer]{Decode: func(out string) (*answer, error) {
		mu.Lock()
		defer mu.Unlock()
		decodes++
		return &answer{out}, nil
	}}
	if _, err := c.Execute(context.Background(), "show version"); err != nil { // warm one connection
		t.Fatal(err)
	}
	relay.hold()
	const callers = 5
	got := make([]*answer, callers)
	errs := make([]error, callers)
	var wg sync.WaitGroup
	for i := range callers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			got[i], errs[i] = runtimeapi.ReadDecoded(context.Background(), c, "show info", d)
		}()
	}
	for deadline := time.Now().Add(10 * time.Second); runtimeapi.Waiting(c, "show info") < callers; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%d callers never all waited (%d)", callers, runtimeapi.Waiting(c, "show info"))
		}
	}
	relay.release()
	wg.Wait()
	for i := range callers {
		if errs[i] != nil || got[i] == nil || got[i] != got[0] || !strings.Contains(got[i].text, "Maxconn:") {
			t.Fatalf("caller %d: value %p, %v (caller 0: %p); want caller 0's decoded show info", i, got[i], errs[i], got[0])
		}
	}
	if decodes != 1 || countLines(relay.sentText(), "show info") != 1 {
		t.Errorf("%d callers sharing one answer: %d decodes, show info sent %d times; want 1 and 1", callers, decodes, countLines(relay.sentText(), "show info"))
	}

	// The state changes after that answer arrived: the next read sends
	// again and decodes the new answer, never the one before.
	if _, err := h.Exec(context.Background(), "set maxconn global 1234"); err != nil {
		t.Fatal(err)
	}
	later, err := runtimeapi.ReadDecoded(context.Background(), c, "show info", d)
	if err != nil {
		t.Fatal(err)
	}
	if later == got[0] || !strings.Contains(later.text, "Maxconn: 1234\n") || decodes != 2 {
		t.Errorf("a read after the answer arrived: %d decodes, Maxconn 1234 seen: %v, same value as before: %v", decodes, strings.Contains(later.text, "Maxconn: 1234\n"), later == got[0])
	}
}
