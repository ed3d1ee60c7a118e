package serverhelp

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestReleasedVersion(t *testing.T) {
	for _, tc := range []struct {
		name, manifest, want, err string
	}{
		{"present", `{"proxymcp":"1.4.0"}`, "1.4.0", ""},
		{"missing server", `{"sqlmcp":"1.0.0"}`, "", "has no version for proxymcp"},
		{"not json", `{`, "", ".release-please-manifest.json:"},
		{"no file", "", "", "read proxymcp's released version"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			if tc.manifest != "" {
				if err := os.WriteFile(filepath.Join(root, ".release-please-manifest.json"), []byte(tc.manifest), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			got, err := ReleasedVersion(root, "proxymcp")
			if got != tc.want || (err == nil) != (tc.err == "") || (err != nil && !strings.Contains(err.Error(), tc.err)) {
				t.Fatalf("ReleasedVersion = %q, %v; want %q, error containing %q", got, err, tc.want, tc.err)
			}
		})
	}
}

func TestRepoRootOutsideTheRepository(t *testing.T) {
	t.Chdir(t.TempDir())
	if _, err := RepoRoot(); err == nil || !strings.Contains(err.Error(), "run from inside the repository") {
		t.Fatalf("RepoRoot outside the repository: %v", err)
	}
}
