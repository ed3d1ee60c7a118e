package appserver

import (
	"bytes"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"syscall"
)

// killMarked sends SIGKILL to every process whose environment carries
// marker: the agent's commands that started a session of their own and so
// escaped the process-group kill (Linux only; elsewhere the group kill is
// all there is). The same sweep as internal/cli's, kept here so this
// package stands alone while the tools are rewired.
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
