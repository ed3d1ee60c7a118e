package config

import (
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/mcpfleet/mcpfleet/shared/envconfig"
)

// DefaultInstance is the name of the one instance configured without
// PROXY_INSTANCES, from the unprefixed variables.
const DefaultInstance = "default"

// AllInstances is the reserved word that selects every instance; no
// instance may be called that.
const AllInstances = "all"

// PerInstance are the variables that PROXY_<NAME>_* can set for one
// instance (suffixes after "PROXY_"). Every other variable (timeouts, the
// connection limit, PROXY_READ_ONLY) is shared by the fleet.
var PerInstance = []string{"RUNTIME_URL", "STATS_URL", "STATS_USERNAME", "STATS_PASSWORD", "RUNTIME_ENABLED", "STATS_ENABLED"}

// FleetVars documents the fleet variables for --help and the README.
var FleetVars = []envconfig.Var{
	{Name: "PROXY_INSTANCES", Description: "comma-separated HAProxy instance names, e.g. lb1,lb2 (letters, digits, _); empty: one instance named default from the variables above"},
	{Name: "PROXY_<NAME>_RUNTIME_URL", Description: "runtime API of instance <NAME> (upper-cased); required for each instance unless PROXY_<NAME>_RUNTIME_ENABLED=false"},
	{Name: "PROXY_<NAME>_STATS_URL", Description: "stats page of instance <NAME>; required for each instance unless PROXY_<NAME>_STATS_ENABLED=false"},
	{Name: "PROXY_<NAME>_STATS_USERNAME", Description: "stats page user of instance <NAME>; unset: PROXY_STATS_USERNAME"},
	{Name: "PROXY_<NAME>_STATS_PASSWORD", Secret: true, Description: "stats page password of instance <NAME>; unset: PROXY_STATS_PASSWORD (never logged)"},
	{Name: "PROXY_<NAME>_RUNTIME_ENABLED", Description: "use instance <NAME>'s runtime API; unset: PROXY_RUNTIME_ENABLED"},
	{Name: "PROXY_<NAME>_STATS_ENABLED", Description: "use instance <NAME>'s stats page; unset: PROXY_STATS_ENABLED"},
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
	// Named is true when PROXY_INSTANCES set the names.
	Named    bool
	ReadOnly bool
}

// Names returns the instance names in order.
func (f Fleet) Names() []string {
	out := make([]string, len(f.Instances))
	for i, in := range f.Instances {
		out[i] = in.Name
	}
	return out
}

