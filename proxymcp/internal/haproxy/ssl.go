package haproxy

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/mcpfleet/mcpfleet/proxymcp/internal/runtimeapi"
	"github.com/mcpfleet/mcpfleet/proxymcp/internal/validate"
)

// Cert is one certificate as "show ssl cert <file>" describes it.
type Cert struct {
	File      string   `json:"file"`
	Status    string   `json:"status,omitempty"` // "Used", "Unused"
	Serial    string   `json:"serial,omitempty"`
	Subject   string   `json:"subject,omitempty"`
	Issuer    string   `json:"issuer,omitempty"`
	SANs      []string `json:"subject_alt_names,omitempty"`
	Algorithm string   `json:"algorithm,omitempty"`
	SHA1      string   `json:"sha1_fingerprint,omitempty"`
	// NotBefore and NotAfter are RFC 3339 (UTC); DaysRemaining counts
	// whole days from now to NotAfter, negative once expired.
	NotBefore     string `json:"not_before,omitempty"`
	NotAfter      string `json:"not_after,omitempty"`
	DaysRemaining *int   `json:"days_remaining,omitempty"`
	Expired       bool   `json:"expired"`
	// Fields holds every "Key: value" line as HAProxy printed it, so what a
	// newer version adds (3.2: "Crt filename", "Key filename", ...) shows.
	Fields map[string]string `json:"fields"`
}

// opensslTime is how HAProxy prints notBefore/notAfter (OpenSSL's
// ASN1_TIME_print): "Feb 22 17:24:40 2027 GMT", day space-padded.
const opensslTime = "Jan _2 15:04:05 2006 MST"

// ParseCertTime reads an OpenSSL time as HAProxy prints it.
func ParseCertTime(s string) (time.Time, error) {
	t, err := time.Parse(opensslTime, strings.Join(strings.Fields(s), " "))
	if err != nil {
		return time.Time{}, fmt.Errorf("unrecognised certificate time %q", s)
	}
	return t.UTC(), nil
}

// ParseCertList parses "show ssl cert": a "# filename" header, then one
// file per line ("*" marks an uncommitted transaction).
func ParseCertList(text string) []string {
	out := []string{}
	for _, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		out = append(out, line)
	}
	return out
}

// ParseCert parses "show ssl cert <file>" by key; now dates days_remaining.
// A chain ("Chain Subject:" ...) keeps only the leaf's fields in the typed
// values; every line stays in Fields (the first of repeated keys).
func ParseCert(text string, now time.Time) (Cert, error) {
	c := Cert{Fields: map[string]string{}}
	for _, line := range strings.Split(text, "\n") {
		k, v, ok := strings.Cut(line, ":")
		if !ok || strings.TrimSpace(k) == "" {
			continue
		}
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		if _, dup := c.Fields[k]; !dup {
			c.Fields[k] = v
		}
	}
	c.File, c.Status, c.Serial = c.Fields["Filename"], c.Fields["Status"], c.Fields["Serial"]
	c.Subject, c.Issuer, c.Algorithm = c.Fields["Subject"], c.Fields["Issuer"], c.Fields["Algorithm"]
	c.SHA1 = c.Fields["SHA1 FingerPrint"]
	for _, san := range strings.Split(c.Fields["Subject Alternative Name"], ",") {
		if san = strings.TrimSpace(san); san != "" {
			c.SANs = append(c.SANs, san)
		}
	}
	if c.File == "" {
		return c, fmt.Errorf("no \"Filename:\" in the certificate details")
	}
	if v := c.Fields["notBefore"]; v != "" {
		t, err := ParseCertTime(v)
		if err != nil {
			return c, err
		}
		c.NotBefore = t.Format(time.RFC3339)
	}
	if v := c.Fields["notAfter"]; v != "" {
		t, err := ParseCertTime(v)
		if err != nil {
			return c, err
		}
		c.NotAfter = t.Format(time.RFC3339)
		days := daysUntil(t, now)
		c.DaysRemaining, c.Expired = &days, !now.Before(t)
	}
	return c, nil
}

// SNI is one line of "show ssl sni" (3.2+): which certificate a bind line
// serves for a server name.
type SNI struct {
	Frontend       string `json:"frontend"`
	Bind           string `json:"bind"` // "<config file>:<line>"
	SNI            string `json:"sni"`
	NegativeFilter string `json:"negative_filter,omitempty"`
	Type           string `json:"type"`
	File           string `json:"file"`
	NotAfter       string `json:"not_after,omitempty"`
	NotBefore      string `json:"not_before,omitempty"`
	DaysRemaining  *int   `json:"days_remaining,omitempty"`
}

