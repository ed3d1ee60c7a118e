package main

import (
	"testing"

	"github.com/mcpfleet/mcpfleet/shared/e2e"
	"github.com/mcpfleet/mcpfleet/shared/e2e/conformancesuite"
)

// TestProtocolConformance: the suite's protocol-level scenarios against the
// real streammcp over HTTP on the seeded in-process Kafka cluster (kfake);
// the baseline says why each entry's checks cannot pass.
func TestProtocolConformance(t *testing.T) {
	_, brokers := seededCluster(t)
	srv := e2e.StartHTTP(t, e2e.Build(t, "."), []string{"STREAM_BROKERS=" + brokers})
	conformancesuite.RunProtocolScenarios(t, srv.MCPURL(), map[string]string{
		"server-stateless": "its failing checks call the suite's own test tools (test_missing_capability, test_streaming_elicitation, test_logging_tool), which a production server must not have; shared/conformance runs them against the conformance server",
	})
}
