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
	if r.Err() != nil || c.Policy != Destructive || c.Fallback != Confirm || c.Timeout != 5*time.Minute || c.Secret != nil {
		t.Fatalf("defaults: %+v %v", c, r.Err())
	}
	if bytes.Equal(RandomSecret(), RandomSecret()) || len(RandomSecret()) != 32 {
		t.Error("two processes got the same random secret")
	}
	secret := strings.Repeat("s", 40)
	r = envconfig.New(env("MCP_APPROVAL", "change", "MCP_APPROVAL_FALLBACK", "refuse", "MCP_APPROVAL_TIMEOUT", "30s", "MCP_APPROVAL_SECRET", secret, "HOME", "/home/nonroot"))
	c = FromEnv(r)
	if r.Err() != nil || c.Policy != Change || c.Fallback != Refuse || c.Timeout != 30*time.Second || string(c.Secret) != secret {
		t.Fatalf("set: %+v %v", c, r.Err())
	}
	for _, tc := range []struct{ name, value string }{
		{"MCP_APPROVAL", "all"}, {"MCP_APPROVAL", "DESTRUCTIVE;rm"}, {"MCP_APPROVAL_FALLBACK", "allow"},
		{"MCP_APPROVAL_TIMEOUT", "forever"}, {"MCP_APPROVAL_TIMEOUT", "-5m"}, {"MCP_APPROVAL_TIMEOUT", "10ms"},
		{"MCP_APPROVAL_SECRET", "short-secret-value"},
		{"MCP_APPROVAL_LEDGER", "relative/codes"}, {"MCP_APPROVAL_LEDGER", "/var/lib/mcp/"},
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

// TestLedgerLocation: where used codes are recorded. A shared secret needs a
// file the next process sees; a per-process secret needs none, since no
// other process can verify its codes.
func TestLedgerLocation(t *testing.T) {
	secret := strings.Repeat("s", 40)
	for _, tc := range []struct {
		env  []string
		want string // the ledger's Where
	}{
		{nil, "process memory"},
		{[]string{"HOME", "/home/nonroot"}, "process memory"},
		{[]string{"MCP_APPROVAL_SECRET", secret, "HOME", "/home/nonroot"}, "/home/nonroot/.local/state/proxymcp/used-confirmation-codes"},
		{[]string{"MCP_APPROVAL_SECRET", secret, "HOME", "/home/nonroot", "XDG_STATE_HOME", "/state"}, "/state/proxymcp/used-confirmation-codes"},
		{[]string{"MCP_APPROVAL_SECRET", secret, "HOME", "/home/nonroot", "XDG_STATE_HOME", "rel"}, "/home/nonroot/.local/state/proxymcp/used-confirmation-codes"},
		{[]string{"MCP_APPROVAL_SECRET", secret, "MCP_APPROVAL_LEDGER", "/data//codes"}, "/data/codes"},
		{[]string{"MCP_APPROVAL_LEDGER", "/data/codes"}, "/data/codes"},
	} {
		m := map[string]string{}
		for i := 0; i+1 < len(tc.env); i += 2 {
			m[tc.env[i]] = tc.env[i+1]
		}
		r := envconfig.New(func(k string) string { return m[k] })
		c := FromEnv(r)
		if r.Err() != nil {
			t.Errorf("%q: %v", tc.env, r.Err())
			continue
		}
		if got := c.OpenLedger("proxymcp").Where(); got != tc.want {
			t.Errorf("%q: ledger %s, want %s", tc.env, got, tc.want)
		}
	}
	// A shared secret with nowhere to record codes does not start.
	r := envconfig.New(func(k string) string { return map[string]string{"MCP_APPROVAL_SECRET": secret, "HOME": ""}[k] })
	FromEnv(r)
	if err := r.Err(); err == nil || !strings.Contains(err.Error(), "MCP_APPROVAL_LEDGER") || strings.Contains(err.Error(), secret) {
		t.Errorf("no HOME, no XDG_STATE_HOME, no MCP_APPROVAL_LEDGER: %v", err)
	}
}
