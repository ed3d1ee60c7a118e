package runtimeapi

import "time"

// SetMaxAge changes how long c's pooled connections live, so that a test
// can keep one past HAProxy's own idle timeout.
func SetMaxAge(c *Client, d time.Duration) { c.getPool().maxAge = d }

// Interactive reports whether c's pool runs in prompt mode (false once the
// endpoint refused it).
func Interactive(c *Client) bool { return !c.getPool().oneShot.Load() }

// Waiting is how many callers wait for the read of cmd on its way.
func Waiting(c *Client, cmd string) int {
	c.shared.mu.Lock()
	defer c.shared.mu.Unlock()
	if f := c.shared.flights[cmd]; f != nil {
		return f.waiters
	}
	return 0
}
