package mcpserver

import (
	"crypto/tls"
	"crypto/x509"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/mcpfleet/mcpfleet/proxymcp/internal/haproxytest"
)

// testBundle makes a self-signed certificate for names, valid from nb to
// na, with openssl, and returns the PEM bundle, the key block alone and
// the certificate.
func testBundle(t *testing.T, names []string, nb, na time.Time) (bundle, keyPEM string, cert *x509.Certificate) {
	t.Helper()
	c := haproxytest.NewCert(t, haproxytest.CertOptions{Names: names, NotBefore: nb, NotAfter: na})
	return c.Bundle(), c.KeyPEM, c.Cert
}

// served is the certificate a real TLS client gets from fe_tls.
func served(t *testing.T, h *haproxytest.MasterWorker) *x509.Certificate {
	t.Helper()
	c, err := tls.Dial("tcp", h.FrontendTLS, &tls.Config{InsecureSkipVerify: true, ServerName: "proxymcp-test.example"})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	return c.ConnectionState().PeerCertificates[0]
}

// TestSetSSLCert rotates fe_tls's certificate through the tool: refusals
// first (nothing changes), then the rotation a TLS client sees, the file
// rewritten with persistence on, and the key nowhere in the audit log.
func TestSetSSLCert(t *testing.T) {
	haproxytest.EachVersion(t, func(t *testing.T, branch string) {
		h := haproxytest.RunMaster(t, haproxytest.MasterOptions{Version: branch, TLS: true})
		e := newLC(t, []*haproxytest.MasterWorker{h}, nil, []*Lifecycle{lifecycleOf(h, true)})
		now := time.Now()
		names := []string{"proxymcp-test.example", "www.proxymcp-test.example"}
		good, goodKey, goodCert := testBundle(t, names, now.Add(-time.Hour), now.Add(60*24*time.Hour))
		_, otherKey, _ := testBundle(t, names, now.Add(-time.Hour), now.Add(time.Hour))
		expired, expiredKey, _ := testBundle(t, names, now.Add(-48*time.Hour), now.Add(-24*time.Hour))
		wrong, wrongKey, _ := testBundle(t, []string{"other.example"}, now.Add(-time.Hour), now.Add(time.Hour))
		certOnly := good[:strings.Index(good, "-----BEGIN PRIVATE KEY")]
		keys := []string{goodKey, otherKey, expiredKey, wrongKey}
		before, _ := os.ReadFile(h.CertFile)
		hostile := []struct {
			name string
			pem  string
			want string
		}{
			{"mismatched key", certOnly + otherKey, "does not belong"},
			{"expired", expired, "expired"},
			{"wrong name", wrong, "not valid for proxymcp-test.example"},
			{"no key", certOnly, "no private key"},
			{"two keys", good + otherKey, "key"},
			{"DH parameters block", good + "-----BEGIN DH PARAMETERS-----\nMAgCAQACAQI=\n-----END DH PARAMETERS-----\n", "DH PARAMETERS"},
			{"encrypted key", certOnly + "-----BEGIN ENCRYPTED PRIVATE KEY-----\nMAgCAQACAQI=\n-----END ENCRYPTED PRIVATE KEY-----\n", "ENCRYPTED"},
			{"trailing garbage", good + "set ssl cert x\n", "not PEM"},
			{"command injection in the payload", certOnly + "\n\ncommit ssl cert " + h.CertFile + "\n" + goodKey, ""},
			{"oversized", good + strings.Repeat("A", 17000), ""},
			{"empty", "", ""},
		}
		for _, c := range hostile {
			e.fails("set_ssl_cert", map[string]any{"file": h.CertFile, "pem_with_private_key": c.pem}, c.want)
		}
		for _, c := range []struct {
			file, want string
		}{
			{h.CertFile + "/../site.pem", ""}, {"../../etc/passwd", ""}, {h.CertFile + ";show info", ""}, {h.Dir + "/nope.pem", ""},
		} {
			e.fails("set_ssl_cert", map[string]any{"file": c.file, "pem_with_private_key": good}, c.want)
		}
		if got := served(t, h); got.SerialNumber.Cmp(h.Cert.SerialNumber) != 0 {
			t.Fatalf("a refused call changed the certificate served")
		}
		if now, _ := os.ReadFile(h.CertFile); string(now) != string(before) {
			t.Fatalf("a refused call rewrote %s", h.CertFile)
		}
		// The wrong name passes with force (and is then put back).
		pv := preview(t, e.raw("set_ssl_cert", map[string]any{"file": h.CertFile, "pem_with_private_key": good, "dryRun": true}))
		if !strings.Contains(pv.Summary, "proxymcp-test.example") || !strings.Contains(pv.Summary, "Then rewrites "+h.CertFile) {
			t.Errorf("preview: %s", pv.Summary)
		}
		r := e.ok("set_ssl_cert", map[string]any{"file": h.CertFile, "pem_with_private_key": good})
		if r["committed"] != true || r["persisted"] != true {
			t.Fatalf("set_ssl_cert: %v", r)
		}
		if got := served(t, h); !got.Equal(goodCert) {
			t.Errorf("the TLS client sees serial %s, want the new %s", got.SerialNumber, goodCert.SerialNumber)
		}
		if disk, _ := os.ReadFile(h.CertFile); !strings.Contains(string(disk), strings.TrimSpace(certOnly)) {
			t.Errorf("%s was not rewritten with the new certificate", h.CertFile)
		}
		r = e.ok("set_ssl_cert", map[string]any{"file": h.CertFile, "pem_with_private_key": wrong, "force": true})
		if r["committed"] != true {
			t.Fatalf("forced: %v", r)
		}
		audit, err := os.ReadFile(e.audit)
		if err != nil {
			t.Fatal(err)
		}
		for _, k := range keys {
			body := strings.Split(strings.TrimSpace(k), "\n")[1]
			if strings.Contains(string(audit), body) || strings.Contains(strings.ReplaceAll(string(audit), `\n`, "\n"), body) {
				t.Errorf("a private key is in the audit log")
			}
		}
		if !strings.Contains(string(audit), "set_ssl_cert") {
			t.Errorf("the audit log has no set_ssl_cert record")
		}
	})
}
