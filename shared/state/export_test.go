package state

import "time"

// SetResetSkew replaces the clock skew margin of MarkUsed (tests) until
// the returned function restores it.
func SetResetSkew(d time.Duration) (restore func()) {
	old := resetSkew
	resetSkew = d
	return func() { resetSkew = old }
}

// ResetSkew is the clock skew margin of MarkUsed.
func ResetSkew() time.Duration { return resetSkew }
