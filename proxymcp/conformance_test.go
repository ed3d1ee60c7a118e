package main

import (
	"testing"

	"github.com/mcpfleet/mcpfleet/proxymcp/internal/haproxytest"
	"github.com/mcpfleet/mcpfleet/shared/e2e"
	"github.com/mcpfleet/mcpfleet/shared/e2e/conformancesuite"
)

// TestProtocolConformance: the suite's protocol-level scenarios against the
// real proxymcp over HTTP on a real HAProxy; the baseline says why each
// entry's checks cannot pass.
func TestProtocolConformance(t *testing.T) {
	h := haproxytest.Run(t, haproxytest.Options{})
	srv := e2e.StartHTTP(t, e2e.Build(t, "."), haproxyEnv(h, "unix"))
	conformancesuite.RunProtocolScenarios(t, srv.MCPURL(), map[string]string{
		"caching":          "proxymcp offers no prompts (no prompts capability declared): prompts/list is not served, so it carries no caching hints; the tools, resources (its MCP Apps views) and resource-template lists carry them and pass",
		"server-stateless": "its failing checks call the suite's own test tools (test_missing_capability, test_streaming_elicitation, test_logging_tool), which a production server must not have; shared/conformance runs them against the conformance server",
	})
}
