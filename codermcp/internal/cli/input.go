package cli

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Limits on values that end up in the CLI's argv or environment.
const (
	// MaxArgBytes is the longest single argv item Linux passes to a child
	// (MAX_ARG_STRLEN, 32 pages, minus the terminating NUL); a longer one
	// fails the exec with E2BIG.
	MaxArgBytes = 32*4096 - 1
	// MaxPromptBytes bounds a caller's prompt, leaving room under
	// MaxArgBytes for the context codermcp prepends from earlier turns.
	MaxPromptBytes = 100 << 10
	// MaxRefBytes bounds a branch or commit name (git has no limit of its
	// own; ref files and packed-refs lines are bounded in practice).
	MaxRefBytes = 255
	// MaxTitleRunes bounds a review title (a one-line summary heading).
	MaxTitleRunes = 200
	// MaxModelBytes bounds a model id.
	MaxModelBytes = 256
	// MaxPathBytes bounds a working directory (PATH_MAX).
	MaxPathBytes = 4096
	// MaxURIBytes bounds a callback URI.
	MaxURIBytes = 2048
)

// InputError says which value was refused and why, before any process
// started. Value is already quoted and clipped for display.
type InputError struct {
	Param   string // the tool parameter, e.g. "base"
	Value   string // %q of the value, clipped
	Problem string // what is wrong with it
	Hint    string // what to pass instead
}

func (e *InputError) Error() string {
	return fmt.Sprintf("%s %s is refused: %s", e.Param, e.Value, e.Problem)
}

func refuse(param, value, problem, hint string) *InputError {
	shown := value
	if utf8.RuneCountInString(shown) > 64 {
		r := []rune(shown)
		shown = string(r[:64]) + "…"
	}
	return &InputError{Param: param, Value: fmt.Sprintf("%q", shown), Problem: problem, Hint: hint}
}

const branchHint = "Pass a branch name git accepts (git check-ref-format --branch), such as main or release/1.2"

// CheckBranch applies git's rules for a branch name (`git check-ref-format
// --branch`, git 2.39): the name must be a valid refs/heads/<name>, must not
// start with "-" and must not be HEAD. It also bounds the length.
func CheckBranch(param, name string) error {
	switch {
	case name == "":
		return refuse(param, name, "it is empty", branchHint)
	case len(name) > MaxRefBytes:
		return refuse(param, name, fmt.Sprintf("it is %d bytes long, more than the %d allowed", len(name), MaxRefBytes), branchHint)
	case name[0] == '-':
		return refuse(param, name, `a branch name cannot start with "-"`, branchHint)
	case name == "HEAD":
		return refuse(param, name, "HEAD is not a branch name", branchHint)
	}
	if problem := refnameProblem("refs/heads/" + name); problem != "" {
		return refuse(param, name, problem, branchHint)
	}
	return nil
}

const commitHint = "Pass a commit as a hex object name (4 to 64 hex digits) or a ref such as main, v1.2 or HEAD~1"

var (
	hexObject = regexp.MustCompile(`^[0-9a-fA-F]{4,64}$`)
	// ancestry is the ~N / ^N suffix a revision may carry after its ref.
	ancestry = regexp.MustCompile(`(?:[~^][0-9]{0,6})+$`)
)

// CheckCommit accepts a hex object name (4-64 hex digits) or a ref name git
// accepts (check-ref-format, one level allowed) with an optional ~N/^N
// ancestry suffix. Nothing may start with "-".
func CheckCommit(param, rev string) error {
	switch {
	case rev == "":
		return refuse(param, rev, "it is empty", commitHint)
	case len(rev) > MaxRefBytes:
		return refuse(param, rev, fmt.Sprintf("it is %d bytes long, more than the %d allowed", len(rev), MaxRefBytes), commitHint)
	case hexObject.MatchString(rev):
		return nil
	case rev[0] == '-':
		return refuse(param, rev, `a commit cannot start with "-"`, commitHint)
	}
	ref := rev
	if loc := ancestry.FindStringIndex(rev); loc != nil {
		ref = rev[:loc[0]]
	}
	if ref == "" {
		return refuse(param, rev, "it has an ancestry suffix but no ref before it", commitHint)
	}
	if problem := refnameProblem(ref); problem != "" {
		return refuse(param, rev, "it is neither a hex object name nor a valid ref: "+problem, commitHint)
	}
	return nil
}

