package envconfig

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func env(kv ...string) func(string) string {
	m := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return func(k string) string { return m[k] }
}

func TestDuration(t *testing.T) {
	tests := []struct {
		in   string
		want time.Duration
		ok   bool
	}{
		{"10", 10 * time.Second, true},
		{"1.5", 1500 * time.Millisecond, true},
		{"10s", 10 * time.Second, true},
		{"1m30s", 90 * time.Second, true},
		{" 250ms ", 250 * time.Millisecond, true},
		{"", 0, false},
		{"ten", 0, false},
		{"-5", 0, false},
		{"-5s", 0, false},
	}
	for _, tt := range tests {
		got, err := ParseDuration(tt.in)
		if (err == nil) != tt.ok || (tt.ok && got != tt.want) {
			t.Errorf("ParseDuration(%q) = %v, %v; want %v ok=%v", tt.in, got, err, tt.want, tt.ok)
		}
	}
}

func TestBool(t *testing.T) {
	for _, v := range []string{"1", "true", "TRUE", "Yes", "on", "ON"} {
		if b, ok := ParseBool(v); !ok || !b {
			t.Errorf("ParseBool(%q) = %v, %v", v, b, ok)
		}
	}
	for _, v := range []string{"0", "false", "No", "OFF"} {
		if b, ok := ParseBool(v); !ok || b {
			t.Errorf("ParseBool(%q) = %v, %v", v, b, ok)
		}
	}
	for _, v := range []string{"", "2", "y", "enabled"} {
		if _, ok := ParseBool(v); ok {
			t.Errorf("ParseBool(%q) accepted", v)
		}
	}
}

func TestReaderCollectsEveryProblem(t *testing.T) {
	r := New(env(
		"A_INT", "12x", "A_BOOL", "maybe", "A_DUR", "soon", "A_ENUM", "udp",
		"A_URL", "ftp://u:hunter2@host/x", "A_RANGE", "70000",
		"OK_INT", "42", "OK_LIST", " a, ,b ,c", "OK_ENUM", "HTTP",
	))
	r.Int("A_INT", 1, 0, 100)
	r.Bool("A_BOOL", false)
	r.Duration("A_DUR", time.Second, 0)
	r.Enum("A_ENUM", "tcp", "tcp", "unix")
	r.URL("A_URL", "", "http", "https")
	r.Int("A_RANGE", 1, 1, 65535)
	r.Required("A_MISSING", "a comma-separated list of host:port")
	if got := r.Int("OK_INT", 1, 0, 100); got != 42 {
		t.Errorf("OK_INT = %d", got)
	}
	if got := r.List("OK_LIST", nil); strings.Join(got, "|") != "a|b|c" {
		t.Errorf("OK_LIST = %q", got)
	}
	if got := r.Enum("OK_ENUM", "stdio", "stdio", "http"); got != "http" {
		t.Errorf("OK_ENUM = %q", got)
	}
	err := r.Err()
	var ce *Error
	if !errors.As(err, &ce) || len(ce.Problems) != 7 {
		t.Fatalf("want 7 problems, got %v", err)
	}
	msg := err.Error()
	for _, w := range []string{
		`A_INT="12x"`, "0 to 100", `A_BOOL="maybe"`, `A_DUR="soon"`, `A_ENUM="udp"`, "tcp, unix",
		"A_URL=", "http or https", `A_RANGE="70000"`, "A_MISSING: not set", "host:port",
	} {
		if !strings.Contains(msg, w) {
			t.Errorf("message lacks %q:\n%s", w, msg)
		}
	}
	if strings.Contains(msg, "hunter2") {
		t.Errorf("message leaks a password:\n%s", msg)
	}
}

func TestDefaults(t *testing.T) {
	r := New(env())
	if r.String("S", "d") != "d" || r.Int("I", 7, 0, 9) != 7 || !r.Bool("B", true) ||
		r.Duration("D", 5*time.Second, 0) != 5*time.Second || r.List("L", []string{"x"})[0] != "x" ||
		r.Enum("E", "stdio", "stdio", "http") != "stdio" || r.URL("U", "http://127.0.0.1:8404/stats").Port() != "8404" {
		t.Fatal("defaults not applied")
	}
	if r.Err() != nil {
		t.Fatal(r.Err())
	}
}

func TestFailSecretHidesValue(t *testing.T) {
	r := New(env())
	r.FailSecret("JWT_SECRET", "s3cr3t-value", "at least 32 bytes")
	if msg := r.Err().Error(); strings.Contains(msg, "s3cr3t") || !strings.Contains(msg, "JWT_SECRET") {
		t.Fatalf("bad message: %s", msg)
	}
}

func TestReportListsAProblemThatIsNoVariable(t *testing.T) {
	r := New(func(string) string { return "x" })
	r.Int("A_PORT", 1, 1, 2)
	r.Report(errors.New("read /etc/a.json: unexpected end of JSON input"))
	want := "invalid configuration (2 problems):\n  - A_PORT=\"x\": invalid; accepted: an integer from 1 to 2\n  - read /etc/a.json: unexpected end of JSON input"
	if got := r.Err().Error(); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}
