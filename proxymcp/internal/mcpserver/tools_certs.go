package mcpserver

import (
	"context"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcpfleet/mcpfleet/proxymcp/internal/certs"
	"github.com/mcpfleet/mcpfleet/proxymcp/internal/haproxy"
	"github.com/mcpfleet/mcpfleet/proxymcp/internal/persist"
	"github.com/mcpfleet/mcpfleet/proxymcp/internal/validate"
	"github.com/mcpfleet/mcpfleet/shared/mcperr"
	"github.com/mcpfleet/mcpfleet/shared/toolcall"
)

type setSSLCertIn struct {
	fleetArg
	File string `json:"file" jsonschema:"Certificate file name exactly as list_ssl_certs reports it." pattern:"^[A-Za-z0-9/._-]+$" maxLength:"1024"`
	// The PEM holds the private key: it is listed in the call's secrets,
	// so no audit record, preview, log or error carries it.
	PEM   string   `json:"pem_with_private_key" jsonschema:"The new certificate chain (leaf first) and its private key, PEM. Never shown or recorded (the name marks it secret for the audit log)." maxLength:"16000"`
	Names []string `json:"names,omitempty" jsonschema:"Server names the new certificate must be valid for (besides those the current one serves)." maxItems:"100"`
	Force bool     `json:"force,omitempty" jsonschema:"Accept a certificate that does not cover every name the current one serves."`
}

const setSSLCertDesc = "Replace a TLS certificate HAProxy serves with a new PEM (chain + private key) at run time, without a restart: `set ssl cert` then `commit ssl cert` (`abort ssl cert` on any failure, so the certificate in use never changes halfway). The preview compares the current and new certificate (subject, SANs, issuer, validity, key type). Refused: a key that does not belong to the certificate, an expired or not yet valid certificate, a certificate not valid for the names the current one serves (unless `force`), extra PEM blocks. The private key never appears in previews, audit records, logs, errors or metrics. With PROXY_PERSIST=on the certificate file HAProxy loads is rewritten too."

