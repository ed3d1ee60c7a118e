package mcpserver

import (
	"context"
	"fmt"
	"time"

	"github.com/mcpfleet/mcpfleet/proxymcp/internal/haproxy"
	"github.com/mcpfleet/mcpfleet/proxymcp/internal/validate"
	"github.com/mcpfleet/mcpfleet/shared/toolcall"
)

const notPersisted = "Runtime change only: it is lost when HAProxy reloads or restarts unless the configuration file is changed too"

type addServerIn struct {
	fleetArg
	Backend string  `json:"backend" jsonschema:"Backend to add the server to." pattern:"^[A-Za-z0-9_.:-]{1,128}$"`
	Server  string  `json:"server" jsonschema:"Name of the new server." pattern:"^[A-Za-z0-9_.:-]{1,128}$"`
	Address string  `json:"address" jsonschema:"IPv4 or IPv6 address."`
	Port    int     `json:"port" jsonschema:"TCP port." minimum:"1" maximum:"65535"`
	Weight  *weight `json:"weight,omitempty" jsonschema:"Weight 0-256 (number or string), or a percentage of the initial weight such as \"50%\"."`
	Maxconn int64   `json:"maxconn,omitempty" jsonschema:"Maximum concurrent connections (0: unlimited)." minimum:"0" maximum:"1000000"`
	Check   bool    `json:"check,omitempty" jsonschema:"Health-check the server with the backend's check settings."`
	Backup  bool    `json:"backup,omitempty" jsonschema:"Make it a backup server."`
	Enable  bool    `json:"enable,omitempty" jsonschema:"Put the server in service after adding it (default false: it stays in maintenance)."`
}

type delServerIn struct {
	backendServerIn
	Drain        bool   `json:"drain,omitempty" jsonschema:"Drain and put in maintenance before deleting."`
	DrainTimeout *int64 `json:"drain_timeout,omitempty" jsonschema:"Seconds to wait for sessions to end when draining (default 30)." minimum:"0" maximum:"600"`
}

type serverStateIn struct {
	backendServerIn
	State string `json:"state" jsonschema:"ready, drain or maint." enum:"ready,drain,maint"`
}

type serverWeightIn struct {
	backendServerIn
	Weight weight `json:"weight" jsonschema:"Weight 0-256 (number or string), or a percentage of the initial weight such as \"50%\"."`
}

type serverAddrIn struct {
	backendServerIn
	Address string `json:"address" jsonschema:"IPv4 or IPv6 address."`
	Port    int    `json:"port,omitempty" jsonschema:"New port; omit to keep the current one." minimum:"1" maximum:"65535"`
}

// maxconnArg is the limit set_server_maxconn and set_frontend_maxconn set.
type maxconnArg struct {
	Maxconn int64 `json:"maxconn" jsonschema:"0-1000000." minimum:"0" maximum:"1000000"`
}

type serverMaxconnIn struct {
	backendServerIn
	maxconnArg
}

type frontendMaxconnIn struct {
	frontendIn
	maxconnArg
}

