package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcpfleet/mcpfleet/proxymcp/internal/haproxy"
	"github.com/mcpfleet/mcpfleet/proxymcp/internal/master"
	"github.com/mcpfleet/mcpfleet/proxymcp/internal/persist"
	"github.com/mcpfleet/mcpfleet/proxymcp/internal/runtimeapi"
	"github.com/mcpfleet/mcpfleet/shared/mcperr"
	"github.com/mcpfleet/mcpfleet/shared/toolcall"
)

type reloadIn struct {
	fleetArg
	Force bool `json:"force,omitempty" jsonschema:"Reload even when haproxy -c refuses the configuration or cannot run (HAProxy then refuses the reload itself and the old worker keeps serving)."`
}

const reloadDesc = "Reload HAProxy through its master CLI (PROXY_MASTER_URL, master-worker mode). Before: the configuration is checked with haproxy -c (PROXY_HAPROXY_BIN and PROXY_HAPROXY_CONFIG) and the preview shows that result and what persistence_status says the reload would lose; a refused check stops the reload unless `force`. After: the new worker is confirmed from `show proc`, and the server states, map and ACL entries are read back and compared with those before the reload. A reload HAProxy refuses leaves the old worker serving; the result says so with HAProxy's own words."

// lifecycleTools are persistence_status, persist_now, reload and set_ssl_cert.
func (t *tools) lifecycleTools() {
	t.persistTools()
	t.certTools()
	if t.ft != nil {
		// A fleet reload goes one instance at a time (PROXY_RELOAD_ONE_AT_A_TIME):
		// it is declared once, by the first instance, with its own fleet run.
		if t.calls != nil && !t.opts.ReadOnly {
			t.reloadFleetTool()
		}
		return
	}
	addChange(t, "reload", "Reload HAProxy", reloadDesc, destructive, toolcall.Destructive,
		func(in reloadIn) (planned, error) { return t.planReload(in.Force) })
}

// reloadPreview is what a reload would do on one instance.
type reloadPreview struct {
	Validation  any      `json:"validation"`
	WouldLose   any      `json:"would_be_lost"`
	Detail      []string `json:"detail,omitempty"`
	MasterCLI   string   `json:"master_cli"`
	Refused     string   `json:"refused,omitempty"`
	Precondtion string   `json:"-"`
}

func (t *tools) masterOrErr() (*master.Client, error) {
	if t.life == nil || t.life.Master == nil {
		return nil, errors.New("reload needs HAProxy's master CLI: run HAProxy in master-worker mode (-W -S <socket> or \"stats socket ... master\") and set PROXY_MASTER_URL (PROXY_<NAME>_MASTER_URL); nothing was sent")
	}
	return t.life.Master, nil
}

// previewReload checks the configuration and reads what would be lost.
func (t *tools) previewReload(ctx context.Context, force bool) (reloadPreview, error) {
	mc, err := t.masterOrErr()
	if err != nil {
		return reloadPreview{}, err
	}
	pv := reloadPreview{MasterCLI: mc.Endpoint()}
	res, cerr := t.life.Check.Check(ctx)
	switch {
	case cerr != nil:
		pv.Validation = map[string]any{"checked": false, "why": cerr.Error()}
		if !force {
			pv.Refused = "the configuration cannot be checked (" + cerr.Error() + "); pass force=true to reload unchecked"
		}
	default:
		pv.Validation = map[string]any{"checked": true, "valid": res.Valid, "output": res.Output, "command": res.Command}
		if !res.Valid && !force {
			pv.Refused = "haproxy -c refuses the configuration, so HAProxy would refuse the reload too:\n" + res.Output + "\nfix the configuration, or pass force=true (the old worker keeps serving when HAProxy refuses)"
		}
	}
	if st, err := t.status(ctx); err != nil {
		pv.WouldLose = "unknown: " + err.Error()
	} else {
		pv.WouldLose = st["would_be_lost"]
		if d, ok := st["detail"].([]string); ok {
			pv.Detail = d
		}
	}
	return pv, nil
}

