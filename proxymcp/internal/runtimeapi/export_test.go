package runtimeapi

import "time"

// SetMaxAge changes how long c's pooled connections live, so that a test
// can keep one past HAProxy's own idle timeout.
func SetMaxAge(c *Client, d time.Duration) { c.getPool().maxAge = d }
