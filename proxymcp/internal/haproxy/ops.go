package haproxy

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/mcpfleet/mcpfleet/proxymcp/internal/runtimeapi"
	"github.com/mcpfleet/mcpfleet/proxymcp/internal/statspage"
	"github.com/mcpfleet/mcpfleet/proxymcp/internal/validate"
)

// Callers validate every argument (package validate) before calling these
// methods; free text is escaped here, and the runtime client refuses control
// characters as a last line of defence.

// ShowInfo returns "show info" as an object.
func (c *Client) ShowInfo(ctx context.Context) (map[string]any, error) {
	out, err := c.read(ctx, "show info")
	if err != nil {
		return nil, err
	}
	return ParseInfo(out), nil
}

// Info is one "show info" answer parsed and encoded, shared by the
// callers that shared the answer: read-only.
type Info struct {
	Fields map[string]any  // as ShowInfo returns it
	JSON   json.RawMessage // Fields as encoding/json writes them (keys sorted)
}

var infoDecoder = &runtimeapi.Decoder[*Info]{Decode: func(out string) (*Info, error) {
	fields := ParseInfo(out)
	enc, err := infoJSON(fields)
	if err != nil {
		return nil, err
	}
	return &Info{Fields: fields, JSON: enc}, nil
}}

// infoJSON is json.Marshal(fields) for ParseInfo's fields (int64 and
// string values), byte for byte: keys sorted, numbers as numbers, strings
// of plain characters written as they are and any other string encoded by
// encoding/json. Encoding the map by reflection (sorting it through
// reflect.Values, one interface per value) was most of a show_info
// exchange's cost.
func infoJSON(fields map[string]any) ([]byte, error) {
	keys := make([]string, 0, len(fields))
	size := 2
	for k, v := range fields {
		keys = append(keys, k)
		size += len(k) + 4 + 20
		if s, ok := v.(string); ok {
			size += len(s)
		}
	}
	slices.Sort(keys)
	b := make([]byte, 0, size)
	b = append(b, '{')
	for i, k := range keys {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendMarshaled(b, k)
		b = append(b, ':')
		switch v := fields[k].(type) {
		case int64:
			b = strconv.AppendInt(b, v, 10)
		case string:
			b = appendMarshaled(b, v)
		default:
			return json.Marshal(fields) // not ParseInfo's: the general way
		}
	}
	return append(b, '}'), nil
}

// appendMarshaled appends s as json.Marshal writes it (HTML escaping
// included, unlike appendJSONString): plain printable ASCII as is,
// anything else (quotes, backslashes, control characters, <, > and &,
// non-ASCII) by encoding/json itself.
func appendMarshaled(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			q, _ := json.Marshal(s) // a string always encodes
			return append(b, q...)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}

// SharedInfo is ShowInfo for many concurrent callers (show_info): those
// that share one HAProxy answer also share its parse and its JSON, which
// they must not modify.
func (c *Client) SharedInfo(ctx context.Context) (*Info, error) {
	if c.Runtime == nil {
		return nil, ErrRuntimeDisabled
	}
	return runtimeapi.ReadDecoded(ctx, c.Runtime, "show info", infoDecoder)
}

// ShowVersion returns HAProxy's version string.
func (c *Client) ShowVersion(ctx context.Context) (string, error) {
	v, err := c.Version(ctx)
	return v.Raw, err
}

// Dump is a read-only command whose answer HAProxy prints as free text.
type Dump string

// The free-text dumps proxymcp offers.
const (
	DumpActivity  Dump = "show activity"
	DumpResolvers Dump = "show resolvers"
	DumpHelp      Dump = "help"
)

// Text returns one free-text dump as HAProxy prints it.
func (c *Client) Text(ctx context.Context, d Dump) (string, error) {
	switch d {
	case DumpActivity, DumpResolvers, DumpHelp:
		return c.exec(ctx, string(d))
	}
	return "", fmt.Errorf("unknown dump %q", d)
}

// ClearCounters resets statistics counters; all also resets the maxima and
// totals. Counters move on their own, so an unusual answer cannot be checked.
func (c *Client) ClearCounters(ctx context.Context, all bool) (Applied, error) {
	return c.apply(ctx, change{cmd: cmdClearCounters(all)})
}

