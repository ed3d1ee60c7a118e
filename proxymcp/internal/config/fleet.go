package config

import (
	"fmt"

	"github.com/mcpfleet/mcpfleet/shared/envconfig"
)

// Instances is proxymcp's member grammar: PROXY_INSTANCES names the
// HAProxy instances, PROXY_<NAME>_* sets one instance's own back ends, and
// a call that names no instance runs on every one. Without
// PROXY_INSTANCES there is one instance, "default", read from the
// unprefixed variables.
var Instances = envconfig.Members{Prefix: "PROXY", List: "INSTANCES", Noun: "instance", Target: envconfig.EveryMember, Own: PerInstance}

// PerInstance are the variables PROXY_<NAME>_* can set for one instance.
// Every other variable (timeouts, the connection limit, PROXY_READ_ONLY)
// is shared by the fleet.
var PerInstance = []string{"PROXY_RUNTIME_URL", "PROXY_STATS_URL", "PROXY_STATS_USERNAME", "PROXY_STATS_PASSWORD", "PROXY_RUNTIME_ENABLED", "PROXY_STATS_ENABLED",
	"PROXY_PERSIST", "PROXY_MASTER_URL", "PROXY_HAPROXY_BIN", "PROXY_HAPROXY_CONFIG", "PROXY_HAPROXY_DIR"}

// FleetVars documents the fleet variables for --help and the README.
var FleetVars = []envconfig.Var{
	{Name: "PROXY_INSTANCES", Description: "comma-separated HAProxy instance names, e.g. lb1,lb2 (letters, digits, _ and -); empty: one instance named default from the variables above"},
	{Name: "PROXY_<NAME>_RUNTIME_URL", Description: "runtime API of instance <NAME> (upper-cased, - as _); required for each instance unless PROXY_<NAME>_RUNTIME_ENABLED=false"},
	{Name: "PROXY_<NAME>_STATS_URL", Description: "stats page of instance <NAME>; required for each instance unless PROXY_<NAME>_STATS_ENABLED=false"},
	{Name: "PROXY_<NAME>_STATS_USERNAME", Description: "stats page user of instance <NAME>; unset: PROXY_STATS_USERNAME"},
	{Name: "PROXY_<NAME>_STATS_PASSWORD", Secret: true, Description: "stats page password of instance <NAME>; unset: PROXY_STATS_PASSWORD (never logged)"},
	{Name: "PROXY_<NAME>_RUNTIME_ENABLED", Description: "use instance <NAME>'s runtime API; unset: PROXY_RUNTIME_ENABLED"},
	{Name: "PROXY_<NAME>_STATS_ENABLED", Description: "use instance <NAME>'s stats page; unset: PROXY_STATS_ENABLED"},
	{Name: "PROXY_<NAME>_PERSIST", Description: "off or on for instance <NAME>; unset: PROXY_PERSIST"},
	{Name: "PROXY_<NAME>_MASTER_URL", Description: "master CLI of instance <NAME> for reload; unset: PROXY_MASTER_URL"},
	{Name: "PROXY_<NAME>_HAPROXY_BIN", Description: "haproxy binary of instance <NAME> for haproxy -c; unset: PROXY_HAPROXY_BIN"},
	{Name: "PROXY_<NAME>_HAPROXY_CONFIG", Description: "configuration files of instance <NAME>; unset: PROXY_HAPROXY_CONFIG"},
	{Name: "PROXY_<NAME>_HAPROXY_DIR", Description: "directory proxymcp may write instance <NAME>'s files in; unset: PROXY_HAPROXY_DIR, else its first configuration file's directory"},
}

// Instance is one HAProxy of the fleet and its back-end settings.
type Instance struct {
	Name string
	Config
}

// Fleet is every HAProxy proxymcp talks to.
type Fleet struct {
	// Instances in PROXY_INSTANCES order; one named "default" without it.
	Instances []Instance
	// Members resolves a call's instance argument.
	Members  *envconfig.Fleet
	ReadOnly bool
}

// FleetFromEnv reads PROXY_INSTANCES and every instance's variables;
// problems are recorded in r, each naming the instance and the variable.
// Without PROXY_INSTANCES it is FromEnv's configuration as the one
// instance "default".
func FleetFromEnv(r *envconfig.Reader) Fleet {
	mf := Instances.Read(r)
	f := Fleet{Members: mf}
	for _, name := range mf.Names {
		m := mf.Member(name)
		c := FromEnv(m.Reader)
		if mf.Named {
			// Each instance needs its own addresses: the defaults
			// (127.0.0.1:9999, http://127.0.0.1:8404/stats) would point
			// every instance at the same HAProxy.
			if c.RuntimeEnabled && m.Lookup("PROXY_RUNTIME_URL") == "" {
				m.FailOwn("PROXY_RUNTIME_URL", "", "each instance needs its own runtime API address, e.g. tcp://10.0.0.11:9999 or unix:///run/haproxy/admin.sock (or set "+m.Var("PROXY_RUNTIME_ENABLED")+"=false)")
			}
			if c.StatsEnabled && m.Lookup("PROXY_STATS_URL") == "" {
				m.FailOwn("PROXY_STATS_URL", "", "each instance needs its own stats page URL, e.g. http://10.0.0.11:8404/stats (or set "+m.Var("PROXY_STATS_ENABLED")+"=false)")
			}
		}
		m.Done()
		f.ReadOnly = c.ReadOnly // a fleet-wide variable: the same for every instance
		c.ReadOnly = false
		f.Instances = append(f.Instances, Instance{Name: name, Config: c})
	}
	if !mf.Named {
		f.Instances[0].ReadOnly = f.ReadOnly
	}
	checkDistinct(r, f.Instances)
	return f
}

// checkDistinct refuses two instances on one runtime API or stats page:
// a change "applied to both" would be applied twice to one HAProxy and
// never to the other.
func checkDistinct(r *envconfig.Reader, ins []Instance) {
	rt, st := map[string]string{}, map[string]string{}
	for _, in := range ins {
		if in.RuntimeEnabled && in.RuntimeAddress != "" {
			key := in.RuntimeNetwork + " " + in.RuntimeAddress
			if prev, dup := rt[key]; dup {
				own := Instances.Var(in.Name, "PROXY_RUNTIME_URL")
				r.Fail("instance "+in.Name+": "+own, key,
					fmt.Sprintf("a runtime API of its own: instance %s already uses %s (set %s)", prev, key, own))
			} else {
				rt[key] = in.Name
			}
		}
		if in.StatsEnabled && in.StatsURL != "" {
			if prev, dup := st[in.StatsURL]; dup {
				own := Instances.Var(in.Name, "PROXY_STATS_URL")
				r.Fail("instance "+in.Name+": "+own, in.StatsURL,
					fmt.Sprintf("a stats page of its own: instance %s already uses %s (set %s)", prev, in.StatsURL, own))
			} else {
				st[in.StatsURL] = in.Name
			}
		}
	}
}
