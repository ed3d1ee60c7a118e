// Package config reads proxymcp's PROXY_* environment variables into a
// validated Config.
package config

import (
	"net"
	"net/url"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/mcpfleet/mcpfleet/shared/envconfig"
)

// Config is proxymcp's back-end configuration.
type Config struct {
	RuntimeEnabled bool
	// RuntimeNetwork is "tcp4" or "unix"; RuntimeAddress is host:port or a socket path.
	RuntimeNetwork string
	RuntimeAddress string
	RuntimeTimeout time.Duration
	// RuntimeMaxConns bounds the pooled interactive connections (1-9).
	RuntimeMaxConns int

	StatsEnabled  bool
	StatsURL      string // without userinfo
	StatsUsername string
	StatsPassword string
	StatsTimeout  time.Duration

	ReadOnly bool

	// Lifecycle: persistence, reload and certificate files (issue 26).
	Persist       bool   // PROXY_PERSIST=on: rewrite HAProxy's files after each applied change
	MasterNetwork string // master CLI ("" when PROXY_MASTER_URL is unset)
	MasterAddress string //
	HAProxyBin    string // PROXY_HAPROXY_BIN: the binary (or wrapper and arguments) for haproxy -c
	ConfigFiles   string // PROXY_HAPROXY_CONFIG: the files HAProxy is started with (-f), comma-separated
	HAProxyDir    string // PROXY_HAPROXY_DIR: the only directory proxymcp writes into
	// ReloadAllAtOnce is PROXY_RELOAD_ONE_AT_A_TIME=false (fleet-wide):
	// by default a fleet reload goes instance by instance and stops at the
	// first failure.
	ReloadAllAtOnce bool
}

// Vars documents every PROXY_* variable for --help and the README.
var Vars = []envconfig.Var{
	{Name: "PROXY_HOST", Default: "127.0.0.1", Description: "runtime API host (tcp4 mode)"},
	{Name: "PROXY_PORT", Default: "9999", Description: "runtime API port (tcp4 mode)"},
	{Name: "PROXY_RUNTIME_MODE", Default: "tcp4", Description: "tcp4 or unix"},
	{Name: "PROXY_RUNTIME_SOCKET", Default: "/var/run/proxy/admin.sock", Description: "runtime API socket path (unix mode)"},
	{Name: "PROXY_RUNTIME_URL", Description: "overrides the above: tcp://host:port, unix:///path or a bare socket path"},
	{Name: "PROXY_RUNTIME_TIMEOUT", Default: "10", Description: "runtime API timeout: seconds (10) or a Go duration (10s)"},
	{Name: "PROXY_RUNTIME_MAX_CONNS", Default: "4", Description: "most runtime API connections open at once (1-9; kept below HAProxy's stats maxconn, 10 by default)"},
	{Name: "PROXY_RUNTIME_ENABLED", Default: "true", Description: "use the runtime API at all"},
	{Name: "PROXY_STATS_ENABLED", Default: "true", Description: "use the stats page"},
	{Name: "PROXY_STATS_URL", Default: "http://127.0.0.1:8404/stats", Description: "stats page URL (credentials may be in the URL)"},
	{Name: "PROXY_STATS_USERNAME", Description: "basic-auth user name of the stats page"},
	{Name: "PROXY_STATS_PASSWORD", Secret: true, Description: "basic-auth password of the stats page (never logged)"},
	{Name: "PROXY_STATS_TIMEOUT", Default: "5", Description: "stats page timeout: seconds (5) or a Go duration (5s)"},
	{Name: "PROXY_READ_ONLY", Default: "false", Description: "register only tools that change nothing"},
	{Name: "PROXY_PERSIST", Default: "off", Description: "off or on: after each applied change, rewrite the server-state, map, ACL or certificate file HAProxy loads at reload (needs HAProxy's files here)"},
	{Name: "PROXY_MASTER_URL", Description: "HAProxy's master CLI (master-worker mode, -S or stats socket ... master) for reload: tcp://host:port or unix:///path"},
	{Name: "PROXY_HAPROXY_BIN", Description: "HAProxy's binary, for haproxy -c before a reload (space-separated: a wrapper and its arguments); unset: the configuration cannot be checked"},
	{Name: "PROXY_HAPROXY_CONFIG", Description: "comma-separated configuration files HAProxy is started with (-f), for haproxy -c, persistence_status and the server-state file"},
	{Name: "PROXY_HAPROXY_DIR", Description: "the directory proxymcp may write HAProxy's files in (after symbolic links); unset: the first PROXY_HAPROXY_CONFIG file's directory"},
	{Name: "PROXY_RELOAD_ONE_AT_A_TIME", Default: "true", Description: "a fleet reload goes one instance at a time and stops at the first failure (false: all at once)"},
}