// planReload plans one instance's reload.
func (t *tools) planReload(force bool) (planned, error) {
	if _, err := t.masterOrErr(); err != nil {
		return planned{}, err
	}
	return planned{
		commands: []string{"master CLI: reload"},
		describe: func(ctx context.Context) (toolcall.Preview, error) {
			pv, err := t.previewReload(ctx, force)
			if err != nil {
				return toolcall.Preview{}, err
			}
			return t.reloadPreviewOf(pv), nil
		},
		run: func(ctx context.Context) (result, error) {
			data, err := t.doReload(ctx, force)
			if err != nil {
				return result{}, err
			}
			return ok(haproxy.SourceRuntime, data), nil
		},
	}, nil
}

func (t *tools) reloadPreviewOf(pv reloadPreview) toolcall.Preview {
	sum := "Reload HAProxy at " + pv.MasterCLI + " (" + t.at() + "): a new worker starts with the configuration on disk and the old one finishes its connections."
	if v, _ := pv.Validation.(map[string]any); v != nil {
		if v["checked"] == true {
			if v["valid"] == true {
				sum += " haproxy -c accepts the configuration."
			} else {
				sum += " haproxy -c REFUSES the configuration: " + fmt.Sprint(v["output"])
			}
		} else {
			sum += " The configuration cannot be checked: " + fmt.Sprint(v["why"])
		}
	}
	if l, ok := pv.WouldLose.([]persist.Change); ok {
		if len(l) == 0 {
			sum += " persistence_status: nothing changed at run time would be lost."
		} else {
			sum += fmt.Sprintf(" persistence_status: %d runtime value(s) would be lost (see state.would_be_lost).", len(l))
		}
	} else if s, ok := pv.WouldLose.(string); ok {
		sum += " What would be lost is " + s
	}
	if pv.Refused != "" {
		sum += " It will NOT run: " + pv.Refused
	}
	return toolcall.Preview{Summary: sum, State: pv, Effect: "a new HAProxy worker serves the configuration on disk"}
}

// reloadSnapshot is what a reload may keep or lose, read from the runtime.
type reloadSnapshot struct {
	servers []persist.Server
	entries map[string][]persist.Entry // "map <file>" / "acl <file>"
}

func (t *tools) snapshotState(ctx context.Context) (reloadSnapshot, error) {
	s := reloadSnapshot{entries: map[string][]persist.Entry{}}
	// A connection of its own per command: pooled connections made before
	// a reload may still reach the old worker.
	rt := &runtimeapi.Client{Network: t.hp.Runtime.Network, Address: t.hp.Runtime.Address, Timeout: t.hp.Runtime.Timeout}
	out, err := rt.Execute(ctx, "show servers state")
	if err != nil {
		return s, err
	}
	s.servers = persist.ParseServersState(out)
	if t.life != nil && len(t.life.ConfigFiles) > 0 {
		src, err := t.sources(ctx)
		if err != nil {
			return s, err
		}
		for kind, files := range map[string][]string{persist.KindMap: src.Maps, persist.KindACL: src.ACLs} {
			for _, f := range files {
				show, err := rt.Execute(ctx, "show "+kind+" "+f)
				if err != nil {
					return s, err
				}
				s.entries[kind+" "+f] = persist.RuntimeEntries(show, kind == persist.KindMap)
			}
		}
	}
	return s, nil
}

