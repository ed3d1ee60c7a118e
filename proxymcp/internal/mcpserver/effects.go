package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"

	"github.com/mcpfleet/mcpfleet/proxymcp/internal/haproxy"
	"github.com/mcpfleet/mcpfleet/shared/toolcall"
)

// A call's class is its effect on traffic, decided per call from the live
// state: a change that stops a backend's or a frontend's traffic, sends it
// to another address, or changes which requests are denied or routed is
// destructive whatever the tool; the same tool on a server among several
// that serve is a change. When the state cannot be read, the call counts
// as destructive.

func backendKey(b string) string { return "backend " + b }

// rotationEffect is the effect of taking b/s out of rotation (drain,
// maintenance, weight 0, forced down): destructive when it is the last
// server of its tier taking traffic.
func (t *tools) rotationEffect(b, s string) func(ctx context.Context) (toolcall.Class, string) {
	return func(ctx context.Context) (toolcall.Class, string) {
		servers, err := t.hp.Rotation(ctx, b)
		if err != nil {
			var nf *haproxy.NotFoundError
			if errors.As(err, &nf) {
				return toolcall.Change, fmt.Sprintf("Backend %s does not exist, so HAProxy will refuse the call and no traffic moves.", b)
			}
			return toolcall.Destructive, fmt.Sprintf("The servers of backend %s cannot be read (%v), so the call counts as destructive.", b, err)
		}
		var target *haproxy.RotationServer
		var actives, backups []string
		for i, v := range servers {
			switch {
			case v.Name == s:
				target = &servers[i]
			case v.Serving() && v.Backup:
				backups = append(backups, v.Name)
			case v.Serving():
				actives = append(actives, v.Name)
			}
		}
		switch {
		case target == nil:
			return toolcall.Change, fmt.Sprintf("Server %s/%s does not exist, so HAProxy will refuse the call and no traffic moves.", b, s)
		case !target.Serving():
			return toolcall.Change, fmt.Sprintf("%s/%s takes no new traffic now (status %s, weight %d), so taking it out moves none.", b, s, target.Status, target.Weight)
		case len(actives) > 0 && target.Backup:
			return toolcall.Change, fmt.Sprintf("%s/%s is a backup and active servers of %s take the traffic (%s), so none moves.", b, s, b, strings.Join(actives, ", "))
		case len(actives) > 0:
			return toolcall.Change, fmt.Sprintf("Other active servers of %s take traffic (%s): its share moves to them.", b, strings.Join(actives, ", "))
		case target.Backup && len(backups) > 0:
			return toolcall.Change, fmt.Sprintf("No active server of %s takes traffic and other backups do (%s): its share moves to them.", b, strings.Join(backups, ", "))
		case len(backups) > 0:
			return toolcall.Destructive, fmt.Sprintf("%s/%s is the last active server of %s taking traffic: all of it goes to the backup servers (%s). Destructive.", b, s, b, strings.Join(backups, ", "))
		}
		return toolcall.Destructive, fmt.Sprintf("%s/%s is the last server of %s taking traffic: %s stops answering (HAProxy returns 503). Destructive.", b, s, b, b)
	}
}

// weightEffect is the effect of set_server_weight: a weight that comes to
// 0 (0, or a percentage of the initial weight that rounds down to 0, as
// HAProxy computes it) takes the server out of rotation.
func (t *tools) weightEffect(b, s, w string) func(ctx context.Context) (toolcall.Class, string) {
	out := t.rotationEffect(b, s)
	return func(ctx context.Context) (toolcall.Class, string) {
		pct, isPct := strings.CutSuffix(w, "%")
		n, _ := strconv.ParseInt(pct, 10, 64)
		if isPct {
			_, initial, err := t.hp.GetServerWeight(ctx, b, s)
			if err != nil {
				var nf *haproxy.NotFoundError
				if errors.As(err, &nf) {
					return out(ctx) // says that it does not exist
				}
				return toolcall.Destructive, fmt.Sprintf("The initial weight of %s/%s cannot be read (%v), so weight %s counts as destructive.", b, s, err, w)
			}
			n = min(initial*min(n, 25600)/100, 256)
		}
		if n > 0 {
			return toolcall.Change, fmt.Sprintf("The new weight is %d, above 0: the server keeps taking traffic.", n)
		}
		c, why := out(ctx)
		return c, "The new weight is 0, so the server takes no new traffic. " + why
	}
}

