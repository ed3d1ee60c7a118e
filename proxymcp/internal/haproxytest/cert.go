package haproxytest

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// CertOptions describe a self-signed server certificate for the tests.
type CertOptions struct {
	// Names are the DNS names: the first is the subject's common name,
	// all of them are subjectAltNames.
	Names []string
	// NotBefore and NotAfter bound the validity (an expired certificate:
	// both in the past). Zero: from an hour ago for 90 days.
	NotBefore, NotAfter time.Time
	// RSA makes a 2048-bit RSA key instead of ECDSA P-256.
	RSA bool
}

// Cert is a certificate and its private key as PEM, as openssl wrote them.
type Cert struct {
	CertPEM string // the CERTIFICATE block
	KeyPEM  string // the PRIVATE KEY block (PKCS#8)
	Cert    *x509.Certificate
	// Maker is "openssl" or, without openssl outside CI, "go".
	Maker string
}

// Bundle is the certificate followed by its key: what "bind ... ssl crt"
// loads and what set_ssl_cert takes.
func (c Cert) Bundle() string { return c.CertPEM + c.KeyPEM }

// NewCert makes a certificate with openssl (MakeCert) for a test: without
// openssl, the Go fallback, or with CI=true a failed test.
func NewCert(t testing.TB, o CertOptions) Cert {
	t.Helper()
	c, err := MakeCert(t.Context(), t.TempDir(), o)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// MakeCert makes a self-signed certificate with openssl in dir: a key with
// `openssl genpkey`, a request with `openssl req -new`, signed by its own
// key with `openssl ca -selfsign` (which, unlike `req -x509` in OpenSSL
// 3.0, takes any start and end date, so expired certificates are real
// too). Without openssl on PATH it fails with CI=true and otherwise falls
// back to Go's crypto (Cert.Maker says which).
func MakeCert(ctx context.Context, dir string, o CertOptions) (Cert, error) {
	if len(o.Names) == 0 {
		o.Names = []string{"proxymcp-test.example"}
	}
	if o.NotBefore.IsZero() {
		o.NotBefore = time.Now().Add(-time.Hour)
	}
	if o.NotAfter.IsZero() {
		o.NotAfter = o.NotBefore.Add(90 * 24 * time.Hour)
	}
	bin, err := exec.LookPath("openssl")
	if err != nil {
		if os.Getenv("CI") == "true" {
			return Cert{}, fmt.Errorf("haproxytest: openssl is not installed (%v) and CI=true forbids the Go fallback: run scripts/install/proxymcp.sh (apt-get install openssl)", err)
		}
		return goCert(o)
	}
	run := func(args ...string) error {
		cmd := exec.CommandContext(ctx, bin, args...)
		cmd.Dir = dir
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("haproxytest: openssl %s: %v\n%s", strings.Join(args, " "), err, out.String())
		}
		return nil
	}
	p := func(name string) string { return filepath.Join(dir, name) }
	keyAlg := []string{"genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", p("key.pem")}
	if o.RSA {
		keyAlg = []string{"genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048", "-out", p("key.pem")}
	}
	sans := make([]string, len(o.Names))
	for i, n := range o.Names {
		sans[i] = "DNS:" + n
	}
	conf := fmt.Sprintf(`[ca]
default_ca = ca_default
[ca_default]
database = %[1]s/index.txt
new_certs_dir = %[1]s
serial = %[1]s/serial
default_md = sha256
policy = any
copy_extensions = copy
unique_subject = no
[any]
commonName = supplied
`, dir)
	for name, body := range map[string]string{"ca.cnf": conf, "index.txt": "", "serial": fmt.Sprintf("%016X\n", time.Now().UnixNano())} {
		if err := os.WriteFile(p(name), []byte(body), 0o600); err != nil {
			return Cert{}, fmt.Errorf("haproxytest: %w", err)
		}
	}
	date := func(t time.Time) string { return t.UTC().Format("20060102150405Z") }
	for _, args := range [][]string{
		keyAlg,
		{"req", "-new", "-key", p("key.pem"), "-subj", "/O=mcpfleet tests/CN=" + o.Names[0],
			"-addext", "subjectAltName=" + strings.Join(sans, ","),
			"-addext", "keyUsage=critical,digitalSignature" + map[bool]string{true: ",keyEncipherment"}[o.RSA],
			"-addext", "extendedKeyUsage=serverAuth", "-out", p("req.csr")},
		{"ca", "-batch", "-config", p("ca.cnf"), "-selfsign", "-keyfile", p("key.pem"), "-in", p("req.csr"),
			"-startdate", date(o.NotBefore), "-enddate", date(o.NotAfter), "-notext", "-out", p("cert.pem")},
	} {
		if err := run(args...); err != nil {
			return Cert{}, err
		}
	}
	certPEM, err := os.ReadFile(p("cert.pem"))
	if err != nil {
		return Cert{}, fmt.Errorf("haproxytest: %w", err)
	}
	keyPEM, err := os.ReadFile(p("key.pem"))
	if err != nil {
		return Cert{}, fmt.Errorf("haproxytest: %w", err)
	}
	blk, _ := pem.Decode(certPEM)
	if blk == nil || blk.Type != "CERTIFICATE" {
		return Cert{}, errors.New("haproxytest: openssl ca wrote no certificate")
	}
	cert, err := x509.ParseCertificate(blk.Bytes)
	if err != nil {
		return Cert{}, fmt.Errorf("haproxytest: the certificate openssl made: %w", err)
	}
	return Cert{CertPEM: string(pem.EncodeToMemory(blk)), KeyPEM: string(keyPEM), Cert: cert, Maker: "openssl"}, nil
}

// goCert is MakeCert without openssl (never with CI=true).
func goCert(o CertOptions) (Cert, error) {
	var key, pub any
	if o.RSA {
		k, err := rsa.GenerateKey(rand.Reader, 2048)
		if err != nil {
			return Cert{}, err
		}
		key, pub = k, &k.PublicKey
	} else {
		k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			return Cert{}, err
		}
		key, pub = k, &k.PublicKey
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(time.Now().UnixNano()),
		Subject:      pkix.Name{CommonName: o.Names[0], Organization: []string{"mcpfleet tests"}},
		DNSNames:     o.Names, NotBefore: o.NotBefore, NotAfter: o.NotAfter,
		KeyUsage:    x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, pub, key)
	if err != nil {
		return Cert{}, fmt.Errorf("haproxytest: create a TLS certificate: %w", err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return Cert{}, err
	}
	p8, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return Cert{}, err
	}
	return Cert{CertPEM: string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})),
		KeyPEM: string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: p8})), Cert: cert, Maker: "go"}, nil
}
