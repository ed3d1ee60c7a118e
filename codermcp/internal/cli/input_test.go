package cli

import (
	"errors"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// hostile is the attack table every argv value is tried with: option
// look-alikes, separators, encodings, whitespace, paths and shell syntax.
var hostile = []string{
	"-", "--", "-c", "-c model=\"x\"", "--config=model=\"x\"", "--config", "-ofoo", "-m", "-mx",
	"--help", "-h", "--version", "--uncommitted", "--base=main", "--commit=HEAD", "--title=x",
	"--cd=/", "-C/", "--dangerously-bypass-approvals-and-sandbox", "--sandbox=danger-full-access",
	"-s", "--json", "--output-last-message=/tmp/x", "-i/etc/passwd", "--image=/etc/passwd",
	"-p", "--profile=evil", "=", "==", "=x", "x=y", "a=--b",
	"nul\x00byte", "\x00", "cr\rlf", "line\nbreak", "\r\n", "tab\there", "bell\a", "esc\x1b[31m", "del\x7f",
	"\u2010x", "\u2011x", "\u2012x", "\u2013x", "\u2014x", "\u2015x", "\u2212x", "\u2013\u2013config",
	" -c", "\t--help", " leading", "trailing ", "\u00a0nbsp",
	strings.Repeat("a", 300), strings.Repeat("-", 300), strings.Repeat("é", 200),
	"@file", "@/etc/passwd", "@", "~", "~/x", "~root", "..", "../x", "a/../b", "/etc/passwd", ".",
	"$(touch pwned)", "`touch pwned`", "a;touch pwned", "a|cat", "a&&b", "a>out", "a<in", "$HOME", "${IFS}",
	"*", "?", "[a]", "{a,b}", "'quoted'", "\"dq\"", "a\\b", "!event",
	"\u202eevil", "\u2028sep", "\ufeffbom", "\u200bzw", "\xff\xfe",
	"%2d%2dhelp", "\\x2d-help", "&#45;-help",
}

// gitBranchOK asks the real git whether name is a valid branch name.
func gitBranchOK(t *testing.T, name string) bool {
	t.Helper()
	cmd := exec.Command("git", "check-ref-format", "--branch", name)
	// Outside any repository: @{-N} and friends cannot be resolved.
	cmd.Dir = t.TempDir()
	cmd.Env = append(os.Environ(), "GIT_CEILING_DIRECTORIES="+cmd.Dir)
	err := cmd.Run()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		t.Fatalf("git check-ref-format: %v", err)
	}
	return err == nil
}

// branchNames is a table of names for CheckBranch: ordinary ones, every
// rule of check-ref-format, and each special character at the start, in the
// middle and at the end of a name and of a path component.
func branchNames() []string {
	names := []string{
		"main", "master", "feature/x", "release/1.2", "v1.2.3", "a", "A-b_c.d", "deeply/nested/branch/name",
		"users/ana/fix-123", "x.y", "é", "日本", "a+b", "a,b", "a=b", "a$b", "a(b)", "a;b", "a|b", "a&b",
		"a'b", "a\"b", "a`b", "a!b", "a#b", "a%b", "a{b}", "a}b", "a<b>", "@", "a@b", "@a", "a@", "a/@",
		"@/a", "a@{", "a@{b}", "@{-1}", "@{u}", "main@{1}", "HEAD", "head", "HEAD/x", "x/HEAD", "FETCH_HEAD",
		"-x", "--x", "-", "x-", "a/-b", ".x", "x.", "x/.y", "x./y", "x/y.", "a..b", "..", ".", "a/./b",
		"x.lock", "x.lock/y", "y/x.lock", "x.lockx", ".lock", "a.lck", "/x", "x/", "a//b", "//", "/",
		"a b", " a", "a ", "a~b", "a^b", "a:b", "a?b", "a*b", "a[b", "a]b", "a\\b", "a\tb", "a\nb", "a\rb",
		"a\x01b", "a\x1fb", "a\x7fb", "a\u0080b", "a\u00a0b", "a\u2028b", "\u2010x", "\u2212x", "\u2013-x",
		"refs/heads/x", "refs/x", "x/refs", "a..", "a.", "a/b/", "a/b//c", "../x", "~x", "x~", "^x", "x^",
		"x@{0}", "x@", "@{", "{", "}", "a{", "*", "?", "[", "\\", ":", "a/b:c",
	}
	for _, c := range []string{" ", "~", "^", ":", "?", "*", "[", "\\", ".", "/", "@", "{", "-", "\x01", "\x7f", "$", "`", ";", "'", "\"", "=", "é"} {
		names = append(names, c+"x", "x"+c+"y", "x"+c, "a/"+c+"x", "a/x"+c, "x"+c+"/a")
	}
	for _, h := range hostile {
		if strings.IndexByte(h, 0) < 0 && len(h) <= MaxRefBytes {
			names = append(names, h)
		}
	}
	slices.Sort(names)
	return slices.Compact(names)
}

