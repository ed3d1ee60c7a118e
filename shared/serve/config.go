package serve

import (
	"fmt"
	"net"
	"strconv"
	"time"

	"github.com/mcpfleet/mcpfleet/shared/envconfig"
	"github.com/mcpfleet/mcpfleet/shared/httpauth"
	"github.com/mcpfleet/mcpfleet/shared/logging"
	"github.com/mcpfleet/mcpfleet/shared/state"
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
	// StateURL is MCP_STATE_URL (validated where tasks and codes read it):
	// set, a 2025-11-25 session ended on one replica (DELETE or idle
	// expiry) is recorded there and refused by every replica.
	StateURL string
	// MaxRequestBytes caps one HTTP request body on /mcp and /message and
	// one stdio line (MCP_MAX_REQUEST_BYTES). Zero means DefaultMaxRequestBytes.
	MaxRequestBytes int64
	// SessionIdleTimeout ends a streamable HTTP session unused this long
	// (MCP_SESSION_IDLE_TIMEOUT); zero means DefaultSessionIdleTimeout.
	SessionIdleTimeout time.Duration
	// RequestReadTimeout bounds reading one request body
	// (MCP_REQUEST_READ_TIMEOUT); zero means DefaultRequestReadTimeout.
	RequestReadTimeout time.Duration
	// MaxSessionsPerIdentity and MaxInflightPerIdentity bound what one
	// identity holds at once (MCP_MAX_SESSIONS_PER_IDENTITY,
	// MCP_MAX_INFLIGHT_PER_IDENTITY); zero means the defaults.
	MaxSessionsPerIdentity int
	MaxInflightPerIdentity int
	// MetricsAddr, when set, serves /metrics (and a detailed /readyz) on a
	// listener of its own (MCP_METRICS_ADDR): the only way to scrape a
	// stdio server, and the unauthenticated one when OAuth is on.
	MetricsAddr string
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

// Defaults of the HTTP surface's bounds.
const (
	// DefaultSessionIdleTimeout: a session holds ~19 KB in mcp-go until it
	// ends (6,000 abandoned sessions held 114 MB), and clients that lose one
	// start another on the 404 the specification prescribes; 30 minutes
	// outlasts a person's pause between prompts and bounds what abandoned
	// sessions can hold to those opened in the last half hour.
	DefaultSessionIdleTimeout = 30 * time.Minute
	// DefaultRequestReadTimeout: an MCP request is a few KB; 30 s lets even
	// a 4 MiB body through a 1 Mbit/s link, while a body dribbled in to hold
	// memory is dropped (100 slow 4 MiB uploads held 624 MB).
	DefaultRequestReadTimeout = 30 * time.Second
	// DefaultMaxSessionsPerIdentity: far above one person's clients and
	// windows; 32 idle sessions are ~0.6 MB.
	DefaultMaxSessionsPerIdentity = 32
	// DefaultMaxInflightPerIdentity: requests in progress, listening
	// streams included (one per session); leaves room for parallel calls
	// while one identity's bodies stay under 64 × MCP_MAX_REQUEST_BYTES.
	DefaultMaxInflightPerIdentity = 64
)

// TransportVars documents the transport variables.
var TransportVars = []envconfig.Var{
	{Name: "MCP_TRANSPORT", Default: "stdio", Description: "stdio, or http (streamable HTTP at /mcp, legacy SSE at /sse + /message, GET /healthz)"},
	{Name: "MCP_HOST", Default: "127.0.0.1", Description: "address the HTTP transport listens on"},
	{Name: "MCP_PORT", Default: "8080", Description: "port the HTTP transport listens on"},
	{Name: "MCP_ALLOWED_HOSTS", Description: "extra Host/Origin names accepted (comma-separated), for deployments behind a proxy or in a container"},
	{Name: "MCP_MAX_REQUEST_BYTES", Default: "4194304", Description: "largest request accepted, in bytes: an HTTP body on /mcp or /message (413 beyond it) or one stdio line (a JSON-RPC error for that line)"},
	{Name: "MCP_REQUEST_READ_TIMEOUT", Default: DefaultRequestReadTimeout.String(), Description: "longest time to receive one HTTP request body (408 beyond it); request headers have 10s"},
	{Name: "MCP_SESSION_IDLE_TIMEOUT", Default: DefaultSessionIdleTimeout.String(), Description: "a streamable HTTP session unused this long ends and its memory is freed (the client gets 404 and starts a new one)"},
	{Name: "MCP_MAX_SESSIONS_PER_IDENTITY", Default: fmt.Sprint(DefaultMaxSessionsPerIdentity), Description: "MCP sessions one identity may hold open at once on this server (429 beyond it); without OAuth every caller is one identity"},
	{Name: "MCP_MAX_INFLIGHT_PER_IDENTITY", Default: fmt.Sprint(DefaultMaxInflightPerIdentity), Description: "HTTP requests one identity may have in progress at once, listening streams included (429 beyond it)"},
	{Name: "MCP_METRICS_ADDR", Description: "serve Prometheus /metrics and a detailed /readyz on this address of its own too, e.g. 127.0.0.1:9464 (the way to scrape a stdio server, or without a token when OAuth is on); with OAUTH_ENABLED the HTTP transport's /metrics needs the bearer token"},
	{Name: "MCP_SHUTDOWN_TIMEOUT", Default: "5s", Description: "how long in-flight calls may finish after SIGINT/SIGTERM before they are cancelled"},
}

func authVars() []envconfig.Var { return httpauth.Vars }
func logVars() []envconfig.Var  { return logging.Vars }

// FromEnv reads the shared MCP_*, OAUTH_*/OIDC_* and LOG_* variables.
func FromEnv(r *envconfig.Reader) Config {
	c := Config{
		Transport:              r.Enum("MCP_TRANSPORT", "stdio", "stdio", "http"),
		Host:                   r.String("MCP_HOST", "127.0.0.1"),
		Port:                   r.Int("MCP_PORT", 8080, 0, 65535),
		AllowedHosts:           r.List("MCP_ALLOWED_HOSTS", nil),
		ShutdownTimeout:        r.Duration("MCP_SHUTDOWN_TIMEOUT", 5*time.Second, 0),
		MaxRequestBytes:        r.Int64("MCP_MAX_REQUEST_BYTES", DefaultMaxRequestBytes, 1024, 1<<30),
		RequestReadTimeout:     r.Duration("MCP_REQUEST_READ_TIMEOUT", DefaultRequestReadTimeout, time.Second),
		SessionIdleTimeout:     r.Duration("MCP_SESSION_IDLE_TIMEOUT", DefaultSessionIdleTimeout, time.Minute),
		MaxSessionsPerIdentity: r.Int("MCP_MAX_SESSIONS_PER_IDENTITY", DefaultMaxSessionsPerIdentity, 1, 1_000_000),
		MaxInflightPerIdentity: r.Int("MCP_MAX_INFLIGHT_PER_IDENTITY", DefaultMaxInflightPerIdentity, 1, 1_000_000),
		MetricsAddr:            r.String("MCP_METRICS_ADDR", ""),
		StateURL:               r.Lookup(state.URLVar),
		Log:                    logging.FromEnv(r),
		Calls:                  toolcall.FromEnv(r),
		Tracing:                traces.FromEnv(r),
	}
	if c.MetricsAddr != "" {
		if _, _, err := net.SplitHostPort(c.MetricsAddr); err != nil {
			r.Fail("MCP_METRICS_ADDR", c.MetricsAddr, "host:port to listen on, e.g. 127.0.0.1:9464")
		}
	}
	c.Auth = httpauth.FromEnv(r, "http://"+net.JoinHostPort(baseHost(c.Host), strconv.Itoa(c.Port)))
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

func orDefault[T int | time.Duration](v, def T) T {
	if v <= 0 {
		return def
	}
	return v
}

// maxRequestBytes returns the request cap with its default applied.
func (c Config) maxRequestBytes() int64 {
	if c.MaxRequestBytes <= 0 {
		return DefaultMaxRequestBytes
	}
	return c.MaxRequestBytes
}
