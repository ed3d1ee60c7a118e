package haproxytest

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// SystemBranch is the branch of the system's haproxy (Debian 12); the
// other branches run from chroots built by scripts/install/proxymcp.sh.
const SystemBranch = "2.6"

// Branches are the HAProxy branches the tests know how to start.
var Branches = []string{"2.6", "3.0", "3.2"}

// VersionsEnv names the variable listing the branches the version matrix
// runs, comma-separated, e.g. "2.6,3.0,3.2". Unset: the system's branch
// only, or every branch when CI=true.
const VersionsEnv = "PROXYMCP_HAPROXY_VERSIONS"

// installHint is the command that builds what is missing.
const installHint = "run scripts/install/proxymcp.sh"

func isChroot(branch string) bool { return branch != "" && branch != SystemBranch }

// ChrootDir is where scripts/install/proxymcp.sh caches the chroot of a
// branch: ${XDG_CACHE_HOME:-$HOME/.cache}/mcpfleet/haproxy-<branch>.
func ChrootDir(branch string) (string, error) {
	cache, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("haproxytest: no cache directory for the HAProxy %s chroot: %w", branch, err)
	}
	return filepath.Join(cache, "mcpfleet", "haproxy-"+branch), nil
}

// Installed returns nil when the branch can be started ("" is the system's
// haproxy), or an error naming the command that installs it.
func Installed(branch string) error {
	if branch != "" && !slices.Contains(Branches, branch) {
		return fmt.Errorf("haproxytest: unknown HAProxy branch %q (known: %s)", branch, strings.Join(Branches, ", "))
	}
	if !isChroot(branch) {
		if _, err := exec.LookPath("haproxy"); err != nil {
			return errors.New("haproxy is not installed; " + installHint)
		}
		return nil
	}
	dir, err := ChrootDir(branch)
	if err != nil {
		return err
	}
	if _, err := os.Stat(filepath.Join(dir, "usr/sbin/haproxy")); err != nil {
		return fmt.Errorf("the HAProxy %s chroot is missing (%s has no usr/sbin/haproxy); %s", branch, dir, installHint)
	}
	return nil
}

// chrootFor returns the chroot of branch, with a link inside it that makes
// every host path under the chroot valid inside too: <root>/<root> points
// to "/". Configuration, sockets, maps and certificates then have one name
// for the host (tests, "show map" answers) and for HAProxy.
func chrootFor(branch string) (string, error) {
	if err := Installed(branch); err != nil {
		return "", err
	}
	root, err := ChrootDir(branch)
	if err != nil {
		return "", err
	}
	if root, err = filepath.EvalSymlinks(root); err != nil {
		return "", err
	}
	link := filepath.Join(root, root)
	if target, err := os.Readlink(link); err == nil && target == "/" {
		return root, nil
	}
	if err := os.MkdirAll(filepath.Dir(link), 0o755); err != nil {
		return "", fmt.Errorf("haproxytest: prepare the HAProxy %s chroot: %w", branch, err)
	}
	if err := os.Symlink("/", link); err != nil && !errors.Is(err, os.ErrExist) {
		return "", fmt.Errorf("haproxytest: prepare the HAProxy %s chroot: %w", branch, err)
	}
	return root, nil
}

// Versions returns the branches the version matrix runs (VersionsEnv).
// An unknown branch in the variable is an error.
func Versions() ([]string, error) {
	v := strings.TrimSpace(os.Getenv(VersionsEnv))
	if v == "" {
		if os.Getenv("CI") == "true" {
			return slices.Clone(Branches), nil
		}
		return []string{SystemBranch}, nil
	}
	var out []string
	for _, b := range strings.Split(v, ",") {
		b = strings.TrimSpace(b)
		if b == "" {
			continue
		}
		if !slices.Contains(Branches, b) {
			return nil, fmt.Errorf("%s=%q: unknown HAProxy branch %q (known: %s)", VersionsEnv, v, b, strings.Join(Branches, ", "))
		}
		if !slices.Contains(out, b) {
			out = append(out, b)
		}
	}
	return out, nil
}

// EachVersion runs f as a parallel subtest named after each branch of
// Versions. A branch that is not installed skips its subtest, or fails it
// when CI=true.
func EachVersion(t *testing.T, f func(t *testing.T, branch string)) {
	t.Helper()
	vs, err := Versions()
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range vs {
		t.Run(b, func(t *testing.T) {
			t.Parallel()
			f(t, b)
		})
	}
}

// writeCert writes a new self-signed ECDSA certificate, made by openssl
// (MakeCert), and its key to path as one PEM file (what "bind ... ssl crt"
// reads) and returns the certificate.
func writeCert(path string) (*x509.Certificate, error) {
	dir, err := os.MkdirTemp("", "haproxytest-cert-")
	if err != nil {
		return nil, fmt.Errorf("haproxytest: %w", err)
	}
	defer os.RemoveAll(dir)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c, err := MakeCert(ctx, dir, CertOptions{Names: []string{"proxymcp-test.example", "www.proxymcp-test.example"}})
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(path, []byte(c.Bundle()), 0o600); err != nil {
		return nil, fmt.Errorf("haproxytest: write the TLS certificate: %w", err)
	}
	return c.Cert, nil
}