// certTools declares set_ssl_cert: planned per chosen instance, run one
// instance at a time.
func (t *tools) certTools() {
	if t.opts.ReadOnly || (t.ft != nil && t.calls == nil) {
		return
	}
	name := "set_ssl_cert"
	t.classes[name] = toolcall.Destructive
	d := t.declare(name, "Replace a TLS certificate", setSSLCertDesc, destructive, toolcall.Destructive)
	if t.calls == nil {
		return
	}
	toolcall.AddChange(t.calls, d, func(ctx context.Context, in setSSLCertIn) (toolcall.Plan, error) {
		secrets := secretsOf(in.PEM)
		if err := validate.CertFile("file", in.File); err != nil {
			return toolcall.Plan{Secrets: secrets}, mcperr.New(mcperr.Invalid, name, err, "")
		}
		for _, n := range in.Names {
			if n == "" || len(n) > 253 || strings.ContainsAny(n, " \t\r\n/\\;") {
				return toolcall.Plan{Secrets: secrets}, mcperr.New(mcperr.Invalid, name, &validate.Error{Arg: "names", Rule: "each must be a DNS name or an IP address"}, "")
			}
		}
		b, err := certs.Parse([]byte(in.PEM))
		if err != nil {
			return toolcall.Plan{Secrets: secrets}, mcperr.New(mcperr.Invalid, name+": refused, nothing was sent to HAProxy", err, "Send the certificate chain, leaf first, and its own private key (unencrypted) in one PEM")
		}
		members := []*tools{t}
		labels := []string{""}
		if t.ft != nil {
			ms, err := t.ft.choose(in.instances())
			if err != nil {
				return toolcall.Plan{Secrets: secrets}, err
			}
			members, labels = nil, nil
			for _, m := range ms {
				members = append(members, t.ft.per[m.Name])
				labels = append(labels, m.Name+": ")
			}
		}
		set, _ := certs.SetCommand(in.File)
		commit, _ := certs.CommitCommand(in.File)
		var cmds []string
		for i, mt := range members {
			cmds = append(cmds, labels[i]+set+fmt.Sprintf(" (%v; its key is not shown)", b), labels[i]+commit)
			if mt.life != nil && mt.life.Persist {
				cmds = append(cmds, labels[i]+"persist: rewrite "+in.File)
			}
		}
		return toolcall.Plan{Class: toolcall.Destructive, Target: t.hp.Target(), Commands: cmds, Secrets: secrets,
			Describe: func(ctx context.Context) (toolcall.Preview, error) {
				var sums []string
				state := map[string]any{}
				for i, mt := range members {
					cmp, digest, err := mt.checkCert(ctx, in, b)
					if err != nil {
						return toolcall.Preview{}, err
					}
					s := fmt.Sprintf("%sReplace certificate %s on %s: now %s; new %s; changed: %s.", labels[i], in.File, mt.at(), describeCurrent(cmp.Current), cmp.New, strings.Join(cmp.Changed, ", "))
					if len(cmp.MissingNames) > 0 {
						s += " FORCED: the new certificate is not valid for " + strings.Join(cmp.MissingNames, ", ") + "."
					}
					if mt.life != nil && mt.life.Persist {
						s += " Then rewrites " + in.File + " (PROXY_PERSIST=on)."
					}
					sums = append(sums, s)
					state[strings.TrimSuffix(labels[i], ": ")] = map[string]any{"comparison": cmp, "file_digest": digest}
				}
				return toolcall.Preview{Summary: strings.Join(sums, "\n"), State: state, Effect: "TLS handshakes use the new certificate from the commit on",
					Precondition: fmt.Sprint(state)}, nil
			},
			Run: func(ctx context.Context) (*mcp.CallToolResult, error) {
				var outcomes []map[string]any
				for i, mt := range members {
					o, err := mt.rotate(ctx, in, b)
					if err != nil {
						if len(members) == 1 {
							return toolError(name, destructive, err), nil
						}
						outcomes = append(outcomes, map[string]any{"instance": strings.TrimSuffix(labels[i], ": "), "error": err.Error()})
						return errorResult(map[string]any{"outcomes": outcomes, "source": string(haproxy.SourceRuntime)}, "set_ssl_cert stopped at "+strings.TrimSuffix(labels[i], ": ")+": "+err.Error(), ""), nil
					}
					if labels[i] != "" {
						o["instance"] = strings.TrimSuffix(labels[i], ": ")
					}
					outcomes = append(outcomes, o)
				}
				data := outcomes[0]
				if len(members) > 1 {
					data = map[string]any{"outcomes": outcomes}
				}
				data["source"] = string(haproxy.SourceRuntime)
				body, _ := json.Marshal(data)
				r := mcp.NewToolResultStructured(json.RawMessage(body), string(body))
				if f, _ := data["persistence_error"].(string); f != "" {
					r.IsError = true
				}
				return r, nil
			}}, nil
	})
}

// secretsOf lists the values no record may hold: the whole PEM argument
// and each private key block in it.
func secretsOf(p string) []string {
	if p == "" {
		return nil
	}
	out := []string{p}
	rest := []byte(p)
	for {
		blk, r := pem.Decode(rest)
		if blk == nil {
			break
		}
		if strings.Contains(blk.Type, "PRIVATE KEY") {
			out = append(out, strings.TrimSpace(string(pem.EncodeToMemory(blk))))
		}
		rest = r
	}
	return out
}

func describeCurrent(s *certs.Summary) string {
	if s == nil {
		return "unknown"
	}
	return s.String()
}

// currentCert describes the certificate in use: from its file when
// proxymcp can read it (key type included), else from show ssl cert.
func (t *tools) currentCert(ctx context.Context, file string) (*certs.Summary, string, error) {
	c, err := t.hp.SSLCert(ctx, file, now())
	if err != nil {
		return nil, "", err
	}
	digest := ""
	if t.life != nil && t.life.Root.Dir != "" {
		if real, err := t.life.Root.Resolve(file); err == nil {
			if raw, err := os.ReadFile(real); err == nil {
				for rest := raw; ; {
					blk, r := pem.Decode(rest)
					if blk == nil {
						break
					}
					if blk.Type == "CERTIFICATE" {
						if x, err := x509.ParseCertificate(blk.Bytes); err == nil {
							s := certs.SummaryOf(x)
							return &s, persist.DigestOf(raw), nil
						}
						break
					}
					rest = r
				}
			}
		}
	}
	s := certs.Summary{Subject: c.Subject, SANs: c.SANs, Issuer: c.Issuer, Serial: c.Serial}
	s.NotBefore, _ = time.Parse(time.RFC3339, c.NotBefore)
	s.NotAfter, _ = time.Parse(time.RFC3339, c.NotAfter)
	return &s, digest, nil
}

