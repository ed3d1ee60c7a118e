package mcpserver

import (
	"context"
	"time"

	"github.com/mcpfleet/mcpfleet/proxymcp/internal/haproxy"
	"github.com/mcpfleet/mcpfleet/proxymcp/internal/validate"
)

// now is the clock certificate expiry is counted against (tests fix it).
var now = time.Now

type sslCertIn struct {
	fleetArg
	File string `json:"file" jsonschema:"Certificate file name exactly as list_ssl_certs reports it." pattern:"^[A-Za-z0-9/._-]+$" maxLength:"1024"`
}

type sslSNIIn struct {
	fleetArg
	Frontend string `json:"frontend,omitempty" jsonschema:"Only this frontend (see list_frontends)." pattern:"^[A-Za-z0-9_.:-]{1,128}$"`
}

type waitRemovableIn struct {
	fleetArg
	Backend   string `json:"backend" jsonschema:"Backend name (see list_backends)." pattern:"^[A-Za-z0-9_.:-]{1,128}$"`
	Server    string `json:"server" jsonschema:"Server name inside the backend (see list_servers)." pattern:"^[A-Za-z0-9_.:-]{1,128}$"`
	TimeoutMS *int64 `json:"timeout_ms,omitempty" jsonschema:"How long to wait, in milliseconds (default 1000, at most 5000, under the runtime API timeout)." minimum:"1" maximum:"5000"`
}

// sslTools are the TLS certificate tools and the 3.x server-management
// reads; each is gated on what the detected HAProxy has (see support.go).
func (t *tools) sslTools() {
	addRead(t, "list_ssl_certs", "List TLS certificates",
		"The certificate files HAProxy has loaded (`show ssl cert`), as names to pass to show_ssl_cert.",
		func(ctx context.Context, _ noArgs) (result, error) {
			l, err := t.hp.SSLCerts(ctx)
			if err != nil {
				return result{}, err
			}
			return ok(haproxy.SourceRuntime, map[string]any{"count": len(l), "certificates": l}), nil
		})

	addRead(t, "show_ssl_cert", "Show a TLS certificate",
		"One loaded certificate (`show ssl cert <file>`): subject, issuer, subject alternative names, serial, algorithm, fingerprint, `not_before` and `not_after` (RFC 3339, UTC), `days_remaining` until expiry (negative once expired) and `expired`; `fields` has every line HAProxy printed.",
		func(ctx context.Context, in sslCertIn) (result, error) {
			file := in.File
			if err := validate.CertFile("file", file); err != nil {
				return result{}, err
			}
			c, err := t.hp.SSLCert(ctx, file, now())
			if err != nil {
				return result{}, err
			}
			return ok(haproxy.SourceRuntime, map[string]any{"certificate": c}), nil
		})

	addRead(t, "show_ssl_sni", "TLS certificates by server name",
		"Which certificate each bind line serves for which server name (`show ssl sni`, HAProxy 3.2+), with `not_after` (RFC 3339) and `days_remaining`; optionally for one frontend.",
		func(ctx context.Context, in sslSNIIn) (result, error) {
			l, err := t.hp.SSLSNI(ctx, in.Frontend, now())
			if err != nil {
				return result{}, err
			}
			return ok(haproxy.SourceRuntime, map[string]any{"count": len(l), "server_names": l}), nil
		})

	addRead(t, "list_add_server_keywords", "Keywords add_server accepts",
		"The server keywords this HAProxy accepts for a server added at run time (`add server help`, HAProxy 3.2+), e.g. to know whether `check`, `ssl` or `init-state` can be used.",
		func(ctx context.Context, _ noArgs) (result, error) {
			kws, err := t.hp.AddServerKeywords(ctx)
			if err != nil {
				return result{}, err
			}
			return ok(haproxy.SourceRuntime, map[string]any{"count": len(kws), "keywords": kws}), nil
		})

	addRead(t, "wait_server_removable", "Wait until a server can be deleted",
		"Wait up to `timeout_ms` until the server has no connection or stream left and is in maintenance, so del_server can remove it (`wait <ms> srv-removable`, HAProxy 3.0+). Changes nothing; `removable` is false when the time ran out (put the server in maint with set_server_state, or end its sessions with shutdown_server_sessions).",
		func(ctx context.Context, in waitRemovableIn) (result, error) {
			be, sv := in.Backend, in.Server
			ms := int64(1000)
			if in.TimeoutMS != nil {
				ms = *in.TimeoutMS
			}
			removable, msg, err := t.hp.WaitServerRemovable(ctx, be, sv, time.Duration(ms)*time.Millisecond)
			if err != nil {
				return result{}, err
			}
			return ok(haproxy.SourceRuntime, map[string]any{"backend": be, "server": sv, "removable": removable, "haproxy_answer": msg}), nil
		})
}