// TestCheckBranchAgreesWithGit runs every name past the real git and past
// CheckBranch: they must agree on each one.
func TestCheckBranchAgreesWithGit(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	names := branchNames()
	var accepted int
	for _, name := range names {
		want := gitBranchOK(t, name)
		err := CheckBranch("base", name)
		if (err == nil) != want {
			t.Errorf("CheckBranch(%q) = %v; git check-ref-format --branch says valid=%v", name, err, want)
		}
		if want {
			accepted++
		}
	}
	t.Logf("%d names compared with git: %d valid, %d invalid", len(names), accepted, len(names)-accepted)
	if accepted < 40 || len(names)-accepted < 100 {
		t.Errorf("the table is lopsided: %d valid, %d invalid", accepted, len(names)-accepted)
	}
}

// TestCheckBranchOwnLimits covers what git cannot be asked about (NUL) and
// the bound codermcp adds to git's rules.
func TestCheckBranchOwnLimits(t *testing.T) {
	for _, name := range []string{"", "a\x00b", "\x00", strings.Repeat("a", MaxRefBytes+1), strings.Repeat("a/", 200) + "b"} {
		err := CheckBranch("base", name)
		var ie *InputError
		if !errors.As(err, &ie) || ie.Param != "base" || ie.Hint == "" {
			t.Errorf("CheckBranch(%.40q) = %v, want an InputError for base with a hint", name, err)
		}
	}
	if err := CheckBranch("base", strings.Repeat("a", MaxRefBytes)); err != nil {
		t.Errorf("a name of exactly %d bytes: %v", MaxRefBytes, err)
	}
}

func TestCheckCommit(t *testing.T) {
	ok := []string{
		"abcd", "ABCD", "0123456789abcdef0123456789abcdef01234567", strings.Repeat("a", 64),
		"HEAD", "HEAD~1", "HEAD^", "HEAD^2", "HEAD~10^2~3", "main", "origin/main", "v1.2.3", "refs/heads/x",
		"release/1.2~2", "feature/é", "a$b", "a;b", "abc", "=", strings.Repeat("a", 40) + "x",
	}
	bad := []string{
		"", "-abcd", "--commit", "-c", "--uncommitted", "--title=x", "-ofoo", "=\n",
		"~1", "^", "~", "..", "a..b", "HEAD..main", "a...b", "HEAD@{1}", "@{-1}", "main:file", "a b", " HEAD", "HEAD ",
		"a\x00b", "a\nb", "a\rb", "a\tb", "x.lock", ".x", "x.", "/x", "x/", "a//b", "a?b", "a*b", "a[b", "a\\b",
		"@", "HEAD~x", "HEAD^{tree}", "HEAD^{/msg}", ":/msg", strings.Repeat("a", MaxRefBytes+1), "\u2212abcd", "\u2010HEAD",
	}
	// \u2212abcd and \u2010HEAD are valid ref names to git (any byte >= 0x80
	// is); they are not options either. Keep them apart from the refusals.
	ok = append(ok, "\u2212abcd", "\u2010HEAD")
	bad = slices.DeleteFunc(bad, func(s string) bool { return s == "\u2212abcd" || s == "\u2010HEAD" })
	for _, c := range ok {
		if err := CheckCommit("commit", c); err != nil {
			t.Errorf("CheckCommit(%q) = %v, want accepted", c, err)
		}
	}
	for _, c := range bad {
		err := CheckCommit("commit", c)
		var ie *InputError
		if !errors.As(err, &ie) || ie.Param != "commit" {
			t.Errorf("CheckCommit(%.40q) = %v, want refused", c, err)
		}
	}
	// Every hostile value starting with an ASCII "-" is refused.
	for _, h := range hostile {
		if strings.HasPrefix(h, "-") && CheckCommit("commit", h) == nil {
			t.Errorf("CheckCommit(%q) accepted a value starting with -", h)
		}
	}
}

