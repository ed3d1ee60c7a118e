package mcpserver

import (
	"context"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcpfleet/mcpfleet/proxymcp/internal/haproxy"
	"github.com/mcpfleet/mcpfleet/proxymcp/internal/validate"
)

// now is the clock certificate expiry is counted against (tests fix it).
var now = time.Now

// sslTools are the TLS certificate tools and the 3.x server-management
// reads; each is gated on what the detected HAProxy has (see support.go).
func (t *tools) sslTools() {
	t.add("list_ssl_certs", "List TLS certificates",
		"The certificate files HAProxy has loaded (`show ssl cert`), as names to pass to show_ssl_cert.",
		read, nil, func(ctx context.Context, a *args) (result, error) {
			l, err := t.hp.SSLCerts(ctx)
			if err != nil {
				return result{}, err
			}
			return ok(haproxy.SourceRuntime, map[string]any{"count": len(l), "certificates": l}), nil
		})

	t.add("show_ssl_cert", "Show a TLS certificate",
		"One loaded certificate (`show ssl cert <file>`): subject, issuer, subject alternative names, serial, algorithm, fingerprint, `not_before` and `not_after` (RFC 3339, UTC), `days_remaining` until expiry (negative once expired) and `expired`; `fields` has every line HAProxy printed.",
		read, []prop{{"file", mcp.WithString("file", mcp.Required(), mcp.MaxLength(1024),
			mcp.Description("Certificate file name exactly as list_ssl_certs reports it."), mcp.Pattern(`^[A-Za-z0-9/._-]+$`))}},
		func(ctx context.Context, a *args) (result, error) {
			file := a.str("file", true)
			a.set(validate.CertFile("file", file))
			if err := a.check(); err != nil {
				return result{}, err
			}
			c, err := t.hp.SSLCert(ctx, file, now())
			if err != nil {
				return result{}, err
			}
			return ok(haproxy.SourceRuntime, map[string]any{"certificate": c}), nil
		})

	t.add("show_ssl_sni", "TLS certificates by server name",
		"Which certificate each bind line serves for which server name (`show ssl sni`, HAProxy 3.2+), with `not_after` (RFC 3339) and `days_remaining`; optionally for one frontend.",
		read, []prop{pOptName("frontend", "Only this frontend (see list_frontends).")},
		func(ctx context.Context, a *args) (result, error) {
			fe := a.name("frontend", false)
			if err := a.check(); err != nil {
				return result{}, err
			}
			l, err := t.hp.SSLSNI(ctx, fe, now())
			if err != nil {
				return result{}, err
			}
			return ok(haproxy.SourceRuntime, map[string]any{"count": len(l), "server_names": l}), nil
		})

	t.add("list_add_server_keywords", "Keywords add_server accepts",
		"The server keywords this HAProxy accepts for a server added at run time (`add server help`, HAProxy 3.2+), e.g. to know whether `check`, `ssl` or `init-state` can be used.",
		read, nil, func(ctx context.Context, a *args) (result, error) {
			kws, err := t.hp.AddServerKeywords(ctx)
			if err != nil {
				return result{}, err
			}
			return ok(haproxy.SourceRuntime, map[string]any{"count": len(kws), "keywords": kws}), nil
		})

	t.add("wait_server_removable", "Wait until a server can be deleted",
		"Wait up to `timeout_ms` until the server has no connection or stream left and is in maintenance, so del_server can remove it (`wait <ms> srv-removable`, HAProxy 3.0+). Changes nothing; `removable` is false when the time ran out (put the server in maint with set_server_state, or end its sessions with shutdown_server_sessions).",
		read, []prop{pBackend("Backend name (see list_backends)."), pServer(),
			{"timeout_ms", mcp.WithInteger("timeout_ms", mcp.Min(1), mcp.Max(5000), mcp.Description("How long to wait, in milliseconds (default 1000, at most 5000, under the runtime API timeout)."))}},
		func(ctx context.Context, a *args) (result, error) {
			be, sv := backendServer(a)
			ms := int64(1000)
			if a.has("timeout_ms") {
				ms = a.integer("timeout_ms", false, 1, 5000)
			}
			if err := a.check(); err != nil {
				return result{}, err
			}
			removable, msg, err := t.hp.WaitServerRemovable(ctx, be, sv, time.Duration(ms)*time.Millisecond)
			if err != nil {
				return result{}, err
			}
			return ok(haproxy.SourceRuntime, map[string]any{"backend": be, "server": sv, "removable": removable, "haproxy_answer": msg}), nil
		})
}
