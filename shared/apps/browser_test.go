package apps_test

import (
	"testing"

	"github.com/mcpfleet/mcpfleet/shared/e2e/appstest"
)

// TestViewsInBrowser runs the views' browser test (views/test/views.test.mjs:
// each view in headless Debian chromium under the ext-apps SDK's AppBridge,
// its actions' tool calls, screenshots, first render) and its byte-for-byte
// rebuild check. It needs node, chromium and the npm packages that
// scripts/install/views.sh installs (scripts/test runs it first); with
// CI=true anything missing fails the test instead of skipping it, and so
// does a test of the file that skips.
func TestViewsInBrowser(t *testing.T) {
	appstest.Browser(t).Run(t, "views.test.mjs")
}
