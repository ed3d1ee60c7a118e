package serve

import (
	"io"
	"log/slog"

	"github.com/mcpfleet/mcpfleet/shared/toolcall"
)

// Pipeline returns the tool-call pipeline for s (validation,
// classification, dry run, approval, audit), configured from cfg's
// MCP_APPROVAL* and MCP_AUDIT_LOG. Register every tool through it; Close it
// when the server stops. An audit log that cannot be opened is an error:
// report it and exit (see Program.Serve's status codes).
func (p Program) Pipeline(s *Server, cfg Config, stderr io.Writer, logger *slog.Logger) (*toolcall.Pipeline, error) {
	return toolcall.New(s.MCPServer, cfg.Calls, toolcall.Options{
		Server:  p.Name,
		Version: p.Version,
		Stderr:  stderr,
		Logger:  logger,
		Local:   cfg.Transport != "http",
		// mcpfleet_approvals_total{tool,decision}: the audit record's approval.
		OnDecision: s.Metrics.Approval,
		Tracer:     s.Tracing.Tracer,
	})
}
