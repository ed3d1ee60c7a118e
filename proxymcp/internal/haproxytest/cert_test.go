package haproxytest

import (
	"crypto/ecdsa"
	"crypto/rsa"
	"os"
	"os/exec"
	"testing"
	"time"
)

// TestMakeCertOpenSSL: the certificates are openssl's, with the names,
// dates and key types asked, including dates in the past.
func TestMakeCertOpenSSL(t *testing.T) {
	if _, err := exec.LookPath("openssl"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("openssl is not installed: %v; CI=true forbids skipping", err)
		}
		t.Skip("openssl is not installed")
	}
	past := time.Now().Add(-48 * time.Hour).Truncate(time.Second)
	for _, o := range []CertOptions{
		{Names: []string{"a.example", "www.a.example"}},
		{Names: []string{"old.example"}, NotBefore: past, NotAfter: past.Add(24 * time.Hour)},
		{Names: []string{"rsa.example"}, RSA: true},
	} {
		c := NewCert(t, o)
		if c.Maker != "openssl" {
			t.Fatalf("made by %s", c.Maker)
		}
		if c.Cert.Subject.CommonName != o.Names[0] || len(c.Cert.DNSNames) != len(o.Names) || c.Cert.DNSNames[0] != o.Names[0] {
			t.Errorf("names %s %q, want %q", c.Cert.Subject.CommonName, c.Cert.DNSNames, o.Names)
		}
		if !o.NotBefore.IsZero() && (!c.Cert.NotBefore.Equal(o.NotBefore) || !c.Cert.NotAfter.Equal(o.NotAfter)) {
			t.Errorf("validity %s – %s, want %s – %s", c.Cert.NotBefore, c.Cert.NotAfter, o.NotBefore, o.NotAfter)
		}
		switch c.Cert.PublicKey.(type) {
		case *rsa.PublicKey:
			if !o.RSA {
				t.Errorf("RSA key, want ECDSA")
			}
		case *ecdsa.PublicKey:
			if o.RSA {
				t.Errorf("ECDSA key, want RSA")
			}
		}
	}
}