// InstanceNamePattern is what an instance name may look like: it becomes
// part of variable names (PROXY_<NAME>_RUNTIME_URL), so no "-" or ".".
var InstanceNamePattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_]{0,31}$`)

// InstanceVar returns the per-instance variable for suffix, e.g.
// InstanceVar("lb1", "RUNTIME_URL") = "PROXY_LB1_RUNTIME_URL".
func InstanceVar(name, suffix string) string {
	return "PROXY_" + strings.ToUpper(name) + "_" + suffix
}

// FleetFromEnv reads PROXY_INSTANCES and every instance's variables;
// problems are recorded in r, each naming the instance and the variable.
// Without PROXY_INSTANCES it is FromEnv's configuration, unchanged, as the
// one instance "default".
func FleetFromEnv(r *envconfig.Reader) Fleet {
	raw := r.Lookup("PROXY_INSTANCES")
	if raw == "" {
		c := FromEnv(r)
		return Fleet{Instances: []Instance{{Name: DefaultInstance, Config: c}}, ReadOnly: c.ReadOnly}
	}
	f := Fleet{Named: true, ReadOnly: r.Bool("PROXY_READ_ONLY", false)}
	seen := map[string]string{} // upper-cased name → name
	for _, name := range strings.Split(raw, ",") {
		name = strings.TrimSpace(name)
		switch {
		case name == "":
			r.Fail("PROXY_INSTANCES", raw, "comma-separated instance names without empty items, e.g. lb1,lb2")
			continue
		case strings.EqualFold(name, AllInstances):
			r.Fail("PROXY_INSTANCES", raw, `instance names other than "all", which selects every instance`)
			continue
		case !InstanceNamePattern.MatchString(name):
			r.Fail("PROXY_INSTANCES", raw, fmt.Sprintf("instance names of letters, digits and _ (at most 32, first a letter or digit; %q is not: the name becomes part of PROXY_<NAME>_* variables)", name))
			continue
		}
		if prev, dup := seen[strings.ToUpper(name)]; dup {
			r.Fail("PROXY_INSTANCES", raw, fmt.Sprintf("distinct instance names (%q and %q both use the variables PROXY_%s_*)", prev, name, strings.ToUpper(name)))
			continue
		}
		seen[strings.ToUpper(name)] = name
		f.Instances = append(f.Instances, Instance{Name: name, Config: instanceFromEnv(r, name)})
	}
	checkDistinct(r, f.Instances)
	return f
}

// instanceFromEnv reads one instance: the per-instance variables first,
// the unprefixed ones when they are unset, the shared ones as they are.
func instanceFromEnv(r *envconfig.Reader, name string) Config {
	from := map[string]string{} // unprefixed variable → where its value came from
	sub := envconfig.New(func(key string) string {
		for _, s := range PerInstance {
			if key == "PROXY_"+s {
				own := InstanceVar(name, s)
				if v := r.Secret(own); strings.TrimSpace(v) != "" {
					from[key] = own
					return v
				}
			}
		}
		return r.Secret(key)
	})
	c := FromEnv(sub)
	c.ReadOnly = false // a fleet-wide setting, read once
	// Each instance needs its own addresses: the seed's defaults
	// (127.0.0.1:9999, http://127.0.0.1:8404/stats) would point every
	// instance at the same HAProxy.
	if c.RuntimeEnabled && sub.Lookup("PROXY_RUNTIME_URL") == "" {
		r.Fail("instance "+name+": "+InstanceVar(name, "RUNTIME_URL"), "",
			"each instance needs its own runtime API address, e.g. tcp://10.0.0.11:9999 or unix:///run/haproxy/admin.sock (or set "+InstanceVar(name, "RUNTIME_ENABLED")+"=false)")
	}
	if c.StatsEnabled && sub.Lookup("PROXY_STATS_URL") == "" {
		r.Fail("instance "+name+": "+InstanceVar(name, "STATS_URL"), "",
			"each instance needs its own stats page URL, e.g. http://10.0.0.11:8404/stats (or set "+InstanceVar(name, "STATS_ENABLED")+"=false)")
	}
	var ee *envconfig.Error
	if err := sub.Err(); errors.As(err, &ee) {
		for _, p := range ee.Problems {
			varName := p.Name
			if own, ok := from[p.Name]; ok {
				varName = own
			} else if strings.HasPrefix(p.Name, "PROXY_") && isPerInstance(strings.TrimPrefix(p.Name, "PROXY_")) {
				varName = p.Name + " (used because " + InstanceVar(name, strings.TrimPrefix(p.Name, "PROXY_")) + " is unset)"
			}
			p.Name = "instance " + name + ": " + varName
			if p.Secret {
				r.FailSecret(p.Name, p.Value, p.Accepted)
			} else {
				r.Fail(p.Name, p.Value, p.Accepted)
			}
		}
	}
	return c
}

func isPerInstance(suffix string) bool {
	for _, s := range PerInstance {
		if s == suffix {
			return true
		}
	}
	return false
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
				r.Fail("instance "+in.Name+": "+InstanceVar(in.Name, "RUNTIME_URL"), key,
					fmt.Sprintf("a runtime API of its own: instance %s already uses %s (set %s)", prev, key, InstanceVar(in.Name, "RUNTIME_URL")))
			} else {
				rt[key] = in.Name
			}
		}
		if in.StatsEnabled && in.StatsURL != "" {
			if prev, dup := st[in.StatsURL]; dup {
				r.Fail("instance "+in.Name+": "+InstanceVar(in.Name, "STATS_URL"), in.StatsURL,
					fmt.Sprintf("a stats page of its own: instance %s already uses %s (set %s)", prev, in.StatsURL, InstanceVar(in.Name, "STATS_URL")))
			} else {
				st[in.StatsURL] = in.Name
			}
		}
	}
}
