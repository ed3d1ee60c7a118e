// Package certs checks a TLS certificate bundle (chain + private key)
// before HAProxy gets it, compares it with the certificate in use, and
// builds the runtime API's "set/commit/abort ssl cert" exchange. The
// private key never leaves a Bundle: no error, String or format output
// carries it, only its type.
package certs

import (
	"bytes"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
)

// MaxBundleBytes bounds a bundle: HAProxy reads a payload into one
// tune.bufsize buffer (16384 bytes by default), so a larger bundle would
// be cut off there; this leaves room for the command line.
const MaxBundleBytes = 16000

// Bundle is a parsed certificate chain with its private key.
type Bundle struct {
	Chain []*x509.Certificate // leaf first
	key   crypto.Signer
	pem   []byte // re-encoded: certificates then key, no other block
}

// String describes the bundle without its key.
func (b Bundle) String() string { return "certificate bundle " + b.Summary().String() }

// GoString keeps %#v from printing the key.
func (b Bundle) GoString() string { return b.String() }

// Format keeps every verb (%v, %+v, %s, %x ...) from printing the key,
// for a Bundle and a *Bundle alike (value receivers).
func (b Bundle) Format(f fmt.State, _ rune) { _, _ = f.Write([]byte(b.String())) }

// PEM is what HAProxy receives: the chain, then the key. Callers send it
// and write it to disk; they never log it.
func (b *Bundle) PEM() []byte { return bytes.Clone(b.pem) }

// Refusal is a bundle refused before anything was sent to HAProxy.
type Refusal struct {
	Reason string
	// Forcible: "force" would accept it (a chain for other names).
	Forcible bool
}

func (e *Refusal) Error() string {
	s := "certificate refused: " + e.Reason + "; nothing was sent to HAProxy"
	if e.Forcible {
		s += " (force=true accepts it if that is intended)"
	}
	return s
}

// Parse reads a PEM bundle: one or more CERTIFICATE blocks (leaf first)
// and exactly one private key (PKCS#8, PKCS#1 or SEC 1). Anything else,
// a key that does not belong to the leaf, and an oversized payload are
// refused. Errors never quote the input.
func Parse(data []byte) (*Bundle, error) {
	if len(data) > MaxBundleBytes {
		return nil, &Refusal{Reason: fmt.Sprintf("the bundle is %d bytes, more than %d (HAProxy reads a payload into one tune.bufsize buffer)", len(data), MaxBundleBytes)}
	}
	b := &Bundle{}
	var out bytes.Buffer
	var keyPEM []byte
	rest := data
	for n := 1; ; n++ {
		// pem.Decode skips whatever precedes a block: text between blocks
		// (a command, a comment) is refused rather than silently dropped.
		if t := bytes.TrimSpace(rest); len(t) > 0 && !bytes.HasPrefix(t, []byte("-----BEGIN ")) {
			return nil, &Refusal{Reason: fmt.Sprintf("the bundle has data that is not PEM before block %d", n)}
		}
		var blk *pem.Block
		blk, rest = pem.Decode(rest)
		if blk == nil {
			break
		}
		switch blk.Type {
		case "CERTIFICATE":
			c, err := x509.ParseCertificate(blk.Bytes)
			if err != nil {
				return nil, &Refusal{Reason: fmt.Sprintf("PEM block %d is not a valid certificate (%v)", n, err)}
			}
			b.Chain = append(b.Chain, c)
			_ = pem.Encode(&out, &pem.Block{Type: "CERTIFICATE", Bytes: blk.Bytes})
		case "PRIVATE KEY", "RSA PRIVATE KEY", "EC PRIVATE KEY":
			if b.key != nil {
				return nil, &Refusal{Reason: "the bundle holds more than one private key"}
			}
			k, err := parseKey(blk)
			if err != nil {
				// x509's messages describe the structure, never the key bytes.
				return nil, &Refusal{Reason: fmt.Sprintf("PEM block %d (%s) is not a usable private key (%v)", n, blk.Type, err)}
			}
			b.key = k
			keyPEM = pem.EncodeToMemory(&pem.Block{Type: blk.Type, Bytes: blk.Bytes})
		default:
			// A DH parameter, OCSP or encrypted key block would change
			// what HAProxy loads, or need a passphrase it does not have.
			return nil, &Refusal{Reason: fmt.Sprintf("PEM block %d is a %q block; only CERTIFICATE blocks and one private key are accepted", n, blk.Type)}
		}
	}
	if len(bytes.TrimSpace(rest)) > 0 {
		return nil, &Refusal{Reason: "the bundle has data that is not PEM after its last block"}
	}
	if len(b.Chain) == 0 {
		return nil, &Refusal{Reason: "the bundle holds no certificate"}
	}
	if b.key == nil {
		return nil, &Refusal{Reason: "the bundle holds no private key (HAProxy needs the certificate and its key in one PEM)"}
	}
	if !publicKeysEqual(b.Chain[0].PublicKey, b.key.Public()) {
		return nil, &Refusal{Reason: "the private key does not belong to the certificate " + b.Chain[0].Subject.String()}
	}
	out.Write(keyPEM)
	b.pem = out.Bytes()
	return b, nil
}

func parseKey(blk *pem.Block) (crypto.Signer, error) {
	var k any
	var err error
	switch blk.Type {
	case "PRIVATE KEY":
		k, err = x509.ParsePKCS8PrivateKey(blk.Bytes)
	case "RSA PRIVATE KEY":
		k, err = x509.ParsePKCS1PrivateKey(blk.Bytes)
	default:
		k, err = x509.ParseECPrivateKey(blk.Bytes)
	}
	if err != nil {
		return nil, errors.New("malformed key structure")
	}
	s, ok := k.(crypto.Signer)
	if !ok {
		return nil, errors.New("unsupported key type")
	}
	return s, nil
}

