package e2e

import (
	"testing"
	"time"
)

// WaitFor polls cond until it holds, failing the test after a generous
// 30 s: the condition decides when to go on, the poll interval only how
// often it is asked, so a loaded machine makes a test slower, not flaky.
func WaitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after 30s waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
