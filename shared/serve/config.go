package serve

import (
	"fmt"
	"net"
	"strconv"
	"time"

	"github.com/mcpfleet/mcpfleet/shared/envconfig"
	"github.com/mcpfleet/mcpfleet/shared/httpauth"
	"github.com/mcpfleet/mcpfleet/shared/logging"
	"github.com/mcpfleet/mcpfleet/shared/toolcall"
	"github.com/mcpfleet/mcpfleet/shared/traces"
)

// Config is the transport and process configuration every server shares.
type Config struct {
	Transport       string // "stdio" or "http"
	Host            string
	Port            int
	AllowedHosts    []string
	ShutdownTimeout time.Duration
	// MaxRequestBytes caps one HTTP request body on /mcp and /message and
	// one stdio line (MCP_MAX_REQUEST_BYTES). Zero means DefaultMaxRequestBytes.
	MaxRequestBytes int64
	// MetricsAddr, when set, serves /metrics on a listener of its own
	// (MCP_METRICS_ADDR): the only way to scrape a stdio server.
	MetricsAddr string
	// MetricsAuth puts /metrics behind the bearer check (MCP_METRICS_AUTH).
	MetricsAuth bool
	Log         logging.Config
	Auth        httpauth.Config
	// Calls is the tool-call pipeline's approval policy and audit log.
	Calls toolcall.Config
	// Tracing is the OpenTelemetry export the OTEL_* variables ask for
	// (off when no endpoint is set).
	Tracing traces.Config
}

// DefaultMaxRequestBytes is the default of MCP_MAX_REQUEST_BYTES: far above
// any real MCP request, far below what would let one caller grow the
// process by hundreds of megabytes.
const DefaultMaxRequestBytes = 4 << 20

// TransportVars documents the transport variables.
var TransportVars = []envconfig.Var{
	{Name: "MCP_TRANSPORT", Default: "stdio", Description: "stdio, or http (streamable HTTP at /mcp, legacy SSE at /sse + /message, GET /healthz)"},
	{Name: "MCP_HOST", Default: "127.0.0.1", Description: "address the HTTP transport listens on"},
	{Name: "MCP_PORT", Default: "8080", Description: "port the HTTP transport listens on"},
	{Name: "MCP_ALLOWED_HOSTS", Description: "extra Host/Origin names accepted (comma-separated), for deployments behind a proxy or in a container"},
	{Name: "MCP_MAX_REQUEST_BYTES", Default: "4194304", Description: "largest request accepted, in bytes: an HTTP body on /mcp or /message (413 beyond it) or one stdio line (a JSON-RPC error for that line)"},
	{Name: "MCP_METRICS_ADDR", Description: "serve Prometheus /metrics on this address of its own too, e.g. 127.0.0.1:9464 (the way to scrape a stdio server); the HTTP transport always serves /metrics"},
	{Name: "MCP_METRICS_AUTH", Default: "false", Description: "true puts /metrics behind the same OAuth bearer check as /mcp (needs OAUTH_ENABLED)"},
	{Name: "MCP_SHUTDOWN_TIMEOUT", Default: "5s", Description: "how long in-flight calls may finish after SIGINT/SIGTERM before they are cancelled"},
}

func authVars() []envconfig.Var { return httpauth.Vars }
func logVars() []envconfig.Var  { return logging.Vars }

// FromEnv reads the shared MCP_*, OAUTH_*/OIDC_* and LOG_* variables.
func FromEnv(r *envconfig.Reader) Config {
	c := Config{
		Transport:       r.Enum("MCP_TRANSPORT", "stdio", "stdio", "http"),
		Host:            r.String("MCP_HOST", "127.0.0.1"),
		Port:            r.Int("MCP_PORT", 8080, 0, 65535),
		AllowedHosts:    r.List("MCP_ALLOWED_HOSTS", nil),
		ShutdownTimeout: r.Duration("MCP_SHUTDOWN_TIMEOUT", 5*time.Second, 0),
		MaxRequestBytes: r.Int64("MCP_MAX_REQUEST_BYTES", DefaultMaxRequestBytes, 1024, 1<<30),
		MetricsAddr:     r.String("MCP_METRICS_ADDR", ""),
		MetricsAuth:     r.Bool("MCP_METRICS_AUTH", false),
		Log:             logging.FromEnv(r),
		Calls:           toolcall.FromEnv(r),
		Tracing:         traces.FromEnv(r),
	}
	if c.MetricsAddr != "" {
		if _, _, err := net.SplitHostPort(c.MetricsAddr); err != nil {
			r.Fail("MCP_METRICS_ADDR", c.MetricsAddr, "host:port to listen on, e.g. 127.0.0.1:9464")
		}
	}
	c.Auth = httpauth.FromEnv(r, "http://"+net.JoinHostPort(baseHost(c.Host), strconv.Itoa(c.Port)))
	if c.MetricsAuth && !c.Auth.Enabled {
		r.Fail("MCP_METRICS_AUTH", "true", "false unless OAUTH_ENABLED=true (there is no bearer check to put /metrics behind)")
	}
	return c
}

// Addr is the HTTP listen address.
func (c Config) Addr() string { return net.JoinHostPort(c.Host, strconv.Itoa(c.Port)) }

// baseHost turns a wildcard listen address into a name a client can use.
func baseHost(h string) string {
	switch h {
	case "", "0.0.0.0", "::", "[::]":
		return "localhost"
	}
	return h
}

func (c Config) String() string {
	return fmt.Sprintf("transport=%s addr=%s", c.Transport, c.Addr())
}

// maxRequestBytes returns the request cap with its default applied.
func (c Config) maxRequestBytes() int64 {
	if c.MaxRequestBytes <= 0 {
		return DefaultMaxRequestBytes
	}
	return c.MaxRequestBytes
}