func (t *tools) poolTools() {
	addChange(t, "add_server", "Add a server",
		"Add a server to a backend at run time (`add server`; the backend needs a dynamic balance algorithm such as roundrobin or leastconn). "+
			"A new server starts in maintenance with checks off; set enable=true to put it in service at once (and start its health check when check=true). Allowed keywords: weight, maxconn, check, backup. "+notPersisted+".",
		write, toolcall.Destructive,
		func(in addServerIn) (planned, error) {
			b, s, port := in.Backend, in.Server, in.Port
			addr, err := validate.IP("address", in.Address)
			o := haproxy.AddServerOptions{Maxconn: in.Maxconn, Check: in.Check, Backup: in.Backup, Enable: in.Enable}
			if err == nil && in.Weight != nil {
				o.Weight, err = in.Weight.check()
			}
			if err != nil {
				return planned{}, err
			}
			ep := haproxy.ServerView{Address: addr, Port: int64(port)}.Endpoint()
			// In service at once, it takes a share of live traffic to an
			// address that has served none: destructive. In maintenance it
			// takes none until set ready, a call classified on its own.
			class, then := toolcall.Change, "It will start in maintenance (MAINT) with checks off and get no traffic until set ready."
			if o.Enable {
				class, then = toolcall.Destructive, "It will be put in service (ready) at once and take a share of live traffic at "+ep+". Destructive."
			}
			return planned{
				class:    class,
				commands: t.hp.AddServerCommands(b, s, addr, port, o),
				describe: func(ctx context.Context) (toolcall.Preview, error) {
					exists, err := t.hp.ServerExists(ctx, b, s)
					if err != nil {
						return toolcall.Preview{}, err
					}
					sum := fmt.Sprintf("Add server %s/%s at %s to backend %s on %s. %s", b, s, ep, b, t.at(), then)
					fp := "server " + b + "/" + s + " does not exist"
					if exists {
						sum = fmt.Sprintf("Add server %s/%s at %s on %s: a server of that name already exists in backend %s, so HAProxy will refuse it and nothing will change.", b, s, ep, t.at(), b)
						fp = "server " + b + "/" + s + " exists"
					}
					return toolcall.Preview{Summary: sum, State: map[string]any{"backend": b, "server": s, "exists": exists},
						Effect: "a new server " + b + "/" + s + " at " + ep + "; " + notPersisted, Precondition: fp}, nil
				},
				run: func(ctx context.Context) (result, error) {
					state, err := t.hp.AddServer(ctx, b, s, addr, port, o)
					if err != nil {
						return result{}, err
					}
					note := "the server is in maintenance (MAINT): use set_server_state ready (and enable_health) to put it in service"
					if state == "ready" {
						note = "the server is in service"
					}
					return ok(haproxy.SourceRuntime, map[string]any{"added": true, "changed": true, "backend": b, "server": s, "address": addr,
						"port": port, "state": state, "note": note + ". " + notPersisted}), nil
				},
			}, nil
		})

	addChange(t, "del_server", "Delete a server",
		"Delete a server from a backend (`del server`). HAProxy only deletes servers in maintenance: with drain=true the server is first set to drain, its sessions are awaited (up to drain_timeout seconds, default 30), then it is put in maintenance and deleted. Without drain the server must already be in maintenance.",
		destructive, toolcall.Destructive,
		func(in delServerIn) (planned, error) {
			b, s, drain := in.Backend, in.Server, in.Drain
			wait := int64(30)
			if in.DrainTimeout != nil {
				wait = *in.DrainTimeout
			}
			d := time.Duration(wait) * time.Second
			return planned{
				commands: t.hp.DelServerCommands(b, s, drain, d),
				describe: t.serverPreview(b, s, "the server is removed from backend "+b+"; "+notPersisted, func(v haproxy.ServerView) string {
					sum := fmt.Sprintf("Delete server %s (%s) from %s. It is %s and holds %s", v.Name(), v.Endpoint(), t.at(), v.Status, sessions(v.Sessions))
					switch {
					case drain:
						return sum + fmt.Sprintf(". It will first be set to drain and its sessions awaited for up to %s, then put in maintenance and deleted; if sessions remain it is left in maintenance and not deleted.", d)
					case v.Admin != "maint":
						return sum + fmt.Sprintf(". It is not in maintenance (admin state %s), so HAProxy will refuse to delete it: set it to maint first, or use drain=true.", v.Admin)
					case v.Sessions > 0:
						return sum + ", which will be cut."
					}
					return sum + "."
				}),
				run: func(ctx context.Context) (result, error) {
					res, err := t.hp.DelServer(ctx, b, s, drain, d)
					if err != nil {
						return result{}, err
					}
					return ok(haproxy.SourceRuntime, map[string]any{"deleted": true, "changed": true, "backend": b, "server": s, "drained": res.Drained, "note": notPersisted}), nil
				},
			}, nil
		})

	addChange(t, "set_server_state", "Set server state",
		"Set a server's administrative state: ready (in service), drain (no new sessions except persistent ones) or maint (maintenance, no traffic). Uses the runtime API, or the stats page's admin form when the runtime API cannot be reached.",
		idempotent, toolcall.Destructive,
		func(in serverStateIn) (planned, error) {
			return t.planState(in.Backend, in.Server, in.State), nil
		})

	for _, v := range []struct {
		name, title, desc, state string
		most                     toolcall.Class
	}{
		{"enable_server", "Enable a server", "Put a server back in service (state ready). Uses the runtime API, or the stats page's admin form when the runtime API cannot be reached.", "ready", toolcall.Change},
		{"disable_server", "Disable a server", "Put a server in maintenance (state maint): it gets no traffic. Uses the runtime API, or the stats page's admin form when the runtime API cannot be reached.", "maint", toolcall.Destructive},
	} {
		state := v.state
		addChange(t, v.name, v.title, v.desc, idempotent, v.most,
			func(in backendServerIn) (planned, error) {
				return t.planState(in.Backend, in.Server, state), nil
			})
	}

	addChange(t, "set_server_weight", "Set server weight",
		"Set a server's weight: 0-256, or a percentage of its initial weight such as \"50%\". 0 stops new traffic. "+notPersisted+".",
		idempotent, toolcall.Destructive,
		func(in serverWeightIn) (planned, error) {
			b, s := in.Backend, in.Server
			w, err := in.Weight.check()
			if err != nil {
				return planned{}, err
			}
			return planned{
				effect:   t.weightEffect(b, s, w),
				key:      backendKey(b),
				commands: t.hp.SetServerWeightCommands(b, s, w),
				describe: t.serverPreview(b, s, "the server's share of new traffic follows weight "+w+"; "+notPersisted, func(v haproxy.ServerView) string {
					return fmt.Sprintf("Change the weight of server %s (%s) from %d to %s on %s. %s", v.Name(), v.Endpoint(), v.Weight, w, t.at(), serverNow(v))
				}),
				run: func(ctx context.Context) (result, error) {
					res, err := t.hp.SetServerWeight(ctx, b, s, w)
					if err != nil {
						return result{}, err
					}
					return ok(haproxy.SourceRuntime, applied(map[string]any{"backend": b, "server": s, "weight": w}, res)), nil
				},
			}, nil
		})

	addRead(t, "get_server_weight", "Get server weight",
		"A server's current and initial (configured) weight.",
		func(ctx context.Context, in backendServerIn) (result, error) {
			b, s := in.Backend, in.Server
			cur, initial, err := t.hp.GetServerWeight(ctx, b, s)
			if err != nil {
				return result{}, err
			}
			return ok(haproxy.SourceRuntime, map[string]any{"backend": b, "server": s, "weight": cur, "initial_weight": initial}), nil
		})

	addChange(t, "set_server_addr", "Set server address",
		"Change a server's IP address and optionally its port. "+notPersisted+".",
		idempotent, toolcall.Destructive,
		func(in serverAddrIn) (planned, error) {
			b, s, port := in.Backend, in.Server, in.Port
			addr, err := validate.IP("address", in.Address)
			if err != nil {
				return planned{}, err
			}
			return planned{
				effect:   t.addrEffect(b, s, addr, port),
				key:      backendKey(b),
				commands: t.hp.SetServerAddrCommands(b, s, addr, port),
				describe: t.serverPreview(b, s, "new connections to the server go to the new address; "+notPersisted, func(v haproxy.ServerView) string {
					to := haproxy.ServerView{Address: addr, Port: int64(port)}
					if port == 0 {
						to.Port = v.Port
					}
					return fmt.Sprintf("Move server %s from %s to %s on %s. %s", v.Name(), v.Endpoint(), to.Endpoint(), t.at(), serverNow(v))
				}),
				run: func(ctx context.Context) (result, error) {
					res, err := t.hp.SetServerAddr(ctx, b, s, addr, port)
					if err != nil {
						return result{}, err
					}
					f := map[string]any{"backend": b, "server": s, "address": addr}
					if port != 0 {
						f["port"] = port
					}
					return ok(haproxy.SourceRuntime, applied(f, res)), nil
				},
			}, nil
		})

	addChange(t, "set_server_maxconn", "Set server maxconn",
		"Set a server's maximum number of concurrent connections (0: unlimited). "+notPersisted+".",
		idempotent, toolcall.Change,
		func(in serverMaxconnIn) (planned, error) {
			b, s, n := in.Backend, in.Server, in.Maxconn
			return planned{
				commands: t.hp.SetServerMaxconnCommands(b, s, n),
				describe: t.serverPreview(b, s, "connections above the limit wait in the queue; "+notPersisted, func(v haproxy.ServerView) string {
					return fmt.Sprintf("Change the maxconn of server %s (%s) from %s to %s on %s. %s", v.Name(), v.Endpoint(), limit(v.Maxconn), limit(n), t.at(), serverNow(v))
				}),
				run: func(ctx context.Context) (result, error) {
					res, err := t.hp.SetServerMaxconn(ctx, b, s, n)
					if err != nil {
						return result{}, err
					}
					return ok(haproxy.SourceRuntime, applied(map[string]any{"backend": b, "server": s, "maxconn": n}, res)), nil
				},
			}, nil
		})

	addChange(t, "set_frontend_maxconn", "Set frontend maxconn",
		"Set a frontend's maximum number of concurrent connections. "+notPersisted+".",
		idempotent, toolcall.Change,
		func(in frontendMaxconnIn) (planned, error) {
			f, n := in.Frontend, in.Maxconn
			return planned{
				commands: t.hp.SetFrontendMaxconnCommands(f, n),
				describe: t.frontendPreview(f, "connections above the limit wait to be accepted; "+notPersisted, func(v haproxy.FrontendView) string {
					return fmt.Sprintf("Change the maxconn of frontend %s from %s to %s on %s. It is %s and holds %s.", f, limit(v.Maxconn), limit(n), t.at(), v.Status, sessions(v.Sessions))
				}),
				run: func(ctx context.Context) (result, error) {
					res, err := t.hp.SetFrontendMaxconn(ctx, f, n)
					if err != nil {
						return result{}, err
					}
					return ok(haproxy.SourceRuntime, applied(map[string]any{"frontend": f, "maxconn": n}, res)), nil
				},
			}, nil
		})

	for _, v := range []struct {
		name, title, desc, verb string
		most                    toolcall.Class
	}{
		{"enable_frontend", "Enable a frontend", "Resume a paused frontend: it accepts connections again.", "enable", toolcall.Change},
		{"disable_frontend", "Disable a frontend", "Pause a frontend: it stops accepting new connections (status PAUSED); existing ones continue.", "disable", toolcall.Destructive},
	} {
		enable := v.verb == "enable"
		addChange(t, v.name, v.title, v.desc, idempotent, v.most,
			func(in frontendIn) (planned, error) {
				f := in.Frontend
				effect := "the frontend stops accepting new connections; current ones continue"
				var off func(ctx context.Context) (toolcall.Class, string)
				if enable {
					effect = "the frontend accepts new connections again"
				} else {
					off = t.frontendOffEffect(f)
				}
				return planned{
					effect:   off,
					key:      "frontend " + f,
					commands: t.hp.SetFrontendEnabledCommands(f, enable),
					describe: t.frontendPreview(f, effect, func(v haproxy.FrontendView) string {
						verb := "Pause"
						if enable {
							verb = "Resume"
						}
						return fmt.Sprintf("%s frontend %s on %s. It is %s and holds %s.", verb, f, t.at(), v.Status, sessions(v.Sessions))
					}),
					run: func(ctx context.Context) (result, error) {
						res, err := t.hp.SetFrontendEnabled(ctx, f, enable)
						if err != nil {
							return result{}, err
						}
						return ok(haproxy.SourceRuntime, applied(map[string]any{"frontend": f, "enabled": enable}, res)), nil
					},
				}, nil
			})
	}
}

