package haproxytest

import (
	"context"
	"crypto/x509"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/mcpfleet/mcpfleet/proxymcp/internal/runtimeapi"
)

// MasterOptions shape a master-worker HAProxy (RunMaster).
type MasterOptions struct {
	// Version is the HAProxy branch ("2.6", "3.0", "3.2"); the system's when empty.
	Version string
	// StateFile configures "server-state-file" and
	// "load-server-state-from-file global", so that server states written
	// to MasterWorker.StateFile come back on reload.
	StateFile bool
	// TLS adds frontend fe_tls serving MasterWorker.CertFile.
	TLS bool
}

// MasterWorker is a running HAProxy in master-worker mode ("-W -S"): the
// set-up the reload, persistence and certificate tests need. Its backends
// have no health checks, so server states only change when a test says so.
type MasterWorker struct {
	Dir          string
	ConfigPath   string
	Socket       string // runtime API of the current worker (level admin)
	MasterSocket string // master CLI ("-S")
	StateFile    string // server-state-file ("" without MasterOptions.StateFile)
	MapFile      string // hosts.map, loaded by fe_web
	ACLFile      string // blocked.acl, loaded by fe_web
	FrontendWeb  string // host:port of fe_web
	FrontendTLS  string // host:port of fe_tls (MasterOptions.TLS)
	CertFile     string // the PEM fe_tls loads
	Cert         *x509.Certificate
	// Servers are the addresses of the HTTP servers behind be_app's app1,
	// app2 and a spare one no configured server points to.
	Servers []string
	Branch  string
	Version string // "show version" of the first worker
	Root    string // chroot, "" for the system's haproxy
	// Check is the command that runs this instance's haproxy binary, for
	// "haproxy -c" (a chroot wrapper for the cached branches).
	Check []string

	process
}

// RunMaster starts a master-worker HAProxy for a test and stops it at the
// end of the test; skipped (failed with CI=true) when not installed.
func RunMaster(t testing.TB, o MasterOptions) *MasterWorker {
	t.Helper()
	Require(t, o.Version)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	m, err := startFree(ctx, func() (*MasterWorker, error) { return StartMaster(ctx, o) })
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = m.Stop() })
	return m
}

// StartMaster writes the configuration and starts "haproxy -W -db -S". It
// returns once the master lists a worker and that worker's runtime API answers.
func StartMaster(ctx context.Context, o MasterOptions) (m *MasterWorker, err error) {
	m = &MasterWorker{Branch: o.Version, Check: []string{"haproxy"}}
	if isChroot(o.Version) {
		if m.Root, err = chrootFor(o.Version); err != nil {
			return nil, err
		}
		m.Check = []string{"chroot", m.Root, "/usr/sbin/haproxy"}
	}
	dir, err := os.MkdirTemp(filepath.Join(m.Root, os.TempDir()), "haproxymw-")
	if err != nil {
		return nil, err
	}
	m.Dir = dir
	m.closers = append(m.closers, closerFunc(func() error { return os.RemoveAll(dir) }))
	defer func() {
		if err != nil {
			_ = m.Stop()
			m = nil
		}
	}()
	release := make(chan struct{})
	m.closers = append(m.closers, closerFunc(func() error { close(release); return nil }))
	for range 3 {
		addr, c, err := serveHTTP(release)
		if err != nil {
			return m, err
		}
		m.Servers = append(m.Servers, addr)
		m.closers = append(m.closers, c)
	}
	ports, err := freePorts(2)
	if err != nil {
		return m, err
	}
	m.FrontendWeb = loopback(ports[0])
	m.Socket = filepath.Join(dir, "admin.sock")
	m.MasterSocket = filepath.Join(dir, "master.sock")
	m.MapFile = filepath.Join(dir, MapFileName)
	m.ACLFile = filepath.Join(dir, ACLFileName)
	if err := os.WriteFile(m.MapFile, []byte("www.example.com be_app\napi.example.com be_other\n"), 0o644); err != nil {
		return m, err
	}
	if err := os.WriteFile(m.ACLFile, []byte("192.0.2.10\n198.51.100.0/24\n"), 0o644); err != nil {
		return m, err
	}
	var global, defaults string
	if o.StateFile {
		m.StateFile = filepath.Join(dir, "server.state")
		global = "    server-state-file " + m.StateFile + "\n"
		defaults = "    load-server-state-from-file global\n"
	}
	cfg := fmt.Sprintf(`global
    stats socket %s mode 600 level admin
    stats timeout 30s
%s
defaults
    mode http
    timeout connect 2s
    timeout client 30s
    timeout server 30s
%s
frontend fe_web
    bind %s
    acl blocked src -f %s
    http-request deny if blocked
    use_backend %%[req.hdr(host),lower,map(%s,be_app)]
    default_backend be_app

backend be_app
    balance roundrobin
    server app1 %s weight 100
    server app2 %s weight 50

backend be_other
    server other1 %s
`, m.Socket, global, defaults, m.FrontendWeb, m.ACLFile, m.MapFile, m.Servers[0], m.Servers[1], m.Servers[2])
	if o.TLS {
		m.FrontendTLS = loopback(ports[1])
		m.CertFile = filepath.Join(dir, "site.pem")
		if m.Cert, err = writeCert(m.CertFile); err != nil {
			return m, err
		}
		cfg += fmt.Sprintf("\nfrontend fe_tls\n    bind %s ssl crt %s\n    default_backend be_app\n", m.FrontendTLS, m.CertFile)
	}
	m.ConfigPath = filepath.Join(dir, "haproxy.cfg")
	if err := os.WriteFile(m.ConfigPath, []byte(cfg), 0o644); err != nil {
		return m, err
	}
	if err := m.start(dir, slices.Concat(m.Check, []string{"-W", "-db", "-S", m.MasterSocket, "-f", m.ConfigPath})); err != nil {
		return m, err
	}
	// Ready when a worker's runtime API answers and the master CLI is there.
	masterUp := func() bool { _, err := os.Stat(m.MasterSocket); return err == nil }
	if m.Version, err = m.waitVersion(ctx, m.Runtime(), m.Branch, masterUp); err != nil {
		return m, fmt.Errorf("%w\nhaproxy log:\n%s", err, m.Log())
	}
	return m, nil
}

// Log returns what HAProxy (master and workers) printed so far.
func (m *MasterWorker) Log() string { return m.log(m.Dir) }

// Runtime returns a client for the current worker's runtime API.
func (m *MasterWorker) Runtime() *runtimeapi.Client {
	return &runtimeapi.Client{Network: "unix", Address: m.Socket, Timeout: 5 * time.Second}
}

// Exec runs a runtime API command on the current worker.
func (m *MasterWorker) Exec(ctx context.Context, cmd string) (string, error) {
	return m.Runtime().Execute(ctx, cmd)
}

// Get sends a real HTTP request through fe_web with the given Host header
// and returns the status code: proof that a worker serves.
func (m *MasterWorker) Get(ctx context.Context, host string) (int, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+m.FrontendWeb+"/", nil)
	if err != nil {
		return 0, err
	}
	req.Host = host
	// A new connection each time: a kept-alive one could outlive a worker.
	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: 5 * time.Second}
	resp, err := client.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	return resp.StatusCode, nil
}

// Stop stops the master (SIGTERM, which stops the workers, then SIGKILL)
// and the helper servers, and removes the directory.
func (m *MasterWorker) Stop() error {
	m.stop(5 * time.Second)
	return nil
}