// refnameProblem implements git's check_refname_format (refs.c) without
// flags other than allowing one level: it returns what is wrong, or "".
func refnameProblem(ref string) string {
	if ref == "@" {
		return `"@" alone is not a ref name`
	}
	if strings.HasSuffix(ref, ".") {
		return `a ref name cannot end with "."`
	}
	for _, comp := range strings.Split(ref, "/") {
		if comp == "" {
			return `a ref name cannot start or end with "/" or contain "//"`
		}
		if comp[0] == '.' {
			return `no part of a ref name may start with "."`
		}
		if strings.HasSuffix(comp, ".lock") {
			return `no part of a ref name may end with ".lock"`
		}
		if strings.Contains(comp, "..") {
			return `a ref name cannot contain ".."`
		}
		if strings.Contains(comp, "@{") {
			return `a ref name cannot contain "@{"`
		}
		for i := 0; i < len(comp); i++ {
			c := comp[i]
			switch {
			case c < 0x20 || c == 0x7f:
				return "a ref name cannot contain control characters"
			case strings.IndexByte(" ~^:?*[\\", c) >= 0:
				return fmt.Sprintf("a ref name cannot contain %q", string(c))
			}
		}
	}
	return ""
}

const titleHint = "Pass a short one-line title without control characters, or omit it"

// CheckTitle accepts a one-line title: no control, line-separator or
// bidirectional-override characters, no surrounding whitespace, at most
// MaxTitleRunes characters.
func CheckTitle(param, title string) error {
	switch {
	case !utf8.ValidString(title):
		return refuse(param, title, "it is not valid UTF-8", titleHint)
	case utf8.RuneCountInString(title) > MaxTitleRunes:
		return refuse(param, title, fmt.Sprintf("it is longer than %d characters", MaxTitleRunes), titleHint)
	case strings.TrimSpace(title) != title:
		return refuse(param, title, "it starts or ends with whitespace", titleHint)
	}
	for _, r := range title {
		if invisibleControl(r) {
			return refuse(param, title, fmt.Sprintf("it contains the control character %U", r), titleHint)
		}
	}
	return nil
}

// invisibleControl reports characters that change how text around them
// reads: C0/C1 controls, line and paragraph separators, bidi overrides.
func invisibleControl(r rune) bool {
	return unicode.IsControl(r) || r == '\u2028' || r == '\u2029' ||
		(r >= '\u202a' && r <= '\u202e') || (r >= '\u2066' && r <= '\u2069') || r == utf8.RuneError
}

// CheckPrompt accepts any text a process can receive as one argument: no
// NUL (which cannot be passed), at most limit bytes, and not the CLI's
// stdin marker "-".
func CheckPrompt(param, prompt string, limit int) error {
	switch {
	case prompt == "-":
		// Verified with CLI 0.169.0: even after "--", a prompt of exactly
		// "-" means "read the prompt from stdin".
		return refuse(param, prompt, `a prompt of just "-" means "read from stdin" to the CLI`, "Write the task out in words")
	case strings.IndexByte(prompt, 0) >= 0:
		return refuse(param, prompt, "it contains a NUL character, which cannot be passed to a process", "Remove the NUL characters")
	case len(prompt) > limit:
		return refuse(param, prompt, fmt.Sprintf("it is %d bytes long, more than the %d allowed", len(prompt), limit), "Shorten it, or put the material in a file in the working directory and refer to it")
	}
	return nil
}

var (
	modelID  = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._:/@+-]*$`)
	threadID = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$`)
)

// checkModel is the CLI package's own bound on a model id; the server also
// checks its catalogue.
func checkModel(m string) error {
	if len(m) > MaxModelBytes || !modelID.MatchString(m) {
		return refuse("model", m, "a model id is letters, digits and . _ : / @ + - , starting with a letter or digit", "Pass a model id from the server's catalogue, or omit it")
	}
	return nil
}

func checkDir(dir string) error {
	switch {
	case !strings.HasPrefix(dir, "/"):
		return refuse("workingDirectory", dir, "it is not an absolute path", "Pass an absolute path")
	case len(dir) > MaxPathBytes || strings.IndexByte(dir, 0) >= 0:
		return refuse("workingDirectory", dir, "it is not a usable path", "Pass an existing directory")
	}
	return nil
}

func checkCallbackURI(uri string) error {
	if len(uri) > MaxURIBytes {
		return refuse("callbackUri", uri, fmt.Sprintf("it is longer than %d bytes", MaxURIBytes), "Pass a shorter URI, or omit it")
	}
	for _, r := range uri {
		if unicode.IsControl(r) || unicode.IsSpace(r) {
			return refuse("callbackUri", uri, "it contains whitespace or control characters", "Pass a URI such as http://127.0.0.1:9000/callback, or omit it")
		}
	}
	return nil
}

