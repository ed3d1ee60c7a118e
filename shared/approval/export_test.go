package approval

import "time"

// SetClock replaces the clock (tests), also the ledger's when it has one.
func (c *Codes) SetClock(now func() time.Time) {
	c.now = now
	if l, ok := c.used.(interface{ SetClock(func() time.Time) }); ok {
		l.SetClock(now)
	}
}
