package procsweep

import (
	"os"
	"os/exec"
	"runtime"
	"syscall"
	"testing"
	"time"
)

// A process that left the CLI's process group (its own session) is still
// found by the run marker and killed.
func TestKillMarkedReachesEscapedProcesses(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the marker sweep reads /proc")
	}
	marker := NewMarker("CODERMCP_TEST_RUN")
	cmd := exec.Command("sleep", "60")
	cmd.Env = append(os.Environ(), marker)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	other := exec.Command("sleep", "60") // no marker: must survive
	if err := other.Start(); err != nil {
		t.Fatal(err)
	}
	defer other.Process.Kill()
	time.Sleep(50 * time.Millisecond) // let exec finish so /proc shows the new environment
	KillMarked(marker)
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("the marked process survived")
	}
	if err := other.Process.Signal(syscall.Signal(0)); err != nil {
		t.Errorf("an unmarked process was killed: %v", err)
	}
}