// ServersTable runs "show servers state|conn [backend]" and parses it.
func (c *Client) ServersTable(ctx context.Context, what, backend string) ([]map[string]any, error) {
	cmd := "show servers " + what
	if what == "conn" {
		if err := c.Require(ctx, "show servers conn"); err != nil {
			return nil, err
		}
	}
	if backend != "" {
		cmd += " " + backend
	}
	out, err := c.exec(ctx, cmd)
	if err != nil {
		return nil, err
	}
	rows := ParseTable(out)
	if rows == nil {
		rows = []map[string]any{}
	}
	return rows, nil
}

// ListTables returns every stick table.
func (c *Client) ListTables(ctx context.Context) ([]TableInfo, error) {
	out, err := c.exec(ctx, "show table")
	if err != nil {
		return nil, err
	}
	t := ParseTableList(out)
	if t == nil {
		t = []TableInfo{}
	}
	return t, nil
}

// TableFilter is one "data.<type> <op> <value>" condition.
type TableFilter struct {
	Data  string
	Op    string
	Value int64
}

// ShowTable returns a table's header and entries, optionally for one key or
// filtered on stored data.
func (c *Client) ShowTable(ctx context.Context, table, key string, filters []TableFilter) (TableInfo, []map[string]any, error) {
	cmd := "show table " + table
	if key != "" {
		cmd += " key " + validate.Escape(key)
	}
	for _, f := range filters {
		cmd += fmt.Sprintf(" data.%s %s %d", f.Data, f.Op, f.Value)
	}
	out, err := c.exec(ctx, cmd)
	if err != nil {
		return TableInfo{}, nil, err
	}
	var info TableInfo
	if l := ParseTableList(out); len(l) > 0 {
		info = l[0]
	}
	e := ParseTableEntries(out)
	if e == nil {
		e = []map[string]any{}
	}
	return info, e, nil
}

func srv(backend, server string) string { return backend + "/" + server }

// AddServerOptions are the allow-listed keywords of add_server.
type AddServerOptions struct {
	Weight  string // validated weight, "" to keep HAProxy's default
	Maxconn int64  // 0: unlimited
	Check   bool
	Backup  bool
	Enable  bool // put the server in service after adding it (it starts in maintenance)
}

// AddServer adds a server at run time. It starts in maintenance unless
// opts.Enable; the returned state says which.
func (c *Client) AddServer(ctx context.Context, backend, server, addr string, port int, o AddServerOptions) (string, error) {
	if err := c.Require(ctx, "add server"); err != nil {
		return "", err
	}
	v, _ := c.Version(ctx)
	cmd := cmdAddServer(backend, server, addr, port, o)
	if !v.AtLeast(2, 6) {
		cmd = "experimental-mode on;" + cmd
	}
	name := srv(backend, server)
	if _, err := c.apply(ctx, change{cmd: cmd, success: exact("New server registered."),
		check: c.checkServerExists(backend, server, true)}); err != nil {
		return "", err
	}
	if !o.Enable {
		return "maint", nil
	}
	done := []string{"server " + name + " added (in maintenance)"}
	if o.Check {
		if _, err := c.apply(ctx, change{cmd: cmdCheck("enable", "health", backend, server),
			check: c.checkEnabledBit(backend, server, "srv_check_state", "health check", true)}); err != nil {
			return "maint", partial(done, fmt.Errorf("enabling its health check failed: %w", err))
		}
		done = append(done, "health check enabled")
	}
	if _, err := c.apply(ctx, change{cmd: cmdState(backend, server, "ready"),
		check: c.checkAdminState(backend, server, "ready")}); err != nil {
		return "maint", partial(done, fmt.Errorf("putting it in service failed: %w", err))
	}
	return "ready", nil
}

// DelServerResult reports what del_server did.
type DelServerResult struct {
	Drained           bool  `json:"drained"`
	RemainingSessions int64 `json:"remaining_sessions_before_delete"`
}

// ErrStillBusy is returned when a drained server still has sessions.
var ErrStillBusy = errors.New("the server still has sessions")

