package haproxy

import (
	"fmt"
	"net"
	"strconv"
	"time"

	"github.com/mcpfleet/mcpfleet/proxymcp/internal/statspage"
	"github.com/mcpfleet/mcpfleet/proxymcp/internal/validate"
)

// The builders below are the one place each change's runtime API text is
// written. The operations send what they build, and the *Commands methods
// return the same text for dry runs, approvals and audit records, so what a
// person approved is what reaches HAProxy.

func cmdClearCounters(all bool) string {
	if all {
		return "clear counters all"
	}
	return "clear counters"
}

func cmdAddServer(backend, server, addr string, port int, o AddServerOptions) string {
	cmd := fmt.Sprintf("add server %s %s", srv(backend, server), net.JoinHostPort(addr, strconv.Itoa(port)))
	if o.Weight != "" {
		cmd += " weight " + o.Weight
	}
	if o.Maxconn > 0 {
		cmd += " maxconn " + strconv.FormatInt(o.Maxconn, 10)
	}
	if o.Check {
		cmd += " check"
	}
	if o.Backup {
		cmd += " backup"
	}
	return cmd
}

func cmdState(backend, server, state string) string {
	return "set server " + srv(backend, server) + " state " + state
}
func cmdDelServer(backend, server string) string { return "del server " + srv(backend, server) }
func cmdHealth(backend, server, health string) string {
	return "set server " + srv(backend, server) + " health " + health
}
func cmdCheck(verb, what, backend, server string) string {
	return verb + " " + what + " " + srv(backend, server)
}
func cmdAgentState(backend, server, state string) string {
	return "set server " + srv(backend, server) + " agent " + state
}
func cmdAgentAddr(backend, server, addr string) string {
	return "set server " + srv(backend, server) + " agent-addr " + addr
}
func cmdAgentPort(backend, server string, port int) string {
	return "set server " + srv(backend, server) + " agent-port " + strconv.Itoa(port)
}
func cmdAgentSend(backend, server, send string) string {
	return "set server " + srv(backend, server) + " agent-send " + validate.Escape(send)
}
func cmdServerMaxconn(backend, server string, n int64) string {
	return "set maxconn server " + srv(backend, server) + " " + strconv.FormatInt(n, 10)
}
func cmdFrontendMaxconn(frontend string, n int64) string {
	return "set maxconn frontend " + frontend + " " + strconv.FormatInt(n, 10)
}
func cmdFrontendEnabled(frontend string, enable bool) string {
	if enable {
		return "enable frontend " + frontend
	}
	return "disable frontend " + frontend
}
func cmdShutdownSession(id string) string { return "shutdown session " + id }
func cmdShutdownServerSessions(backend, server string) string {
	return "shutdown sessions server " + srv(backend, server)
}
func cmdCheckPort(backend, server string, port int) string {
	return "set server " + srv(backend, server) + " check-port " + strconv.Itoa(port)
}
func cmdWeight(backend, server, weight string) string {
	return "set server " + srv(backend, server) + " weight " + weight
}
func cmdAddr(backend, server, addr string, port int) string {
	cmd := "set server " + srv(backend, server) + " addr " + addr
	if port != 0 {
		cmd += " port " + strconv.Itoa(port)
	}
	return cmd
}
func cmdAddEntry(kind MapKind, ref, key, value string) string {
	cmd := "add " + string(kind) + " " + ref + " " + validate.Escape(key)
	if kind == KindMap {
		cmd += " " + validate.Escape(value)
	}
	return cmd
}
func cmdSetMapEntry(ref, key, value string) string {
	return "set map " + ref + " " + validate.Escape(key) + " " + validate.Escape(value)
}
func cmdDelEntry(kind MapKind, ref, key string) string {
	return "del " + string(kind) + " " + ref + " " + validate.Escape(key)
}
func cmdClear(kind MapKind, ref string) string { return "clear " + string(kind) + " " + ref }
func cmdPrepareMap(ref string) string          { return "prepare map " + ref }
func cmdAddMapVersion(ver, ref string, e MapEntry) string {
	return "add map " + ver + " " + ref + " " + validate.Escape(e.Key) + " " + validate.Escape(e.Value)
}
func cmdCommitMap(ver, ref string) string { return "commit map " + ver + " " + ref }

