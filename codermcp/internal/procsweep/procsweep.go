// Package procsweep finds the processes a CLI run left behind after its
// process group was killed: every child gets a per-run marker in its
// environment, descendants inherit it, and after a cancellation the ones that
// left the group (a command started in a session of its own) are still found
// by that marker and killed. internal/cli (codex exec) and internal/appserver
// (codex app-server) both use it.
package procsweep

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"syscall"
)

// NewMarker returns "key=<random hex>", an environment entry unique to one
// run.
func NewMarker(key string) string {
	b := make([]byte, 12)
	_, _ = rand.Read(b)
	return key + "=" + hex.EncodeToString(b)
}

// KillMarked sends SIGKILL to every process whose environment carries
// marker (Linux only; elsewhere the process-group kill is all there is).
func KillMarked(marker string) {
	if runtime.GOOS != "linux" {
		return
	}
	for _, pid := range Marked(marker) {
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
}

// Marked returns the pids of the processes (other than this one) whose
// environment holds marker, a "KEY=value" entry. It reads /proc: elsewhere
// it finds nothing.
func Marked(marker string) []int {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	want := []byte(marker)
	self := os.Getpid()
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == self {
			continue
		}
		env, err := os.ReadFile(filepath.Join("/proc", e.Name(), "environ"))
		if err != nil {
			continue
		}
		for _, kv := range bytes.Split(env, []byte{0}) {
			if bytes.Equal(kv, want) {
				pids = append(pids, pid)
				break
			}
		}
	}
	return pids
}