func publicKeysEqual(a, b crypto.PublicKey) bool {
	type eq interface{ Equal(crypto.PublicKey) bool }
	ea, ok := a.(eq)
	return ok && ea.Equal(b)
}

// Summary is what a preview shows of a certificate.
type Summary struct {
	Subject     string    `json:"subject"`
	SANs        []string  `json:"subject_alt_names"`
	Issuer      string    `json:"issuer"`
	NotBefore   time.Time `json:"not_before"`
	NotAfter    time.Time `json:"not_after"`
	KeyType     string    `json:"key_type"`
	Serial      string    `json:"serial"`
	SHA256      string    `json:"sha256_fingerprint"`
	ChainLength int       `json:"chain_length"`
}

func (s Summary) String() string {
	return fmt.Sprintf("subject %q, SANs %v, issuer %q, valid %s to %s, %s key",
		s.Subject, s.SANs, s.Issuer, s.NotBefore.Format(time.RFC3339), s.NotAfter.Format(time.RFC3339), s.KeyType)
}

// Summary describes the leaf certificate.
func (b Bundle) Summary() Summary {
	c := b.Chain[0]
	fp := sha256.Sum256(c.Raw)
	s := Summary{
		Subject: c.Subject.String(), Issuer: c.Issuer.String(),
		NotBefore: c.NotBefore.UTC(), NotAfter: c.NotAfter.UTC(),
		KeyType: KeyType(c.PublicKey), Serial: c.SerialNumber.Text(16),
		SHA256: hex.EncodeToString(fp[:]), ChainLength: len(b.Chain),
	}
	s.SANs = append(s.SANs, c.DNSNames...)
	for _, ip := range c.IPAddresses {
		s.SANs = append(s.SANs, ip.String())
	}
	return s
}

// KeyType names a public key: "RSA 2048", "ECDSA P-256", "Ed25519".
func KeyType(pub crypto.PublicKey) string {
	switch k := pub.(type) {
	case *rsa.PublicKey:
		return fmt.Sprintf("RSA %d", k.N.BitLen())
	case *ecdsa.PublicKey:
		return "ECDSA " + k.Curve.Params().Name
	case ed25519.PublicKey:
		return "Ed25519"
	}
	return fmt.Sprintf("%T", pub)
}

// Comparison is the preview of replacing a certificate.
type Comparison struct {
	Current *Summary `json:"current,omitempty"` // nil when unknown
	New     Summary  `json:"new"`
	// Changed names the fields that differ: subject, subject_alt_names,
	// issuer, not_before, not_after, key_type.
	Changed []string `json:"changed"`
	// MissingNames are names the current certificate serves and the new
	// one does not (accepted only with force).
	MissingNames []string `json:"missing_names,omitempty"`
}

// Check compares the new bundle with the certificate in use (current may
// be nil) and refuses an expired or not yet valid certificate, and, unless
// force, one that does not cover every name the current one serves (or,
// with no current one, the names the caller expects).
func Check(b *Bundle, current *Summary, expect []string, now time.Time, force bool) (Comparison, error) {
	cmp := Comparison{Current: current, New: b.Summary(), Changed: []string{}}
	leaf := b.Chain[0]
	if !now.Before(leaf.NotAfter) {
		return cmp, &Refusal{Reason: fmt.Sprintf("the certificate expired on %s", leaf.NotAfter.UTC().Format(time.RFC3339))}
	}
	if now.Before(leaf.NotBefore) {
		return cmp, &Refusal{Reason: fmt.Sprintf("the certificate is not valid before %s", leaf.NotBefore.UTC().Format(time.RFC3339))}
	}
	names := slices.Clone(expect)
	if current != nil {
		names = append(names, current.SANs...)
		n, o := cmp.New, *current
		for _, d := range []struct {
			field string
			same  bool
		}{
			{"subject", n.Subject == o.Subject}, {"subject_alt_names", slices.Equal(n.SANs, o.SANs)},
			{"issuer", n.Issuer == o.Issuer}, {"not_before", n.NotBefore.Equal(o.NotBefore)},
			{"not_after", n.NotAfter.Equal(o.NotAfter)}, {"key_type", n.KeyType == o.KeyType},
		} {
			if !d.same {
				cmp.Changed = append(cmp.Changed, d.field)
			}
		}
	}
	for _, name := range names {
		if leaf.VerifyHostname(name) != nil && !slices.Contains(cmp.MissingNames, name) {
			cmp.MissingNames = append(cmp.MissingNames, name)
		}
	}
	if len(cmp.MissingNames) > 0 && !force {
		return cmp, &Refusal{Forcible: true, Reason: fmt.Sprintf("the new certificate is not valid for %s, which the current one serves", strings.Join(cmp.MissingNames, ", "))}
	}
	return cmp, nil
}

// SummaryOf describes a certificate read elsewhere (a file on disk, a TLS
// handshake).
func SummaryOf(c *x509.Certificate) Summary {
	return (&Bundle{Chain: []*x509.Certificate{c}}).Summary()
}

// ExpirySeconds is the gauge value of
// mcpfleet_haproxy_ssl_cert_expiry_seconds: seconds from now to NotAfter,
// negative once expired.
func ExpirySeconds(notAfter, now time.Time) float64 { return notAfter.Sub(now).Seconds() }
