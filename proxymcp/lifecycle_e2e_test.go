package main

import (
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcpfleet/mcpfleet/proxymcp/internal/haproxytest"
	"github.com/mcpfleet/mcpfleet/shared/e2e"
	"github.com/mcpfleet/mcpfleet/shared/syncbuf"
)

// TestCertKeyNowhere runs the built binary against a master-worker
// HAProxy with persistence on, rotates the certificate through
// set_ssl_cert (one refusal, one success) with debug logs, and looks for
// the private key in stderr, the audit log and /metrics; the expiry gauge
// is there with the new certificate's expiry.
func TestCertKeyNowhere(t *testing.T) {
	h := haproxytest.RunMaster(t, haproxytest.MasterOptions{Version: haproxytest.SystemBranch, TLS: true, StateFile: true})
	bin := e2e.Build(t, ".")
	auditPath := filepath.Join(t.TempDir(), "audit.log")
	port := e2e.FreePort(t)
	var stderr syncbuf.Buffer // the binary's stderr
	cmd := exec.Command(bin)
	cmd.Env = append(os.Environ(), "MCP_TRANSPORT=http", "MCP_HOST=127.0.0.1", "MCP_PORT="+strconv.Itoa(port),
		"LOG_LEVEL=debug", "MCP_APPROVAL=none", "MCP_AUDIT_LOG="+auditPath,
		"PROXY_RUNTIME_URL=unix://"+h.Socket, "PROXY_STATS_ENABLED=false", "PROXY_PERSIST=on",
		"PROXY_MASTER_URL=unix://"+h.MasterSocket, "PROXY_HAPROXY_CONFIG="+h.ConfigPath)
	cmd.Stdout, cmd.Stderr = io.Discard, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Signal(syscall.SIGTERM); _ = cmd.Wait() })
	base := "http://127.0.0.1:" + strconv.Itoa(port)
	deadline := time.Now().Add(60 * time.Second)
	for {
		if resp, err := http.Get(base + "/healthz"); err == nil {
			resp.Body.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no /healthz: %s", stderr.String())
		}
		time.Sleep(50 * time.Millisecond) // polling a start-up, not synchronising
	}
	cs := e2e.Connect(t, base+"/mcp", nil)

	// Real certificates and keys, made by openssl.
	now := time.Now()
	made := haproxytest.NewCert(t, haproxytest.CertOptions{Names: []string{"proxymcp-test.example", "www.proxymcp-test.example"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(10 * 24 * time.Hour)})
	certPEM, keyPEM := made.CertPEM, made.KeyPEM
	otherPEM := haproxytest.NewCert(t, haproxytest.CertOptions{}).KeyPEM

	if res := e2e.CallTool(t, cs, "set_ssl_cert", map[string]any{"file": h.CertFile, "pem_with_private_key": certPEM + otherPEM}); !res.IsError {
		t.Fatalf("a mismatched key was accepted: %s", e2e.Text(res))
	}
	if res := e2e.CallTool(t, cs, "set_ssl_cert", map[string]any{"file": h.CertFile, "pem_with_private_key": certPEM + keyPEM}); res.IsError {
		t.Fatalf("set_ssl_cert: %s", e2e.Text(res))
	}
	resp, err := http.Get(base + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	metrics, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(metrics), `mcpfleet_haproxy_ssl_cert_expiry_seconds{cert="`+h.CertFile+`",instance="default"`) {
		t.Errorf("no expiry gauge for %s in /metrics", h.CertFile)
	}
	auditLog, _ := os.ReadFile(auditPath)
	for _, k := range []string{keyPEM, otherPEM} {
		line := strings.Split(k, "\n")[1]
		for what, s := range map[string]string{"stderr": stderr.String(), "audit log": string(auditLog), "/metrics": string(metrics)} {
			if strings.Contains(strings.ReplaceAll(s, `\n`, "\n"), line) {
				t.Errorf("a private key is in %s", what)
			}
		}
	}
	if !strings.Contains(string(auditLog), "set_ssl_cert") {
		t.Errorf("no audit record of set_ssl_cert")
	}
}
