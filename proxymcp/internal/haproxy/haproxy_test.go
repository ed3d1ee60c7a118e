package haproxy_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/mcpfleet/mcpfleet/proxymcp/internal/haproxy"
	"github.com/mcpfleet/mcpfleet/proxymcp/internal/haproxytest"
	"github.com/mcpfleet/mcpfleet/proxymcp/internal/runtimeapi"
)

// TestUnsupportedCommandNamesVersion: a command this HAProxy lacks is
// refused before it is sent, naming the version it needs.
func TestUnsupportedCommandNamesVersion(t *testing.T) {
	h := haproxytest.Run(t, haproxytest.Options{})
	c := haproxy.New(h.Runtime("unix"), nil)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	v, err := c.Version(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if v.Raw != h.Version {
		t.Errorf("version = %q, want %q", v.Raw, h.Version)
	}
	if v.AtLeast(3, 1) {
		t.Skip("this HAProxy has echo; the test needs one older than 3.1")
	}
	for cmd, need := range map[string]string{"echo": "3.1", "wait": "3.0", "add backend": "3.4", "show sess older": "3.0"} {
		err := c.Require(ctx, cmd)
		var ue *haproxy.UnsupportedError
		if !errors.As(err, &ue) || ue.Need != need || !strings.Contains(err.Error(), "needs HAProxy "+need+" or newer") || !strings.Contains(err.Error(), v.Raw) {
			t.Errorf("%s: err = %v", cmd, err)
		}
	}
	for _, cmd := range []string{"add server", "del server", "prepare map", "show servers conn"} {
		if err := c.Require(ctx, cmd); err != nil {
			t.Errorf("%s on %s: %v", cmd, v.Raw, err)
		}
	}
	// And HAProxy's own answer to a command it lacks is a refusal, never success.
	_, err = h.Runtime("tcp4").Execute(ctx, "echo hello")
	var re *runtimeapi.ReplyError
	if !errors.As(err, &re) || !re.UnknownCommand() {
		t.Errorf("echo on %s: %v", v.Raw, err)
	}
	out, by, err := c.Echo(ctx, "hi there")
	if err != nil || out != "hi there" || by != "proxymcp" {
		t.Errorf("echo = %q %q %v", out, by, err)
	}
}

// TestDelServerDrainHonoursCancellation: while del_server waits for a
// drained server's sessions, cancelling the request ends the wait.
func TestDelServerDrainHonoursCancellation(t *testing.T) {
	h := haproxytest.Run(t, haproxytest.Options{})
	c := haproxy.New(h.Runtime("unix"), nil)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := h.WaitServerStatus(ctx, "be_api", "api2", "UP"); err != nil {
		t.Fatal(err)
	}
	// Only api2 in service, so the slow request lands on it.
	if _, err := h.Exec(ctx, "set server be_api/api1 state maint"); err != nil {
		t.Fatal(err)
	}
	go http.Get("http://" + h.FrontendAPI + "/slow")
	deadline := time.Now().Add(5 * time.Second)
	for {
		s, err := c.Sessions(ctx, "", "be_api", "api2")
		if err != nil {
			t.Fatal(err)
		}
		if len(s) == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the slow request never reached api2")
		}
		time.Sleep(20 * time.Millisecond)
	}
	callCtx, cancelCall := context.WithCancel(ctx)
	time.AfterFunc(300*time.Millisecond, cancelCall)
	start := time.Now()
	_, err := c.DelServer(callCtx, "be_api", "api2", true, 30*time.Second)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v", err)
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("cancellation took %s", d)
	}
	// With a short wait the sessions outlive the drain: refused, left in maintenance, not deleted.
	_, err = c.DelServer(ctx, "be_api", "api2", true, 200*time.Millisecond)
	if !errors.Is(err, haproxy.ErrStillBusy) || !strings.Contains(err.Error(), "not deleted") {
		t.Fatalf("err = %v", err)
	}
	h.Release()
}
