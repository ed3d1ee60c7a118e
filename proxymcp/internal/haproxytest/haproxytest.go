// Package haproxytest runs a real HAProxy for tests and the playground: it
// writes a configuration into a directory, starts "haproxy -f" as a child
// process on free loopback ports, serves the backends' servers, health
// checks and agent from the test process, and stops everything at the end.
//
// Options.Version selects the HAProxy branch: the system's haproxy (Debian
// 12: 2.6) or a newer LTS run from a cached Debian chroot (see versions.go).
package haproxytest

import (
	"bufio"
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/mcpfleet/mcpfleet/proxymcp/internal/runtimeapi"
)

// Options shape the configuration.
type Options struct {
	// Dir holds the configuration, socket, map and ACL files; a new
	// temporary directory when empty.
	Dir string
	// BigServers adds backend be_big with that many servers (no checks).
	BigServers int
	// Binary is the haproxy executable; "haproxy" from PATH when empty.
	// Ignored when Version selects a chroot.
	Binary string
	// Extra is appended to the configuration: sections one test needs
	// beyond the standard ones (a static balance algorithm, servers
	// without checks, ...).
	Extra string
	// Version is the HAProxy branch to run ("2.6", "3.0", "3.2"); the
	// system's haproxy when empty. Start fails when the running HAProxy is
	// not of that branch.
	Version string
	// TLS adds frontend fe_tls: a "bind ... ssl crt" with a certificate
	// generated for the run (see TLSCert).
	TLS bool
	// Files are written into Dir before HAProxy starts: maps and ACLs that
	// Extra names as {{dir}}/<name> ({{dir}} is replaced by Dir, which is
	// only known at start for a chroot).
	Files map[string]string
}

// Fixed names of the test configuration.
const (
	StatsUser     = "admin"
	StatsPassword = "test-only-s3cret"
	MapFileName   = "hosts.map"
	ACLFileName   = "blocked.acl"
)

// HAProxy is a running instance.
type HAProxy struct {
	Dir        string
	ConfigPath string
	Socket     string // runtime API Unix socket (level admin)
	// OperatorSocket is a second Unix socket at "level operator", the
	// level recommended with PROXY_READ_ONLY=true.
	OperatorSocket string
	RuntimeTCP     string // runtime API loopback address host:port
	StatsURL       string // stats page with CSV, auth and admin (no credentials in it)
	// StatsNoAdminURL is a second stats page without "stats admin" and without auth.
	StatsNoAdminURL string
	FrontendWeb     string // host:port of fe_web
	FrontendAPI     string // host:port of fe_api
	MapFile         string // as HAProxy names it in "show map"
	ACLFile         string
	Version         string // "show version", e.g. "3.0.11-1+deb13u1"
	// Branch is the selected branch ("2.6", "3.0", ...), or "" for the
	// system's haproxy when Options.Version was empty.
	Branch string
	// Root is the chroot HAProxy runs in, "" for the system's haproxy.
	// Paths in this struct are host paths and, thanks to a link inside the
	// chroot, also the paths HAProxy itself uses.
	Root string
	// FrontendTLS is host:port of fe_tls (Options.TLS).
	FrontendTLS string
	// TLSCert is the certificate fe_tls serves, and TLSCertFile its PEM
	// file (certificate and key) as HAProxy names it in "show ssl cert".
	TLSCert     *x509.Certificate
	TLSCertFile string

	// Release unblocks every request waiting on /slow.
	Release func()

	process
	ownDir bool
}

// Available reports whether the haproxy binary can be run.
func Available() bool {
	_, err := exec.LookPath("haproxy")
	return err == nil
}

// Require skips the test when the haproxy of branch version ("" = the
// system's) is not installed, and fails it instead when CI=true: CI never
// skips a back end.
func Require(t testing.TB, version string) {
	t.Helper()
	if err := Installed(version); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%v; CI=true forbids skipping", err)
		}
		t.Skip(err)
	}
}

// Run starts HAProxy for a test and stops it at the end of the test. When
// the selected haproxy is not installed the test is skipped, or fails when
// CI=true.
func Run(t testing.TB, o Options) *HAProxy {
	t.Helper()
	Require(t, o.Version)
	// A chroot's directory must be inside it: Start makes and removes one.
	if o.Dir == "" && !isChroot(o.Version) {
		o.Dir = t.TempDir()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	h, err := startFree(ctx, func() (*HAProxy, error) { return Start(ctx, o) })
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = h.Stop() })
	return h
}

