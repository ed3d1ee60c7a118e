package haproxy_test

import (
	"context"
	"errors"
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
