package cli

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/mcpfleet/mcpfleet/codermcp/internal/workspace"
)

// Sandbox modes the CLI accepts.
const (
	SandboxReadOnly       = "read-only"
	SandboxWorkspaceWrite = "workspace-write"
	SandboxFullAccess     = "danger-full-access"
)

// ApprovalNever is the approval policy every run pins: the CLI runs
// unattended (exec has no one to ask), so it never stops to ask; what it
// may do is bounded by the sandbox alone.
const ApprovalNever = "never"

// EffectiveSandbox is the sandbox the turn runs in: the one asked for, else
// workspace-write for fullAuto, else read-only. The argv always names it,
// so the CLI's own configuration cannot widen it.
func (r ExecRequest) EffectiveSandbox() string {
	switch {
	case r.Sandbox != "":
		return r.Sandbox
	case r.FullAuto:
		return SandboxWorkspaceWrite
	}
	return SandboxReadOnly
}

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
	Pins            Pins   // set by Client.ExecCommand
	// Overrides are further --config settings from the caller (the codex
	// tool's config and instructions), limited to ConfigKeys.
	Overrides []Override
	// Images are local image files (resolved, checked by the caller)
	// attached to the prompt: --image=<path>.
	Images []string
	// AddDirs are extra writable directories (resolved, inside the roots,
	// checked by the caller) of the workspace-write sandbox: they become
	// the pinned sandbox_workspace_write.writable_roots, which is otherwise
	// empty, so no configuration file widens it.
	AddDirs []string
	// WebSearch switches the model's web search: "on", "off" or "" (the
	// CLI's default); WebSearchKey is how this CLI spells it (cliversion:
	// "web_search", a mode, or "tools.web_search", a boolean).
	WebSearch    string
	WebSearchKey string
	// Profile selects one of the CLI home's profiles (new conversations
	// only: exec resume has no --profile).
	Profile string
}

// MaxImages and MaxAddDirs bound a turn's images and extra directories.
const (
	MaxImages  = 8
	MaxAddDirs = 8
)

// Override is one caller-given --config setting: a key of ConfigKeys and a
// string or boolean value.
type Override struct {
	Key   string
	Value any
}

// ConfigKeys are the CLI settings a caller may set through the codex
// tool's config (and its instruction arguments). Anything else — the
// sandbox, the approval policy, model providers, MCP servers, the shell
// environment, notify hooks — would reach past what this server enforces.
var ConfigKeys = map[string]string{
	"base_instructions":        "string",
	"developer_instructions":   "string",
	"compact_prompt":           "string",
	"model_reasoning_summary":  "string",
	"model_verbosity":          "string",
	"hide_agent_reasoning":     "bool",
	"show_raw_agent_reasoning": "bool",
}

// MaxOverrides bounds how many settings one call may carry.
const MaxOverrides = 16

func (o Override) arg() string {
	switch v := o.Value.(type) {
	case bool:
		return "--config=" + o.Key + "=" + strconv.FormatBool(v)
	case string:
		return "--config=" + o.Key + "=" + tomlString(v)
	}
	return "" // Validate refuses it first
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
	Pins        Pins // set by Client.ReviewCommand
}

// Pins are the sandbox settings every run names on its command line, so
// that no configuration file — which a run might have written — widens
// what a later run may write: no extra writable roots, and /tmp or $TMPDIR
// left out of the workspace-write sandbox when the CLI's configuration
// directory lies there (the sandbox may otherwise always write them).
type Pins struct {
	ExcludeSlashTmp bool
	ExcludeTmpdir   bool
}

// PinsFor is the pins for a CLI whose configuration directory is cliHome
// (resolved), with tmpdir the children's $TMPDIR.
func PinsFor(cliHome, tmpdir string) Pins {
	under := func(dir string) bool {
		return cliHome != "" && dir != "" && workspace.Within(cliHome, workspace.Real(dir))
	}
	return Pins{ExcludeSlashTmp: under("/tmp"), ExcludeTmpdir: under(tmpdir)}
}

// Or is the pins that keep both p's and q's directories out of the sandbox.
func (p Pins) Or(q Pins) Pins {
	return Pins{ExcludeSlashTmp: p.ExcludeSlashTmp || q.ExcludeSlashTmp, ExcludeTmpdir: p.ExcludeTmpdir || q.ExcludeTmpdir}
}

