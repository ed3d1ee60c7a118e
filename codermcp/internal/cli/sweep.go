package cli

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

// runMarkerKey is set in every CLI child's environment with a per-run value.
// Descendants inherit it, so after a cancellation the ones that left the
// process group (a command started in a session of its own) are still found.
const runMarkerKey = "CODERMCP_RUN"

func newRunMarker() string {
	b := make([]byte, 12)
	_, _ = rand.Read(b)
	return runMarkerKey + "=" + hex.EncodeToString(b)
}

// killMarked sends SIGKILL to every process whose environment carries
// marker (Linux only; elsewhere the process-group kill is all there is).
func killMarked(marker string) {
	if runtime.GOOS != "linux" {
		return
	}
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return
	}
	want := []byte(marker)
	self := os.Getpid()
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
				_ = syscall.Kill(pid, syscall.SIGKILL)
				break
			}
		}
	}
}
