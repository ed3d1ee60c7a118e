package validate

import (
	"errors"
	"strings"
	"testing"
)

func TestName(t *testing.T) {
	for _, ok := range []string{"be_app", "app-1", "a.b:c", strings.Repeat("x", 128)} {
		if err := Name("backend", ok); err != nil {
			t.Errorf("%q: %v", ok, err)
		}
	}
	for _, bad := range []string{"", "be app", "be;set", "be\nx", "be/x", "be<<", "#1", strings.Repeat("x", 129), "bé", "be\u2028x"} {
		err := Name("backend", bad)
		var ve *Error
		if !errors.As(err, &ve) || ve.Arg != "backend" || !strings.Contains(err.Error(), "nothing was sent") {
			t.Errorf("%q: err = %v", bad, err)
		}
	}
}

func TestInt(t *testing.T) {
	for _, tc := range []struct {
		in   any
		want int64
		ok   bool
	}{
		{float64(5), 5, true}, {float64(5.5), 0, false}, {"7", 7, true}, {"7x", 0, false},
		{float64(-1), 0, false}, {float64(1e300), 0, false}, {true, 0, false}, {nil, 0, false},
	} {
		n, err := Int("n", tc.in, 0, 100)
		if (err == nil) != tc.ok || n != tc.want {
			t.Errorf("%#v: %d %v", tc.in, n, err)
		}
	}
}

func TestWeightPortIP(t *testing.T) {
	for in, want := range map[any]string{float64(0): "0", float64(256): "256", "50%": "50%", "100%": "100%", "200%": "200%", "12": "12"} {
		if got, err := Weight("weight", in); err != nil || got != want {
			t.Errorf("weight %#v: %q %v", in, got, err)
		}
	}
	for _, bad := range []any{float64(257), float64(-1), "25601%", "123456%", "5%%", "50% ", float64(1.5), "abc"} {
		if _, err := Weight("weight", bad); err == nil {
			t.Errorf("weight %#v accepted", bad)
		}
	}
	if ip, err := IP("address", "::1"); err != nil || ip != "::1" {
		t.Errorf("::1: %q %v", ip, err)
	}
	for _, bad := range []string{"localhost", "1.2.3.4;x", "fe80::1%eth0", "1.2.3.4 port 5", ""} {
		if _, err := IP("address", bad); err == nil {
			t.Errorf("ip %q accepted", bad)
		}
	}
}

func TestSessionIDAndRef(t *testing.T) {
	if SessionID("id", "0x55e889caf120") != nil || SessionID("id", "0x1;x") == nil || SessionID("id", "55e8") == nil {
		t.Error("session id rules")
	}
	for _, ok := range []string{"#5", "/etc/haproxy/hosts.map", "./hosts.map"} {
		if err := Ref("map", ok); err != nil {
			t.Errorf("%q: %v", ok, err)
		}
	}
	for _, bad := range []string{"", "#", "#1x", "../x", "/a/../b", "a b", "a;b", "a\nb", "@1 m", "m<<"} {
		if err := Ref("map", bad); err == nil {
			t.Errorf("ref %q accepted", bad)
		}
	}
}

func TestText(t *testing.T) {
	got, err := Text("key", `a b;c\d"e'f`, false)
	if err != nil || got != `a\ b\;c\\d"e'f` {
		t.Fatalf("got %q %v", got, err)
	}
	for _, bad := range []string{"", "a\nb", "a\rb", "a\x00b", "a\tb", "a<<b", "a\x7fb", "a\u0085b", "a\u2028b", "\xff", strings.Repeat("x", MaxTextLen+1)} {
		if _, err := Text("key", bad, false); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}
