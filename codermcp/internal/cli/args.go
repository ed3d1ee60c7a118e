package cli

import (
	"fmt"
	"strconv"
)

// Sandbox modes the CLI accepts.
const (
	SandboxReadOnly       = "read-only"
	SandboxWorkspaceWrite = "workspace-write"
	SandboxFullAccess     = "danger-full-access"
)

// ExecRequest is one `coder` turn.
type ExecRequest struct {
	Prompt          string
	Model           string
	ReasoningEffort string // low, medium, high or ""
	Sandbox         string // one of the Sandbox* modes or ""
	FullAuto        bool   // sandboxed automatic execution (workspace-write)
	Dir             string // working directory ("" = the server's)
	ResumeID        string // CLI conversation (thread) id to continue, "" for a new one
	CallbackURI     string // passed to the CLI's environment
}

// ReviewRequest is one `review` run. Exactly one target is set: Uncommitted,
// Base, Commit, or Prompt (custom review instructions).
type ReviewRequest struct {
	Prompt      string
	Uncommitted bool
	Base        string
	Commit      string
	Title       string // with Commit only
	Model       string
	Dir         string
}

// quoteTOML renders s as a TOML basic string for a -c key=value override.
func quoteTOML(s string) string { return strconv.Quote(s) }

// ExecArgs builds the argv (without the program name) for req on a CLI with
// caps. Options come before the prompt, and the prompt follows "--", so a
// prompt starting with "-" is still a prompt.
func ExecArgs(caps Caps, req ExecRequest) []string {
	sandbox := req.Sandbox
	if req.ResumeID != "" && caps.Resume {
		// exec resume has no -s/-C: the sandbox goes through a config override
		// and the directory through the child's working directory.
		args := []string{"exec", "resume"}
		if caps.JSON {
			args = append(args, "--json")
		}
		if caps.SkipGitRepoCheck {
			args = append(args, "--skip-git-repo-check")
		}
		if req.Model != "" {
			args = append(args, "-m", req.Model)
		}
		if req.ReasoningEffort != "" {
			args = append(args, "-c", "model_reasoning_effort="+quoteTOML(req.ReasoningEffort))
		}
		if sandbox == "" && req.FullAuto {
			sandbox = SandboxWorkspaceWrite
		}
		if sandbox != "" {
			args = append(args, "-c", "sandbox_mode="+quoteTOML(sandbox))
		}
		return append(args, req.ResumeID, "--", req.Prompt)
	}
	args := []string{"exec"}
	if caps.JSON {
		args = append(args, "--json")
	}
	if caps.SkipGitRepoCheck {
		args = append(args, "--skip-git-repo-check")
	}
	if req.Model != "" {
		args = append(args, "-m", req.Model)
	}
	if req.ReasoningEffort != "" {
		args = append(args, "-c", "model_reasoning_effort="+quoteTOML(req.ReasoningEffort))
	}
	if req.FullAuto {
		if caps.FullAutoFlag {
			args = append(args, "--full-auto")
		} else if sandbox == "" {
			// --full-auto is gone from recent CLIs; it meant the workspace-write sandbox.
			sandbox = SandboxWorkspaceWrite
		}
	}
	if sandbox != "" {
		args = append(args, "-s", sandbox)
	}
	if req.Dir != "" {
		args = append(args, "-C", req.Dir)
	}
	return append(args, "--", req.Prompt)
}

// ReviewTargetError explains the review target combinations the CLI runs.
const ReviewTargets = "exactly one of: uncommitted=true, base=<branch>, commit=<sha> (optionally with title), or prompt (custom review instructions)"

// Validate checks that the request names exactly one review target the CLI
// can run, and that title comes with commit.
func (r ReviewRequest) Validate() error {
	n := 0
	for _, set := range []bool{r.Uncommitted, r.Base != "", r.Commit != "", r.Prompt != ""} {
		if set {
			n++
		}
	}
	switch {
	case n == 0:
		return fmt.Errorf("review needs a target; give %s", ReviewTargets)
	case n > 1:
		return fmt.Errorf("review cannot combine %s; give %s", r.targetList(), ReviewTargets)
	case r.Title != "" && r.Commit == "":
		return fmt.Errorf("title applies only to a commit review; give %s", ReviewTargets)
	}
	return nil
}

func (r ReviewRequest) targetList() string {
	var s string
	add := func(name string) {
		if s != "" {
			s += " and "
		}
		s += name
	}
	if r.Uncommitted {
		add("uncommitted")
	}
	if r.Base != "" {
		add("base")
	}
	if r.Commit != "" {
		add("commit")
	}
	if r.Prompt != "" {
		add("prompt")
	}
	return s
}

// ReviewArgs builds the argv for a review: the model as a config override and
// the directory as -C, both before the review subcommand.
func ReviewArgs(caps Caps, req ReviewRequest) []string {
	args := []string{"exec"}
	if req.Model != "" {
		args = append(args, "-c", "model="+quoteTOML(req.Model))
	}
	if req.Dir != "" {
		args = append(args, "-C", req.Dir)
	}
	args = append(args, "review")
	if caps.JSON {
		args = append(args, "--json")
	}
	if caps.SkipGitRepoCheck {
		args = append(args, "--skip-git-repo-check")
	}
	switch {
	case req.Uncommitted:
		args = append(args, "--uncommitted")
	case req.Base != "":
		args = append(args, "--base", req.Base)
	case req.Commit != "":
		args = append(args, "--commit", req.Commit)
		if req.Title != "" {
			args = append(args, "--title", req.Title)
		}
	default:
		args = append(args, "--", req.Prompt)
	}
	return args
}
