package mcpserver_test

import (
	"bytes"
	"errors"
	"image"
	"image/color"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/mcpfleet/mcpfleet/codermcp/internal/codertest"
)

// writePNG writes a small real PNG and returns its path.
func writePNG(t *testing.T, dir, name string) string {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, 4, 4))
	img.Set(1, 1, color.RGBA{R: 200, A: 255})
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, b.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// The CLI options of issue 28 on the newest CLI, through exec and through
// the app-server: images reach the model endpoint, extra writable
// directories take writes, reasoning efforts and web search reach the CLI.
func TestCLIOptions(t *testing.T) {
	t.Parallel()
	e := newPersonEnv(t, cliEnv(codertest.CLIVersion(t, codertest.NewestVersion), 0), &person{action: "accept"})
	t.Run("images", func(t *testing.T) {
		for _, policy := range []string{"never", "untrusted"} {
			dir := t.TempDir()
			img := writePNG(t, dir, "shot.png")
			prompt := "describe the image " + policy
			mustOK(t, e.call(t, "coder", map[string]any{"prompt": prompt, "images": []any{img}, "workingDirectory": dir, "approvalPolicy": policy}))
			reqs := e.h.Endpoint.RequestsWith(prompt)
			if len(reqs) != 1 || len(reqs[0].Images) != 1 || !strings.HasPrefix(reqs[0].Images[0], "data:image/png;base64,") {
				t.Errorf("%s: the endpoint saw %+v, want one PNG", policy, reqs)
			}
		}
	})
	t.Run("addDirs", func(t *testing.T) {
		// on-request: the app-server path with commands in the sandbox (under
		// untrusted the person's accept would run the write anyway).
		for _, policy := range []string{"never", "on-request"} {
			dir, extra, other := t.TempDir(), t.TempDir(), t.TempDir()
			// Writes into the added directory succeed; into another one (not
			// added) the sandbox refuses them: the pin keeps the rest shut.
			for _, tc := range []struct {
				target string
				add    []any
				want   bool
			}{{extra, []any{extra}, true}, {other, []any{extra}, false}} {
				cmd := "echo x > " + filepath.Join(tc.target, "marker")
				mustOK(t, e.call(t, "coder", map[string]any{"prompt": "[[shell:" + cmd + "]]", "sandbox": "workspace-write", "addDirs": tc.add,
					"workingDirectory": dir, "approvalPolicy": policy}))
				_, err := os.Stat(filepath.Join(tc.target, "marker"))
				if tc.want != (err == nil) {
					t.Errorf("%s: write into %s (added %v): marker %v, want written=%v", policy, tc.target, tc.add, err, tc.want)
				}
			}
		}
	})
	t.Run("reasoning efforts", func(t *testing.T) {
		for _, effort := range []string{"minimal", "xhigh"} {
			prompt := "effort " + effort
			mustOK(t, e.call(t, "coder", map[string]any{"prompt": prompt, "reasoningEffort": effort, "workingDirectory": t.TempDir()}))
			if reqs := e.h.Endpoint.RequestsWith(prompt); len(reqs) != 1 || reqs[0].Effort != effort {
				t.Errorf("effort %s: endpoint saw %+v", effort, reqs)
			}
		}
	})
	t.Run("profile", func(t *testing.T) {
		// 0.153 on: a profile is $CODEX_HOME/<name>.config.toml layered on
		// the configuration; its effort reaches the model.
		if err := os.WriteFile(filepath.Join(e.h.Home, "deep.config.toml"), []byte("model_reasoning_effort = \"high\"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		mustOK(t, e.call(t, "coder", map[string]any{"prompt": "profile deep", "profile": "deep", "workingDirectory": t.TempDir()}))
		if reqs := e.h.Endpoint.RequestsWith("profile deep"); len(reqs) != 1 || reqs[0].Effort != "high" {
			t.Errorf("the profile's effort did not reach the model: %+v", reqs)
		}
		// A follow-up resumes: exec resume takes no profile.
		sid := map[string]any{"prompt": "profile session", "sessionId": "prof-s", "workingDirectory": t.TempDir()}
		mustOK(t, e.call(t, "coder", sid))
		sid["prompt"], sid["profile"] = "again", "deep"
		mustError(t, e.call(t, "coder", sid), "profile", "new conversation")
		// With an approval policy (the app-server) it is refused too.
		mustError(t, e.call(t, "coder", map[string]any{"prompt": "p", "profile": "deep", "approvalPolicy": "untrusted", "workingDirectory": t.TempDir()}),
			"cannot be combined with approvalPolicy")
	})
	t.Run("web search", func(t *testing.T) {
		for on, want := range map[bool]string{true: `--config=web_search="live"`, false: `--config=web_search="disabled"`} {
			args := map[string]any{"prompt": "search", "webSearch": on, "workingDirectory": t.TempDir(), "sandbox": "workspace-write"}
			args["dryRun"] = true
			if got := mustOK(t, e.call(t, "coder", args)); !strings.Contains(got, want) {
				t.Errorf("webSearch %v: the preview's command lacks %s: %s", on, want, got)
			}
			delete(args, "dryRun")
			mustOK(t, e.call(t, "coder", args))
		}
	})
}

// On an older CLI an option it lacks is refused naming the release that
// has it, and nothing starts.
func TestCLIOptionsNeedTheirRelease(t *testing.T) {
	t.Parallel()
	e := newApprovalEnv(t, envOptions{cliPath: codertest.CLIVersion(t, "0.50.0")})
	dir := t.TempDir()
	for _, tc := range []struct {
		args map[string]any
		want string
	}{
		{map[string]any{"prompt": "x", "reasoningEffort": "xhigh", "workingDirectory": dir}, "reasoning effort"},
		{map[string]any{"prompt": "x", "addDirs": []any{t.TempDir()}, "sandbox": "workspace-write", "workingDirectory": dir}, "extra writable directories"},
	} {
		res := e.call(t, "coder", tc.args)
		mustError(t, res, tc.want, "needs Codex CLI 0.153.4", "installed Codex CLI 0.50.0", "no CLI process was started")
	}
	e.nothingRan(t, 0, 0)
	// Before 0.153 a profile is a [profiles.<name>] table of config.toml.
	cfg, err := os.OpenFile(filepath.Join(e.h.Home, "config.toml"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = cfg.WriteString("\n[profiles.deep]\nmodel_reasoning_effort = \"high\"\n")
	cfg.Close()
	// 0.50.0 sends no effort for the test model, so the profile shows only
	// as a run the CLI accepted (it refuses an unknown --profile).
	mustOK(t, e.call(t, "coder", map[string]any{"prompt": "legacy profile deep", "profile": "deep", "workingDirectory": dir}))
	if reqs := e.h.Endpoint.RequestsWith("legacy profile deep"); len(reqs) != 1 {
		t.Errorf("the profile's run did not reach the model: %+v", reqs)
	}
}

// Hostile values of every new argument: refused naming the argument, with
// no CLI process and no model request.
func TestHostileOptionsRunNothing(t *testing.T) {
	t.Parallel()
	e := newApprovalEnv(t, envOptions{})
	root := t.TempDir()
	img := writePNG(t, root, "ok.png")
	comma := writePNG(t, root, "a,b.png")
	outside := "/etc/hostname"
	linkOut := filepath.Join(root, "link.png")
	if err := os.Symlink(outside, linkOut); err != nil {
		t.Fatal(err)
	}
	dirLinkOut := filepath.Join(root, "etc-link")
	if err := os.Symlink("/etc", dirLinkOut); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(root, "fifo.png")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	huge := filepath.Join(root, "huge.png")
	if f, err := os.Create(huge); err != nil {
		t.Fatal(err)
	} else {
		_ = f.Truncate(21 << 20) // sparse: 21 MiB over the 20 MiB cap
		f.Close()
	}
	inHome := filepath.Join(e.cfg.Home, "config.toml")
	many := func(v string, n int) []any {
		out := make([]any, n)
		for i := range out {
			out[i] = v
		}
		return out
	}
	base := func(kv ...any) map[string]any {
		m := map[string]any{"prompt": "hostile option [[shell:echo x > hostile.txt]]", "workingDirectory": root, "sandbox": "workspace-write"}
		for i := 0; i+1 < len(kv); i += 2 {
			m[kv[i].(string)] = kv[i+1]
		}
		return m
	}
	rows := []struct {
		name string
		args map[string]any
		want string
	}{
		{"image outside the roots", base("images", []any{outside}), "outside the workspace roots"},
		{"image symlink out of the roots", base("images", []any{linkOut}), "resolves to /etc/hostname"},
		{"image in CODER_HOME", base("images", []any{inHome}), "inside the CLI's configuration directory (CODER_HOME)"},
		{"image is a directory", base("images", []any{root}), "not a regular file"},
		{"image is a fifo", base("images", []any{fifo}), "not a regular file"},
		{"image over the size cap", base("images", []any{huge}), "more than the 20971520 allowed"},
		{"image missing", base("images", []any{filepath.Join(root, "nope.png")}), "does not exist"},
		{"image option-looking", base("images", []any{"--help"}), "does not exist"},
		{"image option-looking -c", base("images", []any{"-c"}), "does not exist"},
		{"image with a comma", base("images", []any{comma}), "contains a comma"},
		{"image with NUL", base("images", []any{img + "\x00x"}), "NUL"},
		{"image path too long", base("images", []any{"/" + strings.Repeat("a", 5000)}), "longer than 4096"},
		{"image empty", base("images", []any{""}), "it is empty"},
		{"nine images", base("images", many(img, 9)), "more than 8"},
		{"image not a string", base("images", []any{7}), "images"},
		{"addDir outside the roots", base("addDirs", []any{"/etc"}), "outside the workspace roots"},
		{"addDir symlink out", base("addDirs", []any{dirLinkOut}), "resolves to /etc"},
		{"addDir is a file", base("addDirs", []any{img}), "not a directory"},
		{"addDir CODER_HOME", base("addDirs", []any{e.cfg.Home}), "addDirs"},
		{"addDir option-looking", base("addDirs", []any{"--add-dir=/"}), "does not exist"},
		{"addDir NUL", base("addDirs", []any{root + "\x00"}), "NUL"},
		{"addDir too long", base("addDirs", []any{"/" + strings.Repeat("d", 5000)}), "longer than 4096"},
		{"nine addDirs", base("addDirs", many(root, 9)), "more than 8"},
		{"addDirs with read-only", base("addDirs", []any{root}, "sandbox", "read-only"), "needs the workspace-write sandbox"},
		{"addDirs with full access", base("addDirs", []any{root}, "sandbox", "danger-full-access"), "needs the workspace-write sandbox"},
		{"profile unknown", base("profile", "nope"), "is not one of the CLI configuration's profiles"},
		{"profile path", base("profile", "../config"), "a profile name is"},
		{"profile absolute", base("profile", "/etc/passwd"), "a profile name is"},
		{"profile option-looking", base("profile", "--dangerously-bypass-approvals-and-sandbox"), "a profile name is"},
		{"profile with space", base("profile", "a b"), "a profile name is"},
		{"profile with newline", base("profile", "a\nb"), "a profile name is"},
		{"profile too long", base("profile", strings.Repeat("p", 65)), "a profile name is"},
		{"profile huge", base("profile", strings.Repeat("p", 1<<20)), "a profile name is"},
		{"webSearch a string", base("webSearch", "live"), "webSearch"},
		{"webSearch a number", base("webSearch", 1), "webSearch"},
		{"effort unknown", base("reasoningEffort", "ultra"), "reasoningEffort"},
		{"effort option-looking", base("reasoningEffort", "--high"), "reasoningEffort"},
		{"approvalPolicy unknown", base("approvalPolicy", "on-failure"), "approvalPolicy"},
		{"approvalPolicy option-looking", base("approvalPolicy", "--never"), "approvalPolicy"},
	}
	for _, tc := range rows {
		t.Run(tc.name, func(t *testing.T) {
			res := e.call(t, "coder", tc.args)
			if !res.IsError {
				t.Fatalf("accepted: %s", text(res))
			}
			if got := text(res); !strings.Contains(got, tc.want) {
				t.Errorf("error %q does not contain %q", got, tc.want)
			}
		})
	}
	e.nothingRan(t, 0, 0)
	if _, err := os.Stat(filepath.Join(root, "hostile.txt")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a hostile call ran the command: %v", err)
	}
}