// ConfigFileList is PROXY_HAPROXY_CONFIG as a list.
func (c Config) ConfigFileList() []string {
	if c.ConfigFiles == "" {
		return nil
	}
	return strings.Split(c.ConfigFiles, ",")
}

// BinCommand is PROXY_HAPROXY_BIN as a command and its arguments.
func (c Config) BinCommand() []string { return strings.Fields(c.HAProxyBin) }

// Bounds of PROXY_RUNTIME_MAX_CONNS.
const (
	DefaultMaxConns = 4
	MaxMaxConns     = 9
)

// FromEnv reads the PROXY_* variables; problems are recorded in r.
func FromEnv(r *envconfig.Reader) Config {
	c := Config{
		RuntimeEnabled: r.Bool("PROXY_RUNTIME_ENABLED", true),
		StatsEnabled:   r.Bool("PROXY_STATS_ENABLED", true),
		RuntimeTimeout: r.Duration("PROXY_RUNTIME_TIMEOUT", 10*time.Second, time.Millisecond),
		StatsTimeout:   r.Duration("PROXY_STATS_TIMEOUT", 5*time.Second, time.Millisecond),
		ReadOnly:       r.Bool("PROXY_READ_ONLY", false),
	}
	c.Persist = r.Enum("PROXY_PERSIST", "off", "off", "on") == "on"
	c.ReloadAllAtOnce = !r.Bool("PROXY_RELOAD_ONE_AT_A_TIME", true)
	if raw := r.Lookup("PROXY_MASTER_URL"); raw != "" {
		n, a, ok := ParseRuntimeURL(raw)
		if !ok {
			r.Fail("PROXY_MASTER_URL", raw, "tcp://host:port, unix:///path/to/master.sock or a bare socket path")
		}
		c.MasterNetwork, c.MasterAddress = n, a
	}
	c.HAProxyBin = strings.TrimSpace(r.String("PROXY_HAPROXY_BIN", ""))
	var files []string
	for _, f := range strings.Split(r.String("PROXY_HAPROXY_CONFIG", ""), ",") {
		if f = strings.TrimSpace(f); f != "" {
			if !filepath.IsAbs(f) {
				r.Fail("PROXY_HAPROXY_CONFIG", f, "absolute paths of HAProxy's configuration files")
			}
			files = append(files, f)
		}
	}
	c.ConfigFiles = strings.Join(files, ",")
	c.HAProxyDir = r.String("PROXY_HAPROXY_DIR", "")
	if c.HAProxyDir == "" && len(files) > 0 {
		c.HAProxyDir = filepath.Dir(files[0])
	}
	if c.Persist && c.HAProxyDir == "" {
		r.Fail("PROXY_PERSIST", "on", "HAProxy's files: set PROXY_HAPROXY_CONFIG (and PROXY_HAPROXY_DIR if the files live elsewhere), or PROXY_PERSIST=off")
	}
	if !c.RuntimeEnabled && !c.StatsEnabled {
		r.Fail("PROXY_RUNTIME_ENABLED", "false",
			"at least one back end: set PROXY_RUNTIME_ENABLED=true or PROXY_STATS_ENABLED=true (both are false)")
	}
	if c.RuntimeEnabled {
		c.RuntimeNetwork, c.RuntimeAddress = runtimeAddr(r)
		// HAProxy cannot tell a client its socket's "stats maxconn" (no
		// command shows it), so the ceiling is one below its default of
		// 10: a connection is always left for operators' own tools.
		c.RuntimeMaxConns = r.Int("PROXY_RUNTIME_MAX_CONNS", DefaultMaxConns, 1, MaxMaxConns)
	}
	if c.StatsEnabled {
		u := r.URL("PROXY_STATS_URL", "http://127.0.0.1:8404/stats", "http", "https")
		c.StatsUsername = r.String("PROXY_STATS_USERNAME", "")
		c.StatsPassword = r.Secret("PROXY_STATS_PASSWORD")
		if u != nil {
			if u.User != nil {
				if c.StatsUsername == "" {
					c.StatsUsername = u.User.Username()
				}
				if p, ok := u.User.Password(); ok && c.StatsPassword == "" {
					c.StatsPassword = p
				}
				u.User = nil
			}
			c.StatsURL = u.String()
		}
	}
	return c
}

