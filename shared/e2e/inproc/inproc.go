// Package inproc runs a server's handlers the way its main.go wires them —
// serve.NewServer (metrics, tracing, hooks), the tool-call pipeline from
// serve.Program.Pipeline (validation, classification, dry run, approval,
// audit) — and talks to it through an initialized in-process mcp-go client,
// so a handler test sees what a client of the binary would without
// spawning it. (shared/e2e drives the built binary instead.)
//
//	srv := inproc.Start(t, inproc.Options{Name: "sqlmcp", Server: mcpserver.ServerOptions()},
//		func(calls *toolcall.Pipeline) { mcpserver.New(eng, opts).Register(calls) })
//	res := srv.Call("execute_query", map[string]any{"query": "SELECT 1"})
package inproc

import (
	"cmp"
	"io"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/mcpfleet/mcpfleet/shared/serve"
	"github.com/mcpfleet/mcpfleet/shared/toolcall"
)

// Options configures Start. The zero value is a local (stdio-like) server
// named "test" whose pipeline audits to a file of the test's own.
type Options struct {
	// Name and Version are the server's (default "test", "test"); Name is
	// the metrics' server label and the audit log's server field.
	Name, Version string
	// Server are the server's options (a module's mcpserver.ServerOptions()).
	Server []server.ServerOption
	// Calls configures the pipeline (MCP_APPROVAL*, MCP_AUDIT_LOG); an
	// empty Audit.Dest is a file in t.TempDir(), see Server.Audit.
	Calls toolcall.Config
	// HTTP runs the pipeline as over streamable HTTP (Local false: approval
	// needs a client that can elicit); the default is as over stdio.
	HTTP bool
	// ClientName and ClientVersion are the client's clientInfo (default
	// "test", "1"); Protocol the revision it asks for (default
	// mcp.LATEST_PROTOCOL_VERSION).
	ClientName, ClientVersion, Protocol string
	// Client are the in-process client's options (elicitation handler, …).
	Client []client.ClientOption
	// NoClient starts no client: the test connects its own.
	NoClient bool
}

// Server is a running in-process server with its pipeline and client.
type Server struct {
	t testing.TB
	// Serve is the server as serve.NewServer made it (Metrics included);
	// MCP its mcp-go server.
	Serve *serve.Server
	MCP   *server.MCPServer
	// Calls is the pipeline every tool was registered through.
	Calls *toolcall.Pipeline
	// Client is initialized; nil with Options.NoClient.
	Client *client.Client
	// Audit is the audit log's path.
	Audit string
}

// Start builds the server, its pipeline, registers the tools with register
// and connects the client; everything is closed when the test ends.
func Start(t testing.TB, o Options, register func(*toolcall.Pipeline)) *Server {
	t.Helper()
	if o.Name == "" {
		o.Name = "test"
	}
	if o.Version == "" {
		o.Version = "test"
	}
	if o.Calls.Audit.Dest == "" {
		o.Calls.Audit.Dest = filepath.Join(t.TempDir(), "audit.log")
	}
	s := serve.NewServer(o.Name, o.Version, o.Server...)
	transport := "stdio"
	if o.HTTP {
		transport = "http"
	}
	calls, err := serve.Program{Name: o.Name, Version: o.Version}.Pipeline(s, serve.Config{Transport: transport, Calls: o.Calls},
		io.Discard, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatalf("pipeline: %v", err)
	}
	t.Cleanup(func() { calls.Close() })
	register(calls)
	srv := &Server{t: t, Serve: s, MCP: s.MCPServer, Calls: calls, Audit: o.Calls.Audit.Dest}
	if o.NoClient {
		return srv
	}
	srv.Client = connect(t, s.MCPServer, mcp.Implementation{Name: o.ClientName, Version: o.ClientVersion}, o.Protocol, o.Client...)
	return srv
}

// Connect starts an in-process client of s and initializes it as name
// (default "test") asking for protocol (default mcp.LATEST_PROTOCOL_VERSION;
// a protocol given is also the client's preferred one, so an earlier
// revision keeps it on the initialize handshake); it is closed when the
// test ends.
func Connect(t testing.TB, s *server.MCPServer, name, protocol string, opts ...client.ClientOption) *client.Client {
	t.Helper()
	return connect(t, s, mcp.Implementation{Name: name}, protocol, opts...)
}

func connect(t testing.TB, s *server.MCPServer, info mcp.Implementation, protocol string, opts ...client.ClientOption) *client.Client {
	t.Helper()
	info.Name = cmp.Or(info.Name, "test")
	info.Version = cmp.Or(info.Version, "1")
	if protocol == "" {
		protocol = mcp.LATEST_PROTOCOL_VERSION
	} else {
		opts = append([]client.ClientOption{client.WithProtocolVersion(protocol)}, opts...)
	}
	c, err := client.NewInProcessClientWithOptions(s, opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	if err := c.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	init := mcp.InitializeRequest{}
	init.Params.ClientInfo = info
	init.Params.ProtocolVersion = protocol
	if _, err := c.Initialize(t.Context(), init); err != nil {
		t.Fatalf("initialize: %v", err)
	}
	return c
}

// Call calls tool with args and returns its result; a protocol error fails
// the test.
func (s *Server) Call(tool string, args map[string]any) *mcp.CallToolResult {
	s.t.Helper()
	req := mcp.CallToolRequest{}
	req.Params.Name = tool
	req.Params.Arguments = args
	res, err := s.Client.CallTool(s.t.Context(), req)
	if err != nil {
		s.t.Fatalf("call %s: %v", tool, err)
	}
	return res
}

// Text is a result's text content, joined.
func Text(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}