// DelServer deletes a server. With drain it first sets the server to
// drain, waits up to wait for its sessions to end, puts it in maintenance
// and then deletes it; without, HAProxy refuses servers not in maintenance.
func (c *Client) DelServer(ctx context.Context, backend, server string, drain bool, wait time.Duration) (DelServerResult, error) {
	if err := c.Require(ctx, "del server"); err != nil {
		return DelServerResult{}, err
	}
	name := srv(backend, server)
	var res DelServerResult
	var done []string
	if drain {
		if _, err := c.apply(ctx, change{cmd: cmdState(backend, server, "drain"),
			check: c.checkAdminState(backend, server, "drain")}); err != nil {
			return res, err
		}
		done = append(done, name+" set to drain")
		deadline := time.Now().Add(wait)
		for {
			cur, err := c.serverSessions(ctx, backend, server)
			if err != nil {
				return res, partial(done, err)
			}
			res.RemainingSessions = cur
			if cur == 0 || time.Now().After(deadline) {
				break
			}
			select {
			case <-ctx.Done():
				return res, partial(done, ctx.Err())
			case <-time.After(200 * time.Millisecond):
			}
		}
		if _, err := c.apply(ctx, change{cmd: cmdState(backend, server, "maint"),
			check: c.checkAdminState(backend, server, "maint")}); err != nil {
			return res, partial(done, err)
		}
		res.Drained = true
		done = append(done, name+" put in maintenance")
		if res.RemainingSessions > 0 {
			return res, partial(done, fmt.Errorf("%w after waiting %s (%d left); it is now in maintenance and was not deleted: end them with shutdown_server_sessions, or retry with a longer drain_timeout", ErrStillBusy, wait, res.RemainingSessions))
		}
	}
	_, err := c.apply(ctx, change{cmd: cmdDelServer(backend, server), success: exact("Server deleted."),
		check: c.checkServerExists(backend, server, false)})
	return res, partial(done, err)
}

func (c *Client) serverSessions(ctx context.Context, backend, server string) (int64, error) {
	out, err := c.exec(ctx, "show stat")
	if err != nil {
		return 0, err
	}
	rows, err := parseStat(out)
	if err != nil {
		return 0, err
	}
	for _, r := range rows {
		if r.Type() == "server" && r.Str("pxname") == backend && r.Str("svname") == server {
			return r.Int("scur"), nil
		}
	}
	return 0, &NotFoundError{What: "server", Name: srv(backend, server)}
}

// stateActions maps set_server_state values to the stats page's form.
var stateActions = map[string]string{"ready": statspage.ActionReady, "drain": statspage.ActionDrain, "maint": statspage.ActionMaint}

// SetServerState sets ready, drain or maint (falls back to the stats page).
func (c *Client) SetServerState(ctx context.Context, backend, server, state string) (Source, Applied, error) {
	return c.adminChange(ctx, "set the state of "+srv(backend, server),
		change{cmd: cmdState(backend, server, state), check: c.checkAdminState(backend, server, state)},
		backend, server, stateActions[state])
}

var healthActions = map[string]string{"up": statspage.ActionHealthUp, "stopping": statspage.ActionHealthNoLB, "down": statspage.ActionHealthDown}

// SetServerHealth forces the health-check state (falls back to the stats
// page). The next check may change it again at once, so an unusual answer
// cannot be checked against the state.
func (c *Client) SetServerHealth(ctx context.Context, backend, server, health string) (Source, Applied, error) {
	return c.adminChange(ctx, "set the health of "+srv(backend, server),
		change{cmd: cmdHealth(backend, server, health)}, backend, server, healthActions[health])
}

// SetHealthCheck enables or disables the health check (falls back to the stats page).
func (c *Client) SetHealthCheck(ctx context.Context, backend, server string, enable bool) (Source, Applied, error) {
	verb, action := "disable", statspage.ActionHealthDisable
	if enable {
		verb, action = "enable", statspage.ActionHealthEnable
	}
	return c.adminChange(ctx, verb+" the health check of "+srv(backend, server),
		change{cmd: cmdCheck(verb, "health", backend, server), check: c.checkEnabledBit(backend, server, "srv_check_state", "health check", enable), always: true},
		backend, server, action)
}