// runtimeAddr resolves PROXY_RUNTIME_URL or the mode/host/port/socket variables.
func runtimeAddr(r *envconfig.Reader) (network, address string) {
	// The mode is validated even when PROXY_RUNTIME_URL overrides it: a bad
	// value is a mistake in the deployment, and silently ignoring it would
	// hide that mistake until someone removes the URL.
	mode := r.Enum("PROXY_RUNTIME_MODE", "tcp4", "tcp4", "unix")
	if raw := r.Lookup("PROXY_RUNTIME_URL"); raw != "" {
		network, address, ok := ParseRuntimeURL(raw)
		if !ok {
			r.Fail("PROXY_RUNTIME_URL", raw, "tcp://host:port, unix:///path/to/socket or a bare socket path")
		}
		return network, address
	}
	if mode == "unix" {
		return "unix", r.String("PROXY_RUNTIME_SOCKET", "/var/run/proxy/admin.sock")
	}
	host := r.String("PROXY_HOST", "127.0.0.1")
	port := r.Int("PROXY_PORT", 9999, 1, 65535)
	return "tcp4", net.JoinHostPort(host, strconv.Itoa(port))
}

// ParseRuntimeURL accepts tcp://host:port, tcp4://host:port, ipv4@host:port,
// unix:///path, unix:/path and a bare path.
func ParseRuntimeURL(raw string) (network, address string, ok bool) {
	switch {
	case strings.HasPrefix(raw, "ipv4@"):
		return tcpAddr(strings.TrimPrefix(raw, "ipv4@"))
	case strings.HasPrefix(raw, "/") || strings.HasPrefix(raw, "./") || strings.HasPrefix(raw, "../"):
		return "unix", raw, true
	}
	u, err := url.Parse(raw)
	if err != nil {
		return "", "", false
	}
	switch strings.ToLower(u.Scheme) {
	case "tcp", "tcp4":
		if u.Path != "" && u.Path != "/" {
			return "", "", false
		}
		return tcpAddr(u.Host)
	case "unix":
		p := u.Path
		if p == "" {
			p = u.Opaque
		}
		if u.Host != "" || p == "" {
			return "", "", false
		}
		return "unix", p, true
	}
	return "", "", false
}

func tcpAddr(hostport string) (string, string, bool) {
	host, port, err := net.SplitHostPort(hostport)
	if err != nil || host == "" {
		return "", "", false
	}
	n, err := strconv.Atoi(port)
	if err != nil || n < 1 || n > 65535 {
		return "", "", false
	}
	return "tcp4", net.JoinHostPort(host, port), true
}
