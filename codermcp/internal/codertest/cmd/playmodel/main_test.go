package main

import (
	"bufio"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The playground command as a developer runs it: built, started, answering
// with labelled canned replies, and stopping cleanly on SIGINT and SIGTERM.
func TestPlaymodel(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "playmodel")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		t.Run(sig.String(), func(t *testing.T) {
			dir := t.TempDir()
			cmd := exec.Command(bin, "-dir", dir)
			stdout, _ := cmd.StdoutPipe()
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			defer cmd.Process.Kill()
			line, err := bufio.NewReader(stdout).ReadString('\n')
			if err != nil {
				t.Fatalf("no ready line: %v", err)
			}
			var ready struct {
				CodexHome string `json:"codex_home"`
				Model     string `json:"model"`
				Endpoint  string `json:"endpoint"`
			}
			if err := json.Unmarshal([]byte(line), &ready); err != nil || ready.Model == "" || !strings.HasPrefix(ready.Endpoint, "http://127.0.0.1:") {
				t.Fatalf("ready line %q: %v", line, err)
			}
			if !strings.HasPrefix(ready.CodexHome, dir) {
				t.Errorf("codex_home %q is not under -dir %q", ready.CodexHome, dir)
			}
			cfg, err := os.ReadFile(filepath.Join(ready.CodexHome, "config.toml"))
			if err != nil || !strings.Contains(string(cfg), ready.Endpoint+"/v1") {
				t.Errorf("config.toml = %q, %v; want it pointing at the endpoint", cfg, err)
			}
			body := `{"model":"` + ready.Model + `","input":[{"type":"message","role":"user","content":[{"type":"input_text","text":"hi"}]}]}`
			resp, err := http.Post(ready.Endpoint+"/v1/responses", "application/json", strings.NewReader(body))
			if err != nil {
				t.Fatal(err)
			}
			sse, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if !strings.Contains(string(sse), "[playground canned reply]") {
				t.Errorf("reply lacks the playground label:\n%s", sse)
			}
			_ = cmd.Process.Signal(sig)
			if rest, _ := io.ReadAll(stdout); len(strings.TrimSpace(string(rest))) != 0 {
				t.Errorf("more than one line on stdout: %q", rest)
			}
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			select {
			case err := <-done:
				if err != nil {
					t.Errorf("exit after %s: %v, want status 0", sig, err)
				}
			case <-time.After(10 * time.Second):
				t.Fatalf("still running 10s after %s", sig)
			}
		})
	}
}