// newVersionPlaceholder stands for the version "prepare map" creates, which
// is only known when it runs.
const newVersionPlaceholder = "@<new version>"

// AdminCommands is what an admin change sends: its runtime API commands, and
// the stats page request it falls back to when the runtime API cannot be
// reached (worded so in a preview; nil when there is none).
type AdminCommands struct {
	Runtime  []string
	Fallback []string
}

// All lists every command a preview shows, the runtime API's first.
func (c AdminCommands) All() []string {
	return append(append(make([]string, 0, len(c.Runtime)+len(c.Fallback)), c.Runtime...), c.Fallback...)
}

// fallback words the stats page request an admin change falls back to when
// the runtime API cannot be reached; nil when there is none.
func (c *Client) fallback(backend, server, action string) []string {
	if c.Stats == nil || action == "" {
		return nil
	}
	return []string{fmt.Sprintf("only if the runtime API cannot be reached: POST %s b=%s s=%s action=%s", c.Stats.URL, backend, server, action)}
}

// ClearCountersCommands is what ClearCounters sends.
func (c *Client) ClearCountersCommands(all bool) []string { return []string{cmdClearCounters(all)} }

// AddServerCommands is what AddServer sends, in order.
func (c *Client) AddServerCommands(backend, server, addr string, port int, o AddServerOptions) []string {
	out := []string{cmdAddServer(backend, server, addr, port, o)}
	if o.Enable {
		if o.Check {
			out = append(out, cmdCheck("enable", "health", backend, server))
		}
		out = append(out, cmdState(backend, server, "ready"))
	}
	return out
}

// DelServerCommands is what DelServer sends, in order (without the
// read-only "show stat" it polls while draining).
func (c *Client) DelServerCommands(backend, server string, drain bool, wait time.Duration) []string {
	var out []string
	if drain {
		out = append(out, cmdState(backend, server, "drain"),
			fmt.Sprintf("(wait up to %s for its sessions to end)", wait),
			cmdState(backend, server, "maint"))
	}
	return append(out, cmdDelServer(backend, server))
}

// SetServerStateCommands is what SetServerState sends.
func (c *Client) SetServerStateCommands(backend, server, state string) AdminCommands {
	return AdminCommands{Runtime: []string{cmdState(backend, server, state)}, Fallback: c.fallback(backend, server, stateActions[state])}
}

// SetServerHealthCommands is what SetServerHealth sends.
func (c *Client) SetServerHealthCommands(backend, server, health string) AdminCommands {
	return AdminCommands{Runtime: []string{cmdHealth(backend, server, health)}, Fallback: c.fallback(backend, server, healthActions[health])}
}

func checkVerb(enable bool) string {
	if enable {
		return "enable"
	}
	return "disable"
}

// SetHealthCheckCommands is what SetHealthCheck sends.
func (c *Client) SetHealthCheckCommands(backend, server string, enable bool) AdminCommands {
	action := statspage.ActionHealthDisable
	if enable {
		action = statspage.ActionHealthEnable
	}
	return AdminCommands{Runtime: []string{cmdCheck(checkVerb(enable), "health", backend, server)}, Fallback: c.fallback(backend, server, action)}
}

// SetAgentCheckCommands is what SetAgentCheck sends.
func (c *Client) SetAgentCheckCommands(backend, server string, enable bool) AdminCommands {
	action := statspage.ActionAgentDisable
	if enable {
		action = statspage.ActionAgentEnable
	}
	return AdminCommands{Runtime: []string{cmdCheck(checkVerb(enable), "agent", backend, server)}, Fallback: c.fallback(backend, server, action)}
}

