package fleet

import (
	"context"
	"time"

	"github.com/mcpfleet/mcpfleet/proxymcp/internal/config"
	"github.com/mcpfleet/mcpfleet/proxymcp/internal/haproxy"
	"github.com/mcpfleet/mcpfleet/proxymcp/internal/runtimeapi"
	"github.com/mcpfleet/mcpfleet/proxymcp/internal/statspage"
)

// FromConfig builds the fleet a configuration describes: per instance a
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
	return New(members...)
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

// Info is what version_info reports of one instance.
type Info struct {
	Capabilities     haproxy.Capabilities
	StatePersistence haproxy.StatePersistence
}

// Versions detects every member's HAProxy version, commands and state
// persistence, concurrently.
func Versions(ctx context.Context, members []Member) ([]Answer[Info], error) {
	return Read(ctx, members, func(ctx context.Context, c *haproxy.Client) (Info, haproxy.Source, error) {
		cp, err := c.Capabilities(ctx)
		if err != nil {
			return Info{}, haproxy.SourceRuntime, err
		}
		sp, err := c.StatePersistence(ctx)
		if err != nil {
			sp = haproxy.StatePersistence{Detail: "unknown: show info failed: " + err.Error()}
		}
		return Info{Capabilities: cp, StatePersistence: sp}, haproxy.SourceRuntime, nil
	})
}
