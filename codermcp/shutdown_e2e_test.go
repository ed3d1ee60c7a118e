package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcpfleet/mcpfleet/codermcp/internal/codertest/harness"
	"github.com/mcpfleet/mcpfleet/shared/e2e"
)

// TestStdinEOFStopsWarmUp: a server whose CLI was never probed sets up its
// CLI home in the background (WarmHome). Closing stdin right after start
// ends the server; by then the CLI setting up the home must be stopped,
// the home removed, and no CLI the server started (the warm-up, the
// feature probe, the version check) left running.
//
// "real CLI" races the real warm-up against shutdown. "warm-up held"
// makes the window certain: the CLI path is a wrapper that holds the
// warm-up run (CODEX_HOME under the server's state directory, `exec
// --json`) until the test opens a gate after the server has exited, then
// runs the real CLI, which would write into the home removed meanwhile.
func TestStdinEOFStopsWarmUp(t *testing.T) {
	t.Parallel()
	bin := e2e.Build(t, ".")
	for _, tc := range []struct {
		name string
		hold bool
	}{
		{"real CLI", false},
		{"warm-up held", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := harness.New(t)
			state := t.TempDir()
			cliPath, gate := h.CLI, ""
			if tc.hold {
				cliPath, gate = holdWarmUp(t, h.CLI, state)
			}
			cmd := exec.Command(bin)
			// HOME (in h.Env) is new: an empty probe cache, so the warm-up runs
			// beside the probe instead of before serving.
			cmd.Env = append(append([]string{"PATH=" + os.Getenv("PATH"), "LOG_LEVEL=debug"}, h.Env...),
				"CODER_CLI_PATH="+cliPath, "CODER_HOME="+h.Home, "CODER_STATE_DIR="+state)
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			stdin, err := cmd.StdinPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() {
				// Whatever a failed run left: released, then killed.
				if gate != "" {
					_ = os.WriteFile(gate, nil, 0o600)
				}
				for _, pid := range serverCLIs(state, h.Marker) {
					_ = syscall.Kill(pid, syscall.SIGKILL)
				}
			})
			if tc.hold {
				e2e.WaitFor(t, "the held warm-up to start", func() bool { return len(serverCLIs(state, "")) > 0 })
			}
			stdin.Close()
			exited := make(chan error, 1)
			go func() { exited <- cmd.Wait() }()
			select {
			case err := <-exited:
				if err != nil {
					t.Errorf("server exit: %v", err)
				}
			case <-time.After(60 * time.Second):
				_ = cmd.Process.Kill()
				t.Fatalf("the server did not exit within 60s of stdin's end; stderr:\n%s", stderr.String())
			}
			// When the server has exited, every CLI it started is gone or
			// already killed (a SIGKILLed process may take a moment to go).
			for _, pid := range serverCLIs(state, h.Marker) {
				if !killPending(pid) {
					t.Errorf("process %d (%s) started by the server was still running after it exited", pid, harness.Cmdline(pid))
				}
			}
			if !t.Failed() {
				e2e.WaitFor(t, "the killed CLIs to go", func() bool { return len(serverCLIs(state, h.Marker)) == 0 })
			}
			if gate != "" {
				if err := os.WriteFile(gate, nil, 0o600); err != nil {
					t.Fatal(err)
				}
				// A warm-up let through now would write into the home: wait
				// for it to end before looking.
				e2e.WaitFor(t, "the released warm-up to end", func() bool { return len(serverCLIs(state, h.Marker)) == 0 })
			}
			homes, _ := filepath.Glob(filepath.Join(state, "cli-home-*"))
			for _, home := range homes {
				var files []string
				_ = filepath.WalkDir(home, func(p string, _ os.DirEntry, _ error) error {
					files = append(files, strings.TrimPrefix(p, home))
					return nil
				})
				t.Errorf("the CLI's home %s is still there after the server ended: %d entries, e.g. %v", home, len(files), files[:min(len(files), 5)])
			}
			if t.Failed() {
				t.Logf("server stderr:\n%s", stderr.String())
			}
		})
	}
}

// holdWarmUp writes a wrapper around the real CLI at real that holds the
// warm-up run of a server whose CODER_STATE_DIR is state until the
// returned gate file exists, then runs the real CLI. Other runs (the
// feature probe, the version check, calls) go straight to the real CLI.
// WarmHome passes the CLI only PATH, HOME, TMPDIR and the locale, so the
// paths are written into the script.
func holdWarmUp(t *testing.T, real, state string) (wrapper, gate string) {
	t.Helper()
	dir := t.TempDir()
	gate = filepath.Join(dir, "gate")
	wrapper = filepath.Join(dir, "codex-hold-warm-up")
	script := fmt.Sprintf(`#!/bin/sh
# Test wrapper: holds codermcp's warm-up of its CLI home, then runs the real CLI.
case "$CODEX_HOME" in
%s/*)
	if [ "$1 $2" = "exec --json" ]; then
		while [ ! -e %s ]; do sleep 0.05; done
	fi
	;;
esac
exec %s "$@"
`, state, strconv.Quote(gate), strconv.Quote(real))
	if err := os.WriteFile(wrapper, []byte(script), 0o700); err != nil {
		t.Fatal(err)
	}
	return wrapper, gate
}

// killPending reports whether pid has a SIGKILL pending: killed, not yet
// gone.
func killPending(pid int) bool {
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "status"))
	if err != nil {
		return true // gone meanwhile
	}
	for _, line := range strings.Split(string(b), "\n") {
		k, v, _ := strings.Cut(line, ":")
		if k != "SigPnd" && k != "ShdPnd" {
			continue
		}
		if mask, err := strconv.ParseUint(strings.TrimSpace(v), 16, 64); err == nil && mask&(1<<(syscall.SIGKILL-1)) != 0 {
			return true
		}
	}
	return false
}

// serverCLIs returns the live processes a server started: those whose
// environment carries marker (every CLI run that inherits the server's
// environment; "" matches none) or a CODEX_HOME under state (the warm-up,
// which gets a stripped environment).
func serverCLIs(state, marker string) []int {
	pids := map[int]bool{}
	if marker != "" {
		for _, pid := range harness.Leftovers(marker) {
			pids[pid] = true
		}
	}
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		env, err := os.ReadFile(filepath.Join("/proc", e.Name(), "environ"))
		if err != nil {
			continue
		}
		for _, kv := range bytes.Split(env, []byte{0}) {
			if bytes.HasPrefix(kv, []byte("CODEX_HOME="+state+"/")) {
				pids[pid] = true
				break
			}
		}
	}
	out := make([]int, 0, len(pids))
	for pid := range pids {
		out = append(out, pid)
	}
	return out
}