// SetAgentCheck enables or disables the agent check (falls back to the stats page).
func (c *Client) SetAgentCheck(ctx context.Context, backend, server string, enable bool) (Source, Applied, error) {
	verb, action := "disable", statspage.ActionAgentDisable
	if enable {
		verb, action = "enable", statspage.ActionAgentEnable
	}
	return c.adminChange(ctx, verb+" the agent check of "+srv(backend, server),
		change{cmd: cmdCheck(verb, "agent", backend, server), check: c.checkEnabledBit(backend, server, "srv_agent_state", "agent check", enable), always: true},
		backend, server, action)
}

// AgentSettings are the agent parameters set_server_agent changes; empty
// fields are left alone.
type AgentSettings struct {
	State string // up or down
	Addr  string
	Port  int
	Send  string // raw; escaped here
}

// SetServerAgent changes the agent's state, address, port and send string,
// in that order, and returns HAProxy's messages. A change of state alone can
// go through the stats page. When a later step fails, the error says which
// earlier ones took effect.
func (c *Client) SetServerAgent(ctx context.Context, backend, server string, a AgentSettings) (Source, []string, error) {
	name := srv(backend, server)
	var msgs, done []string
	var src Source = SourceRuntime
	if a.State != "" {
		action := agentAction(a)
		// The agent's next answer may change the state again at once: no check.
		s, res, err := c.adminChange(ctx, "set the agent state of "+name, change{cmd: cmdAgentState(backend, server, a.State)}, backend, server, action)
		if err != nil {
			return s, msgs, err
		}
		src = s
		msgs = appendMsg(msgs, res.Message)
		done = append(done, "agent state set to "+a.State)
	}
	steps := []struct {
		set  bool
		what string
		ch   change
	}{
		{a.Addr != "", "agent address set to " + a.Addr, change{cmd: cmdAgentAddr(backend, server, a.Addr),
			check: c.checkServer(backend, server, func(row map[string]any) (string, bool) {
				got, _ := row["srv_agent_addr"].(string)
				return "has agent address " + got, sameAddr(got, a.Addr)
			})}},
		{a.Port != 0, "agent port set to " + strconv.Itoa(a.Port), change{cmd: cmdAgentPort(backend, server, a.Port),
			check: c.checkServer(backend, server, func(row map[string]any) (string, bool) {
				got := intField(row, "srv_agent_port")
				return "has agent port " + strconv.FormatInt(got, 10), got == int64(a.Port)
			})}},
		{a.Send != "", "agent send string set", change{cmd: cmdAgentSend(backend, server, a.Send)}},
	}
	for _, s := range steps {
		if !s.set {
			continue
		}
		res, err := c.apply(ctx, s.ch)
		if err != nil {
			return SourceRuntime, msgs, partial(done, err)
		}
		msgs = appendMsg(msgs, res.Message)
		done = append(done, s.what)
	}
	return src, msgs, nil
}

func appendMsg(msgs []string, m string) []string {
	if m = strings.TrimSpace(m); m != "" {
		return append(msgs, m)
	}
	return msgs
}

// maxconnOf reads a statistics row's limit (empty: unlimited, 0).
func maxconnOf(r StatRow) int64 { return r.Int("slim") }

// SetServerMaxconn sets a server's connection limit (0: unlimited).
func (c *Client) SetServerMaxconn(ctx context.Context, backend, server string, n int64) (Applied, error) {
	return c.apply(ctx, change{cmd: cmdServerMaxconn(backend, server, n),
		check: c.checkStat(backend, server, func(r StatRow) (string, bool) {
			return fmt.Sprintf("%s has maxconn %d", srv(backend, server), maxconnOf(r)), maxconnOf(r) == n
		})})
}

// SetFrontendMaxconn sets a frontend's connection limit.
func (c *Client) SetFrontendMaxconn(ctx context.Context, frontend string, n int64) (Applied, error) {
	return c.apply(ctx, change{cmd: cmdFrontendMaxconn(frontend, n),
		check: c.checkStat(frontend, "FRONTEND", func(r StatRow) (string, bool) {
			return fmt.Sprintf("frontend %s has maxconn %d", frontend, maxconnOf(r)), maxconnOf(r) == n
		})})
}

