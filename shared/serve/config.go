package serve

import (
	"fmt"
	"net"
	"strconv"
	"time"

	"github.com/mcpfleet/mcpfleet/shared/envconfig"
	"github.com/mcpfleet/mcpfleet/shared/httpauth"
	"github.com/mcpfleet/mcpfleet/shared/logging"
)

// Config is the transport and process configuration every server shares.
type Config struct {
	Transport       string // "stdio" or "http"
	Host            string
	Port            int
	AllowedHosts    []string
	ShutdownTimeout time.Duration
	Log             logging.Config
	Auth            httpauth.Config
}

// TransportVars documents the transport variables.
var TransportVars = []envconfig.Var{
	{Name: "MCP_TRANSPORT", Default: "stdio", Description: "stdio, or http (streamable HTTP at /mcp, legacy SSE at /sse + /message, GET /healthz)"},
	{Name: "MCP_HOST", Default: "127.0.0.1", Description: "address the HTTP transport listens on"},
	{Name: "MCP_PORT", Default: "8080", Description: "port the HTTP transport listens on"},
	{Name: "MCP_ALLOWED_HOSTS", Description: "extra Host/Origin names accepted (comma-separated), for deployments behind a proxy or in a container"},
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
		Log:             logging.FromEnv(r),
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

func (c Config) String() string {
	return fmt.Sprintf("transport=%s addr=%s", c.Transport, c.Addr())
}
