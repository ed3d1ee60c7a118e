package runtimeapi

import "time"

// SetMaxAge changes how long c's pooled connections live, so that a test
// can keep one past HAProxy's own idle timeout.
func SetMaxAge(c *Client, d time.Duration) { c.getPool().maxAge = d }

// Interactive reports whether c's pool runs in prompt mode (false once the
// endpoint refused it).
func Interactive(c *Client) bool { return !c.getPool().oneShot.Load() }
