package certs_test

import (
	"bytes"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/mcpfleet/mcpfleet/proxymcp/internal/certs"
	"github.com/mcpfleet/mcpfleet/proxymcp/internal/haproxytest"
)

// made is a certificate and key made for a test, and its PEM bundle.
type made struct {
	cert   *x509.Certificate
	keyPEM []byte
	pem    []byte
}

// makeCert makes the certificate and key with openssl.
func makeCert(t testing.TB, names []string, notBefore, notAfter time.Time, rsaKey bool) made {
	t.Helper()
	c := haproxytest.NewCert(t, haproxytest.CertOptions{Names: names, NotBefore: notBefore, NotAfter: notAfter, RSA: rsaKey})
	return made{cert: c.Cert, keyPEM: []byte(c.KeyPEM), pem: []byte(c.Bundle())}
}

var names = []string{"proxymcp-test.example", "www.proxymcp-test.example"}

func TestParseAndCheck(t *testing.T) {
	now := time.Now()
	cur := makeCert(t, names, now.Add(-time.Hour), now.Add(24*time.Hour), false)
	next := makeCert(t, names, now.Add(-time.Minute), now.Add(90*24*time.Hour), true)
	b, err := certs.Parse(next.pem)
	if err != nil {
		t.Fatal(err)
	}
	curSum := certs.SummaryOf(cur.cert)
	cmp, err := certs.Check(b, &curSum, nil, now, false)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(strings.Join(cmp.Changed, ","), "key_type") || cmp.New.KeyType != "RSA 2048" || curSum.KeyType != "ECDSA P-256" {
		t.Fatalf("%+v", cmp)
	}
	if s := certs.ExpirySeconds(b.Summary().NotAfter, now); s < 89*24*3600 || s > 90*24*3600 {
		t.Errorf("expiry seconds %v", s)
	}
}

// TestHostile: each refused bundle is refused before anything is sent,
// with a reason, and the private key appears in no output.
func TestHostile(t *testing.T) {
	now := time.Now()
	cur := makeCert(t, names, now.Add(-time.Hour), now.Add(24*time.Hour), false)
	curSum := certs.SummaryOf(cur.cert)
	good := makeCert(t, names, now.Add(-time.Hour), now.Add(24*time.Hour), false)
	other := makeCert(t, names, now.Add(-time.Hour), now.Add(24*time.Hour), false)
	expired := makeCert(t, names, now.Add(-48*time.Hour), now.Add(-time.Hour), false)
	future := makeCert(t, names, now.Add(time.Hour), now.Add(48*time.Hour), false)
	wrong := makeCert(t, []string{"evil.example"}, now.Add(-time.Hour), now.Add(24*time.Hour), false)
	certOnly := bytes.TrimSuffix(good.pem, good.keyPEM)
	var secrets [][]byte
	for _, m := range []made{cur, good, other, expired, future, wrong} {
		blk, _ := pem.Decode(m.keyPEM)
		secrets = append(secrets, m.keyPEM, blk.Bytes, []byte(strings.Split(string(m.keyPEM), "\n")[1]))
	}

	cases := []struct {
		name, want string
		data       []byte
		force      bool
	}{
		{"mismatched key", "does not belong", append(bytes.Clone(certOnly), other.keyPEM...), false},
		{"expired", "expired", expired.pem, true},
		{"not yet valid", "not valid before", future.pem, true},
		{"wrong name", "not valid for proxymcp-test.example", wrong.pem, false},
		{"extra DH block", `"DH PARAMETERS"`, append(bytes.Clone(good.pem), pem.EncodeToMemory(&pem.Block{Type: "DH PARAMETERS", Bytes: []byte{1, 2, 3}})...), false},
		{"encrypted key", `"ENCRYPTED PRIVATE KEY"`, append(bytes.Clone(certOnly), pem.EncodeToMemory(&pem.Block{Type: "ENCRYPTED PRIVATE KEY", Bytes: []byte{1}})...), false},
		{"two keys", "more than one private key", append(bytes.Clone(good.pem), good.keyPEM...), false},
		{"trailing junk", "not PEM", append(bytes.Clone(good.pem), "set weight be_app/app1 0\n"...), false},
		{"no key", "no private key", certOnly, false},
		{"no certificate", "no certificate", good.keyPEM, false},
		{"oversized", "more than 16000", append(bytes.Repeat([]byte("#"), certs.MaxBundleBytes), good.pem...), false},
		{"broken key", "not a usable private key", append(bytes.Clone(certOnly), pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: []byte("garbage")})...), false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			b, err := certs.Parse(tc.data)
			if err == nil {
				_, err = certs.Check(b, &curSum, nil, now, tc.force)
			}
			var r *certs.Refusal
			if !errors.As(err, &r) || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "nothing was sent") {
				t.Fatalf("err = %v", err)
			}
			for _, s := range secrets {
				if bytes.Contains([]byte(err.Error()), s) {
					t.Fatal("the private key appears in the error")
				}
			}
		})
	}

	t.Run("wrong name with force", func(t *testing.T) {
		b, _ := certs.Parse(wrong.pem)
		cmp, err := certs.Check(b, &curSum, nil, now, true)
		if err != nil || len(cmp.MissingNames) != 2 {
			t.Fatalf("%+v %v", cmp, err)
		}
	})
	t.Run("the key appears in no rendering", func(t *testing.T) {
		b, err := certs.Parse(good.pem)
		if err != nil {
			t.Fatal(err)
		}
		var out bytes.Buffer
		for _, f := range []string{"%v", "%+v", "%#v", "%s", "%x", "%q"} {
			fmt.Fprintf(&out, f+"\n", b)
			fmt.Fprintf(&out, f+"\n", *b)
		}
		fmt.Fprintln(&out, b.Summary(), b.String())
		for _, s := range secrets {
			if bytes.Contains(out.Bytes(), s) || bytes.Contains(out.Bytes(), []byte(fmt.Sprintf("%x", s))) {
				t.Fatal("the private key appears in a rendering of the bundle (output withheld: it holds the key)")
			}
		}
		if !bytes.Contains(b.PEM(), good.keyPEM) {
			t.Fatal("PEM() must carry the key for HAProxy")
		}
	})
}