func TestCheckTitle(t *testing.T) {
	ok := []string{"Fix the parser", "--uncommitted", "-c model=\"x\"", "$(touch pwned)", "a;b|c", "é 日本 \u2013 dash", "x", strings.Repeat("t", MaxTitleRunes)}
	bad := []string{
		" lead", "trail ", "\tx", "x\n", "a\nb", "a\rb", "a\x00b", "a\x1bb", "a\x7fb", "a\u0085b", "a\u2028b", "a\u2029b",
		"a\u202eb", "a\u2066b", "a\xffb", strings.Repeat("t", MaxTitleRunes+1), " ",
	}
	for _, s := range ok {
		if err := CheckTitle("title", s); err != nil {
			t.Errorf("CheckTitle(%q) = %v, want accepted", s, err)
		}
	}
	for _, s := range bad {
		if err := CheckTitle("title", s); err == nil {
			t.Errorf("CheckTitle(%q) accepted", s)
		}
	}
}

func TestCheckPrompt(t *testing.T) {
	for _, p := range []string{"a\x00", "\x00", strings.Repeat("p", 11), "-"} {
		if err := CheckPrompt("prompt", p, 10); err == nil {
			t.Errorf("CheckPrompt(%.20q, 10) accepted", p)
		}
	}
	for _, p := range []string{"line\nbreak", "-c x", "\u2212", strings.Repeat("p", 10), " -", "- ", "--", "-x"} {
		if err := CheckPrompt("prompt", p, 10); err != nil {
			t.Errorf("CheckPrompt(%q, 10) = %v", p, err)
		}
	}
}

func TestTOMLString(t *testing.T) {
	cases := map[string]string{
		`low`:         `"low"`,
		`a"b`:         `"a\"b"`,
		`a\b`:         `"a\\b"`,
		"a\nb":        `"a\u000Ab"`,
		"a\x00b\x7f":  `"a\u0000b\u007F"`,
		"é\u2010":     "\"é\u2010\"",
		`" x = "evil`: `"\" x = \"evil"`,
	}
	for in, want := range cases {
		if got := tomlString(in); got != want {
			t.Errorf("tomlString(%q) = %s, want %s", in, got, want)
		}
	}
}

// placeholder stands in for a user value to get the argv's shape.
const placeholder = "USERVALUE"

// assertDataSlot checks that argv is the placeholder argv with the value
// put where the placeholder was, and that each such place reads as data:
// the whole item after "--", or the value part of one "--name=" item.
func assertDataSlot(t *testing.T, slot, value string, argv, shape []string, placeholder string) {
	t.Helper()
	if len(argv) != len(shape) {
		t.Errorf("%s %q changed the argv's length: %q vs %q", slot, value, argv, shape)
		return
	}
	sep := slices.Index(shape, "--")
	seen := false
	for i := range shape {
		switch {
		case shape[i] == argv[i]:
		case sep >= 0 && i > sep && shape[i] == placeholder && argv[i] == value:
			seen = true
		case (sep < 0 || i < sep) && strings.HasPrefix(shape[i], "--") && strings.HasSuffix(shape[i], "="+placeholder) &&
			strings.Count(shape[i], "=") == 1 && argv[i] == strings.TrimSuffix(shape[i], placeholder)+value:
			seen = true
		default:
			t.Errorf("%s %q appears as argv item %d %q, not as data: %q", slot, value, i, argv[i], argv)
		}
	}
	if !seen && value != placeholder {
		t.Errorf("%s %q is not in the argv: %q", slot, value, argv)
	}
}