// SetFrontendEnabled resumes (true) or pauses (false) a frontend. HAProxy
// answers "All sockets are already enabled." (or disabled) at severity 5
// when there is nothing to do.
func (c *Client) SetFrontendEnabled(ctx context.Context, frontend string, enable bool) (Applied, error) {
	verb := "disable"
	if enable {
		verb = "enable"
	}
	return c.apply(ctx, change{cmd: cmdFrontendEnabled(frontend, enable),
		already: exact("All sockets are already " + verb + "d."),
		check: c.checkStat(frontend, "FRONTEND", func(r StatRow) (string, bool) {
			st := r.Str("status")
			paused := st == "PAUSED" || st == "STOP"
			return "frontend " + frontend + " is " + st, paused != enable
		})})
}

// ShutdownSession aborts one stream (id validated as 0x + hex).
func (c *Client) ShutdownSession(ctx context.Context, id string) (Applied, error) {
	return c.apply(ctx, change{cmd: cmdShutdownSession(id),
		check: func(ctx context.Context) (string, bool, error) {
			_, err := c.ShowSession(ctx, id)
			var nf *NotFoundError
			if errors.As(err, &nf) {
				return "session " + id + " is gone", true, nil
			}
			if err != nil {
				return "", false, err
			}
			return "session " + id + " still exists", false, nil
		}})
}

// ShutdownServerSessions aborts every stream of one server. Sessions end
// asynchronously and new ones may arrive, so an unusual answer cannot be
// checked against the state.
func (c *Client) ShutdownServerSessions(ctx context.Context, backend, server string) (Applied, error) {
	return c.apply(ctx, change{cmd: cmdShutdownServerSessions(backend, server)})
}

// SetServerCheckPort changes the port the health check connects to. HAProxy
// answers "health checks are not enabled on this server" at severity 4 and
// changes nothing on a server without checks.
func (c *Client) SetServerCheckPort(ctx context.Context, backend, server string, port int) (Applied, error) {
	return c.apply(ctx, change{cmd: cmdCheckPort(backend, server, port),
		check: c.checkServer(backend, server, func(row map[string]any) (string, bool) {
			got := intField(row, "srv_check_port")
			return "has check port " + strconv.FormatInt(got, 10), got == int64(port)
		})})
}

// SetServerWeight sets a weight (0-256 or N%, as validated).
func (c *Client) SetServerWeight(ctx context.Context, backend, server, weight string) (Applied, error) {
	return c.apply(ctx, change{cmd: cmdWeight(backend, server, weight),
		check: func(ctx context.Context) (string, bool, error) {
			cur, initial, err := c.GetServerWeight(ctx, backend, server)
			if err != nil {
				return "", false, err
			}
			want, _ := strconv.ParseInt(strings.TrimSuffix(weight, "%"), 10, 64)
			if strings.HasSuffix(weight, "%") {
				// HAProxy's own arithmetic: percent of the initial weight, capped.
				want = min(initial*min(want, 25600)/100, 256)
			}
			return fmt.Sprintf("%s has weight %d (initial %d)", srv(backend, server), cur, initial), cur == want, nil
		}})
}

var weightReply = regexp.MustCompile(`^(\d+) \(initial (\d+)\)`)

// GetServerWeight returns the current and initial weight.
func (c *Client) GetServerWeight(ctx context.Context, backend, server string) (current, initial int64, err error) {
	out, err := c.exec(ctx, "get weight "+srv(backend, server))
	if err != nil {
		return 0, 0, err
	}
	m := weightReply.FindStringSubmatch(strings.TrimSpace(out))
	if m == nil {
		return 0, 0, &runtimeapi.ReplyError{Command: "get weight " + srv(backend, server), Severity: -1, Message: strings.TrimSpace(out)}
	}
	current, _ = strconv.ParseInt(m[1], 10, 64)
	initial, _ = strconv.ParseInt(m[2], 10, 64)
	return current, initial, nil
}

// addrParts splits HAProxy's warning-level answer to "set server ... addr"
// ("IP changed from 'a' to 'b', port changed from 'p' to 'q' by 'stats
// socket command'") into its parts.
func addrParts(msg string) []string {
	if i := strings.LastIndex(msg, " by '"); i >= 0 {
		msg = msg[:i]
	}
	return strings.Split(msg, ", ")
}