// checkCert compares the new bundle with the one in use and refuses what
// certs.Check refuses; digest is the certificate file's, for persistence.
func (t *tools) checkCert(ctx context.Context, in setSSLCertIn, b *certs.Bundle) (certs.Comparison, string, error) {
	cur, digest, err := t.currentCert(ctx, in.File)
	if err != nil {
		return certs.Comparison{}, "", err
	}
	cmp, err := certs.Check(b, cur, in.Names, now(), in.Force)
	if err != nil {
		hint := "Nothing was sent to HAProxy"
		var r *certs.Refusal
		if errors.As(err, &r) && r.Forcible {
			hint += "; pass force=true to replace it anyway"
		}
		return cmp, "", mcperr.New(mcperr.Invalid, "set_ssl_cert: refused", err, hint)
	}
	return cmp, digest, nil
}

// rotate replaces the certificate on this instance and, with persistence
// on, rewrites its file.
func (t *tools) rotate(ctx context.Context, in setSSLCertIn, b *certs.Bundle) (map[string]any, error) {
	if t.hp.Runtime == nil {
		return nil, haproxy.ErrRuntimeDisabled
	}
	cmp, _, err := t.checkCert(ctx, in, b)
	if err != nil {
		return nil, err
	}
	var plannedDigest string
	persistOn := t.life != nil && t.life.Persist
	if persistOn {
		pl, err := t.life.Root.Plan("cert", in.File)
		if err != nil {
			return nil, mcperr.New(mcperr.Invalid, "set_ssl_cert: not sent", err, "The certificate file must be inside PROXY_HAPROXY_DIR for PROXY_PERSIST=on")
		}
		plannedDigest = pl.Digest
	}
	send := certs.PayloadSender{Network: t.hp.Runtime.Network, Address: t.hp.Runtime.Address, Timeout: t.hp.Runtime.Timeout}
	rot, err := certs.Rotate(ctx, t.hp.Runtime, send, in.File, b)
	if err != nil {
		return nil, mcperr.New(mcperr.Conflict, "set_ssl_cert", err, "")
	}
	out := map[string]any{"file": in.File, "committed": true, "answer": rot.Answer, "new": cmp.New, "previous": cmp.Current, "changed": true}
	if t.life != nil && t.life.CertExpiry != nil {
		t.life.CertExpiry(in.File, certs.ExpirySeconds(cmp.New.NotAfter, now()))
	}
	if !persistOn {
		out["persisted"] = false
		out["note"] = "Runtime change only (PROXY_PERSIST is off): " + in.File + " on disk still holds the previous certificate, which a reload or restart loads again"
		return out, nil
	}
	w, err := t.life.Root.Write(in.File, b.PEM(), plannedDigest)
	if err != nil {
		msg := "applied at run time, NOT persisted: " + err.Error()
		out["persisted"] = false
		out["persistence_error"] = msg
		out["note"] = msg + " — retry with set_ssl_cert and the same PEM (HAProxy already serves it; the file write is what is retried)"
		return out, nil
	}
	out["persisted"] = true
	out["persistence"] = map[string]any{"persisted": true, "files": []any{w}}
	return out, nil
}

// RecordCertExpiry sets mcpfleet_haproxy_ssl_cert_expiry_seconds for every
// certificate the instance has loaded.
func RecordCertExpiry(ctx context.Context, hp *haproxy.Client, l *Lifecycle) error {
	if l == nil || l.CertExpiry == nil {
		return nil
	}
	files, err := hp.SSLCerts(ctx)
	if err != nil {
		return err
	}
	n := now()
	for _, f := range files {
		c, err := hp.SSLCert(ctx, f, n)
		if err != nil {
			return err
		}
		if na, err := time.Parse(time.RFC3339, c.NotAfter); err == nil {
			l.CertExpiry(f, certs.ExpirySeconds(na, n))
		}
	}
	return nil
}
