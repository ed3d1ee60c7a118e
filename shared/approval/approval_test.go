package approval

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/mcpfleet/mcpfleet/shared/envconfig"
)

func TestFromEnv(t *testing.T) {
	env := func(kv ...string) func(string) string {
		m := map[string]string{}
		for i := 0; i+1 < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return func(k string) string { return m[k] }
	}
	r := envconfig.New(env())
	c := FromEnv(r)
	if r.Err() != nil || c.Policy != Destructive || c.Fallback != Confirm || c.Timeout != 5*time.Minute || len(c.Secret) != 32 {
		t.Fatalf("defaults: %+v %v", c, r.Err())
	}
	c2 := FromEnv(envconfig.New(env()))
	if bytes.Equal(c.Secret, c2.Secret) {
		t.Error("two processes got the same random secret")
	}
	secret := strings.Repeat("s", 40)
	r = envconfig.New(env("MCP_APPROVAL", "change", "MCP_APPROVAL_FALLBACK", "refuse", "MCP_APPROVAL_TIMEOUT", "30s", "MCP_APPROVAL_SECRET", secret))
	c = FromEnv(r)
	if r.Err() != nil || c.Policy != Change || c.Fallback != Refuse || c.Timeout != 30*time.Second || string(c.Secret) != secret {
		t.Fatalf("set: %+v %v", c, r.Err())
	}
	for _, tc := range []struct{ name, value string }{
		{"MCP_APPROVAL", "all"}, {"MCP_APPROVAL", "DESTRUCTIVE;rm"}, {"MCP_APPROVAL_FALLBACK", "allow"},
		{"MCP_APPROVAL_TIMEOUT", "forever"}, {"MCP_APPROVAL_TIMEOUT", "-5m"}, {"MCP_APPROVAL_TIMEOUT", "10ms"},
		{"MCP_APPROVAL_SECRET", "short-secret-value"},
	} {
		r := envconfig.New(env(tc.name, tc.value))
		FromEnv(r)
		err := r.Err()
		if err == nil || !strings.Contains(err.Error(), tc.name) {
			t.Errorf("%s=%q: error %v does not name the variable", tc.name, tc.value, err)
			continue
		}
		if tc.name == "MCP_APPROVAL_SECRET" && strings.Contains(err.Error(), tc.value) {
			t.Errorf("the secret was echoed: %v", err)
		}
	}
}