// ParseSNI parses "show ssl sni": a tab-separated table whose "# " header
// names the columns (some contain spaces: "Negative Filter").
func ParseSNI(text string, now time.Time) ([]SNI, error) {
	out := []SNI{}
	var header []string
	for _, line := range strings.Split(text, "\n") {
		if strings.TrimSpace(line) == "" {
			continue
		}
		if h, ok := strings.CutPrefix(line, "#"); ok {
			header = strings.Split(strings.TrimSpace(h), "\t")
			continue
		}
		if header == nil {
			return nil, fmt.Errorf("\"show ssl sni\" answered without a header line")
		}
		cells := map[string]string{}
		for i, v := range strings.Split(line, "\t") {
			if i < len(header) {
				cells[header[i]] = v
			}
		}
		s := SNI{SNI: cells["SNI"], Type: cells["Type"], File: cells["Filename"]}
		if nf := cells["Negative Filter"]; nf != "-" {
			s.NegativeFilter = nf
		}
		// "fe_tls/<file>:<line>": the frontend name cannot contain "/".
		s.Frontend, s.Bind, _ = strings.Cut(cells["Frontend/Bind"], "/")
		if v := cells["NotAfter"]; v != "" {
			t, err := ParseCertTime(v)
			if err != nil {
				return nil, err
			}
			s.NotAfter = t.Format(time.RFC3339)
			days := daysUntil(t, now)
			s.DaysRemaining = &days
		}
		if v := cells["NotBefore"]; v != "" {
			t, err := ParseCertTime(v)
			if err != nil {
				return nil, err
			}
			s.NotBefore = t.Format(time.RFC3339)
		}
		out = append(out, s)
	}
	return out, nil
}

// daysUntil counts whole days from now to t, rounding down (so a
// certificate that expired an hour ago has -1 days left).
func daysUntil(t, now time.Time) int {
	d := t.Sub(now)
	days := int(d / (24 * time.Hour))
	if d < 0 && d%(24*time.Hour) != 0 {
		days--
	}
	return days
}

// SSLCerts lists the certificates HAProxy has loaded.
func (c *Client) SSLCerts(ctx context.Context) ([]string, error) {
	out, err := c.execGated(ctx, "show ssl cert", "show ssl cert")
	if err != nil {
		return nil, err
	}
	return ParseCertList(out), nil
}

// SSLCert describes one loaded certificate; file is checked with
// validate.CertFile first.
func (c *Client) SSLCert(ctx context.Context, file string, now time.Time) (Cert, error) {
	if err := validate.CertFile("file", file); err != nil {
		return Cert{}, err
	}
	out, err := c.execGated(ctx, "show ssl cert", "show ssl cert "+file)
	if err != nil {
		return Cert{}, err
	}
	return ParseCert(out, now)
}

// SSLSNI lists which certificate serves which server name (3.2+),
// optionally for one frontend.
func (c *Client) SSLSNI(ctx context.Context, frontend string, now time.Time) ([]SNI, error) {
	cmd := "show ssl sni"
	if frontend != "" {
		if err := validate.Name("frontend", frontend); err != nil {
			return nil, err
		}
		cmd += " -f " + frontend
	}
	out, err := c.execGated(ctx, "show ssl sni", cmd)
	if err != nil {
		return nil, err
	}
	return ParseSNI(out, now)
}

// AddServerKeywords lists the server keywords "add server" accepts on this
// HAProxy ("add server help", 3.2+).
func (c *Client) AddServerKeywords(ctx context.Context) ([]string, error) {
	out, err := c.execGated(ctx, "add server help", "add server help")
	if err != nil {
		return nil, err
	}
	kws := []string{}
	for _, line := range strings.Split(out, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasSuffix(line, ":") {
			continue // "List of keywords supported for dynamic server:"
		}
		kws = append(kws, line)
	}
	return kws, nil
}

// WaitServerRemovable waits up to timeout for backend/server to be
// removable by "del server" (no connection, no stream, in maintenance):
// "wait <ms> srv-removable", 3.0+. It changes nothing. removable is false
// when the time ran out.
func (c *Client) WaitServerRemovable(ctx context.Context, backend, server string, timeout time.Duration) (removable bool, msg string, err error) {
	if err := validate.Name("backend", backend); err != nil {
		return false, "", err
	}
	if err := validate.Name("server", server); err != nil {
		return false, "", err
	}
	ms := strconv.FormatInt(timeout.Milliseconds(), 10)
	out, err := c.execGated(ctx, "wait", "wait "+ms+" srv-removable "+backend+"/"+server)
	var re *runtimeapi.ReplyError
	if errors.As(err, &re) && re.Message == "Failed." {
		// What 3.0 and 3.2 answer when the time ran out
		// (testdata/*/wait_srv_removable_up.txt), and also for a server
		// that does not exist: tell the two apart.
		if _, gerr := c.exec(ctx, "get weight "+backend+"/"+server); gerr != nil {
			var ge *runtimeapi.ReplyError
			if errors.As(gerr, &ge) && ge.NotFound() {
				return false, "", &NotFoundError{What: "server", Name: backend + "/" + server}
			}
			return false, "", gerr
		}
		return false, re.Message, nil
	}
	if err != nil {
		return false, "", err
	}
	msg = strings.TrimSpace(out)
	return msg == "Done.", msg, nil
}
