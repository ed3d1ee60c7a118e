package mcpserver

import (
	"sort"

	"github.com/mcpfleet/mcpfleet/proxymcp/internal/haproxy"
)

// Support levels of a tool on one HAProxy.
const (
	Supported   = "supported"
	Unsupported = "unsupported"
	Degraded    = "degraded"
)

// need is a version-dependent runtime API command a tool uses.
type need struct {
	command string // a haproxy.Features command
	// degraded: without the command the tool still answers, with less
	// (note says how); otherwise the tool refuses.
	degraded bool
	note     string
}

// toolNeeds lists the tools whose work depends on the HAProxy version;
// every other tool uses commands all supported versions (2.6+) have.
// version_info and the README's version table are computed from it.
var toolNeeds = map[string][]need{
	"add_server":               {{command: "add server"}},
	"del_server":               {{command: "del server"}},
	"replace_map":              {{command: "prepare map"}},
	"show_servers_conn":        {{command: "show servers conn"}},
	"list_ssl_certs":           {{command: "show ssl cert"}},
	"show_ssl_cert":            {{command: "show ssl cert"}},
	"show_ssl_sni":             {{command: "show ssl sni"}},
	"list_add_server_keywords": {{command: "add server help"}},
	"wait_server_removable":    {{command: "wait"}},
	"echo":                     {{command: "echo", degraded: true, note: "answered by proxymcp, not HAProxy (answered_by: proxymcp)"}},
}

// ToolSupport is one row of version_info's tool table.
type ToolSupport struct {
	Tool   string `json:"tool"`
	Level  string `json:"level"` // supported, unsupported, degraded
	Reason string `json:"reason,omitempty"`
}

// toolSupport computes the level of each named tool on cp.
func toolSupport(cp haproxy.Capabilities, names []string) []ToolSupport {
	out := make([]ToolSupport, 0, len(names))
	for _, name := range names {
		row := ToolSupport{Tool: name, Level: Supported}
		for _, n := range toolNeeds[name] {
			err := cp.Check(n.command)
			if err == nil {
				continue
			}
			if n.degraded {
				row.Level, row.Reason = Degraded, err.Error()+"; "+n.note
				continue
			}
			row.Level, row.Reason = Unsupported, err.Error()
			break
		}
		out = append(out, row)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Tool < out[j].Tool })
	return out
}
