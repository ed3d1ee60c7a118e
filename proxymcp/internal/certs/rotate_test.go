package certs_test

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/mcpfleet/mcpfleet/proxymcp/internal/certs"
	"github.com/mcpfleet/mcpfleet/proxymcp/internal/haproxytest"
	"github.com/mcpfleet/mcpfleet/proxymcp/internal/persist"
)

// TestRotate, on every branch of the matrix: a real TLS client sees the new
// certificate after commit; a refused transaction is aborted and the old
// certificate keeps serving; the file on disk is rewritten through persist.
func TestRotate(t *testing.T) {
	haproxytest.EachVersion(t, func(t *testing.T, branch string) {
		h := haproxytest.RunMaster(t, haproxytest.MasterOptions{Version: branch, TLS: true})
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		rt := h.Runtime()
		send := certs.PayloadSender{Network: "unix", Address: h.Socket}
		now := time.Now()
		next := makeCert(t, names, now.Add(-time.Minute), now.Add(30*24*time.Hour), true)
		b, err := certs.Parse(next.pem)
		if err != nil {
			t.Fatal(err)
		}
		cur := certs.SummaryOf(served(t, h.FrontendTLS))
		if cur.SHA256 != certs.SummaryOf(h.Cert).SHA256 {
			t.Fatal("fe_tls does not serve the configured certificate")
		}
		cmp, err := certs.Check(b, &cur, nil, now, false)
		if err != nil || len(cmp.Changed) == 0 {
			t.Fatalf("%+v %v", cmp, err)
		}

		// A failing commit (a file HAProxy does not know) is aborted.
		if _, err := certs.Rotate(ctx, rt, send, h.Dir+"/unknown.pem", b); err == nil || !strings.Contains(err.Error(), "set ssl cert") {
			t.Fatalf("unknown file: %v", err)
		}
		if got := certs.SummaryOf(served(t, h.FrontendTLS)); got.SHA256 != cur.SHA256 {
			t.Fatal("the served certificate changed after a failed rotation")
		}

		res, err := certs.Rotate(ctx, rt, send, h.CertFile, b)
		if err != nil || !strings.Contains(res.Answer, "Success") {
			t.Fatalf("rotate: %+v %v", res, err)
		}
		if got := certs.SummaryOf(served(t, h.FrontendTLS)); got.SHA256 != b.Summary().SHA256 {
			t.Fatalf("after commit fe_tls serves %s, want the new %s", got.SHA256, b.Summary().SHA256)
		}
		if out, _ := rt.Execute(ctx, "show ssl cert"); strings.Contains(out, "*") {
			t.Fatalf("a transaction is left open: %s", out)
		}
		// Persist the file HAProxy loads, so the next reload keeps it.
		root := persist.Root{Dir: h.Dir}
		plan, err := root.Plan("cert", h.CertFile)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := root.Write(h.CertFile, b.PEM(), plan.Digest); err != nil {
			t.Fatal(err)
		}
		if st, _ := os.Stat(h.CertFile); st.Mode().Perm() != 0o600 {
			t.Errorf("certificate file mode %v, want 0600 kept", st.Mode().Perm())
		}
		// The key appears in nothing HAProxy or we logged.
		if bytes.Contains([]byte(h.Log()), next.keyPEM[40:80]) {
			t.Error("the private key appears in HAProxy's log")
		}
	})
}

// served returns the leaf certificate a real TLS client receives.
func served(t *testing.T, addr string) *x509.Certificate {
	t.Helper()
	conn, err := tls.Dial("tcp", addr, &tls.Config{InsecureSkipVerify: true, ServerName: names[0]}) // self-signed test certificates
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	return conn.ConnectionState().PeerCertificates[0]
}
