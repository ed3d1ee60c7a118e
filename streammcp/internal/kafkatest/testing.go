package kafkatest

import (
	"context"
	"testing"
	"time"
)

// StartSeeded starts a 3-broker cluster with the standard scenario
// (SeedScenario) for one test; both are stopped when the test ends.
func StartSeeded(t testing.TB) *Cluster {
	t.Helper()
	kc, err := Start(Options{})
	if err != nil {
		t.Fatalf("start the in-process Kafka cluster: %v", err)
	}
	t.Cleanup(kc.Close)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s, err := kc.SeedScenario(ctx)
	if err != nil {
		t.Fatalf("seed the in-process Kafka cluster: %v", err)
	}
	t.Cleanup(s.Close)
	return kc
}
