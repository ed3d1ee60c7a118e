package fleet

import (
	"errors"
	"time"

	"github.com/mcpfleet/mcpfleet/proxymcp/internal/config"
	"github.com/mcpfleet/mcpfleet/proxymcp/internal/haproxy"
	"github.com/mcpfleet/mcpfleet/proxymcp/internal/runtimeapi"
	"github.com/mcpfleet/mcpfleet/proxymcp/internal/statspage"
	"github.com/mcpfleet/mcpfleet/shared/envconfig"
)

// FromConfig builds the fleet a configuration describes (one member,
// "default", without PROXY_INSTANCES): per instance a
// runtime API client (its own pool of connections) and a stats page client
// with that instance's credentials. Close releases the pools.
func FromConfig(cf config.Fleet) (*Fleet, error) {
	members := make([]Member, 0, len(cf.Instances))
	for _, in := range cf.Instances {
		var rt *runtimeapi.Client
		if in.RuntimeEnabled {
			rt = &runtimeapi.Client{Network: in.RuntimeNetwork, Address: in.RuntimeAddress, Timeout: in.RuntimeTimeout, MaxConns: in.RuntimeMaxConns}
		}
		var st *statspage.Client
		if in.StatsEnabled {
			st = &statspage.Client{URL: in.StatsURL, Username: in.StatsUsername, Password: in.StatsPassword, Timeout: in.StatsTimeout}
		}
		members = append(members, Member{Name: in.Name, Client: haproxy.New(rt, st), ReadTimeout: readTimeout(in.Config)})
	}
	switch {
	case len(members) == 0:
		return nil, errors.New("a fleet needs at least one HAProxy instance")
	case !cf.Members.Named:
		return One(members[0]), nil
	}
	return New(members...)
}

// One is the fleet of one HAProxy configured without PROXY_INSTANCES: its
// calls take no instance argument and answer as that HAProxy does.
func One(m Member) *Fleet {
	m.Name = envconfig.DefaultName
	return newFleet([]Member{m}, config.Instances.Read(envconfig.New(func(string) string { return "" })))
}

// readTimeout is one instance's limit for a read: its runtime API timeout
// and, when the stats page can be fallen back to, the page's timeout too.
// Reads of several commands (get_server) share it.
func readTimeout(c config.Config) time.Duration {
	var d time.Duration
	if c.RuntimeEnabled {
		d += c.RuntimeTimeout
	}
	if c.StatsEnabled {
		d += c.StatsTimeout
	}
	return d
}

// Close closes every member's runtime API connections.
func (f *Fleet) Close() error {
	for _, m := range f.members {
		if m.Client.Runtime != nil {
			_ = m.Client.Runtime.Close()
		}
	}
	return nil
}
