package cli

import (
	"fmt"
	"regexp"
	"strings"
	"time"
)

// FailureKind says why a CLI run failed, in terms a user can act on.
type FailureKind int

const (
	// FailExec: the CLI is missing, not executable, too old, or failed (network, crash, bad flags).
	FailExec FailureKind = iota
	// FailAuth: the CLI is not logged in or its credentials were refused.
	FailAuth
	// FailModel: the CLI or its provider rejected the model.
	FailModel
	// FailTimeout: the run exceeded the configured limit and was stopped.
	FailTimeout
	// FailCanceled: the caller cancelled the run and it was stopped.
	FailCanceled
	// FailUnknownThread: resume asked for a conversation the CLI does not know.
	FailUnknownThread
)

// Error is a classified CLI failure.
type Error struct {
	Kind  FailureKind
	Cause string        // the CLI's own words (one line), or the start error
	Limit time.Duration // for FailTimeout
	// Step, when set, is the command that was running when the run ended
	// (e.g. "codex --version" for the version probe), for FailTimeout and
	// FailCanceled from a short informational command.
	Step string
	Err  error // underlying error, when there is one
}

func (e *Error) Error() string {
	switch e.Kind {
	case FailTimeout:
		if e.Step != "" {
			return fmt.Sprintf("%s timed out after %s", e.Step, e.Limit)
		}
		return fmt.Sprintf("CLI run timed out after %s", e.Limit)
	case FailCanceled:
		return "CLI run cancelled"
	}
	return e.Cause
}

func (e *Error) Unwrap() error { return e.Err }

var (
	authRE = regexp.MustCompile(`(?i)401 Unauthorized|403 Forbidden|invalid_api_key|Incorrect API key|missing bearer|Not logged in|access token could not be refreshed|log out and sign in again|refresh token .*(expired|revoked|invalid)|Missing environment variable`)
	// "Model metadata for `X` not found" is a harmless warning for any
	// uncatalogued model, so "not found" alone must not match.
	modelRE         = regexp.MustCompile(`(?i)model_not_found|model .{0,80}does not exist|does not exist or you do not have access|model .*not supported|unsupported model|invalid model`)
	networkWaitRE   = regexp.MustCompile(`(?i)waiting for network`)
	unknownThreadRE = regexp.MustCompile(`(?i)no rollout found|thread not found|session not found|no conversation found`)
)

// classify decides the failure kind from everything the CLI said. The
// most specific signal wins: an unknown thread, then auth, then model.
func classify(texts ...string) *Error {
	all := strings.Join(texts, "\n")
	cause := mainCause(texts...)
	switch {
	case unknownThreadRE.MatchString(all):
		return &Error{Kind: FailUnknownThread, Cause: cause}
	case authRE.MatchString(all):
		return &Error{Kind: FailAuth, Cause: cause}
	case modelRE.MatchString(all):
		return &Error{Kind: FailModel, Cause: cause}
	}
	return &Error{Kind: FailExec, Cause: cause}
}

// mainCause picks the most telling line: the first text given that has a
// non-noise line (callers pass the turn.failed message first).
func mainCause(texts ...string) string {
	for _, t := range texts {
		for _, line := range strings.Split(t, "\n") {
			line = strings.TrimSpace(line)
			if line == "" || isNoise(line) {
				continue
			}
			return clip(line)
		}
	}
	return "the CLI exited without saying why"
}

// stderrCause picks the last "Error:" line of stderr, else its last
// meaningful line.
func stderrCause(stderr string) string {
	lines := strings.Split(stderr, "\n")
	last := ""
	for _, line := range lines {
		line = strings.TrimSpace(line)
		if line == "" || isNoise(line) {
			continue
		}
		if strings.HasPrefix(line, "Error:") || strings.HasPrefix(line, "ERROR:") || strings.HasPrefix(line, "error:") {
			last = line
		}
	}
	if last != "" {
		return clip(last)
	}
	for i := len(lines) - 1; i >= 0; i-- {
		if line := strings.TrimSpace(lines[i]); line != "" && !isNoise(line) {
			return clip(line)
		}
	}
	return ""
}

func clip(line string) string {
	if len(line) > 400 {
		return line[:400] + "…"
	}
	return line
}

var backtraceRE = regexp.MustCompile(`^\d+: (<unknown>|0x[0-9a-f]+)|^at \S+:\d+`)

// isNoise reports stderr lines every run prints, which explain nothing.
func isNoise(line string) bool {
	for _, p := range []string{"WARNING: proceeding, even though", "Reading additional input from stdin", "Reading prompt from stdin", "Stack backtrace", "warning: ", "Model metadata for"} {
		if strings.Contains(line, p) {
			return true
		}
	}
	return backtraceRE.MatchString(line)
}
