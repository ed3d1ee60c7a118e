// Package cli runs the Codex CLI as a child process: it detects the
// installed version and what it supports, builds the argv for that version,
// starts the CLI in its own process group with stdin closed, streams its
// --json events, stops it (and everything it started) on cancellation, and
// classifies failures. It knows nothing about MCP.
package cli

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// Version is a CLI release number.
type Version struct{ Major, Minor, Patch int }

// MinVersion is the oldest CLI codermcp drives.
var MinVersion = Version{0, 36, 0}

// Thresholds where the CLI's surface changed (see the field notes).
var (
	versionJSON       = Version{0, 50, 0}  // exec --json and exec resume
	versionReview     = Version{0, 75, 0}  // codex exec review
	versionNoFullAuto = Version{0, 126, 0} // --full-auto deprecated, later removed: use --sandbox workspace-write
)

var versionRE = regexp.MustCompile(`(\d+)\.(\d+)\.(\d+)`)

// ParseVersion finds the first x.y.z in s (e.g. "codex-cli 0.169.0").
func ParseVersion(s string) (Version, error) {
	m := versionRE.FindStringSubmatch(s)
	if m == nil {
		return Version{}, fmt.Errorf("no version number in %q", strings.TrimSpace(s))
	}
	var v Version
	v.Major, _ = strconv.Atoi(m[1])
	v.Minor, _ = strconv.Atoi(m[2])
	v.Patch, _ = strconv.Atoi(m[3])
	return v, nil
}

// Less reports whether v is older than w.
func (v Version) Less(w Version) bool {
	if v.Major != w.Major {
		return v.Major < w.Major
	}
	if v.Minor != w.Minor {
		return v.Minor < w.Minor
	}
	return v.Patch < w.Patch
}

func (v Version) String() string { return fmt.Sprintf("%d.%d.%d", v.Major, v.Minor, v.Patch) }

// Caps is what the installed CLI supports, decided once per process from its
// version and confirmed against `codex exec --help` (flags churn between
// releases, so the help text has the last word when it is available).
type Caps struct {
	Version          Version
	JSON             bool // exec --json (structured event stream)
	Resume           bool // exec resume <id> (native conversation resume)
	Review           bool // exec review
	SkipGitRepoCheck bool // --skip-git-repo-check
	FullAutoFlag     bool // --full-auto still exists
	// ResumeOptionsAfter: `exec resume` takes --json, --model and
	// --skip-git-repo-check after "resume" (from `exec resume --help`).
	// 0.50.0 does not: they go before it, and a second turn built the new
	// way failed with "unexpected argument '--json'".
	ResumeOptionsAfter bool
}

// CapsFor derives capabilities from a version and, when non-empty, the
// output of `codex exec --help`.
func CapsFor(v Version, execHelp string) Caps {
	c := Caps{
		Version:          v,
		JSON:             !v.Less(versionJSON),
		Resume:           !v.Less(versionJSON),
		Review:           !v.Less(versionReview),
		SkipGitRepoCheck: true,
		FullAutoFlag:     v.Less(versionNoFullAuto),
		// Client.Caps asks `exec resume --help`; this is the default.
		ResumeOptionsAfter: true,
	}
	if strings.TrimSpace(execHelp) != "" {
		c.JSON = c.JSON && strings.Contains(execHelp, "--json")
		c.SkipGitRepoCheck = strings.Contains(execHelp, "--skip-git-repo-check")
		c.FullAutoFlag = c.FullAutoFlag && strings.Contains(execHelp, "--full-auto")
		c.Resume = c.Resume && c.JSON && strings.Contains(execHelp, "resume")
		c.Review = c.Review && strings.Contains(execHelp, "review")
	}
	return c
}
