// Package approval holds the approval policy (which risk classes need a
// person) and the confirmation codes a client without elicitation uses to
// confirm a change in two steps.
package approval

import (
	"crypto/rand"
	"time"

	"github.com/mcpfleet/mcpfleet/shared/envconfig"
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
}

// Config is the approval policy.
type Config struct {
	Policy   Policy
	Fallback Fallback
	Timeout  time.Duration
	Secret   []byte // never logged; random when MCP_APPROVAL_SECRET is unset
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
	} else {
		c.Secret = RandomSecret()
	}
	return c
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
