package engine_test

import (
	"context"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/mcpfleet/mcpfleet/sqlmcp/internal/engine"
	"github.com/mcpfleet/mcpfleet/sqlmcp/internal/trinotest"
)

// clientInternals must never reach a message: they are the driver's, not
// the operator's, vocabulary.
var clientInternals = []string{"giving up", "attempts", "request_retry", "trino: query failed", "(0 )", "ErrQueryFailed"}

// An engine that cannot be used fails each call with one plain sentence of
// what failed and what to check; only what waiting can heal (connection
// refused, 503 while the coordinator starts) is retried, for RetryTimeout.
func TestUnreachableEngine(t *testing.T) {
	const retry = 1500 * time.Millisecond
	closed, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closedPort := closed.Addr().(*net.TCPAddr).Port
	closed.Close()
	tlsSrv := trinotest.Start(t, trinotest.WithTLS(), trinotest.WithoutSampleData())
	pwSrv := trinotest.Start(t, trinotest.WithTLS(), trinotest.WithPassword("alice", "right"), trinotest.WithoutSampleData())
	downSrv := trinotest.Start(t, trinotest.WithoutSampleData())
	downSrv.SetUnavailable(true)

	tests := []struct {
		name    string
		cfg     engine.Config
		retried bool     // the call waits out RetryTimeout
		want    []string // in the message
	}{
		{"connection refused", engine.Config{Host: "127.0.0.1", Port: closedPort}, true,
			[]string{"refused", "127.0.0.1:", "SQLENGINE_HOST", "SQLENGINE_PORT"}},
		{"unknown host", engine.Config{Host: "no-such-coordinator.invalid", Port: 8080}, false,
			[]string{"no-such-coordinator.invalid", "SQLENGINE_HOST"}},
		{"untrusted certificate", engine.Config{Host: tlsSrv.Host(), Port: tlsSrv.Port(), SSL: true}, false,
			[]string{"certificate", "SQLENGINE_SSL_INSECURE"}},
		{"plain HTTP to a TLS port", engine.Config{Host: tlsSrv.Host(), Port: tlsSrv.Port()}, false,
			[]string{"SQLENGINE_SSL"}},
		{"wrong password", engine.Config{Host: pwSrv.Host(), Port: pwSrv.Port(), SSL: true, RootCAs: pwSrv.CertPool(), User: "alice", Password: "wrong"}, false,
			[]string{"401", "SQLENGINE_USER", "SQLENGINE_PASSWORD"}},
		{"unknown user", engine.Config{Host: pwSrv.Host(), Port: pwSrv.Port(), SSL: true, RootCAs: pwSrv.CertPool(), User: "mallory", Password: "right"}, false,
			[]string{"401", "SQLENGINE_PASSWORD"}},
		{"503 that does not end", engine.Config{Host: downSrv.Host(), Port: downSrv.Port()}, true,
			[]string{"503", "starting"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := tt.cfg
			cfg.RetryTimeout = retry
			cfg.QueryTimeout = 30 * time.Second
			c, err := engine.New(cfg)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			for _, call := range []struct {
				name string
				run  func() error
			}{
				{"Ping", func() error { return c.Ping(t.Context()) }},
				{"Query", func() error { _, err := c.Query(t.Context(), engine.Query{SQL: "SELECT 1"}); return err }},
				{"Catalogs", func() error { _, err := c.Catalogs(t.Context()); return err }},
			} {
				start := time.Now()
				err := call.run()
				took := time.Since(start)
				if err == nil {
					t.Fatalf("%s succeeded", call.name)
				}
				msg := err.Error()
				if k := engine.KindOf(err); k != engine.Unavailable && k != engine.Permission {
					t.Errorf("%s: kind %v, want unavailable or permission: %s", call.name, k, msg)
				}
				for _, w := range tt.want {
					if !strings.Contains(msg, w) {
						t.Errorf("%s: message lacks %q: %s", call.name, w, msg)
					}
				}
				for _, bad := range clientInternals {
					if strings.Contains(msg, bad) {
						t.Errorf("%s: message carries client internals %q: %s", call.name, bad, msg)
					}
				}
				if strings.Count(msg, "\n") > 0 {
					t.Errorf("%s: message is not one line: %q", call.name, msg)
				}
				if tt.retried && took < retry*2/3 {
					t.Errorf("%s: failed after %v, before retrying for %v", call.name, took, retry)
				}
				if !tt.retried && took > retry/2 {
					t.Errorf("%s: took %v; a failure waiting cannot heal must fail at once", call.name, took)
				}
				if took > retry+5*time.Second {
					t.Errorf("%s: took %v, far beyond the retry budget %v", call.name, took, retry)
				}
			}
		})
	}
}

// A coordinator that answers 503 while starting and then comes up serves
// the call that was waiting: the retry heals it.
func TestEngineComingUpHealsTheWaitingCall(t *testing.T) {
	srv := trinotest.Start(t, trinotest.WithoutSampleData())
	srv.SetUnavailable(true)
	c := newClient(t, srv, func(cfg *engine.Config) { cfg.RetryTimeout = 10 * time.Second; cfg.Catalog, cfg.Schema = "", "" })
	go func() {
		time.Sleep(700 * time.Millisecond)
		srv.SetUnavailable(false)
	}()
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	res, err := c.Query(ctx, engine.Query{SQL: "SELECT 1"})
	if err != nil || len(res.Rows) != 1 {
		t.Fatalf("Query = %v, %v; want the row once the engine is up", res, err)
	}
	var saw503 bool
	for _, r := range srv.Requests() {
		saw503 = saw503 || r.Status == 503
	}
	if !saw503 {
		t.Error("the engine never answered 503: the test proved nothing")
	}
}