// planState plans set_server_state, enable_server and disable_server.
func (t *tools) planState(b, s, state string) planned {
	effect := map[string]string{
		"ready": "the server is in service and gets new traffic",
		"drain": "the server gets no new sessions except persistent ones; current sessions continue",
		"maint": "the server gets no new traffic; current sessions are not cut",
	}[state]
	cmds := t.hp.SetServerStateCommands(b, s, state)
	p := planned{
		commands: cmds.All(),
		fallback: cmds.Fallback,
		describe: t.serverPreview(b, s, effect, func(v haproxy.ServerView) string {
			return fmt.Sprintf("Set server %s (%s) to %s on %s. %s", v.Name(), v.Endpoint(), state, t.at(), serverNow(v))
		}),
		run: func(ctx context.Context) (result, error) {
			return t.stateChange(t.hp.SetServerState(ctx, b, s, state))(map[string]any{"backend": b, "server": s, "state": state})
		},
	}
	if state == "ready" {
		p.class = toolcall.Change
	} else {
		p.effect, p.key = t.rotationEffect(b, s), backendKey(b)
	}
	return p
}

// applied adds what a change did to its result: "changed" (false when the
// requested state already held), HAProxy's "message" and, when its answer
// was not the documented success, the "state" read back that confirmed it.
func applied(f map[string]any, a haproxy.Applied) map[string]any {
	f["changed"] = a.Changed
	if a.Message != "" {
		f["message"] = a.Message
	}
	if a.State != "" {
		f["state_read_back"] = a.State
	}
	return f
}

// stateChange shapes the answer of a change that may have gone through the stats page.
func (t *tools) stateChange(src haproxy.Source, a haproxy.Applied, err error) func(map[string]any) (result, error) {
	return func(f map[string]any) (result, error) {
		if err != nil {
			return result{}, err
		}
		return ok(src, applied(f, a)), nil
	}
}
