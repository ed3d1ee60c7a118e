package haproxytest

import (
	"slices"
	"strings"
	"testing"
)

// TestVersionsFromEnv: which branches the matrix runs, and that an unknown
// branch is an error rather than silently nothing.
func TestVersionsFromEnv(t *testing.T) {
	cases := []struct {
		env, ci string
		want    []string
		err     string
	}{
		{"", "", []string{SystemBranch}, ""},
		{"", "true", Branches, ""},
		{"3.2", "", []string{"3.2"}, ""},
		{" 2.6 , 3.0,,3.0 ", "true", []string{"2.6", "3.0"}, ""},
		{"3.1", "", nil, `unknown HAProxy branch "3.1"`},
		{"2.6,3", "", nil, `unknown HAProxy branch "3"`},
		{"2.6;3.0", "", nil, "unknown HAProxy branch"},
		{"../3.0", "", nil, "unknown HAProxy branch"},
	}
	for _, c := range cases {
		t.Setenv(VersionsEnv, c.env)
		t.Setenv("CI", c.ci)
		got, err := Versions()
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%q: err = %v, want %q", c.env, err, c.err)
			}
			continue
		}
		if err != nil || !slices.Equal(got, c.want) {
			t.Errorf("%q CI=%q: %v %v, want %v", c.env, c.ci, got, err, c.want)
		}
	}
}

// TestMissingChrootSaysHowToFix: a branch whose chroot is not built is
// reported with the command that builds it (Run turns this into a failure
// under CI=true, a skip otherwise).
func TestMissingChrootSaysHowToFix(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	for _, b := range []string{"3.0", "3.2"} {
		err := Installed(b)
		if err == nil || !strings.Contains(err.Error(), "scripts/install/proxymcp.sh") || !strings.Contains(err.Error(), "haproxy-"+b) {
			t.Errorf("Installed(%s) = %v", b, err)
		}
		if _, err := Start(t.Context(), Options{Version: b}); err == nil || !strings.Contains(err.Error(), "scripts/install/proxymcp.sh") {
			t.Errorf("Start(%s) = %v", b, err)
		}
	}
	for _, b := range []string{"3.1", "2.6 ", "../../bin"} {
		if err := Installed(b); err == nil || !strings.Contains(err.Error(), "unknown HAProxy branch") {
			t.Errorf("Installed(%q) = %v", b, err)
		}
	}
	if err := Installed(SystemBranch); err != nil {
		t.Errorf("the system's haproxy: %v", err)
	}
}
