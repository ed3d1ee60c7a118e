package haproxy

import (
	"errors"
	"strings"
	"testing"
)

// TestAddrAnswer: only HAProxy's documented answers to "set server ... addr"
// count as success or "already"; anything else is checked by reading back.
func TestAddrAnswer(t *testing.T) {
	for _, tc := range []struct {
		msg            string
		known, changed bool
	}{
		{"IP changed from '127.0.0.1' to '127.0.0.2' by 'stats socket command'", true, true},
		{"IP changed from '127.0.0.1' to '127.0.0.2', port changed from '+0' to '29005' by 'stats socket command'", true, true},
		{"IP changed from '::1' to '127.0.0.3', no need to change the port by 'stats socket command'", true, true},
		{"no need to change the addr, port changed from '1' to '2' by 'stats socket command'", true, true},
		{"no need to change the addr by 'stats socket command'", true, false},
		{"no need to change the addr, no need to change the port by 'stats socket command'", true, false},
		{"", false, false},
		{"IP changed from 'a' to 'b', can't change the port of a server which uses port mapping", false, false},
		{"Server is using an FQDN, cannot set an address", false, false},
		{"no need to change the addr, but something else by 'x'", false, false},
	} {
		known, changed := addrAnswer(tc.msg)
		if known != tc.known || changed != tc.changed {
			t.Errorf("addrAnswer(%q) = %v, %v; want %v, %v", tc.msg, known, changed, tc.known, tc.changed)
		}
	}
}

// TestChangeErrorsSayWhatHappened: the errors name the command, HAProxy's
// words and what was read back or done.
func TestChangeErrorsSayWhatHappened(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want []string
	}{
		{&NotAppliedError{Command: "set server b/s check-port 80", Message: "health checks are not enabled on this server", State: "b/s has check port 0"},
			[]string{"not applied", `"set server b/s check-port 80"`, `"health checks are not enabled on this server"`, "b/s has check port 0"}},
		{&NotAppliedError{Command: "disable agent b/s", State: "b/s has no agent check configured"},
			[]string{"not applied", "an empty answer", "no agent check configured"}},
		{&NotAppliedError{Command: "clear counters", Message: "odd", Unverified: true},
			[]string{"not confirmed", `"odd"`, "cannot be read back"}},
		{&NotAppliedError{Command: "set server b/s weight 5", Message: "odd", ReadErr: errors.New("socket closed")},
			[]string{"not confirmed", "reading the state back failed", "socket closed"}},
		{partial([]string{"b/s set to drain", "b/s put in maintenance"}, errors.New("refused")),
			[]string{"partially applied", "b/s set to drain; b/s put in maintenance", "then refused"}},
	} {
		for _, w := range tc.want {
			if !strings.Contains(tc.err.Error(), w) {
				t.Errorf("%q lacks %q", tc.err, w)
			}
		}
	}
	if err := partial(nil, errors.New("x")); err.Error() != "x" {
		t.Errorf("partial without steps = %v", err)
	}
	if partial([]string{"a"}, nil) != nil {
		t.Error("partial of no error is an error")
	}
}