// startFree starts HAProxy again on fresh ports when one that freePorts
// released was taken by another process (another test's HAProxy, an
// outgoing connection) before HAProxy bound it: nothing can reserve a
// port across the hand-over, so a lost race is answered with new ports,
// a few times at most.
func startFree[T any](ctx context.Context, start func() (T, error)) (T, error) {
	for attempt := 1; ; attempt++ {
		v, err := start()
		if err == nil || attempt == 4 || ctx.Err() != nil || !strings.Contains(err.Error(), "Address already in use") {
			return v, err
		}
	}
}

// Start writes the configuration and starts haproxy and its helper servers.
// It returns once the runtime API answers.
func Start(ctx context.Context, o Options) (h *HAProxy, err error) {
	h = &HAProxy{Branch: o.Version}
	bin := o.Binary
	if bin == "" {
		bin = "haproxy"
	}
	if isChroot(o.Version) {
		if h.Root, err = chrootFor(o.Version); err != nil {
			return nil, err
		}
	}
	if o.Dir == "" {
		d, err := os.MkdirTemp(filepath.Join(h.Root, os.TempDir()), "haproxytest-")
		if err != nil {
			return nil, err
		}
		o.Dir, h.ownDir = d, true
	}
	dir, err := filepath.Abs(o.Dir)
	if err != nil {
		return nil, err
	}
	if h.Root != "" && !strings.HasPrefix(dir, h.Root+string(filepath.Separator)) {
		return nil, fmt.Errorf("haproxytest: Dir %s must be inside the HAProxy %s chroot %s (leave Dir empty to get one)", dir, o.Version, h.Root)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	h.Dir = dir
	defer func() {
		if err != nil {
			_ = h.Stop()
			h = nil
		}
	}()

	// Helper servers: healthy HTTP servers, a closed port, an agent.
	release := make(chan struct{})
	var releaseOnce sync.Once
	h.Release = func() { releaseOnce.Do(func() { close(release) }) }
	h.closers = append(h.closers, closerFunc(func() error { h.Release(); return nil }))
	web := make([]string, 4)
	for i := range web {
		addr, c, err := serveHTTP(release)
		if err != nil {
			return h, err
		}
		web[i] = addr
		h.closers = append(h.closers, c)
	}
	agentAddr, c, err := serveAgent()
	if err != nil {
		return h, err
	}
	h.closers = append(h.closers, c)
	_, agentPort, _ := net.SplitHostPort(agentAddr)
	ports, err := freePorts(7)
	if err != nil {
		return h, err
	}
	closed := ports[5] // nothing listens there: the check of app3 fails
	h.RuntimeTCP = loopback(ports[0])
	h.FrontendWeb = loopback(ports[1])
	h.FrontendAPI = loopback(ports[2])
	h.StatsURL = "http://" + loopback(ports[3]) + "/stats"
	h.StatsNoAdminURL = "http://" + loopback(ports[4]) + "/stats"
	h.Socket = filepath.Join(dir, "admin.sock")
	h.OperatorSocket = filepath.Join(dir, "operator.sock")
	h.MapFile = filepath.Join(dir, MapFileName)
	h.ACLFile = filepath.Join(dir, ACLFileName)
	if err := os.WriteFile(h.MapFile, []byte("www.example.com be_app\napi.example.com be_api\n"), 0o644); err != nil {
		return h, err
	}
	if err := os.WriteFile(h.ACLFile, []byte("192.0.2.10\n198.51.100.0/24\n"), 0o644); err != nil {
		return h, err
	}
	for name, content := range o.Files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			return h, err
		}
	}
	var cfg strings.Builder
	fmt.Fprintf(&cfg, `global
    stats socket %s mode 600 level admin
    stats socket %s mode 600 level operator
    stats socket ipv4@%s level admin
    stats timeout 30s
    maxconn 4000

defaults
    mode http
    timeout connect 2s
    timeout client 30s
    timeout server 30s
    default-server inter 500ms fall 2 rise 1

frontend fe_web
    bind %s
    acl blocked src -f %s
    http-request deny if blocked
    http-request track-sc0 src table be_app
    use_backend %%[req.hdr(host),lower,map(%s,be_app)]
    default_backend be_app

frontend fe_api
    bind %s
    default_backend be_api

backend be_app
    balance roundrobin
    stick-table type ip size 100k expire 30m store http_req_rate(10s),conn_cur,gpc0
    option httpchk GET /
    server app1 %s check weight 100
    server app2 %s check weight 50
    server app3 %s check

backend be_api
    balance leastconn
    option httpchk GET /
    server api1 %s check agent-check agent-port %s agent-inter 1s
    server api2 %s check

listen stats
    bind %s
    stats enable
    stats uri /stats
    stats auth %s:%s
    stats admin if TRUE

listen stats_noadmin
    bind %s
    stats enable
    stats uri /stats
`, h.Socket, h.OperatorSocket, h.RuntimeTCP, h.FrontendWeb, h.ACLFile, h.MapFile, h.FrontendAPI,
		web[0], web[1], loopback(closed), web[2], agentPort, web[3],
		loopback(ports[3]), StatsUser, StatsPassword, loopback(ports[4]))
	if o.TLS {
		h.FrontendTLS = loopback(ports[6])
		h.TLSCertFile = filepath.Join(dir, "site.pem")
		if h.TLSCert, err = writeCert(h.TLSCertFile); err != nil {
			return h, err
		}
		fmt.Fprintf(&cfg, "\nfrontend fe_tls\n    bind %s ssl crt %s\n    default_backend be_app\n", h.FrontendTLS, h.TLSCertFile)
	}
	if o.BigServers > 0 {
		cfg.WriteString("\nbackend be_big\n    balance roundrobin\n")
		for i := 1; i <= o.BigServers; i++ {
			fmt.Fprintf(&cfg, "    server big%04d %s weight %d\n", i, web[i%len(web)], 1+i%100)
		}
	}
	cfg.WriteString(strings.ReplaceAll(o.Extra, "{{dir}}", dir))
	h.ConfigPath = filepath.Join(dir, "haproxy.cfg")
	if err := os.WriteFile(h.ConfigPath, []byte(cfg.String()), 0o644); err != nil {
		return h, err
	}

	// -db: stay in the foreground as our child; no master process.
	argv := []string{bin, "-db", "-f", h.ConfigPath}
	if h.Root != "" {
		// The link made by chrootFor lets HAProxy use the host paths.
		argv = []string{"chroot", h.Root, "/usr/sbin/haproxy", "-db", "-f", h.ConfigPath}
	}
	if err := h.start(dir, argv); err != nil {
		return h, err
	}
	rt := &runtimeapi.Client{Network: "unix", Address: h.Socket, Timeout: time.Second}
	if h.Version, err = h.waitVersion(ctx, rt, h.Branch, nil); err != nil {
		return h, fmt.Errorf("%w\nhaproxy log:\n%s", err, h.log(dir))
	}
	return h, nil
}

