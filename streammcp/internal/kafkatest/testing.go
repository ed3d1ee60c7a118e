package kafkatest

import (
	"context"
	"net"
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

// SilentBroker returns the address of a listener that accepts connections
// and never answers: a broker that hangs (a small fake, as kfake cannot stop
// answering at the TCP level). It closes when the test ends.
func SilentBroker(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var held []net.Conn
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			conn, err := ln.Accept()
			if err != nil {
				for _, c := range held {
					c.Close()
				}
				return
			}
			held = append(held, conn)
		}
	}()
	t.Cleanup(func() { ln.Close(); <-done })
	return ln.Addr().String()
}

// StartQuiet starts a 3-broker cluster with the quiet scenario (SeedQuiet)
// for one test: healthy, no lag.
func StartQuiet(t testing.TB) *Cluster {
	t.Helper()
	kc, err := Start(Options{})
	if err != nil {
		t.Fatalf("start the in-process Kafka cluster: %v", err)
	}
	t.Cleanup(kc.Close)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := kc.SeedQuiet(ctx); err != nil {
		t.Fatalf("seed the in-process Kafka cluster: %v", err)
	}
	return kc
}