// addrEffect is the effect of set_server_addr: moving a server that can
// take traffic sends it (and the sessions that stick to the server by
// cookie) to another address; a server in maintenance takes none, and the
// same address moves nothing.
func (t *tools) addrEffect(b, s, addr string, port int) func(ctx context.Context) (toolcall.Class, string) {
	return func(ctx context.Context) (toolcall.Class, string) {
		v, err := t.hp.ServerView(ctx, b, s)
		if err != nil {
			var nf *haproxy.NotFoundError
			if errors.As(err, &nf) {
				return toolcall.Change, fmt.Sprintf("%s does not exist, so HAProxy will refuse the call and no traffic moves.", nf.Name)
			}
			return toolcall.Destructive, fmt.Sprintf("Server %s/%s cannot be read (%v), so the call counts as destructive.", b, s, err)
		}
		to := haproxy.ServerView{Address: addr, Port: int64(port)}
		if port == 0 {
			to.Port = v.Port
		}
		switch {
		case net.ParseIP(addr).Equal(net.ParseIP(v.Address)) && to.Port == v.Port:
			return toolcall.Change, fmt.Sprintf("%s is already at %s: no traffic moves.", v.Name(), v.Endpoint())
		case v.Admin == "maint":
			return toolcall.Change, fmt.Sprintf("%s is in maintenance: no traffic follows the move until it is put back in service.", v.Name())
		}
		return toolcall.Destructive, fmt.Sprintf("%s is not in maintenance (status %s): its traffic, and the sessions that stick to it, go to %s instead of %s. Destructive.", v.Name(), v.Status, to.Endpoint(), v.Endpoint())
	}
}

// frontendOffEffect is the effect of disable_frontend: pausing an open
// frontend refuses its new connections.
func (t *tools) frontendOffEffect(f string) func(ctx context.Context) (toolcall.Class, string) {
	return func(ctx context.Context) (toolcall.Class, string) {
		v, err := t.hp.FrontendView(ctx, f)
		if err != nil {
			var nf *haproxy.NotFoundError
			if errors.As(err, &nf) {
				return toolcall.Change, fmt.Sprintf("Frontend %s does not exist, so HAProxy will refuse the call.", f)
			}
			return toolcall.Destructive, fmt.Sprintf("Frontend %s cannot be read (%v), so the call counts as destructive.", f, err)
		}
		if v.Status != "OPEN" {
			return toolcall.Change, fmt.Sprintf("Frontend %s is already %s: it accepts no new connections either way.", f, v.Status)
		}
		return toolcall.Destructive, fmt.Sprintf("Frontend %s is OPEN: it stops accepting new connections, so its clients are refused. Destructive.", f)
	}
}

// patternEffect is the effect of a write to a map or ACL: destructive when
// the configuration uses it to route, deny or otherwise decide requests
// (or when that cannot be read), a change when it only sets response
// headers or nothing uses it.
func (t *tools) patternEffect(kind haproxy.MapKind, ref string) func(ctx context.Context) (toolcall.Class, string) {
	return func(ctx context.Context) (toolcall.Class, string) {
		u, err := t.hp.PatternUse(ctx, kind, ref)
		if err != nil {
			var nf *haproxy.NotFoundError
			if errors.As(err, &nf) {
				return toolcall.Change, fmt.Sprintf("%s %s is not loaded, so HAProxy will refuse the call.", kind, ref)
			}
			return toolcall.Destructive, fmt.Sprintf("%s %s cannot be read (%v), so the call counts as destructive.", kind, ref, err)
		}
		switch {
		case u.Routes && u.Known:
			return toolcall.Destructive, fmt.Sprintf("The %s %s decides which requests are routed or denied (%s): changing its entries changes where requests go. Destructive.", kind, ref, u.Why)
		case u.Routes:
			return toolcall.Destructive, fmt.Sprintf("The %s %s may route or deny requests: %s, so the call counts as destructive.", kind, ref, u.Why)
		}
		return toolcall.Change, fmt.Sprintf("The %s %s routes and denies nothing: %s.", kind, ref, u.Why)
	}
}