// compare lists what differs between the state before and after a reload.
func compareSnapshots(before, after reloadSnapshot) []string {
	var out []string
	am := map[string]persist.Server{}
	for _, s := range after.servers {
		am[s.Backend+"/"+s.Server] = s
	}
	for _, b := range before.servers {
		a, ok := am[b.Backend+"/"+b.Server]
		switch {
		case !ok:
			out = append(out, "server "+b.Backend+"/"+b.Server+": gone after the reload")
		case a != b:
			out = append(out, fmt.Sprintf("server %s/%s: before %s weight %d %s:%d, after %s weight %d %s:%d", b.Backend, b.Server, b.Admin, b.Weight, b.Addr, b.Port, a.Admin, a.Weight, a.Addr, a.Port))
		}
	}
	for k, b := range before.entries {
		a := after.entries[k]
		if fmt.Sprint(a) != fmt.Sprint(b) {
			out = append(out, fmt.Sprintf("%s: %d entries before, %d after (%v -> %v)", k, len(b), len(a), b, a))
		}
	}
	return out
}

// doReload runs one instance's reload and checks it.
func (t *tools) doReload(ctx context.Context, force bool) (map[string]any, error) {
	mc, err := t.masterOrErr()
	if err != nil {
		return nil, err
	}
	pv, err := t.previewReload(ctx, force)
	if err != nil {
		return nil, err
	}
	if pv.Refused != "" {
		return nil, mcperr.New(mcperr.Conflict, "not reloaded, nothing was sent", errors.New(pv.Refused), "")
	}
	var before reloadSnapshot
	var snapErr error
	if t.hp.Runtime != nil {
		before, snapErr = t.snapshotState(ctx)
	}
	opts := master.ReloadOptions{}
	if len(t.life.Check.Command) > 0 {
		c := t.life.Check
		opts.Check = &c
	}
	out, rerr := mc.Reload(ctx, opts)
	data := map[string]any{"validation": pv.Validation, "reloaded": out.Reloaded, "new_workers": out.NewWorkers, "before": out.Before, "after": out.After}
	if out.Messages != "" {
		data["haproxy_said"], data["haproxy_said_in"] = out.Messages, out.MessagesFrom
	}
	var refused *master.RefusedError
	if errors.As(rerr, &refused) {
		return nil, mcperr.New(mcperr.Conflict, "refused by HAProxy", rerr, "The old worker(s) keep serving with the previous configuration")
	}
	if rerr != nil {
		return nil, mcperr.New(mcperr.Unavailable, "reload", rerr, "")
	}
	// Pooled runtime API connections still reach the old worker.
	if t.hp.Runtime != nil {
		t.hp.Runtime.FlushIdle()
	}
	// The new worker's runtime API: wait for it, then read the state back.
	if t.hp.Runtime != nil && snapErr == nil {
		after, err := t.waitSnapshot(ctx)
		if err != nil {
			data["compared"] = "could not read the state back: " + err.Error()
		} else {
			diff := compareSnapshots(before, after)
			data["compared"] = map[string]any{"identical": len(diff) == 0, "lost_or_changed": orEmptyList(diff)}
		}
	} else if snapErr != nil {
		data["compared"] = "could not read the state before the reload: " + snapErr.Error()
	}
	data["changed"] = true
	return data, nil
}