// addrAnswer reports whether every part of the answer is a documented one,
// and whether any says something changed. Anything else is checked by
// reading the state back.
func addrAnswer(msg string) (known, changed bool) {
	for _, p := range addrParts(msg) {
		switch {
		case strings.HasPrefix(p, "IP changed from '"), strings.HasPrefix(p, "port changed from '"):
			changed = true
		case p == "no need to change the addr", p == "no need to change the port":
		default:
			return false, false
		}
	}
	return true, changed
}

// SetServerAddr changes a server's address and optionally its port.
func (c *Client) SetServerAddr(ctx context.Context, backend, server, addr string, port int) (Applied, error) {
	cmd := cmdAddr(backend, server, addr, port)
	return c.apply(ctx, change{cmd: cmd,
		success: func(msg string) bool { known, changed := addrAnswer(msg); return known && changed },
		already: func(msg string) bool { known, changed := addrAnswer(msg); return known && !changed },
		check: c.checkServer(backend, server, func(row map[string]any) (string, bool) {
			gotAddr, _ := row["srv_addr"].(string)
			gotPort := intField(row, "srv_port")
			return fmt.Sprintf("has address %s port %d", gotAddr, gotPort), sameAddr(gotAddr, addr) && (port == 0 || gotPort == int64(port))
		})})
}

// Sessions returns the streams "show sess" lists, without the runtime API
// connection that asked, filtered by the non-empty arguments.
func (c *Client) Sessions(ctx context.Context, frontend, backend, server string) ([]Session, error) {
	out, err := c.exec(ctx, "show sess")
	if err != nil {
		return nil, err
	}
	all := ParseSessions(out)
	res := []Session{}
	for _, s := range all {
		if s.Frontend == "GLOBAL" {
			continue
		}
		if (frontend != "" && s.Frontend != frontend) || (backend != "" && s.Backend != backend) || (server != "" && s.Server != server) {
			continue
		}
		res = append(res, s)
	}
	return res, nil
}

// ShowSession returns one stream's detail as HAProxy prints it.
func (c *Client) ShowSession(ctx context.Context, id string) (string, error) {
	out, err := c.exec(ctx, "show sess "+id)
	if err != nil {
		return "", err
	}
	if strings.TrimSpace(out) == "" || strings.Contains(out, "Session not found") || strings.Contains(out, "may have been freed") {
		return "", &NotFoundError{What: "session", Name: id}
	}
	return out, nil
}

// MapKind is "map" or "acl".
type MapKind string

// The two pattern kinds.
const (
	KindMap MapKind = "map"
	KindACL MapKind = "acl"
)

// ListPatterns returns every map or ACL.
func (c *Client) ListPatterns(ctx context.Context, kind MapKind) ([]PatternList, error) {
	out, err := c.exec(ctx, "show "+string(kind))
	if err != nil {
		return nil, err
	}
	l := ParsePatternLists(out)
	if l == nil {
		l = []PatternList{}
	}
	return l, nil
}

// ShowPatterns returns the entries of one map or ACL.
func (c *Client) ShowPatterns(ctx context.Context, kind MapKind, ref string) ([]PatternEntry, error) {
	out, err := c.exec(ctx, "show "+string(kind)+" "+ref)
	if err != nil {
		return nil, err
	}
	e := ParsePatternEntries(out, kind == KindMap)
	if e == nil {
		e = []PatternEntry{}
	}
	return e, nil
}

// GetPattern looks a sample up in a map or ACL ("get map|acl").
func (c *Client) GetPattern(ctx context.Context, kind MapKind, ref, sample string) (map[string]any, error) {
	out, err := c.exec(ctx, "get "+string(kind)+" "+ref+" "+validate.Escape(sample))
	if err != nil {
		return nil, err
	}
	return ParseKeyValues(out), nil
}

// Map and ACL entries can be listed but not looked up exactly (keys may
// repeat, "get" matches samples, "show" splits keys at spaces), so an
// unusual answer to adding, setting or deleting one cannot be checked
// against the state; HAProxy answers those with an empty line on success.

// AddEntry adds a map entry (key, value) or an ACL pattern (key only).
func (c *Client) AddEntry(ctx context.Context, kind MapKind, ref, key, value string) (Applied, error) {
	return c.apply(ctx, change{cmd: cmdAddEntry(kind, ref, key, value)})
}

