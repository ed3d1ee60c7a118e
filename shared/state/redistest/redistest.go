// Package redistest starts Debian's redis-server for tests: on a free
// 127.0.0.1 port, in a temporary directory, stopped when the test ends.
// Without redis-server the test is skipped, except with CI=true, where it
// fails (scripts/install/shared.sh installs it).
package redistest

import (
	"bufio"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Server is a running redis-server.
type Server struct {
	t       testing.TB
	Dir     string
	Port    int
	Persist bool // appendonly yes
	cmd     *exec.Cmd
	done    chan struct{}
}

// URL is the server's redis:// URL.
func (s *Server) URL() string { return fmt.Sprintf("redis://127.0.0.1:%d/0", s.Port) }

// Start starts redis-server; persist turns on the append-only file.
func Start(t testing.TB, persist bool) *Server {
	t.Helper()
	if _, err := exec.LookPath("redis-server"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("redis-server is not installed (scripts/install/shared.sh installs Debian's redis-server)")
		}
		t.Skip("redis-server is not installed (scripts/install/shared.sh)")
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	s := &Server{t: t, Dir: t.TempDir(), Port: port, Persist: persist}
	s.Restart()
	t.Cleanup(s.Stop)
	return s
}

// Restart starts the server again after Stop (same port and directory).
func (s *Server) Restart() {
	s.t.Helper()
	aof := "no"
	if s.Persist {
		aof = "yes"
	}
	s.cmd = exec.Command("redis-server", "--port", fmt.Sprint(s.Port), "--bind", "127.0.0.1",
		"--dir", s.Dir, "--save", "", "--appendonly", aof, "--appendfsync", "always", "--daemonize", "no")
	out, err := s.cmd.StdoutPipe()
	if err != nil {
		s.t.Fatal(err)
	}
	if err := s.cmd.Start(); err != nil {
		s.t.Fatal(err)
	}
	s.done = make(chan struct{})
	ready := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(out)
		once := false
		for sc.Scan() {
			if !once && strings.Contains(sc.Text(), "Ready to accept connections") {
				once = true
				close(ready)
			}
		}
		s.cmd.Wait()
		close(s.done)
	}()
	select {
	case <-ready:
	case <-s.done:
		s.t.Fatalf("redis-server exited at start (see %s)", filepath.Join(s.Dir))
	case <-time.After(30 * time.Second):
		s.t.Fatal("redis-server did not start within 30s")
	}
}

// Stop ends the server (SIGTERM: with appendonly the file is complete) and
// waits for it.
func (s *Server) Stop() {
	if s.cmd == nil || s.cmd.Process == nil {
		return
	}
	select {
	case <-s.done:
		return
	default:
	}
	s.cmd.Process.Signal(os.Interrupt)
	select {
	case <-s.done:
	case <-time.After(30 * time.Second):
		s.cmd.Process.Kill()
		<-s.done
	}
}