// waitSnapshot reads the state from the new worker, retrying while its
// runtime API comes up (bounded by ctx and 30s).
func (t *tools) waitSnapshot(ctx context.Context) (reloadSnapshot, error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	for {
		s, err := t.snapshotState(ctx)
		if err == nil {
			return s, nil
		}
		select {
		case <-ctx.Done():
			return s, err
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// reloadFleetTool declares reload for a fleet: previewed and approved
// once; run one instance at a time, in the fleet's order, stopping at the
// first failure (or at once everywhere with PROXY_RELOAD_ONE_AT_A_TIME=false).
func (t *tools) reloadFleetTool() {
	ft := t.ft
	name := "reload"
	t.classes[name] = toolcall.Destructive
	d := t.declare(name, "Reload HAProxy", reloadDesc+" Fleet: one instance at a time by default (PROXY_RELOAD_ONE_AT_A_TIME), stopping at the first failure; the instances after it are not touched.", destructive, toolcall.Destructive)
	toolcall.AddChange(t.calls, d, func(ctx context.Context, in reloadIn) (toolcall.Plan, error) {
		ms, err := ft.choose(in.instances())
		if err != nil {
			return toolcall.Plan{}, err
		}
		var per []*tools
		var cmds []string
		for _, m := range ms {
			mt := ft.per[m.Name]
			if _, err := mt.masterOrErr(); err != nil {
				return toolcall.Plan{}, mcperr.New(mcperr.Invalid, "reload on "+m.Name, err, "")
			}
			per = append(per, mt)
			cmds = append(cmds, m.Name+": master CLI: reload")
		}
		allAtOnce := t.life != nil && t.life.AllAtOnce
		return toolcall.Plan{Class: toolcall.Destructive, Target: "instances " + strings.Join(ft.f.Names(), ","), Commands: cmds,
			Describe: func(ctx context.Context) (toolcall.Preview, error) {
				var sums []string
				state := map[string]any{}
				for i, mt := range per {
					pv, err := mt.previewReload(ctx, in.Force)
					if err != nil {
						return toolcall.Preview{}, err
					}
					p := mt.reloadPreviewOf(pv)
					sums = append(sums, ms[i].Name+": "+p.Summary)
					state[ms[i].Name] = pv
				}
				how := "one at a time, stopping at the first failure"
				if allAtOnce {
					how = "all at once"
				}
				return toolcall.Preview{Summary: fmt.Sprintf("Reload %d HAProxy instance(s), %s:\n%s", len(per), how, strings.Join(sums, "\n")), State: state}, nil
			},
			Run: func(ctx context.Context) (*mcp.CallToolResult, error) {
				outcomes := make([]map[string]any, len(per))
				var reloaded, failed, untouched []string
				one := func(i int) bool {
					data, err := per[i].doReload(ctx, in.Force)
					o := map[string]any{"instance": ms[i].Name}
					if err != nil {
						o["error"] = err.Error()
						o["reloaded"] = false
					} else {
						for k, v := range data {
							o[k] = v
						}
					}
					outcomes[i] = o
					return err == nil
				}
				if allAtOnce {
					var wg sync.WaitGroup
					oks := make([]bool, len(per))
					for i := range per {
						wg.Add(1)
						go func(i int) { defer wg.Done(); oks[i] = one(i) }(i)
					}
					wg.Wait()
					for i, ok := range oks {
						if ok {
							reloaded = append(reloaded, ms[i].Name)
						} else {
							failed = append(failed, ms[i].Name)
						}
					}
				} else {
					for i := range per {
						if len(failed) > 0 {
							untouched = append(untouched, ms[i].Name)
							outcomes[i] = map[string]any{"instance": ms[i].Name, "reloaded": false, "skipped": "not reloaded: the fleet reload stopped at " + failed[0]}
							continue
						}
						if one(i) {
							reloaded = append(reloaded, ms[i].Name)
						} else {
							failed = append(failed, ms[i].Name)
						}
					}
				}
				data := map[string]any{"outcomes": outcomes, "reloaded_on": orEmptyList(reloaded), "failed_on": orEmptyList(failed), "not_touched": orEmptyList(untouched), "source": string(haproxy.SourceRuntime)}
				if len(failed) > 0 {
					msg := fmt.Sprintf("reload failed on %s", strings.Join(failed, ", "))
					if len(untouched) > 0 {
						msg += "; stopped there: " + strings.Join(untouched, ", ") + " not reloaded"
					}
					for _, o := range outcomes {
						if e, ok := o["error"].(string); ok {
							msg += "\n" + fmt.Sprint(o["instance"]) + ": " + e
						}
					}
					return errorResult(data, msg, ""), nil
				}
				body, err := json.Marshal(data)
				if err != nil {
					return toolError(name, destructive, err), nil
				}
				return mcp.NewToolResultStructured(json.RawMessage(body), string(body)), nil
			}}, nil
	})
}