// SetMapEntry changes the value of an existing map key.
func (c *Client) SetMapEntry(ctx context.Context, ref, key, value string) (Applied, error) {
	return c.apply(ctx, change{cmd: cmdSetMapEntry(ref, key, value)})
}

// DelEntry removes a map key or an ACL pattern.
func (c *Client) DelEntry(ctx context.Context, kind MapKind, ref, key string) (Applied, error) {
	return c.apply(ctx, change{cmd: cmdDelEntry(kind, ref, key)})
}

// ClearPatterns removes every entry of a map or ACL.
func (c *Client) ClearPatterns(ctx context.Context, kind MapKind, ref string) (Applied, error) {
	return c.apply(ctx, change{cmd: cmdClear(kind, ref),
		check: func(ctx context.Context) (string, bool, error) {
			e, err := c.ShowPatterns(ctx, kind, ref)
			if err != nil {
				return "", false, err
			}
			return fmt.Sprintf("%s %s has %d entries", kind, ref, len(e)), len(e) == 0, nil
		}})
}

// MapEntry is a key and value for ReplaceMap.
type MapEntry struct {
	Key   string `json:"key"`
	Value string `json:"value"`
}

var newVersion = regexp.MustCompile(`New version created: (\d+)`)

// ReplaceMap atomically replaces a map's content: prepare a new version,
// add every entry to it, commit. On failure the new version is discarded
// and the map keeps its old content.
func (c *Client) ReplaceMap(ctx context.Context, ref string, entries []MapEntry) (int, error) {
	if err := c.Require(ctx, "prepare map"); err != nil {
		return 0, err
	}
	out, err := c.exec(ctx, cmdPrepareMap(ref))
	if err != nil {
		return 0, err
	}
	m := newVersion.FindStringSubmatch(out)
	if m == nil {
		return 0, fmt.Errorf("prepare map %s: unexpected answer %q", ref, strings.TrimSpace(out))
	}
	ver := "@" + m[1]
	for i, e := range entries {
		if _, err := c.apply(ctx, change{cmd: cmdAddMapVersion(ver, ref, e)}); err != nil {
			// Best effort: drop the uncommitted version (a later prepare would anyway).
			_, _ = c.exec(context.WithoutCancel(ctx), "clear map "+ver+" "+ref)
			return 0, fmt.Errorf("entry %d (key %q) was refused, nothing was changed: %w", i, e.Key, err)
		}
	}
	if _, err := c.apply(ctx, change{cmd: cmdCommitMap(ver, ref)}); err != nil {
		return 0, err
	}
	return len(entries), nil
}

// ErrorsReport is "show errors" with the count parsed out.
type ErrorsReport struct {
	Total int64  `json:"total_events"`
	Text  string `json:"text"`
}

var totalEvents = regexp.MustCompile(`Total events captured on \[[^\]]*\] : (\d+)`)

// ShowErrors returns captured protocol errors, optionally for one proxy and direction.
func (c *Client) ShowErrors(ctx context.Context, proxy, direction string) (ErrorsReport, error) {
	cmd := "show errors"
	if proxy != "" {
		cmd += " " + proxy
		if direction != "" {
			cmd += " " + direction
		}
	} else if direction != "" {
		cmd += " -1 " + direction
	}
	out, err := c.exec(ctx, cmd)
	if err != nil {
		return ErrorsReport{}, err
	}
	r := ErrorsReport{Text: out}
	if m := totalEvents.FindStringSubmatch(out); m != nil {
		r.Total, _ = strconv.ParseInt(m[1], 10, 64)
	}
	return r, nil
}

// Echo returns text through HAProxy's echo (3.1+) or, on older versions,
// locally; answeredBy says which ("haproxy" or "proxymcp").
func (c *Client) Echo(ctx context.Context, text string) (out, answeredBy string, err error) {
	v, err := c.Version(ctx)
	if err != nil {
		return "", "", err
	}
	if !v.AtLeast(3, 1) {
		return text, "proxymcp", nil
	}
	res, err := c.exec(ctx, "echo "+validate.Escape(text))
	if err != nil {
		return "", "", err
	}
	return strings.TrimRight(res, "\n"), "haproxy", nil
}