func (p Pins) args(addDirs ...string) []string {
	roots := make([]string, len(addDirs))
	for i, d := range addDirs {
		roots[i] = tomlString(d)
	}
	return []string{
		"--config=sandbox_workspace_write.writable_roots=[" + strings.Join(roots, ",") + "]",
		"--config=sandbox_workspace_write.exclude_slash_tmp=" + strconv.FormatBool(p.ExcludeSlashTmp),
		"--config=sandbox_workspace_write.exclude_tmpdir_env_var=" + strconv.FormatBool(p.ExcludeTmpdir),
	}
}

// Config is the pins as app-server configuration overrides (thread/start's
// config), the same settings args puts on an exec command line.
func (p Pins) Config(addDirs ...string) map[string]any {
	roots := make([]any, len(addDirs))
	for i, d := range addDirs {
		roots[i] = d
	}
	return map[string]any{
		"sandbox_workspace_write.writable_roots":         roots,
		"sandbox_workspace_write.exclude_slash_tmp":      p.ExcludeSlashTmp,
		"sandbox_workspace_write.exclude_tmpdir_env_var": p.ExcludeTmpdir,
	}
}

// tomlString renders s as a TOML basic string for a --config key=value
// override: quotes, backslashes and every control character escaped, so the
// value cannot end the string or start another key.
func tomlString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0):
			fmt.Fprintf(&b, "\\u%04X", r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// Every value that comes from a caller is passed so the CLI cannot read it
// as an option: options as one "--name=value" item (verified with CLI
// 0.169.0: clap takes everything after the first "=" as the value, even
// "--uncommitted" or "-c x"), positionals after "--". Validate runs first,
// in ExecArgs and ReviewArgs themselves, so no argv is built from a value
// that was not checked.

// ExecArgs builds the argv (without the program name) for req on a CLI with
// caps, or refuses req.
func ExecArgs(caps Caps, req ExecRequest) ([]string, error) {
	if err := req.Validate(); err != nil {
		return nil, err
	}
	sandbox := req.Sandbox
	if req.ResumeID != "" && caps.Resume {
		// exec resume has no -s/-C: the sandbox goes through a config override
		// and the directory through the child's working directory.
		args := []string{"exec"}
		if caps.ResumeOptionsAfter {
			args = append(args, "resume")
		}
		if caps.JSON {
			args = append(args, "--json")
		}
		if caps.SkipGitRepoCheck {
			args = append(args, "--skip-git-repo-check")
		}
		if !caps.ResumeOptionsAfter {
			// 0.50.0: exec's options before "resume", which itself takes
			// only --config (the model goes as one, so it surely applies).
			args = append(args, "resume")
			if req.Model != "" {
				args = append(args, "--config=model="+tomlString(req.Model))
			}
		} else if req.Model != "" {
			args = append(args, "--model="+req.Model)
		}
		if req.ReasoningEffort != "" {
			args = append(args, "--config=model_reasoning_effort="+tomlString(req.ReasoningEffort))
		}
		args = append(args, overrideArgs(req.Overrides)...)
		args = append(args, req.settingArgs()...)
		args = append(args, "--config=approval_policy="+tomlString(ApprovalNever),
			"--config=sandbox_mode="+tomlString(req.EffectiveSandbox()))
		args = append(args, req.Pins.args(req.AddDirs...)...)
		return append(args, "--", req.ResumeID, req.Prompt), nil
	}
	args := []string{"exec"}
	if caps.JSON {
		args = append(args, "--json")
	}
	if caps.SkipGitRepoCheck {
		args = append(args, "--skip-git-repo-check")
	}
	if req.Profile != "" {
		args = append(args, "--profile="+req.Profile)
	}
	if req.Model != "" {
		args = append(args, "--model="+req.Model)
	}
	if req.ReasoningEffort != "" {
		args = append(args, "--config=model_reasoning_effort="+tomlString(req.ReasoningEffort))
	}
	args = append(args, overrideArgs(req.Overrides)...)
	args = append(args, req.settingArgs()...)
	args = append(args, "--config=approval_policy="+tomlString(ApprovalNever))
	if req.FullAuto && caps.FullAutoFlag {
		args = append(args, "--full-auto")
	}
	if sandbox != "" || !req.FullAuto || !caps.FullAutoFlag {
		// Always named (--full-auto is gone from recent CLIs; it meant the
		// workspace-write sandbox), so the CLI's config cannot widen it.
		args = append(args, "--sandbox="+req.EffectiveSandbox())
	}
	args = append(args, req.Pins.args(req.AddDirs...)...)
	if req.Dir != "" {
		args = append(args, "--cd="+req.Dir)
	}
	return append(args, "--", req.Prompt), nil
}

// settingArgs are the images and the web search switch, each as one
// "--name=value" item (an image path never holds a comma: Validate).
func (r ExecRequest) settingArgs() []string {
	var args []string
	for _, img := range r.Images {
		args = append(args, "--image="+img)
	}
	switch {
	case r.WebSearch == "" || r.WebSearchKey == "":
	case r.WebSearchKey == "tools.web_search":
		args = append(args, "--config=tools.web_search="+strconv.FormatBool(r.WebSearch == "on"))
	default:
		mode := "disabled"
		if r.WebSearch == "on" {
			mode = "live"
		}
		args = append(args, "--config=web_search="+tomlString(mode))
	}
	return args
}

func overrideArgs(os []Override) []string {
	var out []string
	for _, o := range os {
		out = append(out, o.arg())
	}
	return out
}

// ReviewTargets explains the review target combinations the CLI runs.
const ReviewTargets = "exactly one of: uncommitted=true, base=<branch>, commit=<sha> (optionally with title), or prompt (custom review instructions)"

// Validate checks that the request names exactly one review target the CLI
// can run, that title comes with commit, and every value that reaches the
// CLI's argv: base by git's branch-name rules, commit as a hex object name
// or a ref, title as one line of text, prompt as one argument.
func (r ReviewRequest) Validate() error {
	if err := r.validateTargets(); err != nil {
		return err
	}
	switch {
	case r.Base != "":
		if err := CheckBranch("base", r.Base); err != nil {
			return err
		}
	case r.Commit != "":
		if err := CheckCommit("commit", r.Commit); err != nil {
			return err
		}
		if r.Title != "" {
			if err := CheckTitle("title", r.Title); err != nil {
				return err
			}
		}
	case r.Prompt != "":
		if err := CheckPrompt("prompt", r.Prompt, MaxArgBytes); err != nil {
			return err
		}
	}
	if r.Model != "" {
		if err := checkModel(r.Model); err != nil {
			return err
		}
	}
	if r.Dir != "" {
		return checkDir(r.Dir)
	}
	return nil
}

// TargetError is a review request naming no target, or more than one.
type TargetError struct{ msg string }

func (e *TargetError) Error() string { return e.msg }

func (r ReviewRequest) validateTargets() error {
	n := 0
	for _, set := range []bool{r.Uncommitted, r.Base != "", r.Commit != "", r.Prompt != ""} {
		if set {
			n++
		}
	}
	switch {
	case n == 0:
		return &TargetError{fmt.Sprintf("review needs a target; give %s", ReviewTargets)}
	case n > 1:
		return &TargetError{fmt.Sprintf("review cannot combine %s; give %s", r.targetList(), ReviewTargets)}
	case r.Title != "" && r.Commit == "":
		return &TargetError{fmt.Sprintf("title applies only to a commit review; give %s", ReviewTargets)}
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

// ReviewArgs builds the argv for a review, or refuses req: the model as a
// config override and the directory as --cd, both before the review
// subcommand.
func ReviewArgs(caps Caps, req ReviewRequest) ([]string, error) {
	if err := req.Validate(); err != nil {
		return nil, err
	}
	// A review only reads: the sandbox is pinned read-only, so neither the
	// CLI's config nor the model can make it write.
	args := []string{"exec", "--config=approval_policy=" + tomlString(ApprovalNever), "--sandbox=" + SandboxReadOnly}
	args = append(args, req.Pins.args()...)
	if req.Model != "" {
		args = append(args, "--config=model="+tomlString(req.Model))
	}
	if req.Dir != "" {
		args = append(args, "--cd="+req.Dir)
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
		args = append(args, "--base="+req.Base)
	case req.Commit != "":
		args = append(args, "--commit="+req.Commit)
		if req.Title != "" {
			args = append(args, "--title="+req.Title)
		}
	default:
		args = append(args, "--", req.Prompt)
	}
	return args, nil
}
