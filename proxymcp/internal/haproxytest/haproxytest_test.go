package haproxytest

import (
	"context"
	"strings"
	"testing"
	"time"
)

func TestStartServesRuntimeAPIOnBothEndpoints(t *testing.T) {
	h := Run(t, Options{})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for _, mode := range []string{"unix", "tcp4"} {
		out, err := h.Runtime(mode).Execute(ctx, "show backend")
		if err != nil {
			t.Fatalf("%s: %v", mode, err)
		}
		for _, b := range []string{"be_app", "be_api"} {
			if !strings.Contains(out, b) {
				t.Errorf("%s: show backend lacks %s:\n%s", mode, b, out)
			}
		}
	}
	if err := h.WaitServerStatus(ctx, "be_app", "app3", "DOWN"); err != nil {
		t.Fatal(err)
	}
	if err := h.WaitServerStatus(ctx, "be_app", "app1", "UP"); err != nil {
		t.Fatal(err)
	}
}

// TestVersions starts every branch of the matrix (PROXYMCP_HAPROXY_VERSIONS)
// with TLS and checks that the selected branch is what answers, on the
// Unix socket (a host path under the chroot) and on the TCP port.
func TestVersions(t *testing.T) {
	EachVersion(t, func(t *testing.T, branch string) {
		h := Run(t, Options{Version: branch, TLS: true})
		if !strings.HasPrefix(h.Version, branch+".") || h.Branch != branch {
			t.Fatalf("asked for %s, got version %q branch %q", branch, h.Version, h.Branch)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		for _, mode := range []string{"unix", "tcp4"} {
			out, err := h.Runtime(mode).Execute(ctx, "show version")
			if err != nil || strings.TrimSpace(out) != h.Version {
				t.Errorf("%s: show version = %q, %v", mode, out, err)
			}
		}
		out, err := h.Exec(ctx, "show map")
		if err != nil || !strings.Contains(out, h.MapFile) {
			t.Errorf("show map does not name %s as the host sees it: %q, %v", h.MapFile, out, err)
		}
		out, err = h.Exec(ctx, "show ssl cert")
		if err != nil || !strings.Contains(out, h.TLSCertFile) {
			t.Errorf("show ssl cert lacks %s: %q, %v", h.TLSCertFile, out, err)
		}
		if err := h.WaitServerStatus(ctx, "be_app", "app1", "UP"); err != nil {
			t.Error(err)
		}
		if h.Root != "" {
			// HAProxy in a chroot cannot see a directory outside it.
			if _, err := Start(ctx, Options{Version: branch, Dir: t.TempDir()}); err == nil || !strings.Contains(err.Error(), "must be inside") {
				t.Errorf("Dir outside the chroot: %v", err)
			}
		}
	})
}