// agentAction is the stats page action for an agent state change alone.
func agentAction(a AgentSettings) string {
	if a.Addr != "" || a.Port != 0 || a.Send != "" {
		return "" // the other settings need the runtime API anyway
	}
	if a.State == "down" {
		return statspage.ActionAgentDown
	}
	return statspage.ActionAgentUp
}

// SetServerAgentCommands is what SetServerAgent sends, in order.
func (c *Client) SetServerAgentCommands(backend, server string, a AgentSettings) AdminCommands {
	var out []string
	if a.State != "" {
		out = append(out, cmdAgentState(backend, server, a.State))
	}
	if a.Addr != "" {
		out = append(out, cmdAgentAddr(backend, server, a.Addr))
	}
	if a.Port != 0 {
		out = append(out, cmdAgentPort(backend, server, a.Port))
	}
	if a.Send != "" {
		out = append(out, cmdAgentSend(backend, server, a.Send))
	}
	cmds := AdminCommands{Runtime: out}
	if a.State != "" {
		cmds.Fallback = c.fallback(backend, server, agentAction(a))
	}
	return cmds
}

// SetServerMaxconnCommands is what SetServerMaxconn sends.
func (c *Client) SetServerMaxconnCommands(backend, server string, n int64) []string {
	return []string{cmdServerMaxconn(backend, server, n)}
}

// SetFrontendMaxconnCommands is what SetFrontendMaxconn sends.
func (c *Client) SetFrontendMaxconnCommands(frontend string, n int64) []string {
	return []string{cmdFrontendMaxconn(frontend, n)}
}

// SetFrontendEnabledCommands is what SetFrontendEnabled sends.
func (c *Client) SetFrontendEnabledCommands(frontend string, enable bool) []string {
	return []string{cmdFrontendEnabled(frontend, enable)}
}

// ShutdownSessionCommands is what ShutdownSession sends.
func (c *Client) ShutdownSessionCommands(id string) []string { return []string{cmdShutdownSession(id)} }

// ShutdownServerSessionsCommands is what ShutdownServerSessions sends.
func (c *Client) ShutdownServerSessionsCommands(backend, server string) []string {
	return []string{cmdShutdownServerSessions(backend, server)}
}

// SetServerCheckPortCommands is what SetServerCheckPort sends.
func (c *Client) SetServerCheckPortCommands(backend, server string, port int) []string {
	return []string{cmdCheckPort(backend, server, port)}
}

// SetServerWeightCommands is what SetServerWeight sends.
func (c *Client) SetServerWeightCommands(backend, server, weight string) []string {
	return []string{cmdWeight(backend, server, weight)}
}

// SetServerAddrCommands is what SetServerAddr sends.
func (c *Client) SetServerAddrCommands(backend, server, addr string, port int) []string {
	return []string{cmdAddr(backend, server, addr, port)}
}

// AddEntryCommands is what AddEntry sends.
func (c *Client) AddEntryCommands(kind MapKind, ref, key, value string) []string {
	return []string{cmdAddEntry(kind, ref, key, value)}
}

// SetMapEntryCommands is what SetMapEntry sends.
func (c *Client) SetMapEntryCommands(ref, key, value string) []string {
	return []string{cmdSetMapEntry(ref, key, value)}
}

// DelEntryCommands is what DelEntry sends.
func (c *Client) DelEntryCommands(kind MapKind, ref, key string) []string {
	return []string{cmdDelEntry(kind, ref, key)}
}

// ClearPatternsCommands is what ClearPatterns sends.
func (c *Client) ClearPatternsCommands(kind MapKind, ref string) []string {
	return []string{cmdClear(kind, ref)}
}

// ReplaceMapCommands is what ReplaceMap sends, in order; the version that
// "prepare map" creates is shown as "@<new version>".
func (c *Client) ReplaceMapCommands(ref string, entries []MapEntry) []string {
	out := make([]string, 0, len(entries)+2)
	out = append(out, cmdPrepareMap(ref))
	for _, e := range entries {
		out = append(out, cmdAddMapVersion(newVersionPlaceholder, ref, e))
	}
	return append(out, cmdCommitMap(newVersionPlaceholder, ref))
}