// Validate checks every value of the turn that reaches the CLI's argv or
// environment. Exec refuses a request that fails it before starting
// anything.
func (r ExecRequest) Validate() error {
	if strings.TrimSpace(r.Prompt) == "" {
		return refuse("prompt", r.Prompt, "it is empty", "Pass the task for the coding assistant in prompt")
	}
	if err := CheckPrompt("prompt", r.Prompt, MaxArgBytes); err != nil {
		return err
	}
	if r.Model != "" {
		if err := checkModel(r.Model); err != nil {
			return err
		}
	}
	switch r.ReasoningEffort {
	case "", "none", "minimal", "low", "medium", "high", "xhigh":
	default:
		return refuse("reasoningEffort", r.ReasoningEffort, "it is not one of none, minimal, low, medium, high, xhigh", "Pass one of them, or omit it")
	}
	if len(r.Images) > MaxImages {
		return refuse("images", fmt.Sprintf("%d images", len(r.Images)), fmt.Sprintf("more than %d images", MaxImages), "Pass fewer images")
	}
	for _, img := range r.Images {
		switch {
		case !strings.HasPrefix(img, "/") || len(img) > MaxPathBytes || strings.IndexByte(img, 0) >= 0:
			return refuse("images", img, "it is not a usable absolute path", "Pass image files under the workspace roots")
		case strings.ContainsRune(img, ','):
			// The CLI splits --image values at commas.
			return refuse("images", img, "it contains a comma, which the CLI would read as two paths", "Rename or copy the image to a path without a comma")
		}
	}
	if len(r.AddDirs) > MaxAddDirs {
		return refuse("addDirs", fmt.Sprintf("%d directories", len(r.AddDirs)), fmt.Sprintf("more than %d directories", MaxAddDirs), "Pass fewer directories")
	}
	for _, d := range r.AddDirs {
		if err := checkDir(d); err != nil {
			return refuse("addDirs", d, "it is not a usable absolute path", "Pass existing directories under the workspace roots")
		}
	}
	if r.Profile != "" {
		if !ProfileName.MatchString(r.Profile) {
			return refuse("profile", r.Profile, "a profile name is 1-64 of A-Z a-z 0-9 _ - starting with a letter or digit", "Pass the name of one of the CLI configuration's profiles, or omit it")
		}
		if r.ResumeID != "" {
			return refuse("profile", r.Profile, "it applies to a new conversation only (exec resume takes no --profile)", "Pass it in a new session (or with resetSession=true), or omit it")
		}
	}
	switch r.WebSearch {
	case "", "on", "off":
	default:
		return refuse("webSearch", r.WebSearch, "it is not on or off", "Pass true or false, or omit it")
	}
	switch r.Sandbox {
	case "", SandboxReadOnly, SandboxWorkspaceWrite, SandboxFullAccess:
	default:
		return refuse("sandbox", r.Sandbox, "it is not a sandbox mode", "Pass read-only, workspace-write or danger-full-access, or omit it")
	}
	if r.Dir != "" {
		if err := checkDir(r.Dir); err != nil {
			return err
		}
	}
	if r.ResumeID != "" && !threadID.MatchString(r.ResumeID) {
		return refuse("threadId", r.ResumeID, "it is not a CLI conversation id", "Reset the session (resetSession=true)")
	}
	if r.CallbackURI != "" {
		if err := checkCallbackURI(r.CallbackURI); err != nil {
			return err
		}
	}
	return CheckOverrides(r.Overrides)
}

// CheckOverrides checks caller-given CLI settings: known keys only (see
// ConfigKeys), each of its type, strings within one argv item's bounds.
func CheckOverrides(os []Override) error {
	if len(os) > MaxOverrides {
		return refuse("config", fmt.Sprintf("%d settings", len(os)), fmt.Sprintf("more than %d settings", MaxOverrides), "Pass fewer settings")
	}
	for _, o := range os {
		want, ok := ConfigKeys[o.Key]
		if !ok {
			keys := make([]string, 0, len(ConfigKeys))
			for k := range ConfigKeys {
				keys = append(keys, k)
			}
			slices.Sort(keys)
			return refuse("config", o.Key, "this server does not pass that setting to the CLI (sandbox, approval, provider, MCP server, shell and hook settings stay the server's)",
				"Use one of: "+strings.Join(keys, ", ")+"; the sandbox and approval policy have their own arguments")
		}
		switch v := o.Value.(type) {
		case bool:
			if want != "bool" {
				return refuse("config."+o.Key, fmt.Sprint(v), "it takes a string", "Pass a string")
			}
		case string:
			if want != "string" {
				return refuse("config."+o.Key, v, "it takes true or false", "Pass true or false")
			}
			if err := CheckPrompt("config."+o.Key, v, MaxArgBytes/4); err != nil {
				return err
			}
		default:
			return refuse("config."+o.Key, fmt.Sprint(o.Value), "it takes a "+want+" (numbers, lists and tables are not passed)", "Pass a "+want)
		}
	}
	return nil
}
