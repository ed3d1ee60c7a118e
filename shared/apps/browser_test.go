package apps_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestViewsInBrowser runs the views' browser test (views/test/views.test.mjs:
// each view in headless Debian chromium under the ext-apps SDK's AppBridge,
// its actions' tool calls, screenshots, first render) and its byte-for-byte
// rebuild check. It needs node, chromium and the npm packages that
// scripts/install/views.sh installs (scripts/test runs it first); with
// CI=true anything missing fails the test instead of skipping it.
func TestViewsInBrowser(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: the browser test takes about 30 s")
	}
	dir := viewsDir(t)
	missing := func(what string) {
		t.Helper()
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s; run scripts/install/views.sh", what)
		}
		t.Skipf("%s (scripts/install/views.sh installs it)", what)
	}
	node, err := exec.LookPath("node")
	if err != nil {
		missing("node is not installed")
	}
	if _, err := os.Stat(os.Getenv("CHROMIUM")); os.Getenv("CHROMIUM") == "" || err != nil {
		if _, err := exec.LookPath("chromium"); err != nil {
			missing("chromium is not installed")
		}
	}
	install := exec.Command("bash", filepath.Join(dir, "..", "scripts", "install", "views.sh"))
	install.Stderr = os.Stderr
	out, err := install.Output()
	if err != nil {
		missing("the views' npm packages could not be installed: " + err.Error())
	}
	cmd := exec.Command(node, "--test", "--test-reporter=spec", filepath.Join("test", "views.test.mjs"))
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "VIEWS_NODE_MODULES="+strings.TrimSpace(string(out)))
	if a := os.Getenv("VIEWS_ARTIFACTS"); a == "" {
		cmd.Env = append(cmd.Env, "VIEWS_ARTIFACTS="+filepath.Join(dir, "test", "artifacts"))
	}
	b, err := cmd.CombinedOutput()
	t.Logf("%s", b)
	if err != nil {
		t.Fatalf("views browser test: %v", err)
	}
}