// Runtime returns a runtime API client for the Unix socket ("unix") or the TCP port ("tcp4").
func (h *HAProxy) Runtime(mode string) *runtimeapi.Client {
	if mode == "unix" {
		return &runtimeapi.Client{Network: "unix", Address: h.Socket, Timeout: 5 * time.Second}
	}
	return &runtimeapi.Client{Network: "tcp4", Address: h.RuntimeTCP, Timeout: 5 * time.Second}
}

// Exec runs a command on the Unix socket (test set-up and state snapshots).
func (h *HAProxy) Exec(ctx context.Context, cmd string) (string, error) {
	return h.Runtime("unix").Execute(ctx, cmd)
}

// WaitServerStatus waits until the server's CSV status starts with prefix.
func (h *HAProxy) WaitServerStatus(ctx context.Context, backend, server, prefix string) error {
	for {
		out, err := h.Exec(ctx, "show stat")
		if err == nil {
			for _, line := range strings.Split(out, "\n") {
				f := strings.Split(line, ",")
				if len(f) > 17 && f[0] == backend && f[1] == server && strings.HasPrefix(f[17], prefix) {
					return nil
				}
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s/%s never reached status %q: %w", backend, server, prefix, ctx.Err())
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// Stop stops haproxy (SIGTERM, then SIGKILL) and the helper servers.
func (h *HAProxy) Stop() error {
	h.stop(3 * time.Second)
	if h.ownDir {
		_ = os.RemoveAll(h.Dir)
	}
	return nil
}

// process is a haproxy child of the test process (HAProxy, MasterWorker):
// started with its output in haproxy.log, waited for until its runtime API
// answers, stopped with SIGTERM and then SIGKILL; its closers (helper
// servers, files) run after it is gone, the last added first.
type process struct {
	cmd      *exec.Cmd
	exited   chan struct{}
	waitErr  error
	closers  []io.Closer
	stopOnce sync.Once
}

// start runs argv in dir, its output going to dir/haproxy.log.
func (p *process) start(dir string, argv []string) error {
	logf, err := os.Create(filepath.Join(dir, "haproxy.log"))
	if err != nil {
		return err
	}
	p.closers = append(p.closers, logf)
	p.cmd = exec.Command(argv[0], argv[1:]...)
	p.cmd.Dir = dir
	p.cmd.SysProcAttr = childAttr()
	p.cmd.Stdout, p.cmd.Stderr = logf, logf
	p.exited = make(chan struct{})
	if err := p.cmd.Start(); err != nil {
		return fmt.Errorf("start haproxy: %w", err)
	}
	go func() { p.waitErr = p.cmd.Wait(); close(p.exited) }()
	return nil
}

// log is what the process printed so far.
func (p *process) log(dir string) string {
	b, _ := os.ReadFile(filepath.Join(dir, "haproxy.log"))
	return string(b)
}

// waitVersion asks rt "show version" until it answers and ready (nil: no
// more) holds, and returns the version. It fails when a branch other than
// branch ("": any) answers, when HAProxy exits, or when ctx ends.
func (p *process) waitVersion(ctx context.Context, rt *runtimeapi.Client, branch string, ready func() bool) (string, error) {
	for {
		out, err := rt.Execute(ctx, "show version")
		if err == nil {
			v := strings.TrimSpace(out)
			if branch != "" && !strings.HasPrefix(v, branch+".") {
				return v, fmt.Errorf("haproxytest: asked for HAProxy %s but %s answers (%s)", branch, v, installHint)
			}
			if ready == nil || ready() {
				return v, nil
			}
		}
		select {
		case <-p.exited:
			return "", fmt.Errorf("haproxy exited before answering: %v", p.waitErr)
		case <-ctx.Done():
			return "", fmt.Errorf("haproxy did not answer on %s: %w (last error: %v)", rt.Address, ctx.Err(), err)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// stop sends SIGTERM, SIGKILL when the process has not exited after grace,
// then closes the closers; once.
func (p *process) stop(grace time.Duration) {
	p.stopOnce.Do(func() {
		if p.cmd != nil && p.cmd.Process != nil {
			_ = p.cmd.Process.Signal(syscall.SIGTERM)
			select {
			case <-p.exited:
			case <-time.After(grace):
				_ = p.cmd.Process.Kill()
				<-p.exited
			}
		}
		for i := len(p.closers) - 1; i >= 0; i-- {
			_ = p.closers[i].Close()
		}
	})
}

type closerFunc func() error

func (f closerFunc) Close() error { return f() }

func loopback(port int) string { return net.JoinHostPort("127.0.0.1", strconv.Itoa(port)) }

// freePorts reserves n distinct free loopback ports and releases them for haproxy.
func freePorts(n int) ([]int, error) {
	var ls []net.Listener
	defer func() {
		for _, l := range ls {
			l.Close()
		}
	}()
	ports := make([]int, 0, n)
	for range n {
		l, err := net.Listen("tcp4", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		ls = append(ls, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

// serveHTTP serves "/" with 200 and "/slow" blocking until release (to
// keep a session open for the session tools).
func serveHTTP(release <-chan struct{}) (string, io.Closer, error) {
	l, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/slow", func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		case <-time.After(60 * time.Second):
		}
		io.WriteString(w, "slow done\n")
	})
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok\n") })
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go srv.Serve(l)
	return l.Addr().String(), closerFunc(func() error {
		ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
		defer cancel()
		if err := srv.Shutdown(ctx); err != nil {
			return srv.Close()
		}
		return nil
	}), nil
}

// serveAgent answers every agent-check connection with "up".
func serveAgent() (string, io.Closer, error) {
	l, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				if errors.Is(err, net.ErrClosed) {
					return
				}
				continue
			}
			go func() {
				defer c.Close()
				_ = c.SetDeadline(time.Now().Add(2 * time.Second))
				_, _ = io.WriteString(c, "up\n")
				_, _ = bufio.NewReader(c).ReadString('\n')
			}()
		}
	}()
	return l.Addr().String(), l, nil
}
