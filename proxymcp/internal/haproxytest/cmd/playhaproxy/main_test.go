package main

import (
	"bufio"
	"context"
	"encoding/json"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/mcpfleet/mcpfleet/proxymcp/internal/haproxytest"
	"github.com/mcpfleet/mcpfleet/proxymcp/internal/runtimeapi"
	"github.com/mcpfleet/mcpfleet/shared/e2e"
)

// TestPlaygroundLifecycle: one JSON line when ready, everything stopped on SIGTERM.
func TestPlaygroundLifecycle(t *testing.T) {
	if !haproxytest.Available() {
		if os.Getenv("CI") == "true" {
			t.Fatal("haproxy is not installed; CI=true forbids skipping")
		}
		t.Skip("haproxy is not installed")
	}
	bin := e2e.Build(t, ".")
	dir := t.TempDir()
	cmd := exec.Command(bin, "-dir", dir)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	defer cmd.Process.Kill()

	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	var ready map[string]string
	if err := json.Unmarshal([]byte(line), &ready); err != nil {
		t.Fatalf("%q: %v", line, err)
	}
	for _, k := range []string{"runtime_url", "runtime_socket", "stats_url", "stats_username", "stats_password", "drain_backend", "drain_server"} {
		if ready[k] == "" {
			t.Errorf("%s missing in %s", k, line)
		}
	}
	if filepath.Dir(ready["runtime_socket"]) != dir {
		t.Errorf("socket %s not under -dir %s", ready["runtime_socket"], dir)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	h := &haproxytest.HAProxy{Socket: ready["runtime_socket"]}
	if err := h.WaitServerStatus(ctx, ready["drain_backend"], ready["drain_server"], "UP"); err != nil {
		t.Fatal(err)
	}
	rt := &runtimeapi.Client{Network: "tcp4", Address: ready["runtime_url"][len("tcp://"):], Timeout: time.Second}
	if _, err := rt.Execute(ctx, "show info"); err != nil {
		t.Fatal(err)
	}

	_ = cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("exit: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("playhaproxy did not stop on SIGTERM")
	}
	if _, err := net.Dial("unix", ready["runtime_socket"]); err == nil {
		t.Error("haproxy still answers after SIGTERM")
	}
	if _, err := rt.Execute(ctx, "show info"); err == nil {
		t.Error("haproxy's TCP socket still answers after SIGTERM")
	}
}
