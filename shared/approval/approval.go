// Package approval holds the approval policy (which risk classes need a
// person) and the confirmation codes a client without elicitation uses to
// confirm a change in two steps.
package approval

import (
	"crypto/rand"
	"path/filepath"
	"strings"
	"time"

	"github.com/mcpfleet/mcpfleet/shared/envconfig"
	"github.com/mcpfleet/mcpfleet/shared/state"
)

// Policy says which risk classes need a person's approval.
type Policy string

// Policies.
const (
	Destructive Policy = "destructive" // destructive calls only (the default)
	Change      Policy = "change"      // change and destructive calls
	None        Policy = "none"        // nobody is asked; calls are still audited
)

// Fallback says what happens when the client cannot ask a person.
type Fallback string

// Fallbacks.
const (
	Confirm Fallback = "confirm" // two-step confirmation code
	Refuse  Fallback = "refuse"  // refuse the call
)

// Vars documents the approval variables for --help.
var Vars = []envconfig.Var{
	{Name: "MCP_APPROVAL", Default: "destructive", Description: "which risk classes need a person's approval: destructive, change (change and destructive), or none"},
	{Name: "MCP_APPROVAL_FALLBACK", Default: "confirm", Description: "when the client cannot ask a person (no elicitation): confirm (preview + one-time confirmation code) or refuse"},
	{Name: "MCP_APPROVAL_TIMEOUT", Default: "5m", Description: "how long to wait for the person's answer; also how long a confirmation code is valid"},
	{Name: "MCP_APPROVAL_SECRET", Secret: true, Default: "random per process", Description: "key that signs confirmation codes (at least 32 bytes); set the same value on every replica"},
	{Name: "MCP_STATE_URL", Default: "unset (state in this process and the ledger file)", Description: "redis://[user:password@]host[:port][/db] or rediss://…: the store every replica shares for used confirmation codes and task records; when it is unreachable, calls needing it fail (nothing falls back to this process's memory) and /readyz reports it"},
	{Name: "MCP_APPROVAL_LEDGER", Default: "$XDG_STATE_HOME/<server>/used-confirmation-codes", Description: "absolute path of the file recording used confirmation codes, so a code runs once across restarts and across the processes sharing the file; used when MCP_APPROVAL_SECRET is set (with a per-process secret no other process can verify a code, and memory suffices); XDG_STATE_HOME defaults to $HOME/.local/state; a code is refused when the file cannot be read or written"},
}

// Config is the approval policy.
type Config struct {
	Policy   Policy
	Fallback Fallback
	Timeout  time.Duration
	// Secret is MCP_APPROVAL_SECRET, never logged. Set, other processes
	// (replicas, the next one after a restart) can verify the codes, so
	// used codes are recorded where they see them; nil, the pipeline signs
	// with a random key of its own.
	Secret []byte
	// Ledger is the file of used codes (MCP_APPROVAL_LEDGER); "" for the
	// default, which Ledger resolves.
	Ledger string
	// StateURL is MCP_STATE_URL: set, used codes are recorded there (Redis)
	// instead of in Ledger.
	StateURL string
	// StateHome is $XDG_STATE_HOME, or $HOME/.local/state; "" when neither
	// is set.
	StateHome string
}

// MinSecretLen is the shortest MCP_APPROVAL_SECRET accepted.
const MinSecretLen = 32

// FromEnv reads the MCP_APPROVAL* variables.
func FromEnv(r *envconfig.Reader) Config {
	c := Config{
		Policy:   Policy(r.Enum("MCP_APPROVAL", "destructive", "destructive", "change", "none")),
		Fallback: Fallback(r.Enum("MCP_APPROVAL_FALLBACK", "confirm", "confirm", "refuse")),
		Timeout:  r.Duration("MCP_APPROVAL_TIMEOUT", 5*time.Minute, time.Second),
	}
	if s := r.Secret("MCP_APPROVAL_SECRET"); s != "" {
		if len(s) < MinSecretLen {
			r.FailSecret("MCP_APPROVAL_SECRET", s, "at least 32 bytes, e.g. the output of: openssl rand -hex 32")
		}
		c.Secret = []byte(s)
	}
	if v := r.Lookup("MCP_STATE_URL"); v != "" {
		if err := state.CheckURL(v); err != nil {
			r.Fail("MCP_STATE_URL", state.Redact(v), "redis://[user:password@]host[:port][/db] or rediss://… (TLS)")
		}
		c.StateURL = v
	}
	c.StateHome = r.Lookup("XDG_STATE_HOME")
	if !filepath.IsAbs(c.StateHome) { // the XDG spec says to ignore a relative one
		c.StateHome = ""
		if h := r.Lookup("HOME"); filepath.IsAbs(h) {
			c.StateHome = filepath.Join(h, ".local", "state")
		}
	}
	if v := r.String("MCP_APPROVAL_LEDGER", ""); v != "" {
		if !filepath.IsAbs(v) || strings.HasSuffix(v, "/") {
			r.Fail("MCP_APPROVAL_LEDGER", v, "an absolute path of a file, e.g. /var/lib/mcp/used-confirmation-codes")
		}
		c.Ledger = filepath.Clean(v)
	} else if len(c.Secret) > 0 && c.StateHome == "" && c.StateURL == "" {
		r.Fail("MCP_APPROVAL_LEDGER", v, "an absolute file path: MCP_APPROVAL_SECRET is set, so used confirmation codes must be recorded in a file the next process sees, and neither XDG_STATE_HOME nor HOME names a directory for the default")
	}
	return c
}

// LedgerFile is the default file name of the used-code ledger, in a
// directory named for the server below the state home.
const LedgerFile = "used-confirmation-codes"

// OpenLedger returns where codes are recorded as used: the configured
// file; the default file of server when the secret is shared; process
// memory when the secret is this process's own, since no other process
// can verify its codes.
//
// With MCP_STATE_URL set, codes are recorded in that store whatever the
// secret (a random per-process secret makes the keys unique anyway): one
// place to look, and a store that is down refuses codes on every replica.
func (c Config) OpenLedger(server string) state.Ledger {
	if c.StateURL != "" {
		r, err := state.OpenRedis(c.StateURL)
		if err != nil {
			// FromEnv refuses such a URL; a Config built in code gets a
			// ledger that refuses every code rather than one that forgets.
			return state.NewFile("")
		}
		return r.Scoped(server)
	}
	switch {
	case c.Ledger != "":
		return state.NewFile(c.Ledger)
	case len(c.Secret) > 0 && c.StateHome != "":
		return state.NewFile(filepath.Join(c.StateHome, server, LedgerFile))
	case len(c.Secret) > 0:
		// FromEnv refuses this configuration; a Config built in code gets
		// a ledger that refuses every code rather than one that forgets.
		return state.NewFile("")
	}
	return state.NewMemory()
}

// RandomSecret returns a fresh 32-byte key.
func RandomSecret() []byte {
	b := make([]byte, 32)
	rand.Read(b) // never fails (crypto/rand panics rather than return short)
	return b
}

// Needs reports whether a call of the given class ("read", "change",
// "destructive") needs a person under p.
func (p Policy) Needs(class string) bool {
	switch p {
	case None:
		return false
	case Change:
		return class == "change" || class == "destructive"
	default:
		return class == "destructive"
	}
}