// TestArgvNeverTakesUserValueAsOption tries every hostile value in every
// argv slot built from user input: it is refused, or it sits where the CLI
// reads data only.
func TestArgvNeverTakesUserValueAsOption(t *testing.T) {
	caps := CapsFor(Version{0, 169, 0}, "")
	var refused, passed int
	count := func(err error) {
		if err != nil {
			var ie *InputError
			if !errors.As(err, &ie) {
				t.Errorf("refusal is %T (%v), want *InputError", err, err)
			}
			refused++
		} else {
			passed++
		}
	}
	type slot struct {
		name   string
		build  func(v string) ([]string, error)
		isData bool // a value that passes may be a user's data here
	}
	thread := "01a20e7e-a2b9-7a42-96f7-ee38475c4456"
	exec := func(f func(v string) ExecRequest) func(string) ([]string, error) {
		return func(v string) ([]string, error) { return ExecArgs(caps, f(v)) }
	}
	review := func(f func(v string) ReviewRequest) func(string) ([]string, error) {
		return func(v string) ([]string, error) { return ReviewArgs(caps, f(v)) }
	}
	slots := []slot{
		{"prompt", exec(func(v string) ExecRequest { return ExecRequest{Prompt: v, Model: "m", Dir: "/w"} }), true},
		{"resumed prompt", exec(func(v string) ExecRequest { return ExecRequest{Prompt: v, Model: "m", ResumeID: thread} }), true},
		{"model", exec(func(v string) ExecRequest { return ExecRequest{Prompt: "p", Model: v} }), false},
		{"thread id", exec(func(v string) ExecRequest { return ExecRequest{Prompt: "p", ResumeID: v} }), false},
		{"dir", exec(func(v string) ExecRequest { return ExecRequest{Prompt: "p", Dir: v} }), false},
		{"reasoningEffort", exec(func(v string) ExecRequest { return ExecRequest{Prompt: "p", ReasoningEffort: v} }), false},
		{"sandbox", exec(func(v string) ExecRequest { return ExecRequest{Prompt: "p", Sandbox: v} }), false},
		{"callbackUri", exec(func(v string) ExecRequest { return ExecRequest{Prompt: "p", CallbackURI: v} }), false},
		{"base", review(func(v string) ReviewRequest { return ReviewRequest{Base: v} }), true},
		{"commit", review(func(v string) ReviewRequest { return ReviewRequest{Commit: v} }), true},
		{"title", review(func(v string) ReviewRequest { return ReviewRequest{Commit: "HEAD", Title: v} }), true},
		{"review prompt", review(func(v string) ReviewRequest { return ReviewRequest{Prompt: v} }), true},
		{"review model", review(func(v string) ReviewRequest { return ReviewRequest{Uncommitted: true, Model: v} }), false},
		{"review dir", review(func(v string) ReviewRequest { return ReviewRequest{Uncommitted: true, Dir: v} }), false},
	}
	for _, sl := range slots {
		ph := placeholder
		if strings.HasSuffix(sl.name, "dir") {
			ph = "/" + placeholder // a directory is absolute
		}
		enum := sl.name == "reasoningEffort" || sl.name == "sandbox" || sl.name == "callbackUri"
		shape, err := sl.build(ph)
		if err != nil && !enum {
			t.Fatalf("%s: the placeholder is refused: %v", sl.name, err)
		}
		for _, h := range hostile {
			v := h
			if strings.HasSuffix(sl.name, "dir") {
				v = "/" + h
			}
			argv, err := sl.build(v)
			count(err)
			switch {
			case err != nil:
			case enum:
				// An enum, or the environment (callbackUri): hostile values
				// may only pass where they are inert text in an env var.
				if sl.name != "callbackUri" {
					t.Errorf("%s %q accepted", sl.name, h)
				}
			case sl.name == "review model":
				// A TOML string inside one --config= item (tomlString is
				// tested on its own for quotes and escapes).
				if want := argvWith(shape, tomlString(ph), tomlString(v)); !slices.Equal(argv, want) {
					t.Errorf("review model %q: argv %q, want %q", h, argv, want)
				}
			default:
				assertDataSlot(t, sl.name, v, argv, shape, ph)
			}
		}
	}
	t.Logf("%d hostile values x %d slots: %d refused, %d passed as data", len(hostile), len(slots), refused, passed)
	// Refused outright whatever the slot: NUL, and a leading ASCII "-" where
	// the value is a name (base, commit, model, thread id, effort, sandbox).
	for _, h := range hostile {
		if !strings.HasPrefix(h, "-") {
			continue
		}
		if _, err := ReviewArgs(caps, ReviewRequest{Base: h}); err == nil {
			t.Errorf("base %q accepted", h)
		}
		if _, err := ExecArgs(caps, ExecRequest{Prompt: "p", Model: h}); err == nil {
			t.Errorf("model %q accepted", h)
		}
		if _, err := ExecArgs(caps, ExecRequest{Prompt: "p", ResumeID: h}); err == nil {
			t.Errorf("thread id %q accepted", h)
		}
	}
}

// argvWith is shape with the item old replaced by new (for values the
// builder prefixes, like a working directory).
func argvWith(shape []string, old, new string) []string {
	out := slices.Clone(shape)
	for i, a := range out {
		out[i] = strings.Replace(a, old, new, 1)
	}
	return out
}
